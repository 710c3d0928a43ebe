// SPDX-License-Identifier: MIT
/*
 * A seeded, bounded ioctl fuzzer for vgem_p2p and edu_nic, in the style of
 * syzkaller's DRM descriptions: each ioctl has an argument generator that
 * mixes valid values (live handles, keys, fence ids, dma-buf fds, mmapped
 * ranges, sizes) with random flags, non-zero pads, stale or bad handles,
 * zero, huge and overflowing sizes, unaligned and wrapping ranges and bad
 * fds. Several threads share the object pools. Every errno an ioctl
 * returns must be in the set the uAPI headers document for it.
 *
 * Memory the kernel may write through a generated pointer is always ours
 * to lose: the threads' scratch buffers, the anonymous buffers and the
 * mapping slots, a region reserved PROT_NONE at start where object mmaps
 * come and go with MAP_FIXED, so that nothing else is ever placed there.
 *
 * The seed comes from --seed N, else VP2P_FUZZ_SEED, else the clock; it
 * is printed first. With one thread a run is reproducible; with several,
 * the interleaving is not, but each thread's call sequence is.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <xf86drm.h>

#include "edu_nic_helpers.h"
#include "vgem_p2p_common.h"

IGT_TEST_DESCRIPTION("Seeded ioctl fuzzing of vgem_p2p and edu_nic: every errno must be a documented one.");

#define PAGE		4096ull
#define NR_THREADS	4
#define POOL_OBJS	24
#define POOL_MRS	16
#define POOL_BUFS	8
#define POOL_FENCES	16
#define NR_STALE	8
#define NR_ANON		4
#define ANON_PAGES	8
#define NR_SLOTS	8
#define SLOT_PAGES	16
#define SCRATCH_PAGES	4
#define MAX_ERRNO	134

/* Calls per subtest; both-threads runs this many per thread. */
#define CALLS_EXPORTER	34000
#define CALLS_IMPORTER	30000
#define CALLS_THREAD	9000

enum fz_op {
	OP_CREATE, OP_DUMB_CREATE, OP_MAP_DUMB, OP_GEM_CLOSE, OP_PRIME_EXPORT,
	OP_PRIME_IMPORT, OP_OBJ_INFO, OP_MOVE, OP_MIGRATE, OP_STATS,
	OP_FENCE_ATTACH, OP_FENCE_SIGNAL, OP_MMAP_OFFSET, OP_PEER, OP_DRM_BAD,
	OP_MMAP, OP_MUNMAP, OP_TOUCH, OP_CLOSE_DMABUF,
	OP_REG_MR, OP_DEREG_MR, OP_DMA, OP_MR_STATS, OP_DEV_STATS, OP_DMA_RAW,
	OP_EDU_BAD,
	NR_OPS
};

#define ERRS(...) ((const int []){ __VA_ARGS__, 0 })

/*
 * Each ioctl's documented errnos: the uAPI headers' common rules (pads,
 * flags, handles, keys, -EFAULT for a bad argument pointer, -ENOMEM) plus
 * what each struct's comment lists; the DRM core's own ioctls as 6.1's
 * drm_gem.c, drm_prime.c and drm_dumb_buffers.c return them.
 */
static struct fz_stat {
	const char *name;
	const int *allowed;
	unsigned long calls;
	unsigned long err[MAX_ERRNO];
} stats[NR_OPS] = {
	[OP_CREATE] = { "VGEM_P2P_CREATE", ERRS(EINVAL, ENOSPC, ENOMEM, EFAULT) },
	[OP_DUMB_CREATE] = { "MODE_CREATE_DUMB", ERRS(EINVAL, ENOSPC, ENOMEM, EFAULT) },
	[OP_MAP_DUMB] = { "MODE_MAP_DUMB", ERRS(ENOENT, EINVAL, ENOMEM, EFAULT) },
	[OP_GEM_CLOSE] = { "GEM_CLOSE", ERRS(EINVAL, EFAULT) },
	[OP_PRIME_EXPORT] = { "PRIME_HANDLE_TO_FD", ERRS(EINVAL, ENOENT, ENOMEM, EMFILE, EFAULT) },
	[OP_PRIME_IMPORT] = { "PRIME_FD_TO_HANDLE", ERRS(EBADF, EINVAL, ENOMEM, EFAULT) },
	[OP_OBJ_INFO] = { "VGEM_P2P_OBJ_INFO", ERRS(EINVAL, ENOENT, EFAULT) },
	[OP_MOVE] = { "VGEM_P2P_MOVE", ERRS(EINVAL, ENOENT, EBUSY, ENOSPC, ENOMEM, ENODEV, EFAULT) },
	[OP_MIGRATE] = { "VGEM_P2P_MIGRATE", ERRS(EINVAL, ENODEV, ENOMEM, EDQUOT, EFAULT) },
	[OP_STATS] = { "VGEM_P2P_STATS", ERRS(EINVAL, EFAULT) },
	[OP_FENCE_ATTACH] = { "VGEM_FENCE_ATTACH", ERRS(EINVAL, ENOENT, EBUSY, ENOMEM, EFAULT) },
	[OP_FENCE_SIGNAL] = { "VGEM_FENCE_SIGNAL", ERRS(EINVAL, ENOENT, ETIMEDOUT, EFAULT) },
	[OP_MMAP_OFFSET] = { "VGEM_P2P_MMAP_OFFSET", ERRS(EINVAL, ENOENT, EFAULT) },
	[OP_PEER] = { "VGEM_P2P_PEER", ERRS(EINVAL, ENODEV, EIO, EFAULT) },
	[OP_DRM_BAD] = { "drm unknown nr", ERRS(EINVAL) },
	[OP_MMAP] = { "mmap(object)", ERRS(EINVAL, EACCES, ENOMEM) },
	[OP_MUNMAP] = { "munmap(object)", ERRS(0) },
	[OP_TOUCH] = { "cpu touch", ERRS(EFAULT) },
	[OP_CLOSE_DMABUF] = { "close(dma-buf)", ERRS(0) },
	[OP_REG_MR] = { "EDU_NIC_REG_MR", ERRS(EINVAL, EFAULT, EPERM, ENOMEM, ENODEV, EACCES, EINTR, EBUSY, EIO) },
	[OP_DEREG_MR] = { "EDU_NIC_DEREG_MR", ERRS(EINVAL, ENOENT, EFAULT, EACCES) },
	[OP_DMA] = { "EDU_NIC_DMA", ERRS(EINVAL, ENOENT, EPERM, EFAULT, EIO, EINTR, ENOMEM, ENODEV, EBUSY, EACCES) },
	[OP_MR_STATS] = { "EDU_NIC_MR_STATS", ERRS(EINVAL, ENOENT, EFAULT, EACCES) },
	[OP_DEV_STATS] = { "EDU_NIC_DEV_STATS", ERRS(EINVAL, EFAULT, EACCES) },
	[OP_DMA_RAW] = { "EDU_NIC_DMA_RAW", ERRS(EPERM, EFAULT, EINVAL, ENOMEM, EIO, ENODEV, EACCES) },
	[OP_EDU_BAD] = { "edu unknown cmd", ERRS(ENOTTY, EACCES) },
};

