// SPDX-License-Identifier: MIT
/*
 * Scale, compact: N objects in VRAM, each registered M times, the
 * registrations spread over K forked processes that stream DMA reads
 * from them (EDU_NIC_MODE_BULK, a page at a time) and check every page
 * against its object's pattern. Each repetition lays the objects out
 * with a freed hole of their size between any two, then moves one
 * object of half their total size into VRAM: no hole holds it, so the
 * exporter compacts, sliding the streamed objects down while their
 * importers stream. Timed: the move ioctl. Counted: moves of the
 * streamed objects per object, the exporter's invalidations per move
 * (above 1, compaction invalidated objects it did not move), the
 * importers' invalidations, the DMA reads that ran meanwhile, and data
 * errors, which must be 0 (the benchmark fails otherwise).
 */
#include <errno.h>
#include <string.h>

#include "scale.h"

/*
 * Lay the objects out with a hole of their size between any two: each
 * goes to VRAM (from system memory: where the allocator puts it, the
 * lowest fitting place in an empty VRAM), then a filler of the same size
 * behind it; then the fillers go. The first time the objects are created
 * that way; later they are evicted first (the streamers are parked).
 */
int scale_layout(struct scale_ctx *s, bool first)
{
	struct bench *b = s->b;
	unsigned int i;
	int ret = 0;

	for (i = 0; i < s->nobjs && !first && !ret; i++)
		ret = vp2p_bo_move(b->efd, &s->objs[i], VGEM_P2P_MOVE_SYSTEM,
				   NULL);
	for (i = 0; i < s->nobjs && !ret; i++) {
		if (first)
			ret = vp2p_bo_create(b->efd, s->obj_size, 0,
					     &s->objs[i]);
		else
			ret = vp2p_bo_move(b->efd, &s->objs[i],
					   VGEM_P2P_MOVE_VRAM, NULL);
		if (!ret)
			ret = vp2p_bo_create(b->efd, s->obj_size, 0,
					     &s->fillers[i]);
		if (ret)
			break;
	}
	for (i = 0; i < s->nobjs; i++)
		if (s->fillers[i].handle)
			vp2p_bo_close(b->efd, &s->fillers[i]);
	memset(s->fillers, 0, s->nobjs * sizeof(*s->fillers));
	if (ret)
		return bench_fail(ret, "scale: laying out %u objects of %llu KiB",
				  s->nobjs,
				  (unsigned long long)(s->obj_size >> 10));
	return scale_wait_vram(s, s->nobjs * s->obj_size);
}

static int scale_obj_moves(struct scale_ctx *s, uint64_t *moves)
{
	struct drm_vgem_p2p_obj_info info;
	unsigned int i;
	int ret;

	*moves = 0;
	for (i = 0; i < s->nobjs; i++) {
		ret = vp2p_bo_info(s->b->efd, &s->objs[i], &info);
		if (ret)
			return ret;
		*moves += info.moves;
	}
	return 0;
}

/*
 * One repetition of the compaction: the streamers stream over the new
 * layout until every registration has been read (so mirrored), then the
 * big object moves in; they go on until every registration has been read
 * again after it, so that every object is checked where it ended up.
 */
static int scale_compact_once(struct scale_ctx *s, struct vp2p_bo *big,
			      bool first, double *ns, int64_t *cnt,
			      double *moves_per_obj)
{
	uint64_t reads[SCALE_MAX_PROCS], r0, r1, e0, e1, m0, m1, t0, t1;
	struct bench *b = s->b;
	struct bench_snap s0, s1;
	int ret;

	/* The first layout is the objects' creation, before the fork */
	ret = scale_park(s);
	if (!ret && !first)
		ret = vp2p_bo_move(b->efd, big, VGEM_P2P_MOVE_SYSTEM, NULL);
	if (!ret && !first)
		ret = scale_layout(s, false);
	if (ret)
		return ret;
	scale_reads(s, reads, &r0, &e0);
	scale_set_phase(s, PH_STREAM);
	ret = scale_wait_reads(s, reads, 1);
	if (!ret)
		ret = scale_obj_moves(s, &m0);
	if (!ret)
		ret = bench_snap(b, &s0);
	if (ret)
		return ret;
	scale_reads(s, reads, &r0, &e0);
	t0 = bench_now_ns();
	ret = vp2p_bo_move(b->efd, big, VGEM_P2P_MOVE_VRAM, NULL);
	t1 = bench_now_ns();
	if (ret)
		return bench_fail(ret, "scale: moving %llu MiB into fragmented VRAM",
				  (unsigned long long)(big->size / MiB));
	scale_reads(s, reads, &r1, &e1);
	ret = bench_snap(b, &s1);
	if (!ret)
		ret = scale_obj_moves(s, &m1);
	if (!ret)
		ret = scale_wait_reads(s, reads, 1);
	if (ret)
		return ret;
	*ns = t1 - t0;
	scale_delta(&s0, &s1, cnt);
	cnt[CNT_DMA_READS] = r1 - r0;
	scale_reads(s, reads, &r1, &e1);
	cnt[CNT_DATA_ERRORS] = e1;
	*moves_per_obj = (double)(m1 - m0) / s->nobjs;
	return 0;
}

int scale_compact(struct scale_ctx *s, struct vp2p_bo *big)
{
	struct bench *b = s->b;
	double ns[b->reps], mpo[b->reps];
	int64_t cnt[b->reps][NR_COUNTERS];
	struct bench_row *row;
	unsigned int r, c;
	int ret;

	for (r = 0; r < b->reps; r++) {
		bench_progress(b, "scale: compaction under %u objects, repetition %u",
			       s->nobjs, r + 1);
		for (c = 0; c < NR_COUNTERS; c++)
			cnt[r][c] = -1;
		ret = scale_compact_once(s, big, r == 0, &ns[r], cnt[r],
					 &mpo[r]);
		if (ret)
			return ret;
	}
	row = bench_row_add(b, BENCH_SCALE, "compact", big->size,
			    s->nobjs * s->regs);
	if (!row)
		return 0;
	row->nobjs = s->nobjs;
	bench_row_times(row, ns, b->reps, cnt);
	row->moves_per_obj = mpo[bench_median_index(ns, b->reps)];
	row->mib_s = 0;
	return 0;
}
