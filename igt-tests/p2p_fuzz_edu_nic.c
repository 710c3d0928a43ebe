// SPDX-License-Identifier: MIT
/*
 * p2p_fuzz's edu_nic operations: every edu_nic ioctl, on ranges of
 * anonymous memory, of object mmaps that move, and of nothing at all, and
 * on ranges of the pool's objects' dma-bufs; and, in importer, a DMA round
 * trip through a registration of the thread's own.
 */
#include <inttypes.h>
#include <limits.h>
#include <sys/ioctl.h>
#include <xf86drm.h>

#include "p2p_fuzz_drivers.h"

enum {
	OP_REG_MR, OP_DEREG_MR, OP_DMA, OP_MR_STATS, OP_DEV_STATS, OP_DMA_RAW,
	OP_EDU_BAD, OP_DMA_OWN, OP_REG_DMABUF,
	NR_OPS
};

static struct fz_op ops[NR_OPS];

/* edu_nic ops */

static uint32_t gen_key(struct fz_thread *t, uint64_t *length, char **addr)
{
	struct fz_pool *p = t->pool;
	uint32_t key;

	*length = 0;
	*addr = NULL;
	pthread_mutex_lock(&p->lock);
	if (p->nmrs && !fz_one_in(t, 6)) {
		struct fz_mr *mr = &p->mrs[fz_below(t, p->nmrs)];

		key = mr->key;
		*length = mr->length;
		*addr = mr->addr;
	} else if (fz_one_in(t, 2)) {
		key = p->stale_keys[fz_below(t, NR_STALE)];
	} else {
		key = fz_one_in(t, 2) ? 0 : (uint32_t)fz_rnd(t);
	}
	pthread_mutex_unlock(&p->lock);
	return key;
}

static void dereg_counted(struct fz_thread *t, uint32_t key)
{
	struct edu_nic_dereg_mr d = { .key = key };

	fz_note(t, &ops[OP_DEREG_MR],
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
			fz_stale_push(p, p->stale_keys, key);
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&p->lock);
	return found;
}

/*
 * A new registration: into the pool, deregistering a victim if it is
 * full. @addr is the range the registration mirrors, NULL for a dma-buf's
 * (the DMA op then holds its bytes to nothing).
 */
static void mr_add(struct fz_thread *t, uint32_t key, uint64_t length,
		   char *addr)
{
	struct fz_pool *p = t->pool;
	uint32_t victim = 0;

	pthread_mutex_lock(&p->lock);
	if (p->nmrs == POOL_MRS) {
		int i = fz_below(t, POOL_MRS);

		victim = p->mrs[i].key;
		fz_stale_push(p, p->stale_keys, victim);
		p->mrs[i] = p->mrs[--p->nmrs];
	}
	p->mrs[p->nmrs++] = (struct fz_mr){ key, length, addr };
	pthread_mutex_unlock(&p->lock);
	if (victim)
		dereg_counted(t, victim);
}

static void op_reg_mr(struct fz_thread *t)
{
	struct fz_pool *p = t->pool;
	struct edu_nic_reg_mr r = {};
	uint64_t len = (1 + fz_below(t, 8)) * PAGE;

	r.addr = (uintptr_t)fz_range(t, &len, !fz_one_in(t, 16));
	r.length = len;
	r.access = fz_one_in(t, 10) ? fz_flags(t, ~0u) :
		   1 + fz_below(t, EDU_NIC_ACCESS_MASK);
	r.flags = fz_flags(t, EDU_NIC_REG_MR_FLAGS);
	r.key = fz_one_in(t, 16) ? (uint32_t)fz_rnd(t) : 0;
	r.pad = fz_pad(t);
	t->must_einval = r.pad || r.key || (r.flags & ~EDU_NIC_REG_MR_FLAGS) ||
			 !r.access || (r.access & ~EDU_NIC_ACCESS_MASK);
	if (fz_ioctl(t, &ops[OP_REG_MR], p->efd, EDU_NIC_IOCTL_REG_MR, &r))
		return;
	mr_add(t, r.key, r.length, (char *)(uintptr_t)r.addr);
}