/* Relative weights of the operations, per subtest */
enum fz_mode { MODE_EXPORTER, MODE_IMPORTER, MODE_BOTH };

static const unsigned int weights[3][NR_OPS] = {
	[MODE_EXPORTER] = {
		[OP_CREATE] = 10, [OP_DUMB_CREATE] = 4, [OP_MAP_DUMB] = 5,
		[OP_GEM_CLOSE] = 8, [OP_PRIME_EXPORT] = 4, [OP_PRIME_IMPORT] = 4,
		[OP_OBJ_INFO] = 8, [OP_MOVE] = 10, [OP_MIGRATE] = 6,
		[OP_STATS] = 3, [OP_FENCE_ATTACH] = 4, [OP_FENCE_SIGNAL] = 4,
		[OP_MMAP_OFFSET] = 3, [OP_PEER] = 2,
		[OP_DRM_BAD] = 1, [OP_MMAP] = 4, [OP_MUNMAP] = 2, [OP_TOUCH] = 5,
		[OP_CLOSE_DMABUF] = 2,
	},
	[MODE_IMPORTER] = {
		[OP_CREATE] = 3, [OP_GEM_CLOSE] = 1, [OP_MOVE] = 4,
		[OP_MIGRATE] = 2, [OP_MMAP] = 3, [OP_MUNMAP] = 1, [OP_TOUCH] = 2,
		[OP_REG_MR] = 12, [OP_DEREG_MR] = 6, [OP_DMA] = 20,
		[OP_MR_STATS] = 6, [OP_DEV_STATS] = 3, [OP_DMA_RAW] = 3,
		[OP_EDU_BAD] = 1,
	},
	[MODE_BOTH] = {
		[OP_CREATE] = 6, [OP_DUMB_CREATE] = 2, [OP_MAP_DUMB] = 3,
		[OP_GEM_CLOSE] = 4, [OP_PRIME_EXPORT] = 2, [OP_PRIME_IMPORT] = 2,
		[OP_OBJ_INFO] = 4, [OP_MOVE] = 8, [OP_MIGRATE] = 4,
		[OP_STATS] = 2, [OP_FENCE_ATTACH] = 2, [OP_FENCE_SIGNAL] = 2,
		[OP_MMAP_OFFSET] = 2, [OP_PEER] = 1,
		[OP_DRM_BAD] = 1, [OP_MMAP] = 4, [OP_MUNMAP] = 2, [OP_TOUCH] = 4,
		[OP_CLOSE_DMABUF] = 1,
		[OP_REG_MR] = 8, [OP_DEREG_MR] = 4, [OP_DMA] = 14,
		[OP_MR_STATS] = 3, [OP_DEV_STATS] = 2, [OP_DMA_RAW] = 2,
		[OP_EDU_BAD] = 1,
	},
};

struct fz_obj {
	uint32_t handle;
	uint64_t size;
	uint32_t flags;
};

struct fz_mr {
	uint32_t key;
	uint64_t length;
};

/* A slot of the reserved region: PROT_NONE, or an object's mmap */
struct fz_slot {
	char *ptr;
	uint64_t mapped;	/* bytes of object mapped; 0: PROT_NONE */
	uint32_t flags;		/* the object's */
	bool writable;
};

/*
 * What the threads share. @lock covers the pools' bookkeeping, and the
 * slots across a remap or a CPU touch of one; never an ioctl, so that a
 * slow one does not serialize the others.
 */
struct fz_pool {
	pthread_mutex_t lock;
	int vfd, efd;
	uint64_t vram_size;
	uint64_t vram_bus;	/* the BAR as the edu device may see it */
	bool has_devmem;

	struct fz_obj objs[POOL_OBJS];
	int nobjs;
	struct fz_mr mrs[POOL_MRS];
	int nmrs;
	int bufs[POOL_BUFS];
	int nbufs;
	uint32_t fences[POOL_FENCES];
	int nfences;
	uint32_t stale_handles[NR_STALE], stale_keys[NR_STALE];
	int stale_fds[NR_STALE];
	unsigned int stale_next;

	char *anon[NR_ANON];
	char *ro;		/* private, read-only */
	char *none;		/* PROT_NONE, never mapped */
	char *slots_base;
	struct fz_slot slots[NR_SLOTS];
	int memfd;
};

struct fz_thread {
	struct fz_pool *pool;
	enum fz_mode mode;
	int id;
	uint64_t rng;
	unsigned long calls, ncalls;
	char *scratch;
	pthread_t tid;
};

static struct fz_pool pool;
static uint64_t base_seed;
static unsigned long total_calls;

static pthread_mutex_t violation_lock = PTHREAD_MUTEX_INITIALIZER;
static char violation[512];

/* xorshift64*, seeded through splitmix64 */
static uint64_t splitmix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t rnd(struct fz_thread *t)
{
	t->rng ^= t->rng >> 12;
	t->rng ^= t->rng << 25;
	t->rng ^= t->rng >> 27;
	return t->rng * 2685821657736338717ull;
}

static uint64_t below(struct fz_thread *t, uint64_t n)
{
	return n ? rnd(t) % n : 0;
}

/* True with probability 1/n */
static bool one_in(struct fz_thread *t, uint64_t n)
{
	return below(t, n) == 0;
}

/* Values that break size, offset and length checks */
static uint64_t evil_u64(struct fz_thread *t)
{
	static const uint64_t v[] = {
		0, 1, PAGE - 1, PAGE + 1, ~0ull, ~0ull - PAGE + 1, ~0ull - PAGE,
		1ull << 63, 1ull << 47, (1ull << 47) - PAGE, 1ull << 44,
		0xffff888000000000ull, 0x7fffffff, 0x80000000, 0xffffffffull,
	};

	if (one_in(t, 4))
		return rnd(t);
	return v[below(t, ARRAY_SIZE(v))];
}

