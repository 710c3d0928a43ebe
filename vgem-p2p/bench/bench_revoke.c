// SPDX-License-Identifier: MIT
/*
 * Revocation: a forced move (DRM_IOCTL_VGEM_P2P_MOVE) of a VRAM object
 * that 1, 2, 4, ... registrations mirror in full. The move first zaps the
 * object's CPU mappings; every importer's notifier then p2p_unmap()s its
 * mapping; then the copy. Reported:
 *  - latency: from the ioctl's start to the last vgem_p2p_unmap event
 *    (kernel timestamp, tracefs), i.e. until no importer can reach the
 *    old location; the ratio is to one registration of the same size;
 *  - MiB/s: the object's size over the whole move, the rate at which
 *    compaction moves memory with the importers' mappings to revoke.
 * Between repetitions every registration is mirrored again (a one-byte
 * DMA faults the whole region in).
 * With a bochs-display, the same for the TTM exporter ("ttm-move", see
 * revoke_ttm_once()).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "bench.h"

struct revoke_obj {
	struct bench *b;
	struct vp2p_bo bo;
	void *p;
	uint64_t size;
	uint32_t keys[64];
	unsigned int nkeys;
};

/* Mirror every registration that an earlier move invalidated. */
static int revoke_remirror_keys(struct bench *b, const uint32_t *keys,
				unsigned int nkeys)
{
	struct edu_nic_mr_stats st;
	unsigned int i;
	char byte;
	int ret;

	for (i = 0; i < nkeys; i++) {
		ret = vp2p_mr_stats(b->ifd, keys[i], &st);
		if (ret)
			return ret;
		if (st.state & EDU_NIC_MR_MIRRORED)
			continue;
		ret = vp2p_dma(b->ifd, keys[i], EDU_NIC_DMA_FROM_MR,
			       EDU_NIC_MODE_BULK, 0, &byte, 1);
		if (ret)
			return ret;
	}
	return 0;
}

static int revoke_remirror(struct revoke_obj *o)
{
	return revoke_remirror_keys(o->b, o->keys, o->nkeys);
}

static int revoke_once(struct revoke_obj *o, bool traced, double *lat,
		       double *move, int64_t *cnt)
{
	struct drm_vgem_p2p_obj_info info;
	struct bench_snap s0, s1;
	uint64_t t0, t1, last;
	unsigned int n;
	int ret;

	ret = revoke_remirror(o);
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
	if (ret)
		return ret;
	ret = bench_snap(o->b, &s1);
	if (!ret)
		ret = vp2p_bo_info(o->b->efd, &o->bo, &info);
	if (ret)
		return ret;
	/* The move's contract: no importer mapping survives it. */
	if (info.mappings)
		return -EBUSY;
	bench_delta(&s0, &s1, cnt);
	*move = t1 - t0;
	*lat = -1;
	if (traced && !bench_trace_last("vgem_p2p_unmap", &last, &n) && n &&
	    last >= t0)
		*lat = last - t0;
	return 0;
}

static int revoke_point(struct revoke_obj *o, unsigned int nregs,
			bool traced)
{
	struct bench *b = o->b;
	double lat[b->reps], move[b->reps];
	int64_t cnt[b->reps][NR_COUNTERS];
	struct bench_row *row;
	unsigned int r;
	int ret = 0;

	while (o->nkeys < nregs && !ret) {
		ret = vp2p_mr_register(b->ifd, o->p, o->size,
				       EDU_NIC_ACCESS_READ,
				       EDU_NIC_REG_MR_PREFETCH,
				       &o->keys[o->nkeys]);
		if (!ret)
			o->nkeys++;
	}
	for (r = 0; r < b->reps && !ret; r++)
		ret = revoke_once(o, traced, &lat[r], &move[r], cnt[r]);
	if (ret)
		return bench_fail(ret, "revoke: %u registrations, %llu MiB",
				  nregs, (unsigned long long)(o->size / MiB));

	row = bench_row_add(b, BENCH_REVOKE, traced ? "move" : "move-untraced",
			    o->size, nregs);
	if (!row)
		return 0;
	/* Without trace timestamps, the whole move bounds the latency. */
	bench_row_times(row, traced ? lat : move, b->reps, cnt);
	row->move_ns = bench_median(move, b->reps);
	row->mib_s = (double)o->size / MiB / (row->move_ns / 1e9);
	bench_ratio(b, row, row->name);
	return 0;
}

static int revoke_size(struct bench *b, uint64_t size, bool traced)
{
	struct revoke_obj o = { .b = b, .size = size };
	unsigned int nregs, i;
	int ret;

	ret = vp2p_bo_create(b->efd, size, 0, &o.bo);
	if (ret)
		return bench_fail(ret, "revoke: object");
	ret = vp2p_bo_mmap(b->efd, &o.bo, PROT_READ | PROT_WRITE, &o.p);
	if (ret)
		goto out_close;
	for (nregs = 1; nregs <= b->max_regs && !ret; nregs *= 2) {
		bench_progress(b, "revoke: %llu MiB, %u registrations",
			       (unsigned long long)(size / MiB), nregs);
		ret = revoke_point(&o, nregs, traced);
	}
	for (i = 0; i < o.nkeys; i++)
		vp2p_mr_deregister(b->ifd, o.keys[i]);
	vp2p_bo_munmap(&o.bo, o.p);
out_close:
	vp2p_bo_close(b->efd, &o.bo);
	return ret;
}