/*
 * The dma-buf of one of the pool's objects, a new fd of it which the
 * caller closes, and its size in *@size; or -1 if the pool has none or
 * its handle is gone (another thread closed it). Exported writable
 * mostly: without DRM_RDWR the dma-buf's file, if this export makes it,
 * stays read-only for every later export, and write access gets EACCES.
 */
/* The largest object REG_DMABUF registers: POOL_OBJS of them fit in RAM */
#define REG_DMABUF_MAX_OBJ	(4ull << 20)

static int export_obj(struct fz_thread *t, uint64_t *size)
{
	struct fz_pool *p = t->pool;
	struct drm_prime_handle h = {};

	*size = 0;
	pthread_mutex_lock(&p->lock);
	if (p->nobjs) {
		struct fz_obj *o = &p->objs[fz_below(t, p->nobjs)];

		/*
		 * A registration maps (or pins) the whole object, populated,
		 * until it is deregistered or the pool freed: a few of the
		 * pool's half-of-RAM objects held so ran a 2 GiB guest out of
		 * memory (the OOM killer took the test runner).
		 */
		if (o->size <= REG_DMABUF_MAX_OBJ) {
			h.handle = o->handle;
			*size = o->size;
		}
	}
	pthread_mutex_unlock(&p->lock);
	if (!*size)
		return -1;
	h.flags = DRM_CLOEXEC | (fz_one_in(t, 8) ? 0 : DRM_RDWR);
	/* not a call of this op: its errors are PRIME_HANDLE_TO_FD's */
	if (drmIoctl(p->vfd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &h)) {
		*size = 0;
		return -1;
	}
	return h.fd;
}

/*
 * A range of a dma-buf: mostly an object's, exported for the call and
 * closed after it (the registration holds its own reference), with a
 * valid range of it; sometimes a dma-buf fd of the pool's, a stale fd, a
 * file that is no dma-buf, or no file at all, and offsets and lengths
 * that are unaligned, zero, too long, wrapping or past the end.
 */
static void op_reg_dmabuf(struct fz_thread *t)
{
	struct fz_pool *p = t->pool;
	struct edu_nic_reg_dmabuf r = {};
	uint64_t size = 0, pages, off;
	int fd = -1;

	switch (fz_below(t, 8)) {
	case 0:
		pthread_mutex_lock(&p->lock);
		/* closed by another thread by now, maybe: only read */
		if (p->nbufs && fz_one_in(t, 2))
			r.fd = p->bufs[fz_below(t, p->nbufs)];
		else
			r.fd = p->stale_fds[fz_below(t, NR_STALE)];
		pthread_mutex_unlock(&p->lock);
		break;
	case 1:
		/* not a dma-buf: EINVAL */
		switch (fz_below(t, 3)) {
		case 0:
			r.fd = p->vfd;
			break;
		case 1:
			r.fd = p->efd;
			break;
		default:
			r.fd = p->memfd;
			break;
		}
		break;
	case 2:
		/* no file: EBADF, "negative" ones too */
		r.fd = fz_one_in(t, 2) ? (uint32_t)fz_rnd(t) :
		       fz_one_in(t, 2) ? ~0u : (uint32_t)INT_MAX + 1;
		break;
	default:
		fd = export_obj(t, &size);
		r.fd = fd;
		break;
	}

	pages = size / PAGE;
	if (pages && !fz_one_in(t, 6)) {
		off = fz_below(t, pages);
		r.offset = off * PAGE;
		r.length = (1 + fz_below(t, pages - off < 16 ?
					    pages - off : 16)) * PAGE;
	} else {
		r.offset = fz_below(t, 2) * PAGE;
		r.length = (1 + fz_below(t, 4)) * PAGE;
		switch (fz_below(t, 6)) {
		case 0:
			r.offset += 1 + fz_below(t, PAGE - 1);
			break;
		case 1:
			r.length += 1 + fz_below(t, PAGE - 1);
			break;
		case 2:
			r.length = fz_one_in(t, 2) ? 0 :
				   EDU_NIC_MR_MAX_LENGTH + PAGE;
			break;
		case 3:
			r.offset = fz_evil_u64(t);
			break;
		case 4:
			r.length = fz_evil_u64(t);
			break;
		default:
			/* past the end, or just inside it */
			r.offset = size - fz_below(t, 2) * PAGE;
			break;
		}
	}
	r.access = fz_one_in(t, 10) ? fz_flags(t, ~0u) :
		   1 + fz_below(t, EDU_NIC_ACCESS_MASK);
	r.flags = fz_one_in(t, 8) ? fz_flags(t, EDU_NIC_REG_DMABUF_FLAGS) :
		  fz_one_in(t, 3) ? EDU_NIC_REG_DMABUF_PINNED : 0;
	r.key = fz_one_in(t, 16) ? (uint32_t)fz_rnd(t) : 0;
	/* checked before the fd is looked at */
	t->must_einval = r.key || (r.flags & ~EDU_NIC_REG_DMABUF_FLAGS) ||
			 !r.access || (r.access & ~EDU_NIC_ACCESS_MASK);
	if (!fz_ioctl(t, &ops[OP_REG_DMABUF], p->efd,
		      EDU_NIC_IOCTL_REG_DMABUF, &r))
		mr_add(t, r.key, r.length, NULL);
	if (fd >= 0)
		close(fd);
}

