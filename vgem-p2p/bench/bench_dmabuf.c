// SPDX-License-Identifier: MIT
/*
 * The vma path against the dma-buf path, on the same VRAM object:
 *  - vma-map:       EDU_NIC_IOCTL_REG_MR + PREFETCH on the object's mmap
 *                   (hmm_range_fault(), the vma's p2p_lookup);
 *  - dmabuf-map:    EDU_NIC_IOCTL_REG_DMABUF on its PRIME fd (dynamic
 *                   attachment, map_dma_buf at registration);
 *  - vma-revoke:    a forced move until the mapping of one vma
 *                   registration is released (last vgem_p2p_unmap);
 *  - dmabuf-revoke: the same for one dma-buf registration, released from
 *                   its move_notify (last vgem_p2p_dmabuf_unmap).
 * Map times are registration times; revocation times are kernel
 * timestamps from the move's start, as in the revoke benchmark.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench.h"

enum db_case { DB_VMA_MAP, DB_DMABUF_MAP, DB_VMA_REVOKE, DB_DMABUF_REVOKE,
	       NR_DB_CASES };

static const char *const db_names[NR_DB_CASES] = {
	"vma-map", "dmabuf-map", "vma-revoke", "dmabuf-revoke",
};

static const char *const db_base[NR_DB_CASES] = {
	"vma-map", "vma-map", "vma-revoke", "vma-revoke",
};

/* The tracepoint each path's release fires. */
static const char *const db_event[2] = {
	"vgem_p2p_unmap", "vgem_p2p_dmabuf_unmap",
};

struct db_obj {
	struct bench *b;
	struct vp2p_bo bo;
	void *p;
	int prime_fd;
	uint64_t size;
};

static int db_register(struct db_obj *o, bool dmabuf, uint32_t *key)
{
	if (dmabuf)
		return vp2p_mr_register_dmabuf(o->b->ifd, o->prime_fd, 0,
					       o->size, EDU_NIC_ACCESS_READ, 0,
					       key);
	return vp2p_mr_register(o->b->ifd, o->p, o->size, EDU_NIC_ACCESS_READ,
				EDU_NIC_REG_MR_PREFETCH, key);
}

static int db_map(struct db_obj *o, bool dmabuf, double *ns, int64_t *cnt)
{
	struct bench_snap s0, s1;
	uint64_t t0, t1;
	uint32_t key;
	int ret;

	ret = bench_snap(o->b, &s0);
	if (ret)
		return ret;
	t0 = bench_now_ns();
	ret = db_register(o, dmabuf, &key);
	t1 = bench_now_ns();
	if (ret)
		return ret;
	ret = bench_snap(o->b, &s1);
	vp2p_mr_deregister(o->b->ifd, key);
	if (ret)
		return ret;
	*ns = t1 - t0;
	bench_delta(&s0, &s1, cnt);
	return 0;
}

/* One move with one live registration of the given kind. */
static int db_revoke(struct db_obj *o, bool dmabuf, bool traced,
		     uint32_t key, double *lat, double *move, int64_t *cnt)
{
	struct edu_nic_mr_stats st;
	struct bench_snap s0, s1;
	uint64_t t0, t1, last;
	unsigned int n;
	char byte;
	int ret;

	/* A DMA maps it again after the previous move. */
	ret = vp2p_mr_stats(o->b->ifd, key, &st);
	if (!ret && !(st.state & EDU_NIC_MR_MIRRORED))
		ret = vp2p_dma(o->b->ifd, key, EDU_NIC_DMA_FROM_MR,
			       EDU_NIC_MODE_BULK, 0, &byte, 1);
	if (ret)
		return ret;
	if (traced)
		bench_trace_clear();
	ret = bench_snap(o->b, &s0);
	if (ret)
		return ret;
	t0 = bench_now_ns();
	ret = vp2p_bo_move(o->b->efd, &o->bo, VGEM_P2P_MOVE_VRAM, NULL);
	t1 = bench_now_ns();
	if (!ret)
		ret = bench_snap(o->b, &s1);
	if (!ret)
		ret = vp2p_mr_stats(o->b->ifd, key, &st);
	if (ret)
		return ret;
	/* The move's contract: the mapping is gone when it returns. */
	if (st.state & EDU_NIC_MR_MIRRORED)
		return -EBUSY;
	bench_delta(&s0, &s1, cnt);
	*move = t1 - t0;
	*lat = -1;
	if (traced && !bench_trace_last(db_event[dmabuf], &last, &n) && n &&
	    last >= t0)
		*lat = last - t0;
	return 0;
}

