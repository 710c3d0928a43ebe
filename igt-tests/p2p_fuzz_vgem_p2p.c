// SPDX-License-Identifier: MIT
/*
 * p2p_fuzz's vgem_p2p operations: every vgem_p2p and DRM core ioctl the
 * driver offers, object mmaps in the reserved slots, CPU touches of them
 * and of anonymous memory, and closes of exported dma-bufs.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <xf86drm.h>

#include "p2p_fuzz_drivers.h"

enum {
	OP_CREATE, OP_DUMB_CREATE, OP_MAP_DUMB, OP_GEM_CLOSE, OP_PRIME_EXPORT,
	OP_PRIME_IMPORT, OP_OBJ_INFO, OP_MOVE, OP_MIGRATE, OP_STATS,
	OP_FENCE_ATTACH, OP_FENCE_SIGNAL, OP_MMAP_OFFSET, OP_PEER, OP_DRM_BAD,
	OP_MMAP, OP_MUNMAP, OP_TOUCH, OP_CLOSE_DMABUF,
	NR_OPS
};

static struct fz_op ops[NR_OPS];

static void settle_fences(struct fz_thread *t);

static uint32_t gen_handle(struct fz_thread *t, uint64_t *size, uint32_t *flags)
{
	struct fz_pool *p = t->pool;
	uint32_t h;

	*size = 0;
	*flags = 0;
	pthread_mutex_lock(&p->lock);
	if (p->nobjs && !fz_one_in(t, 6)) {
		struct fz_obj *o = &p->objs[fz_below(t, p->nobjs)];

		h = o->handle;
		*size = o->size;
		*flags = o->flags;
	} else if (fz_one_in(t, 2)) {
		h = p->stale_handles[fz_below(t, NR_STALE)];
	} else {
		h = fz_one_in(t, 2) ? 0 : (uint32_t)fz_rnd(t);
	}
	pthread_mutex_unlock(&p->lock);
	return h;
}

static void gem_close_counted(struct fz_thread *t, uint32_t handle)
{
	struct drm_gem_close c = { .handle = handle };

	fz_note(t, &ops[OP_GEM_CLOSE],
	     ioctl(t->pool->vfd, DRM_IOCTL_GEM_CLOSE, &c) ? errno : 0);
}

/* A new object: into the pool, closing a victim if it is full */
static void obj_add(struct fz_thread *t, uint32_t handle, uint64_t size,
		    uint32_t flags)
{
	struct fz_pool *p = t->pool;
	uint32_t victim = 0;
	int i;

	pthread_mutex_lock(&p->lock);
	if (p->nobjs == POOL_OBJS) {
		i = fz_below(t, POOL_OBJS);
		victim = p->objs[i].handle;
		fz_stale_push(p, p->stale_handles, victim);
		p->objs[i] = p->objs[--p->nobjs];
	}
	p->objs[p->nobjs++] = (struct fz_obj){ handle, size, flags };
	pthread_mutex_unlock(&p->lock);
	if (victim)
		gem_close_counted(t, victim);
}