static void op_dereg_mr(struct fz_thread *t)
{
	struct edu_nic_dereg_mr d = {};
	uint64_t length;
	char *addr;

	d.key = gen_key(t, &length, &addr);
	d.pad = fz_pad(t);
	t->must_einval = d.pad;
	mr_forget(t->pool, d.key);
	fz_ioctl(t, &ops[OP_DEREG_MR], t->pool->efd, EDU_NIC_IOCTL_DEREG_MR,
		 &d);
}

/*
 * The data rule: a DMA that succeeded left its bytes where it put them.
 * It holds where nothing but the op itself can have changed them between
 * the CPU's fill and its look: the user buffer is the thread's scratch
 * (fz_thread_owns()), and the registration's memory is the pool's, which
 * only a one-thread run leaves alone, or the thread's own (op_dma_own()).
 * The CPU reaches the registration through its own range, the one the
 * device mirrors: of an object's shared mmap, that is the object, in VRAM
 * or not, so a move that lost the bytes shows too.
 *
 * Before the call, each side gets fresh bytes of its own, so that a copy
 * left undone, short, or from a stale mirror cannot match by chance: the
 * buffer always; the registration, through the CPU, when the device
 * reads it and the CPU may write it (dma_fill()). After it, the two must
 * be equal (dma_check()). @mem and @buf are the DMA's two ends.
 */
struct dma_sides {
	char *mem;
	char *buf;
	uint64_t len;
	bool checked;
};

/* Under p->lock where the registration is the pool's (@pool_mem) */
static void dma_fill(struct fz_thread *t, const struct edu_nic_dma *d,
		     struct dma_sides *x, bool pool_mem)
{
	struct fz_pool *p = t->pool;
	uint32_t seed = (uint32_t)fz_rnd(t);
	char what[320];

	x->checked = false;
	if (!fz_thread_owns(t, x->buf, x->len))
		return;
	if (pool_mem)
		pthread_mutex_lock(&p->lock);
	if (!pool_mem || fz_cpu_readable(p, x->mem, x->len)) {
		x->checked = true;
		if (d->direction == EDU_NIC_DMA_FROM_MR &&
		    (!pool_mem || fz_cpu_writable(p, x->mem, x->len)) &&
		    fz_cpu_fill(x->mem, x->len, seed ^ 0x5bd1e995u)) {
			fz_violation(t, RULE_SIGBUS,
				     "SIGBUS writing %" PRIu64 " bytes at %p, memory of a registration the CPU may write (%s)",
				     x->len, x->mem,
				     fz_sigbus_what(what, sizeof(what)));
			x->checked = false;
		}
		/* what the CPU wrote is in memory before the ioctl */
		__sync_synchronize();
	}
	if (pool_mem)
		pthread_mutex_unlock(&p->lock);
	if (x->checked)
		p2p_fill(x->buf, x->len, seed);
}