/* A flags word: mostly valid bits, sometimes anything */
static uint32_t gen_flags(struct fz_thread *t, uint32_t valid)
{
	if (one_in(t, 8))
		return (uint32_t)rnd(t) | (~valid & (1u << below(t, 32)));
	return (uint32_t)rnd(t) & valid;
}

/* A pad: zero, except sometimes */
static uint32_t gen_pad(struct fz_thread *t)
{
	return one_in(t, 16) ? (uint32_t)rnd(t) | 1 : 0;
}

/* Whatever the errno, count it; remember the first undocumented one. */
static void note(struct fz_thread *t, enum fz_op op, int err)
{
	struct fz_stat *s = &stats[op];
	const int *a;

	__atomic_add_fetch(&s->calls, 1, __ATOMIC_RELAXED);
	t->calls++;
	if (err < 0 || err >= MAX_ERRNO)
		err = MAX_ERRNO - 1;
	__atomic_add_fetch(&s->err[err], 1, __ATOMIC_RELAXED);
	if (!err)
		return;
	for (a = s->allowed; *a; a++)
		if (*a == err)
			return;
	pthread_mutex_lock(&violation_lock);
	if (!violation[0])
		snprintf(violation, sizeof(violation),
			 "%s returned undocumented %s (thread %d, call %lu, seed %" PRIu64 ")",
			 s->name, strerrorname_np(err) ?: "?", t->id, t->calls,
			 base_seed);
	pthread_mutex_unlock(&violation_lock);
}

/* The ioctl, counted; 0 or a positive errno. Sometimes a bad arg pointer. */
static int fz_ioctl(struct fz_thread *t, enum fz_op op, int fd,
		    unsigned long req, void *arg)
{
	int ret;

	if (one_in(t, 400))
		arg = one_in(t, 2) ? NULL : (void *)t->pool->none;
	ret = ioctl(fd, req, arg) ? errno : 0;
	note(t, op, ret);
	return ret;
}

/* Pools: pick under the lock; an entry may be gone by the time it is used */

static void stale_push(struct fz_pool *p, uint32_t *ring, uint32_t v)
{
	ring[p->stale_next++ % NR_STALE] = v;
}

static uint32_t gen_handle(struct fz_thread *t, uint64_t *size, uint32_t *flags)
{
	struct fz_pool *p = t->pool;
	uint32_t h;

	*size = 0;
	*flags = 0;
	pthread_mutex_lock(&p->lock);
	if (p->nobjs && !one_in(t, 6)) {
		struct fz_obj *o = &p->objs[below(t, p->nobjs)];

		h = o->handle;
		*size = o->size;
		*flags = o->flags;
	} else if (one_in(t, 2)) {
		h = p->stale_handles[below(t, NR_STALE)];
	} else {
		h = one_in(t, 2) ? 0 : (uint32_t)rnd(t);
	}
	pthread_mutex_unlock(&p->lock);
	return h;
}