static int db_size(struct db_obj *o, bool traced)
{
	struct bench *b = o->b;
	double ns[NR_DB_CASES][b->reps], move[2][b->reps];
	int64_t cnt[NR_DB_CASES][b->reps][NR_COUNTERS];
	struct bench_row *row;
	unsigned int r, c;
	uint32_t key;
	int ret = 0;

	for (r = 0; r < b->reps && !ret; r++)
		for (c = DB_VMA_MAP; c <= DB_DMABUF_MAP && !ret; c++)
			ret = db_map(o, c == DB_DMABUF_MAP, &ns[c][r],
				     cnt[c][r]);
	/*
	 * The two kinds alternate within each repetition, one live
	 * registration at a time (a vma registration beside a dma-buf one
	 * would be revoked in the same move, before it), so that the ratio
	 * pairs moves made side by side.
	 */
	for (r = 0; r < b->reps && !ret; r++) {
		for (c = 0; c < 2 && !ret; c++) {
			key = 0;
			ret = db_register(o, c, &key);
			if (!ret)
				ret = db_revoke(o, c, traced, key,
						&ns[DB_VMA_REVOKE + c][r],
						&move[c][r],
						cnt[DB_VMA_REVOKE + c][r]);
			if (key)
				vp2p_mr_deregister(b->ifd, key);
		}
	}
	if (ret)
		return bench_fail(ret, "dmabuf: %llu MiB",
				  (unsigned long long)(o->size / MiB));

	for (c = 0; c < NR_DB_CASES; c++) {
		row = bench_row_add(b, BENCH_DMABUF, db_names[c], o->size, 1);
		if (!row)
			break;
		bench_row_times(row, ns[c], b->reps, cnt[c]);
		if (c >= DB_VMA_REVOKE) {
			row->move_ns = bench_median(move[c - DB_VMA_REVOKE],
						    b->reps);
			row->mib_s = (double)o->size / MiB /
				     (row->move_ns / 1e9);
		} else {
			row->mib_s = 0;
		}
		bench_ratio(b, row, db_base[c]);
	}
	return 0;
}

int bench_dmabuf(struct bench *b)
{
	uint64_t size, max = b->revoke_max;
	bool traced;
	int ret = 0;

	if (max > b->vinfo.vram_size / 2)
		max = b->vinfo.vram_size / 2;
	traced = !bench_trace_start();
	if (!traced)
		bench_note(b, "dmabuf: no tracefs: revocation is the whole move");
	for (size = MiB; size <= max && !ret; size *= 4) {
		struct db_obj o = { .b = b, .size = size, .prime_fd = -1 };

		bench_progress(b, "dmabuf: %llu MiB",
			       (unsigned long long)(size / MiB));
		ret = vp2p_bo_create(b->efd, size, 0, &o.bo);
		if (ret) {
			bench_fail(ret, "dmabuf: object");
			break;
		}
		ret = vp2p_bo_mmap(b->efd, &o.bo, PROT_READ | PROT_WRITE, &o.p);
		if (!ret)
			ret = vp2p_bo_export(b->efd, &o.bo, &o.prime_fd);
		if (!ret)
			ret = db_size(&o, traced);
		else
			bench_fail(ret, "dmabuf: mmap or export");
		if (o.prime_fd >= 0)
			close(o.prime_fd);
		if (o.p)
			vp2p_bo_munmap(&o.bo, o.p);
		vp2p_bo_close(b->efd, &o.bo);
	}
	if (traced)
		bench_trace_stop();
	return ret;
}