/* Which page of the transfer starting at @mem byte @at is in, from 1 */
static uint64_t page_of(const char *mem, uint64_t at)
{
	return ((uintptr_t)mem + at) / PAGE - (uintptr_t)mem / PAGE + 1;
}

static void dma_check(struct fz_thread *t, const struct edu_nic_dma *d,
		      const struct dma_sides *x, bool pool_mem,
		      const char *what)
{
	struct fz_pool *p = t->pool;
	char sigbus[320];
	uint64_t at = 0;
	int ret;

	if (!x->checked)
		return;
	if (pool_mem)
		pthread_mutex_lock(&p->lock);
	ret = fz_cpu_cmp(x->mem, x->buf, x->len, &at);
	if (ret < 0)
		fz_violation(t, RULE_SIGBUS,
			     "SIGBUS reading %" PRIu64 " bytes at %p, memory of a registration the CPU may read (%s)",
			     x->len, x->mem,
			     fz_sigbus_what(sigbus, sizeof(sigbus)));
	else if (ret)
		fz_violation(t, RULE_DATA,
			     "%s %s, %s mode, %" PRIu64 " bytes at offset %#" PRIx64 " of a registration at %p: byte %" PRIu64 ", in the transfer's page %" PRIu64 " of %" PRIu64 ", is %#x in the registration, %#x in the buffer",
			     what, d->direction == EDU_NIC_DMA_TO_MR ?
			     "to the registration" : "from it",
			     d->mode == EDU_NIC_MODE_BULK ? "bulk" : "device",
			     x->len, (uint64_t)d->offset, x->mem - d->offset,
			     at, page_of(x->mem, at), page_of(x->mem, x->len - 1),
			     (uint8_t)x->mem[at], (uint8_t)x->buf[at]);
	if (pool_mem)
		pthread_mutex_unlock(&p->lock);
}

/*
 * Bulk mode is a CPU copy: cheap. The edu engine takes milliseconds per
 * command under TCG, so device mode is rare and a few bytes long.
 */
static void op_dma(struct fz_thread *t)
{
	struct edu_nic_dma d = {};
	struct dma_sides x = {};
	uint64_t mr_len;
	char *mr_addr;

	d.key = gen_key(t, &mr_len, &mr_addr);
	d.direction = fz_one_in(t, 16) ? (uint32_t)fz_rnd(t) : fz_below(t, 2);
	d.mode = EDU_NIC_MODE_BULK;
	if (mr_len && fz_one_in(t, 400)) {
		d.mode = EDU_NIC_MODE_DEVICE;
		d.length = 1 + fz_below(t, 64);
		d.offset = fz_below(t, mr_len - d.length + 1);
	} else if (mr_len && !fz_one_in(t, 6)) {
		d.length = 1 + fz_below(t, mr_len < 2 * PAGE ? mr_len :
						       2 * PAGE);
		d.offset = fz_below(t, mr_len - d.length + 1);
	} else {
		d.length = fz_evil_u64(t);
		d.offset = fz_one_in(t, 2) ? fz_evil_u64(t) : mr_len;
		if (fz_one_in(t, 8))
			d.mode = 2 + fz_below(t, 100);
	}
	d.user_ptr = (uintptr_t)fz_buf(t, d.length);
	d.flags = fz_pad(t);
	t->must_einval = d.flags || d.direction > EDU_NIC_DMA_TO_MR ||
			 d.mode > EDU_NIC_MODE_BULK;
	/* a DMA within the registration the pool knows, one thread only */
	if (fz_one_thread(t) && mr_addr && !t->must_einval &&
	    d.offset < mr_len && d.length <= mr_len - d.offset) {
		x.mem = mr_addr + d.offset;
		x.buf = (char *)(uintptr_t)d.user_ptr;
		x.len = d.length;
		dma_fill(t, &d, &x, true);
	}
	if (!fz_ioctl(t, &ops[OP_DMA], t->pool->efd, EDU_NIC_IOCTL_DMA, &d))
		dma_check(t, &d, &x, true, "EDU_NIC_DMA");
}