static void gem_close_counted(struct fz_thread *t, uint32_t handle)
{
	struct drm_gem_close c = { .handle = handle };

	note(t, OP_GEM_CLOSE,
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
		i = below(t, POOL_OBJS);
		victim = p->objs[i].handle;
		stale_push(p, p->stale_handles, victim);
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
			stale_push(p, p->stale_handles, handle);
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

/*
 * An address range the kernel may read and write, or a bad one. @len is
 * in: the wanted length, out: what the range really has behind it.
 */
static char *gen_range(struct fz_thread *t, uint64_t *len, bool aligned)
{
	struct fz_pool *p = t->pool;
	uint64_t pages;
	char *base;

	switch (below(t, 8)) {
	case 0:
	case 1:
	case 2:
		base = p->anon[below(t, NR_ANON)];
		pages = ANON_PAGES;
		break;
	case 3:
	case 4:
		/* one slot or several, mapped or not: cross-vma ranges */
		pages = below(t, NR_SLOTS);
		base = p->slots_base + pages * SLOT_PAGES * PAGE;
		pages = (NR_SLOTS - pages) * SLOT_PAGES;
		break;
	case 5:
		base = p->ro;
		pages = 2;
		break;
	case 6:
		base = p->none;
		pages = 2;
		break;
	default:
		*len = evil_u64(t);
		return (char *)(uintptr_t)(evil_u64(t) &
					   (aligned ? ~(PAGE - 1) : ~0ull));
	}
	if (!*len || *len > pages * PAGE)
		*len = (1 + below(t, pages)) * PAGE;
	if (aligned)
		base += below(t, pages - *len / PAGE + 1) * PAGE;
	else
		base += below(t, pages * PAGE - *len + 1);
	if (one_in(t, 16))
		*len = evil_u64(t);
	else if (one_in(t, 16))
		*len += 1 + below(t, PAGE - 1);
	return base;
}

/* A user buffer for DMA: scratch mostly, or anything gen_range() gives */
static char *gen_buf(struct fz_thread *t, uint64_t len)
{
	uint64_t l = len;

	if (len <= (SCRATCH_PAGES - 1) * PAGE && !one_in(t, 4))
		return t->scratch + below(t, PAGE);
	return gen_range(t, &l, false);
}

/* DRM ops */

static void op_create(struct fz_thread *t)
{
	struct drm_vgem_p2p_create c = {};

	c.flags = gen_flags(t, VGEM_P2P_CREATE_FLAGS);
	if (one_in(t, 1000) && !(c.flags & VGEM_P2P_CREATE_SYSTEM))
		/* big enough to make VRAM compact and evict */
		c.size = (16 + below(t, 24)) << 20;
	else if (one_in(t, 6))
		c.size = evil_u64(t);
	else
		c.size = 1 + below(t, 16 * PAGE);
	/* sizes between "small" and "more than RAM" would only be slow */
	if ((c.flags & VGEM_P2P_CREATE_SYSTEM) && c.size > 16 * PAGE &&
	    c.size < (1ull << 44))
		c.size = 1ull << 44;
	c.handle = (uint32_t)rnd(t);
	if (!fz_ioctl(t, OP_CREATE, t->pool->vfd, DRM_IOCTL_VGEM_P2P_CREATE, &c))
		obj_add(t, c.handle, c.size, c.flags);
}

static void op_dumb_create(struct fz_thread *t)
{
	struct drm_mode_create_dumb d = {};

	if (one_in(t, 5)) {
		d.width = one_in(t, 2) ? (uint32_t)rnd(t) : ~0u;
		d.height = one_in(t, 2) ? (uint32_t)evil_u64(t) : 1;
		d.bpp = one_in(t, 2) ? (uint32_t)evil_u64(t) : 32;
	} else {
		d.width = 1 + below(t, 256);
		d.height = 1 + below(t, 64);
		d.bpp = 8 << below(t, 3);
	}
	d.flags = gen_pad(t);
	d.handle = (uint32_t)rnd(t);
	if (!fz_ioctl(t, OP_DUMB_CREATE, t->pool->vfd,
		      DRM_IOCTL_MODE_CREATE_DUMB, &d))
		obj_add(t, d.handle, d.size, 0);
}

static void op_map_dumb(struct fz_thread *t)
{
	struct drm_mode_map_dumb m = {};
	uint64_t size;
	uint32_t flags;

	m.handle = gen_handle(t, &size, &flags);
	m.pad = gen_pad(t);
	fz_ioctl(t, OP_MAP_DUMB, t->pool->vfd, DRM_IOCTL_MODE_MAP_DUMB, &m);
}

static void op_gem_close(struct fz_thread *t)
{
	struct drm_gem_close c = {};
	uint64_t size;
	uint32_t flags;

	c.handle = gen_handle(t, &size, &flags);
	c.pad = gen_pad(t);
	/* forget it first: others then stop picking it */
	obj_forget(t->pool, c.handle);
	fz_ioctl(t, OP_GEM_CLOSE, t->pool->vfd, DRM_IOCTL_GEM_CLOSE, &c);
}

static void op_prime_export(struct fz_thread *t)
{
	struct fz_pool *p = t->pool;
	struct drm_prime_handle h = {};
	uint64_t size;
	uint32_t flags;
	int victim = -1;

	h.handle = gen_handle(t, &size, &flags);
	h.flags = gen_flags(t, DRM_CLOEXEC | DRM_RDWR) | DRM_CLOEXEC;
	h.fd = (int)rnd(t);
	if (fz_ioctl(t, OP_PRIME_EXPORT, p->vfd, DRM_IOCTL_PRIME_HANDLE_TO_FD,
		     &h))
		return;
	pthread_mutex_lock(&p->lock);
	if (p->nbufs == POOL_BUFS) {
		int i = below(t, POOL_BUFS);

		victim = p->bufs[i];
		p->bufs[i] = p->bufs[--p->nbufs];
		p->stale_fds[p->stale_next++ % NR_STALE] = victim;
	}
	p->bufs[p->nbufs++] = h.fd;
	pthread_mutex_unlock(&p->lock);
	if (victim >= 0)
		note(t, OP_CLOSE_DMABUF, close(victim) ? errno : 0);
}

static void op_close_dmabuf(struct fz_thread *t)
{
	struct fz_pool *p = t->pool;
	int fd = -1, i;

	pthread_mutex_lock(&p->lock);
	if (p->nbufs) {
		i = below(t, p->nbufs);
		fd = p->bufs[i];
		p->bufs[i] = p->bufs[--p->nbufs];
		p->stale_fds[p->stale_next++ % NR_STALE] = fd;
	}
	pthread_mutex_unlock(&p->lock);
	if (fd >= 0)
		note(t, OP_CLOSE_DMABUF, close(fd) ? errno : 0);
}

static void op_prime_import(struct fz_thread *t)
{
	struct fz_pool *p = t->pool;
	struct drm_prime_handle h = {};

	pthread_mutex_lock(&p->lock);
	switch (below(t, 6)) {
	case 0:
	case 1:
		h.fd = p->nbufs ? p->bufs[below(t, p->nbufs)] : -1;
		break;
	case 2:
		/* a closed fd number, maybe reused by now: only read */
		h.fd = p->stale_fds[below(t, NR_STALE)];
		break;
	case 3:
		h.fd = one_in(t, 2) ? p->memfd : p->vfd;
		break;
	case 4:
		h.fd = p->efd;
		break;
	default:
		h.fd = one_in(t, 2) ? -1 : (int)rnd(t);
		break;
	}
	pthread_mutex_unlock(&p->lock);
	h.flags = gen_pad(t);
	if (fz_ioctl(t, OP_PRIME_IMPORT, p->vfd, DRM_IOCTL_PRIME_FD_TO_HANDLE,
		     &h))
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
	i.pad = gen_pad(t);
	i.reason = (uint32_t)rnd(t);
	fz_ioctl(t, OP_OBJ_INFO, t->pool->vfd, DRM_IOCTL_VGEM_P2P_OBJ_INFO, &i);
}

static void op_move(struct fz_thread *t)
{
	struct fz_pool *p = t->pool;
	struct drm_vgem_p2p_move m = {};
	uint64_t size;
	uint32_t flags;

	m.handle = gen_handle(t, &size, &flags);
	m.target = one_in(t, 12) ? (uint32_t)evil_u64(t) : below(t, 3);
	if (m.target == VGEM_P2P_MOVE_VRAM_AT) {
		switch (below(t, 6)) {
		case 0:
			m.offset = evil_u64(t);
			break;
		case 1:
			m.offset = p->vram_size - below(t, 4) * PAGE;
			break;
		case 2:
			m.offset = below(t, p->vram_size);
			break;
		default:
			m.offset = below(t, p->vram_size / PAGE) * PAGE;
			break;
		}
	} else if (one_in(t, 12)) {
		m.offset = evil_u64(t);
	}
	m.flags = gen_pad(t);
	m.pad = gen_pad(t);
	fz_ioctl(t, OP_MOVE, p->vfd, DRM_IOCTL_VGEM_P2P_MOVE, &m);
}

static void op_migrate(struct fz_thread *t)
{
	struct drm_vgem_p2p_migrate m = {};
	uint64_t len = (1 + below(t, 4)) * PAGE;

	m.addr = (uintptr_t)gen_range(t, &len, !one_in(t, 16));
	m.size = len;
	m.direction = one_in(t, 16) ? (uint32_t)rnd(t) : below(t, 2);
	m.flags = gen_pad(t);
	m.npages = rnd(t);
	fz_ioctl(t, OP_MIGRATE, t->pool->vfd, DRM_IOCTL_VGEM_P2P_MIGRATE, &m);
}

static void op_stats(struct fz_thread *t)
{
	struct drm_vgem_p2p_stats s = {};

	s.flags = gen_pad(t);
	s.pad = gen_pad(t);
	fz_ioctl(t, OP_STATS, t->pool->vfd, DRM_IOCTL_VGEM_P2P_STATS, &s);
}

static void op_fence_attach(struct fz_thread *t)
{
	struct fz_pool *p = t->pool;
	struct drm_vgem_fence_attach a = {};
	uint64_t size;
	uint32_t flags;

	a.handle = gen_handle(t, &size, &flags);
	a.flags = gen_flags(t, VGEM_FENCE_WRITE);
	a.pad = gen_pad(t);
	if (fz_ioctl(t, OP_FENCE_ATTACH, p->vfd, DRM_IOCTL_VGEM_FENCE_ATTACH,
		     &a))
		return;
	pthread_mutex_lock(&p->lock);
	if (p->nfences < POOL_FENCES)
		p->fences[p->nfences++] = a.out_fence;
	else
		p->fences[below(t, POOL_FENCES)] = a.out_fence;
	pthread_mutex_unlock(&p->lock);
}

static void op_fence_signal(struct fz_thread *t)
{
	struct fz_pool *p = t->pool;
	struct drm_vgem_fence_signal s = {};

	pthread_mutex_lock(&p->lock);
	if (p->nfences && !one_in(t, 4))
		s.fence = p->fences[below(t, p->nfences)];
	else
		s.fence = one_in(t, 2) ? 0 : (uint32_t)rnd(t);
	pthread_mutex_unlock(&p->lock);
	s.flags = gen_pad(t);
	fz_ioctl(t, OP_FENCE_SIGNAL, p->vfd, DRM_IOCTL_VGEM_FENCE_SIGNAL, &s);
}

static void op_mmap_offset(struct fz_thread *t)
{
	struct drm_vgem_p2p_mmap_offset o = {};
	uint64_t size;
	uint32_t flags;

	o.handle = gen_handle(t, &size, &flags);
	o.flags = gen_pad(t);
	o.offset = rnd(t);	/* out only: any value must be ignored */
	fz_ioctl(t, OP_MMAP_OFFSET, t->pool->vfd,
		 DRM_IOCTL_VGEM_P2P_MMAP_OFFSET, &o);
}

/* Mostly the guest's own low buses, where devices exist; else anything */
static void op_peer(struct fz_thread *t)
{
	struct drm_vgem_p2p_peer q = {};

	if (one_in(t, 4)) {
		q.domain = (uint32_t)rnd(t);
		q.bus = (uint32_t)rnd(t);
		q.devfn = (uint32_t)rnd(t);
	} else {
		q.bus = below(t, 8);
		q.devfn = below(t, 256);
	}
	q.flags = gen_pad(t);
	q.reachable = (uint32_t)rnd(t);
	q.path = (uint32_t)rnd(t);
	fz_ioctl(t, OP_PEER, t->pool->vfd, DRM_IOCTL_VGEM_P2P_PEER, &q);
}

/* A driver ioctl number vgem_p2p does not have */
static void op_drm_bad(struct fz_thread *t)
{
	uint64_t arg[16] = {};
	unsigned int first = DRM_COMMAND_BASE + DRM_VGEM_P2P_PEER + 1;
	unsigned int nr = first + below(t, DRM_COMMAND_END - first);

	fz_ioctl(t, OP_DRM_BAD, t->pool->vfd, DRM_IOWR(nr, arg), arg);
}

/* CPU mappings in the slots */

static void slot_reset(struct fz_slot *s)
{
	void *ret = mmap(s->ptr, SLOT_PAGES * PAGE, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);

	s->mapped = 0;
	s->flags = 0;
	s->writable = false;
	if (ret == MAP_FAILED)
		s->mapped = errno;	/* noted by the caller */
}

static void op_mmap(struct fz_thread *t)
{
	struct fz_pool *p = t->pool;
	struct drm_mode_map_dumb m = {};
	struct fz_slot *s;
	uint64_t size, len;
	uint32_t flags;
	int prot, mflags;
	void *ret;

	m.handle = gen_handle(t, &size, &flags);
	if (ioctl(p->vfd, DRM_IOCTL_MODE_MAP_DUMB, &m)) {
		note(t, OP_MAP_DUMB, errno);
		return;
	}
	note(t, OP_MAP_DUMB, 0);
	len = size ? size : PAGE;
	if (one_in(t, 4))
		len = (1 + below(t, SLOT_PAGES)) * PAGE;
	len = len > SLOT_PAGES * PAGE ? SLOT_PAGES * PAGE : len;
	if (one_in(t, 16))
		m.offset += below(t, 64) * PAGE;
	prot = one_in(t, 4) ? PROT_READ : PROT_READ | PROT_WRITE;
	mflags = one_in(t, 16) ? MAP_PRIVATE : MAP_SHARED;

	pthread_mutex_lock(&p->lock);
	s = &p->slots[below(t, NR_SLOTS)];
	ret = mmap(s->ptr, len, prot, mflags | MAP_FIXED, p->vfd, m.offset);
	note(t, OP_MMAP, ret == MAP_FAILED ? errno : 0);
	if (ret == MAP_FAILED) {
		/* a failed MAP_FIXED leaves a hole: reserve it again */
		slot_reset(s);
		note(t, OP_MUNMAP, s->mapped);
		s->mapped = 0;
	} else {
		/* the rest of the slot keeps what it had: call it lost */
		s->mapped = len;
		s->flags = flags;
		s->writable = prot & PROT_WRITE;
	}
	pthread_mutex_unlock(&p->lock);
}

static void op_munmap(struct fz_thread *t)
{
	struct fz_pool *p = t->pool;
	struct fz_slot *s;
	int err;

	pthread_mutex_lock(&p->lock);
	s = &p->slots[below(t, NR_SLOTS)];
	slot_reset(s);
	err = s->mapped;
	s->mapped = 0;
	pthread_mutex_unlock(&p->lock);
	note(t, OP_MUNMAP, err);
}

/*
 * A CPU touch of a device-only object gets SIGBUS by design, and with
 * several threads the pool's idea of which object a slot maps can be
 * stale; so a touch runs under a SIGBUS catcher, and SIGBUS counts as
 * its EFAULT.
 */
static __thread sigjmp_buf *volatile touch_jmp;

/* Outside a touch: back to the default, and the access faults again */
static void touch_sigbus(int sig)
{
	if (!touch_jmp) {
		signal(sig, SIG_DFL);
		return;
	}
	siglongjmp(*touch_jmp, 1);
}

/*
 * Read, and maybe write, a word of a mapping: faults move evicted objects
 * back and migrate device-private pages to RAM.
 */
static void op_touch(struct fz_thread *t)
{
	struct fz_pool *p = t->pool;
	volatile uint32_t *w;
	struct fz_slot *s;
	sigjmp_buf jmp;

	if (one_in(t, 2)) {
		w = (uint32_t *)(p->anon[below(t, NR_ANON)] +
				 below(t, ANON_PAGES) * PAGE);
		*w += 1;
		note(t, OP_TOUCH, 0);
		return;
	}
	pthread_mutex_lock(&p->lock);
	s = &p->slots[below(t, NR_SLOTS)];
	if (s->mapped) {
		w = (uint32_t *)(s->ptr + below(t, s->mapped / PAGE) * PAGE);
		if (sigsetjmp(jmp, 1)) {
			touch_jmp = NULL;
			note(t, OP_TOUCH, EFAULT);
		} else {
			touch_jmp = &jmp;
			if (s->writable)
				*w += 1;
			else
				(void)*w;
			touch_jmp = NULL;
			note(t, OP_TOUCH, 0);
		}
	}
	pthread_mutex_unlock(&p->lock);
}

/* edu_nic ops */

static uint32_t gen_key(struct fz_thread *t, uint64_t *length)
{
	struct fz_pool *p = t->pool;
	uint32_t key;

	*length = 0;
	pthread_mutex_lock(&p->lock);
	if (p->nmrs && !one_in(t, 6)) {
		struct fz_mr *mr = &p->mrs[below(t, p->nmrs)];

		key = mr->key;
		*length = mr->length;
	} else if (one_in(t, 2)) {
		key = p->stale_keys[below(t, NR_STALE)];
	} else {
		key = one_in(t, 2) ? 0 : (uint32_t)rnd(t);
	}
	pthread_mutex_unlock(&p->lock);
	return key;
}

static void dereg_counted(struct fz_thread *t, uint32_t key)
{
	struct edu_nic_dereg_mr d = { .key = key };

	note(t, OP_DEREG_MR,
	     ioctl(t->pool->efd, EDU_NIC_IOCTL_DEREG_MR, &d) ? errno : 0);
}

static bool mr_forget(struct fz_pool *p, uint32_t key)
{
	bool found = false;
	int i;

	pthread_mutex_lock(&p->lock);
	for (i = 0; i < p->nmrs; i++) {
		if (p->mrs[i].key == key) {
			p->mrs[i] = p->mrs[--p->nmrs];
			stale_push(p, p->stale_keys, key);
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&p->lock);
	return found;
}

static void op_reg_mr(struct fz_thread *t)
{
	struct fz_pool *p = t->pool;
	struct edu_nic_reg_mr r = {};
	uint64_t len = (1 + below(t, 8)) * PAGE;
	uint32_t victim = 0;

	r.addr = (uintptr_t)gen_range(t, &len, !one_in(t, 16));
	r.length = len;
	r.access = one_in(t, 10) ? gen_flags(t, ~0u) :
		   1 + below(t, EDU_NIC_ACCESS_MASK);
	r.flags = gen_flags(t, EDU_NIC_REG_MR_FLAGS);
	r.key = one_in(t, 16) ? (uint32_t)rnd(t) : 0;
	r.pad = gen_pad(t);
	if (fz_ioctl(t, OP_REG_MR, p->efd, EDU_NIC_IOCTL_REG_MR, &r))
		return;
	pthread_mutex_lock(&p->lock);
	if (p->nmrs == POOL_MRS) {
		int i = below(t, POOL_MRS);

		victim = p->mrs[i].key;
		stale_push(p, p->stale_keys, victim);
		p->mrs[i] = p->mrs[--p->nmrs];
	}
	p->mrs[p->nmrs++] = (struct fz_mr){ r.key, r.length };
	pthread_mutex_unlock(&p->lock);
	if (victim)
		dereg_counted(t, victim);
}

static void op_dereg_mr(struct fz_thread *t)
{
	struct edu_nic_dereg_mr d = {};
	uint64_t length;

	d.key = gen_key(t, &length);
	d.pad = gen_pad(t);
	mr_forget(t->pool, d.key);
	fz_ioctl(t, OP_DEREG_MR, t->pool->efd, EDU_NIC_IOCTL_DEREG_MR, &d);
}

/*
 * Bulk mode is a CPU copy: cheap. The edu engine takes milliseconds per
 * command under TCG, so device mode is rare and a few bytes long.
 */
static void op_dma(struct fz_thread *t)
{
	struct edu_nic_dma d = {};
	uint64_t mr_len;

	d.key = gen_key(t, &mr_len);
	d.direction = one_in(t, 16) ? (uint32_t)rnd(t) : below(t, 2);
	d.mode = EDU_NIC_MODE_BULK;
	if (mr_len && one_in(t, 400)) {
		d.mode = EDU_NIC_MODE_DEVICE;
		d.length = 1 + below(t, 64);
		d.offset = below(t, mr_len - d.length + 1);
	} else if (mr_len && !one_in(t, 6)) {
		d.length = 1 + below(t, mr_len < 2 * PAGE ? mr_len : 2 * PAGE);
		d.offset = below(t, mr_len - d.length + 1);
	} else {
		d.length = evil_u64(t);
		d.offset = one_in(t, 2) ? evil_u64(t) : mr_len;
		if (one_in(t, 8))
			d.mode = 2 + below(t, 100);
	}
	d.user_ptr = (uintptr_t)gen_buf(t, d.length);
	d.flags = gen_pad(t);
	fz_ioctl(t, OP_DMA, t->pool->efd, EDU_NIC_IOCTL_DMA, &d);
}

static void op_mr_stats(struct fz_thread *t)
{
	struct edu_nic_mr_stats s = {};
	uint64_t length;

	s.key = gen_key(t, &length);
	s.pad = gen_pad(t);
	s.state = (uint32_t)rnd(t);
	fz_ioctl(t, OP_MR_STATS, t->pool->efd, EDU_NIC_IOCTL_MR_STATS, &s);
}

static void op_dev_stats(struct fz_thread *t)
{
	struct edu_nic_dev_stats s = {};

	s.flags = gen_pad(t);
	s.caps = (uint32_t)rnd(t);
	fz_ioctl(t, OP_DEV_STATS, t->pool->efd, EDU_NIC_IOCTL_DEV_STATS, &s);
}

/*
 * Raw reads of bus addresses: only of the exporter's BAR or of addresses
 * nothing decodes; any other address could be a device register. A real
 * read is three engine commands, so it is rare; the rest fail validation.
 */
static void op_dma_raw(struct fz_thread *t)
{
	struct fz_pool *p = t->pool;
	struct edu_nic_dma_raw r = {};

	if (one_in(t, 100)) {
		r.bus_addr = one_in(t, 2) && p->vram_bus ?
			     p->vram_bus + below(t, p->vram_size - PAGE) :
			     (1ull << 46) + below(t, 1ull << 30);
		r.length = 1 + below(t, 64);
	} else {
		switch (below(t, 4)) {
		case 0:
			r.length = 0;
			break;
		case 1:
			r.length = EDU_NIC_DMA_RAW_MAX + 1 + below(t, 1 << 20);
			break;
		case 2:
			r.length = 1 + below(t, 64);
			r.bus_addr = ~0ull - below(t, r.length - 1);
			break;
		default:
			r.length = 1 + below(t, 64);
			r.flags = (uint32_t)rnd(t) | 1;
			r.pad = (uint32_t)rnd(t);
			break;
		}
		if (!r.bus_addr)
			r.bus_addr = p->vram_bus;
	}
	r.user_ptr = (uintptr_t)gen_buf(t, r.length);
	fz_ioctl(t, OP_DMA_RAW, p->efd, EDU_NIC_IOCTL_DMA_RAW, &r);
}

static void op_edu_bad(struct fz_thread *t)
{
	uint64_t arg[16] = {};
	unsigned int nr = 6 + below(t, 250);

	fz_ioctl(t, OP_EDU_BAD, t->pool->efd,
		 one_in(t, 2) ? _IOWR(EDU_NIC_IOCTL_BASE, nr, arg) :
				_IOW('d', nr, uint64_t), arg);
}

static void (*const op_fns[NR_OPS])(struct fz_thread *t) = {
	[OP_CREATE] = op_create, [OP_DUMB_CREATE] = op_dumb_create,
	[OP_MAP_DUMB] = op_map_dumb, [OP_GEM_CLOSE] = op_gem_close,
	[OP_PRIME_EXPORT] = op_prime_export,
	[OP_PRIME_IMPORT] = op_prime_import, [OP_OBJ_INFO] = op_obj_info,
	[OP_MOVE] = op_move, [OP_MIGRATE] = op_migrate, [OP_STATS] = op_stats,
	[OP_FENCE_ATTACH] = op_fence_attach,
	[OP_FENCE_SIGNAL] = op_fence_signal,
	[OP_MMAP_OFFSET] = op_mmap_offset, [OP_PEER] = op_peer,
	[OP_DRM_BAD] = op_drm_bad,
	[OP_MMAP] = op_mmap, [OP_MUNMAP] = op_munmap, [OP_TOUCH] = op_touch,
	[OP_CLOSE_DMABUF] = op_close_dmabuf,
	[OP_REG_MR] = op_reg_mr, [OP_DEREG_MR] = op_dereg_mr, [OP_DMA] = op_dma,
	[OP_MR_STATS] = op_mr_stats, [OP_DEV_STATS] = op_dev_stats,
	[OP_DMA_RAW] = op_dma_raw, [OP_EDU_BAD] = op_edu_bad,
};

static enum fz_op pick_op(struct fz_thread *t)
{
	const unsigned int *w = weights[t->mode];
	unsigned int sum = 0, r;
	int i;

	for (i = 0; i < NR_OPS; i++)
		sum += w[i];
	r = below(t, sum);
	for (i = 0; i < NR_OPS; i++) {
		if (r < w[i])
			break;
		r -= w[i];
	}
	return i;
}

static void *fz_thread_main(void *arg)
{
	struct fz_thread *t = arg;

	while (t->calls < t->ncalls)
		op_fns[pick_op(t)](t);
	return NULL;
}

/* Setup and teardown */

static uint64_t vram_bus_addr(int vfd)
{
	unsigned long long start = 0, end, flags;
	char path[96];
	struct stat st;
	FILE *f;
	int i;

	if (fstat(vfd, &st))
		return 0;
	snprintf(path, sizeof(path), "/sys/dev/char/%u:%u/device/resource",
		 major(st.st_rdev), minor(st.st_rdev));
	f = fopen(path, "r");
	if (!f)
		return 0;
	for (i = 0; i <= 2; i++)
		if (fscanf(f, "%llx %llx %llx", &start, &end, &flags) != 3)
			start = 0;
	fclose(f);
	return start;
}

static void *map_anon(size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	igt_assert(p != MAP_FAILED);
	return p;
}

static void pool_init(struct fz_pool *p, bool importer)
{
	struct drm_vgem_p2p_stats s = {};
	int i;

	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->lock, NULL);
	p->vfd = vgem_p2p_open_nth(0);
	igt_require_f(p->vfd >= 0, "no vgem_p2p device\n");
	p->efd = -1;
	if (importer) {
		p->efd = edu_open_nth(0);
		igt_require_f(p->efd >= 0, "no /dev/edu_nic0\n");
	}
	do_ioctl(p->vfd, DRM_IOCTL_VGEM_P2P_STATS, &s);
	p->vram_size = s.vram_size;
	p->has_devmem = s.devmem_size;
	p->vram_bus = vram_bus_addr(p->vfd);

	for (i = 0; i < NR_ANON; i++) {
		p->anon[i] = map_anon(ANON_PAGES * PAGE, PROT_READ | PROT_WRITE);
		memset(p->anon[i], i + 1, ANON_PAGES * PAGE);
	}
	p->ro = map_anon(2 * PAGE, PROT_READ);
	p->none = map_anon(2 * PAGE, PROT_NONE);
	p->slots_base = map_anon(NR_SLOTS * SLOT_PAGES * PAGE, PROT_NONE);
	for (i = 0; i < NR_SLOTS; i++)
		p->slots[i].ptr = p->slots_base + i * SLOT_PAGES * PAGE;
	p->memfd = memfd_create("p2p_fuzz", MFD_CLOEXEC);
	igt_assert_fd(p->memfd);
	for (i = 0; i < NR_STALE; i++) {
		p->stale_handles[i] = i + 1;
		p->stale_keys[i] = i + 1;
		p->stale_fds[i] = -1;
	}
}

/* Release everything; the drivers' counts must be back where they were */
static void pool_fini(struct fz_pool *p, uint64_t nr_mrs_before)
{
	int i;

	for (i = 0; i < NR_SLOTS; i++)
		slot_reset(&p->slots[i]);
	if (p->efd >= 0) {
		/*
		 * Registrations whose DEREG_MR failed (a bad pad, say) were
		 * forgotten by the pool: closing the file releases them.
		 */
		for (i = 0; i < p->nmrs; i++)
			edu_dereg_err(p->efd, p->mrs[i].key);
		close(p->efd);
		p->efd = edu_open();
		igt_assert_eq_u64(edu_dev_stats(p->efd).stats.nr_mrs,
				  nr_mrs_before);
		close(p->efd);
	}
	for (i = 0; i < p->nbufs; i++)
		close(p->bufs[i]);
	close(p->vfd);
	close(p->memfd);
	for (i = 0; i < NR_ANON; i++)
		munmap(p->anon[i], ANON_PAGES * PAGE);
	munmap(p->ro, 2 * PAGE);
	munmap(p->none, 2 * PAGE);
	munmap(p->slots_base, NR_SLOTS * SLOT_PAGES * PAGE);
}

static void print_histograms(void)
{
	char line[1024];
	int i, e, n;

	for (i = 0; i < NR_OPS; i++) {
		if (!stats[i].calls)
			continue;
		n = snprintf(line, sizeof(line), "  %-20s %7lu calls: ok %lu",
			     stats[i].name, stats[i].calls, stats[i].err[0]);
		for (e = 1; e < MAX_ERRNO && n < (int)sizeof(line) - 32; e++)
			if (stats[i].err[e])
				n += snprintf(line + n, sizeof(line) - n,
					      ", %s %lu",
					      strerrorname_np(e) ?: "?",
					      stats[i].err[e]);
		igt_info("%s\n", line);
	}
}

/* A marker in the kernel log, as IGT leaves them, to place a splat */
static void kmsg(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int fd, n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fd = open("/dev/kmsg", O_WRONLY);
	if (fd < 0)
		return;
	if (write(fd, buf, n) != n)
		igt_debug("short write to /dev/kmsg\n");
	close(fd);
}

static void run(enum fz_mode mode, int nthreads, unsigned long calls)
{
	struct fz_thread threads[NR_THREADS] = {};
	uint64_t nr_mrs = 0;
	unsigned long sum = 0;
	time_t start = time(NULL);
	int i;

	for (i = 0; i < NR_OPS; i++) {
		stats[i].calls = 0;
		memset(stats[i].err, 0, sizeof(stats[i].err));
	}
	violation[0] = '\0';
	kmsg("[IGT] p2p_fuzz: %s, seed %" PRIu64 "\n", igt_subtest_name(),
	     base_seed);
	pool_init(&pool, mode != MODE_EXPORTER);
	if (pool.efd >= 0)
		nr_mrs = edu_dev_stats(pool.efd).stats.nr_mrs;

	for (i = 0; i < nthreads; i++) {
		struct fz_thread *t = &threads[i];

		t->pool = &pool;
		t->mode = mode;
		t->id = i;
		t->rng = splitmix(base_seed ^ splitmix(mode * 16 + i + 1)) | 1;
		t->ncalls = calls;
		t->scratch = map_anon(SCRATCH_PAGES * PAGE,
				      PROT_READ | PROT_WRITE);
		igt_assert_eq(pthread_create(&t->tid, NULL, fz_thread_main, t),
			      0);
	}
	for (i = 0; i < nthreads; i++) {
		pthread_join(threads[i].tid, NULL);
		munmap(threads[i].scratch, SCRATCH_PAGES * PAGE);
		sum += threads[i].calls;
	}
	pool_fini(&pool, nr_mrs);

	total_calls += sum;
	kmsg("[IGT] p2p_fuzz: %s, %lu calls in %ld s\n", igt_subtest_name(),
	     sum, (long)(time(NULL) - start));
	igt_info("%lu calls in %ld s, seed %" PRIu64 "; %lu in this run so far\n",
		 sum, (long)(time(NULL) - start), base_seed, total_calls);
	print_histograms();
	igt_assert_f(!violation[0], "%s\n", violation);
}

/* --seed N / --seed=N, taken out of argv before IGT parses it */
static void parse_seed(int *argc, char **argv)
{
	const char *src = "clock", *env = getenv("VP2P_FUZZ_SEED");
	int i, j;

	base_seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	if (env) {
		base_seed = strtoull(env, NULL, 0);
		src = "VP2P_FUZZ_SEED";
	}
	for (i = 1, j = 1; i < *argc; i++) {
		if (!strncmp(argv[i], "--seed=", 7)) {
			base_seed = strtoull(argv[i] + 7, NULL, 0);
			src = "--seed";
		} else if (!strcmp(argv[i], "--seed") && i + 1 < *argc) {
			base_seed = strtoull(argv[++i], NULL, 0);
			src = "--seed";
		} else {
			argv[j++] = argv[i];
		}
	}
	*argc = j;
	argv[j] = NULL;
	/* stderr: stdout of --list-subtests is the subtest list */
	fprintf(stderr,
		"p2p_fuzz: seed %" PRIu64 " (from %s); rerun with --seed %" PRIu64 "\n",
		base_seed, src, base_seed);
}

int main(int argc, char **argv)
{
	parse_seed(&argc, argv);
	igt_subtest_init(argc, argv);
	signal(SIGBUS, touch_sigbus);

	igt_describe("One thread: every vgem_p2p and DRM core ioctl the driver offers, with mmaps, touches and dma-bufs.");
	igt_subtest("exporter")
		run(MODE_EXPORTER, 1, CALLS_EXPORTER);

	igt_describe("One thread: every edu_nic ioctl, over anonymous memory and vgem_p2p mmaps that move.");
	igt_subtest("importer")
		run(MODE_IMPORTER, 1, CALLS_IMPORTER);

	igt_describe("Four threads sharing the pools: every ioctl of both drivers at once.");
	igt_subtest("both-threads")
		run(MODE_BOTH, NR_THREADS, CALLS_THREAD);

	igt_exit();
}