static bool obj_forget(struct fz_pool *p, uint32_t handle)
{
	bool found = false;
	int i;

	pthread_mutex_lock(&p->lock);
	for (i = 0; i < p->nobjs; i++) {
		if (p->objs[i].handle == handle) {
			p->objs[i] = p->objs[--p->nobjs];
			fz_stale_push(p, p->stale_handles, handle);
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&p->lock);
	return found;
}

static bool obj_known(struct fz_pool *p, uint32_t handle)
{
	bool found = false;
	int i;

	pthread_mutex_lock(&p->lock);
	for (i = 0; i < p->nobjs; i++)
		found |= p->objs[i].handle == handle;
	pthread_mutex_unlock(&p->lock);
	return found;
}

/* DRM ops */

static void op_create(struct fz_thread *t)
{
	struct drm_vgem_p2p_create c = {};

	c.flags = fz_flags(t, VGEM_P2P_CREATE_FLAGS);
	if (fz_one_in(t, 1000) && !(c.flags & VGEM_P2P_CREATE_SYSTEM))
		/* big enough to make VRAM compact and evict */
		c.size = (16 + fz_below(t, 24)) << 20;
	else if (fz_one_in(t, 6))
		c.size = fz_evil_u64(t);
	else
		c.size = 1 + fz_below(t, 16 * PAGE);
	/*
	 * Sizes between "small" and "refused" would only be slow: a SYSTEM
	 * object is backed lazily and refused for no size of its own, only
	 * past the device's mmap offset space (1 TiB), with ENOMEM
	 */
	if ((c.flags & VGEM_P2P_CREATE_SYSTEM) && c.size > 16 * PAGE &&
	    c.size < (1ull << 44))
		c.size = 1ull << 44;
	c.handle = (uint32_t)fz_rnd(t);
	t->must_einval = c.flags & ~VGEM_P2P_CREATE_FLAGS;
	if (!fz_ioctl(t, &ops[OP_CREATE], t->pool->vfd,
		      DRM_IOCTL_VGEM_P2P_CREATE, &c))
		obj_add(t, c.handle, c.size, c.flags);
}

static void op_dumb_create(struct fz_thread *t)
{
	struct drm_mode_create_dumb d = {};

	if (fz_one_in(t, 5)) {
		d.width = fz_one_in(t, 2) ? (uint32_t)fz_rnd(t) : ~0u;
		d.height = fz_one_in(t, 2) ? (uint32_t)fz_evil_u64(t) : 1;
		d.bpp = fz_one_in(t, 2) ? (uint32_t)fz_evil_u64(t) : 32;
	} else {
		d.width = 1 + fz_below(t, 256);
		d.height = 1 + fz_below(t, 64);
		d.bpp = 8 << fz_below(t, 3);
	}
	d.flags = fz_pad(t);
	d.handle = (uint32_t)fz_rnd(t);
	if (!fz_ioctl(t, &ops[OP_DUMB_CREATE], t->pool->vfd,
		      DRM_IOCTL_MODE_CREATE_DUMB, &d))
		obj_add(t, d.handle, d.size, 0);
}

static void op_map_dumb(struct fz_thread *t)
{
	struct drm_mode_map_dumb m = {};
	uint64_t size;
	uint32_t flags;

	m.handle = gen_handle(t, &size, &flags);
	m.pad = fz_pad(t);
	fz_ioctl(t, &ops[OP_MAP_DUMB], t->pool->vfd, DRM_IOCTL_MODE_MAP_DUMB,
		 &m);
}

static void op_gem_close(struct fz_thread *t)
{
	struct drm_gem_close c = {};
	uint64_t size;
	uint32_t flags;

	c.handle = gen_handle(t, &size, &flags);
	c.pad = fz_pad(t);
	/* forget it first: others then stop picking it */
	obj_forget(t->pool, c.handle);
	fz_ioctl(t, &ops[OP_GEM_CLOSE], t->pool->vfd, DRM_IOCTL_GEM_CLOSE, &c);
}

static void op_prime_export(struct fz_thread *t)
{
	struct fz_pool *p = t->pool;
	struct drm_prime_handle h = {};
	uint64_t size;
	uint32_t flags;
	int victim = -1;

	h.handle = gen_handle(t, &size, &flags);
	h.flags = fz_flags(t, DRM_CLOEXEC | DRM_RDWR) | DRM_CLOEXEC;
	h.fd = (int)fz_rnd(t);
	t->must_einval = h.flags & ~(DRM_CLOEXEC | DRM_RDWR);
	if (fz_ioctl(t, &ops[OP_PRIME_EXPORT], p->vfd,
		     DRM_IOCTL_PRIME_HANDLE_TO_FD, &h))
		return;
	pthread_mutex_lock(&p->lock);
	if (p->nbufs == POOL_BUFS) {
		int i = fz_below(t, POOL_BUFS);

		victim = p->bufs[i];
		p->bufs[i] = p->bufs[--p->nbufs];
		p->stale_fds[p->stale_next++ % NR_STALE] = victim;
	}
	p->bufs[p->nbufs++] = h.fd;
	pthread_mutex_unlock(&p->lock);
	if (victim >= 0)
		fz_note(t, &ops[OP_CLOSE_DMABUF], close(victim) ? errno : 0);
}

static void op_close_dmabuf(struct fz_thread *t)
{
	struct fz_pool *p = t->pool;
	int fd = -1, i;

	pthread_mutex_lock(&p->lock);
	if (p->nbufs) {
		i = fz_below(t, p->nbufs);
		fd = p->bufs[i];
		p->bufs[i] = p->bufs[--p->nbufs];
		p->stale_fds[p->stale_next++ % NR_STALE] = fd;
	}
	pthread_mutex_unlock(&p->lock);
	if (fd >= 0)
		fz_note(t, &ops[OP_CLOSE_DMABUF], close(fd) ? errno : 0);
}

static void op_prime_import(struct fz_thread *t)
{
	struct fz_pool *p = t->pool;
	struct drm_prime_handle h = {};

	pthread_mutex_lock(&p->lock);
	switch (fz_below(t, 6)) {
	case 0:
	case 1:
		h.fd = p->nbufs ? p->bufs[fz_below(t, p->nbufs)] : -1;
		break;
	case 2:
		/* a closed fd number, maybe reused by now: only read */
		h.fd = p->stale_fds[fz_below(t, NR_STALE)];
		break;
	case 3:
		h.fd = fz_one_in(t, 2) ? p->memfd : p->vfd;
		break;
	case 4:
		h.fd = p->efd;
		break;
	default:
		h.fd = fz_one_in(t, 2) ? -1 : (int)fz_rnd(t);
		break;
	}
	pthread_mutex_unlock(&p->lock);
	h.flags = fz_pad(t);
	if (fz_ioctl(t, &ops[OP_PRIME_IMPORT], p->vfd,
		     DRM_IOCTL_PRIME_FD_TO_HANDLE, &h))
		return;
	/* a handle of its own only if the exporting one was closed */
	if (!obj_known(p, h.handle))
		gem_close_counted(t, h.handle);
}

static void op_obj_info(struct fz_thread *t)
{
	struct drm_vgem_p2p_obj_info i = {};
	uint64_t size;
	uint32_t flags;

	i.handle = gen_handle(t, &size, &flags);
	i.pad = fz_pad(t);
	i.reason = (uint32_t)fz_rnd(t);
	t->must_einval = i.pad;
	fz_ioctl(t, &ops[OP_OBJ_INFO], t->pool->vfd,
		 DRM_IOCTL_VGEM_P2P_OBJ_INFO, &i);
}

static void op_move(struct fz_thread *t)
{
	struct fz_pool *p = t->pool;
	struct drm_vgem_p2p_move m = {};
	uint64_t size;
	uint32_t flags;

	m.handle = gen_handle(t, &size, &flags);
	m.target = fz_one_in(t, 12) ? (uint32_t)fz_evil_u64(t) : fz_below(t, 3);
	if (m.target == VGEM_P2P_MOVE_VRAM_AT) {
		switch (fz_below(t, 6)) {
		case 0:
			m.offset = fz_evil_u64(t);
			break;
		case 1:
			m.offset = p->vram_size - fz_below(t, 4) * PAGE;
			break;
		case 2:
			m.offset = fz_below(t, p->vram_size);
			break;
		default:
			m.offset = fz_below(t, p->vram_size / PAGE) * PAGE;
			break;
		}
	} else if (fz_one_in(t, 12)) {
		m.offset = fz_evil_u64(t);
	}
	m.flags = fz_pad(t);
	m.pad = fz_pad(t);
	t->must_einval = m.flags || m.pad || m.target > VGEM_P2P_MOVE_SYSTEM;
	fz_ioctl(t, &ops[OP_MOVE], p->vfd, DRM_IOCTL_VGEM_P2P_MOVE, &m);
}

static void op_migrate(struct fz_thread *t)
{
	struct drm_vgem_p2p_migrate m = {};
	uint64_t len = (1 + fz_below(t, 4)) * PAGE;
	const char *addr, *start, *end;

	addr = fz_range(t, &len, !fz_one_in(t, 16));
	/*
	 * A range that starts in the pool's memory and runs past it would
	 * migrate whatever anonymous memory the process has next (thread
	 * stacks and scratch buffers, the heap's mappings), up to the first
	 * vma that is not: memory the pool never frees, whose device pages
	 * would stay counted after it, and that the fuzzer itself uses. It
	 * ends at the region's end instead.
	 */
	if (fz_pool_region(t->pool, addr, &start, &end) &&
	    len > (uint64_t)(end - addr))
		len = end - addr;
	m.addr = (uintptr_t)addr;
	m.size = len;
	m.direction = fz_one_in(t, 16) ? (uint32_t)fz_rnd(t) : fz_below(t, 2);
	m.flags = fz_pad(t);
	m.npages = fz_rnd(t);
	t->must_einval = m.flags || m.direction > VGEM_P2P_MIGRATE_TO_RAM;
	/* its device-private memory failed to set up at probe */
	t->may_enodev = !t->pool->has_devmem;
	fz_ioctl(t, &ops[OP_MIGRATE], t->pool->vfd, DRM_IOCTL_VGEM_P2P_MIGRATE,
		 &m);
}

static void op_stats(struct fz_thread *t)
{
	struct drm_vgem_p2p_stats s = {};

	s.flags = fz_pad(t);
	s.pad = fz_pad(t);
	t->must_einval = s.flags || s.pad;
	fz_ioctl(t, &ops[OP_STATS], t->pool->vfd, DRM_IOCTL_VGEM_P2P_STATS, &s);
}

static void op_fence_attach(struct fz_thread *t)
{
	struct fz_pool *p = t->pool;
	struct drm_vgem_fence_attach a = {};
	uint64_t size;
	uint32_t flags;

	a.handle = gen_handle(t, &size, &flags);
	a.flags = fz_flags(t, VGEM_FENCE_WRITE);
	a.pad = fz_pad(t);
	t->must_einval = (a.flags & ~VGEM_FENCE_WRITE) || a.pad;
	if (fz_ioctl(t, &ops[OP_FENCE_ATTACH], p->vfd,
		     DRM_IOCTL_VGEM_FENCE_ATTACH, &a))
		return;
	if (t->nfences == POOL_FENCES)
		settle_fences(t);
	t->fences[t->nfences++] = a.out_fence;
	pthread_mutex_lock(&p->lock);
	if (p->nfences < POOL_FENCES)
		p->fences[p->nfences++] = a.out_fence;
	else
		p->fences[fz_below(t, POOL_FENCES)] = a.out_fence;
	pthread_mutex_unlock(&p->lock);
}

/* The driver's settle hook: signal the fences @t attached, uncounted */
static void settle_fences(struct fz_thread *t)
{
	struct drm_vgem_fence_signal s = {};

	/* already signalled (by anyone, or expired): nothing to settle */
	while (t->nfences) {
		s.fence = t->fences[--t->nfences];
		drmIoctl(t->pool->vfd, DRM_IOCTL_VGEM_FENCE_SIGNAL, &s);
	}
}

static void op_fence_signal(struct fz_thread *t)
{
	struct fz_pool *p = t->pool;
	struct drm_vgem_fence_signal s = {};

	pthread_mutex_lock(&p->lock);
	if (p->nfences && !fz_one_in(t, 4))
		s.fence = p->fences[fz_below(t, p->nfences)];
	else
		s.fence = fz_one_in(t, 2) ? 0 : (uint32_t)fz_rnd(t);
	pthread_mutex_unlock(&p->lock);
	s.flags = fz_pad(t);
	t->must_einval = s.flags;
	fz_ioctl(t, &ops[OP_FENCE_SIGNAL], p->vfd, DRM_IOCTL_VGEM_FENCE_SIGNAL,
		 &s);
}

static void op_mmap_offset(struct fz_thread *t)
{
	struct drm_vgem_p2p_mmap_offset o = {};
	uint64_t size;
	uint32_t flags;

	o.handle = gen_handle(t, &size, &flags);
	o.flags = fz_pad(t);
	o.offset = fz_rnd(t);	/* out only: any value must be ignored */
	t->must_einval = o.flags;
	fz_ioctl(t, &ops[OP_MMAP_OFFSET], t->pool->vfd,
		 DRM_IOCTL_VGEM_P2P_MMAP_OFFSET, &o);
}

/* Mostly the guest's own low buses, where devices exist; else anything */
static void op_peer(struct fz_thread *t)
{
	struct drm_vgem_p2p_peer q = {};

	if (fz_one_in(t, 4)) {
		q.domain = (uint32_t)fz_rnd(t);
		q.bus = (uint32_t)fz_rnd(t);
		q.devfn = (uint32_t)fz_rnd(t);
	} else {
		q.bus = fz_below(t, 8);
		q.devfn = fz_below(t, 256);
	}
	q.flags = fz_pad(t);
	q.reachable = (uint32_t)fz_rnd(t);
	q.path = (uint32_t)fz_rnd(t);
	t->must_einval = q.flags || q.bus > 0xff || q.devfn > 0xff;
	/* no PCI device at that address */
	t->may_enodev = true;
	fz_ioctl(t, &ops[OP_PEER], t->pool->vfd, DRM_IOCTL_VGEM_P2P_PEER, &q);
}

/* A driver ioctl number vgem_p2p does not have */
static void op_drm_bad(struct fz_thread *t)
{
	uint64_t arg[16] = {};
	unsigned int first = DRM_COMMAND_BASE + DRM_VGEM_P2P_PEER + 1;
	unsigned int nr = first + fz_below(t, DRM_COMMAND_END - first);

	fz_ioctl(t, &ops[OP_DRM_BAD], t->pool->vfd, DRM_IOWR(nr, arg), arg);
}

static void op_mmap(struct fz_thread *t)
{
	struct fz_pool *p = t->pool;
	struct drm_mode_map_dumb m = {};
	struct fz_slot *s;
	uint64_t size, len;
	uint32_t flags;
	int prot, mflags;
	bool unknown;
	void *ret;

	m.handle = gen_handle(t, &size, &flags);
	if (ioctl(p->vfd, DRM_IOCTL_MODE_MAP_DUMB, &m)) {
		fz_note(t, &ops[OP_MAP_DUMB], errno);
		return;
	}
	fz_note(t, &ops[OP_MAP_DUMB], 0);
	len = size ? size : PAGE;
	/* not the pool's: a stale handle may name any object by now */
	unknown = !size;
	if (fz_one_in(t, 4))
		len = (1 + fz_below(t, SLOT_PAGES)) * PAGE;
	len = len > SLOT_PAGES * PAGE ? SLOT_PAGES * PAGE : len;
	if (fz_one_in(t, 16)) {
		/* another object's offset, maybe */
		m.offset += fz_below(t, 64) * PAGE;
		unknown = true;
	}
	prot = fz_one_in(t, 4) ? PROT_READ : PROT_READ | PROT_WRITE;
	mflags = fz_one_in(t, 16) ? MAP_PRIVATE : MAP_SHARED;

	pthread_mutex_lock(&p->lock);
	s = &p->slots[fz_below(t, NR_SLOTS)];
	ret = mmap(s->ptr, len, prot, mflags | MAP_FIXED, p->vfd, m.offset);
	fz_note(t, &ops[OP_MMAP], ret == MAP_FAILED ? errno : 0);
	if (ret == MAP_FAILED) {
		/* a failed MAP_FIXED leaves a hole: reserve it again */
		fz_slot_reset(s);
		fz_note(t, &ops[OP_MUNMAP], s->mapped);
		s->mapped = 0;
	} else {
		/* the rest of the slot keeps what it had: call it lost */
		s->mapped = len;
		s->flags = flags;
		s->size = size;
		s->unknown = unknown;
		s->writable = prot & PROT_WRITE;
		s->shared = mflags == MAP_SHARED;
	}
	pthread_mutex_unlock(&p->lock);
}

static void op_munmap(struct fz_thread *t)
{
	struct fz_pool *p = t->pool;
	struct fz_slot *s;
	int err;

	pthread_mutex_lock(&p->lock);
	s = &p->slots[fz_below(t, NR_SLOTS)];
	fz_slot_reset(s);
	err = s->mapped;
	s->mapped = 0;
	pthread_mutex_unlock(&p->lock);
	fz_note(t, &ops[OP_MUNMAP], err);
}

/*
 * A CPU touch of a device-only object gets SIGBUS by design, and with
 * several threads the pool's idea of which object a slot maps can be
 * stale; so a touch runs under the engine's SIGBUS catcher, and SIGBUS
 * counts as its EFAULT. With one thread the pool knows the object, and
 * SIGBUS is a breach unless the uAPI promises it: a DEVICE_ONLY object,
 * or one larger than half of RAM, whose pages never populate.
 */
/*
 * Read, and maybe write, a word of a mapping: faults move evicted objects
 * back and migrate device-private pages to RAM.
 */
static void op_touch(struct fz_thread *t)
{
	struct fz_pool *p = t->pool;
	volatile uint32_t *w;
	struct fz_slot *s;
	char what[320];
	sigjmp_buf jmp;

	if (fz_one_in(t, 2)) {
		w = (uint32_t *)(p->anon[fz_below(t, NR_ANON)] +
				 fz_below(t, ANON_PAGES) * PAGE);
		*w += 1;
		fz_note(t, &ops[OP_TOUCH], 0);
		return;
	}
	pthread_mutex_lock(&p->lock);
	s = &p->slots[fz_below(t, NR_SLOTS)];
	if (s->mapped) {
		w = (uint32_t *)(s->ptr + fz_below(t, s->mapped / PAGE) * PAGE);
		if (sigsetjmp(jmp, 1)) {
			fz_sigbus_jmp = NULL;
			fz_note(t, &ops[OP_TOUCH], EFAULT);
			if (fz_one_thread(t) && !s->unknown &&
			    !(s->flags & VGEM_P2P_CREATE_DEVICE_ONLY) &&
			    s->size <= p->half_ram)
				fz_violation(t, RULE_SIGBUS,
					     "SIGBUS touching an object of %#" PRIx64 " bytes, flags %#x, at page %td of its mapping (%s)",
					     s->size, s->flags,
					     ((char *)w - s->ptr) / (ptrdiff_t)PAGE,
					     fz_sigbus_what(what, sizeof(what)));
		} else {
			fz_sigbus_jmp = &jmp;
			if (s->writable)
				*w += 1;
			else
				(void)*w;
			fz_sigbus_jmp = NULL;
			fz_note(t, &ops[OP_TOUCH], 0);
		}
	}
	pthread_mutex_unlock(&p->lock);
}

static struct fz_op ops[NR_OPS] = {
	[OP_CREATE] = {
		"VGEM_P2P_CREATE", ERRS(EINVAL, ENOSPC, EDQUOT, ENOMEM, EFAULT),
		{ [MODE_EXPORTER] = 10, [MODE_IMPORTER] = 3, [MODE_BOTH] = 6 },
		op_create,
		.under_fences = true,
	},
	[OP_DUMB_CREATE] = {
		"MODE_CREATE_DUMB", ERRS(EINVAL, ENOSPC, ENOMEM, EFAULT),
		{ [MODE_EXPORTER] = 4, [MODE_BOTH] = 2 },
		op_dumb_create,
		.under_fences = true,
	},
	[OP_MAP_DUMB] = {
		"MODE_MAP_DUMB", ERRS(ENOENT, EINVAL, ENOMEM, EFAULT),
		{ [MODE_EXPORTER] = 5, [MODE_BOTH] = 3 },
		op_map_dumb,
		.under_fences = true,
	},
	[OP_GEM_CLOSE] = {
		"GEM_CLOSE", ERRS(EINVAL, EFAULT),
		{ [MODE_EXPORTER] = 8, [MODE_IMPORTER] = 1, [MODE_BOTH] = 4 },
		op_gem_close,
		.under_fences = true,
	},
	[OP_PRIME_EXPORT] = {
		"PRIME_HANDLE_TO_FD",
		ERRS(EINVAL, ENOENT, ENOMEM, EMFILE, EFAULT),
		{ [MODE_EXPORTER] = 4, [MODE_BOTH] = 2 },
		op_prime_export,
		.under_fences = true,
	},
	[OP_PRIME_IMPORT] = {
		"PRIME_FD_TO_HANDLE", ERRS(EBADF, EINVAL, ENOMEM, EFAULT),
		{ [MODE_EXPORTER] = 4, [MODE_BOTH] = 2 },
		op_prime_import,
		.under_fences = true,
	},
	[OP_OBJ_INFO] = {
		"VGEM_P2P_OBJ_INFO", ERRS(EINVAL, ENOENT, EFAULT),
		{ [MODE_EXPORTER] = 8, [MODE_BOTH] = 4 },
		op_obj_info,
		.under_fences = true,
	},
	[OP_MOVE] = {
		"VGEM_P2P_MOVE",
		ERRS(EINVAL, ENOENT, EBUSY, ENOSPC, EDQUOT, ENOMEM, ENODEV,
		     EFAULT),
		{ [MODE_EXPORTER] = 10, [MODE_IMPORTER] = 4, [MODE_BOTH] = 8 },
		op_move,
	},
	[OP_MIGRATE] = {
		"VGEM_P2P_MIGRATE",
		ERRS(EINVAL, ENODEV, ENOMEM, EDQUOT, EFAULT),
		{ [MODE_EXPORTER] = 6, [MODE_IMPORTER] = 2, [MODE_BOTH] = 4 },
		op_migrate,
	},
	[OP_STATS] = {
		"VGEM_P2P_STATS", ERRS(EINVAL, EFAULT),
		{ [MODE_EXPORTER] = 3, [MODE_BOTH] = 2 },
		op_stats,
		.under_fences = true,
	},
	[OP_FENCE_ATTACH] = {
		"VGEM_FENCE_ATTACH",
		ERRS(EINVAL, ENOENT, EBUSY, ENOMEM, EFAULT),
		{ [MODE_EXPORTER] = 4, [MODE_BOTH] = 2 },
		op_fence_attach,
		.under_fences = true,
	},
	[OP_FENCE_SIGNAL] = {
		"VGEM_FENCE_SIGNAL", ERRS(EINVAL, ENOENT, ETIMEDOUT, EFAULT),
		{ [MODE_EXPORTER] = 4, [MODE_BOTH] = 2 },
		op_fence_signal,
		.under_fences = true,
	},
	[OP_MMAP_OFFSET] = {
		"VGEM_P2P_MMAP_OFFSET", ERRS(EINVAL, ENOENT, EFAULT),
		{ [MODE_EXPORTER] = 3, [MODE_BOTH] = 2 },
		op_mmap_offset,
		.under_fences = true,
	},
	[OP_PEER] = {
		"VGEM_P2P_PEER", ERRS(EINVAL, ENODEV, EIO, EFAULT),
		{ [MODE_EXPORTER] = 2, [MODE_BOTH] = 1 },
		op_peer,
		.under_fences = true,
	},
	[OP_DRM_BAD] = {
		"drm unknown nr", ERRS(EINVAL),
		{ [MODE_EXPORTER] = 1, [MODE_BOTH] = 1 },
		op_drm_bad,
		.under_fences = true,
	},
	[OP_MMAP] = {
		"mmap(object)", ERRS(EINVAL, EACCES, ENOMEM),
		{ [MODE_EXPORTER] = 4, [MODE_IMPORTER] = 3, [MODE_BOTH] = 4 },
		op_mmap,
		.under_fences = true,
	},
	[OP_MUNMAP] = {
		"munmap(object)", ERRS(0),
		{ [MODE_EXPORTER] = 2, [MODE_IMPORTER] = 1, [MODE_BOTH] = 2 },
		op_munmap,
		.under_fences = true,
	},
	[OP_TOUCH] = {
		"cpu touch", ERRS(EFAULT),
		{ [MODE_EXPORTER] = 5, [MODE_IMPORTER] = 2, [MODE_BOTH] = 4 },
		op_touch,
	},
	[OP_CLOSE_DMABUF] = {
		"close(dma-buf)", ERRS(0),
		{ [MODE_EXPORTER] = 2, [MODE_BOTH] = 1 },
		op_close_dmabuf,
		.under_fences = true,
	},
};

const struct fz_driver fz_vgem_p2p = { ops, NR_OPS, settle_fences };