/*
 * A round trip through memory no other thread's op names (importer):
 * the thread registers its own memory (t->own), DMAs fresh bytes from the
 * scratch buffer into it, and back into the buffer after the CPU changed
 * them, each checked; then lets it go.
 */
static void op_dma_own(struct fz_thread *t)
{
	struct fz_pool *p = t->pool;
	struct edu_nic_reg_mr r = {};
	struct edu_nic_dereg_mr dr = {};
	struct edu_nic_dma d = {};
	struct dma_sides x = {};
	int dir;

	r.addr = (uintptr_t)t->own;
	r.length = OWN_PAGES * PAGE;
	r.access = EDU_NIC_ACCESS_READ | EDU_NIC_ACCESS_WRITE;
	r.flags = fz_one_in(t, 2) ? EDU_NIC_REG_MR_PREFETCH : 0;
	if (fz_ioctl(t, &ops[OP_REG_MR], p->efd, EDU_NIC_IOCTL_REG_MR, &r))
		return;
	for (dir = EDU_NIC_DMA_TO_MR; dir >= EDU_NIC_DMA_FROM_MR; dir--) {
		d = (struct edu_nic_dma){ .key = r.key, .direction = dir,
					  .mode = EDU_NIC_MODE_BULK };
		d.length = 1 + fz_below(t, 2 * PAGE);
		d.offset = fz_below(t, OWN_PAGES * PAGE - d.length + 1);
		d.user_ptr = (uintptr_t)t->scratch + fz_below(t, PAGE);
		x.mem = t->own + d.offset;
		x.buf = (char *)(uintptr_t)d.user_ptr;
		x.len = d.length;
		dma_fill(t, &d, &x, false);
		if (!fz_ioctl(t, &ops[OP_DMA], p->efd, EDU_NIC_IOCTL_DMA, &d))
			dma_check(t, &d, &x, false, "EDU_NIC_DMA of its own");
	}
	dr.key = r.key;
	/* a bad argument pointer leaves it to the file's close */
	fz_ioctl(t, &ops[OP_DEREG_MR], p->efd, EDU_NIC_IOCTL_DEREG_MR, &dr);
	fz_note(t, &ops[OP_DMA_OWN], 0);
}

static void op_mr_stats(struct fz_thread *t)
{
	struct edu_nic_mr_stats s = {};
	uint64_t length;
	char *addr;

	s.key = gen_key(t, &length, &addr);
	s.pad = fz_pad(t);
	t->must_einval = s.pad;
	s.state = (uint32_t)fz_rnd(t);
	fz_ioctl(t, &ops[OP_MR_STATS], t->pool->efd, EDU_NIC_IOCTL_MR_STATS,
		 &s);
}

static void op_dev_stats(struct fz_thread *t)
{
	struct edu_nic_dev_stats s = {};

	s.flags = fz_pad(t);
	s.caps = (uint32_t)fz_rnd(t);
	t->must_einval = s.flags;
	fz_ioctl(t, &ops[OP_DEV_STATS], t->pool->efd, EDU_NIC_IOCTL_DEV_STATS,
		 &s);
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

	if (fz_one_in(t, 100)) {
		r.bus_addr = fz_one_in(t, 2) && p->vram_bus ?
			     p->vram_bus + fz_below(t, p->vram_size - PAGE) :
			     (1ull << 46) + fz_below(t, 1ull << 30);
		r.length = 1 + fz_below(t, 64);
	} else {
		switch (fz_below(t, 4)) {
		case 0:
			r.length = 0;
			break;
		case 1:
			r.length = EDU_NIC_DMA_RAW_MAX + 1 +
				   fz_below(t, 1 << 20);
			break;
		case 2:
			r.length = 1 + fz_below(t, 64);
			r.bus_addr = ~0ull - fz_below(t, r.length - 1);
			break;
		default:
			r.length = 1 + fz_below(t, 64);
			r.flags = (uint32_t)fz_rnd(t) | 1;
			r.pad = (uint32_t)fz_rnd(t);
			break;
		}
		if (!r.bus_addr)
			r.bus_addr = p->vram_bus;
	}
	r.user_ptr = (uintptr_t)fz_buf(t, r.length);
	t->must_einval = r.flags || r.pad;
	/* a read nothing decodes leaves the poison in the edu buffer: EIO */
	t->may_eio = !p->vram_bus || r.bus_addr < p->vram_bus ||
		     r.bus_addr + r.length > p->vram_bus + p->vram_size;
	fz_ioctl(t, &ops[OP_DMA_RAW], p->efd, EDU_NIC_IOCTL_DMA_RAW, &r);
}