/*
 * The TTM exporter's moves, for comparison: a bochs buffer in system
 * memory, registered and mirrored @nregs times, is scanned out, so bochs
 * pins it in VRAM and TTM moves it there; ttm_bo_unmap_virtual() revokes
 * every importer first. Timed: the whole SETCRTC, the move and a modeset
 * (TTM has no trace event for the last unmap, so no latency of its own).
 * Between repetitions, a scanout as large as the VRAM evicts it back to
 * system memory.
 */
struct revoke_ttm {
	struct bench *b;
	struct bench_ttm_buf buf;
	struct bench_ttm_buf evictor;
	uint32_t keys[64];
	unsigned int nkeys;
};

static int revoke_ttm_once(struct revoke_ttm *o, double *ns, int64_t *cnt)
{
	struct bench *b = o->b;
	struct bench_snap s0, s1;
	uint64_t t0, t1;
	int ret;

	ret = bench_ttm_off(b, &o->buf);
	if (!ret)
		ret = bench_ttm_scan_out(b, &o->evictor);
	if (!ret)
		ret = bench_ttm_off(b, &o->evictor);
	if (!ret)
		ret = revoke_remirror_keys(b, o->keys, o->nkeys);
	if (!ret)
		ret = bench_snap(b, &s0);
	if (ret)
		return ret;
	t0 = bench_now_ns();
	ret = bench_ttm_scan_out(b, &o->buf);
	t1 = bench_now_ns();
	if (!ret)
		ret = bench_snap(b, &s1);
	if (ret)
		return ret;
	bench_delta(&s0, &s1, cnt);
	/* The move's contract: it revoked every registration. */
	if (cnt[CNT_INVALIDATIONS] < (int64_t)o->nkeys)
		return -EPROTO;
	*ns = t1 - t0;
	return 0;
}

static int revoke_ttm_size(struct bench *b, uint64_t size)
{
	struct revoke_ttm o = { .b = b };
	unsigned int nregs, i, r;
	int ret;

	ret = bench_ttm_get(b, size, false, &o.buf);
	if (!ret)
		ret = bench_ttm_get(b, bench_ttm_max(), false, &o.evictor);
	for (nregs = 1; nregs <= b->max_regs && !ret; nregs *= 2) {
		double ns[b->reps];
		int64_t cnt[b->reps][NR_COUNTERS];
		struct bench_row *row;

		bench_progress(b, "revoke: ttm %llu MiB, %u registrations",
			       (unsigned long long)(size / MiB), nregs);
		while (o.nkeys < nregs && !ret) {
			ret = vp2p_mr_register(b->ifd, o.buf.map, o.buf.size,
					       EDU_NIC_ACCESS_READ,
					       EDU_NIC_REG_MR_PREFETCH,
					       &o.keys[o.nkeys]);
			if (!ret)
				o.nkeys++;
		}
		for (r = 0; r < b->reps && !ret; r++)
			ret = revoke_ttm_once(&o, &ns[r], cnt[r]);
		if (ret) {
			bench_fail(ret, "revoke: ttm, %u registrations, %llu MiB",
				   nregs, (unsigned long long)(size / MiB));
			break;
		}
		row = bench_row_add(b, BENCH_REVOKE, "ttm-move", o.buf.size,
				    nregs);
		if (!row)
			break;
		bench_row_times(row, ns, b->reps, cnt);
		row->move_ns = row->median_ns;
		row->mib_s = (double)o.buf.size / MiB / (row->move_ns / 1e9);
		bench_ratio(b, row, row->name);
	}
	for (i = 0; i < o.nkeys; i++)
		vp2p_mr_deregister(b->ifd, o.keys[i]);
	bench_ttm_put(b, &o.evictor);
	bench_ttm_put(b, &o.buf);
	return ret;
}

int bench_revoke(struct bench *b)
{
	uint64_t size, max = b->revoke_max;
	bool traced;
	int ret = 0;

	/* The move needs room for a second copy. */
	if (max > b->vinfo.vram_size / 2) {
		max = b->vinfo.vram_size / 2;
		bench_note(b, "revoke: capped at %llu MiB (half the VRAM)",
			   (unsigned long long)(max / MiB));
	}
	traced = !bench_trace_start();
	if (!traced)
		bench_note(b, "revoke: no tracefs: latency is the whole move");
	for (size = MiB; size <= max && !ret; size *= 4)
		ret = revoke_size(b, size, traced);
	if (traced)
		bench_trace_stop();
	/* bochs' sizes: a scanout is 3 MiB or more */
	for (size = 4 * MiB; b->bfd >= 0 && size <= max && !ret; size *= 4)
		ret = revoke_ttm_size(b, size);
	return ret;
}