static void op_edu_bad(struct fz_thread *t)
{
	uint64_t arg[16] = {};
	unsigned int nr = 6 + fz_below(t, 250);

	fz_ioctl(t, &ops[OP_EDU_BAD], t->pool->efd,
		 fz_one_in(t, 2) ? _IOWR(EDU_NIC_IOCTL_BASE, nr, arg) :
				_IOW('d', nr, uint64_t), arg);
}

static struct fz_op ops[NR_OPS] = {
	[OP_REG_MR] = {
		"EDU_NIC_REG_MR",
		ERRS(EINVAL, EFAULT, EPERM, ENOMEM, ENODEV, EACCES, EINTR,
		     EBUSY, EIO),
		{ [MODE_IMPORTER] = 12, [MODE_BOTH] = 8 },
		op_reg_mr,
	},
	[OP_DEREG_MR] = {
		"EDU_NIC_DEREG_MR", ERRS(EINVAL, ENOENT, EFAULT, EACCES),
		{ [MODE_IMPORTER] = 6, [MODE_BOTH] = 4 },
		op_dereg_mr,
	},
	[OP_DMA] = {
		"EDU_NIC_DMA",
		ERRS(EINVAL, ENOENT, EPERM, EFAULT, EIO, EINTR, ENOMEM, ENODEV,
		     EBUSY, EACCES),
		{ [MODE_IMPORTER] = 20, [MODE_BOTH] = 14 },
		op_dma,
	},
	[OP_MR_STATS] = {
		"EDU_NIC_MR_STATS", ERRS(EINVAL, ENOENT, EFAULT, EACCES),
		{ [MODE_IMPORTER] = 6, [MODE_BOTH] = 3 },
		op_mr_stats,
	},
	[OP_DEV_STATS] = {
		"EDU_NIC_DEV_STATS", ERRS(EINVAL, EFAULT, EACCES),
		{ [MODE_IMPORTER] = 3, [MODE_BOTH] = 2 },
		op_dev_stats,
	},
	[OP_DMA_RAW] = {
		"EDU_NIC_DMA_RAW",
		ERRS(EPERM, EFAULT, EINVAL, ENOMEM, EIO, ENODEV, EACCES),
		{ [MODE_IMPORTER] = 3, [MODE_BOTH] = 2 },
		op_dma_raw,
	},
	[OP_EDU_BAD] = {
		"edu unknown cmd", ERRS(ENOTTY, EACCES),
		{ [MODE_IMPORTER] = 1, [MODE_BOTH] = 1 },
		op_edu_bad,
	},
	/*
	 * its calls count as REG_MR's, DMA's and DEREG_MR's. Not in
	 * both-threads until a SIGBUS on t->own there is understood (2 runs
	 * in 5, e.g. seed 409818571924: the CPU's write of the round trip).
	 */
	[OP_DMA_OWN] = {
		"DMA round trip", ERRS(0),
		{ [MODE_IMPORTER] = 2 },
		op_dma_own,
	},
	/*
	 * The exporter's attach, map and pin errors beside edu_nic's own:
	 * vgem_p2p's are -EPERM (a write mapping of a read-only object)
	 * and -ENOMEM (system memory it cannot populate)
	 */
	[OP_REG_DMABUF] = {
		"EDU_NIC_REG_DMABUF",
		ERRS(EINVAL, EBADF, EACCES, EPERM, ENOMEM, ENODEV, EBUSY,
		     EFAULT),
		{ [MODE_IMPORTER] = 6, [MODE_BOTH] = 4 },
		op_reg_dmabuf,
	},
};

const struct fz_driver fz_edu_nic = { ops, NR_OPS, NULL };
