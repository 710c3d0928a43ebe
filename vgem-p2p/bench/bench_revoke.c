// SPDX-License-Identifier: MIT
/*
 * Revocation: a forced move (DRM_IOCTL_VGEM_P2P_MOVE) of a VRAM object
 * that 1, 2, 4, ... registrations mirror in full; each repetition goes
 * through every number of registrations in a shuffled order. The move
 * first zaps the object's CPU mappings; every importer's notifier then
 * unmaps its DMA mapping and releases its lease (p2p_release); then the
 * copy. Reported:
 *  - latency: from the ioctl's start to the last vgem_p2p_unmap event
 *    (kernel timestamp, tracefs), i.e. until no importer can reach the
 *    old location; the ratio is to one registration of the same size;
 *    per size, a line through latency against registrations (the fixed
 *    cost, the cost per registration, R^2);
 *  - MiB/s: the object's size over the whole move, the rate at which
 *    compaction moves memory with the importers' mappings to revoke.
 * Between repetitions every registration is mirrored again (a one-byte
 * DMA faults the whole region in).
 * With a bochs-display, the same for the TTM exporter ("ttm-move", see
 * revoke_ttm_once()).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* The registration counts each size is measured at: 1, 2, 4, ... */
#define REVOKE_MAX_COUNTS	8

static unsigned int revoke_counts(const struct bench *b, unsigned int *counts)
{
	unsigned int n = 0, k;

	for (k = 1; k <= b->max_regs && n < REVOKE_MAX_COUNTS; k *= 2)
		counts[n++] = k;
	return n;
}

/*
 * Repetition @r's order of the counts: shuffled, so that neither a drift
 * of the emulator over the run nor what the previous point left behind
 * lines up with the number of registrations; a fixed seed per
 * repetition, so that runs repeat.
 */
static void revoke_order(unsigned int *order, unsigned int n, unsigned int r)
{
	unsigned int seed = 0x9e3779b9u * (r + 1), i, j, t;

	for (i = 0; i < n; i++)
		order[i] = i;
	for (i = n; i > 1; i--) {
		j = rand_r(&seed) % i;
		t = order[i - 1];
		order[i - 1] = order[j];
		order[j] = t;
	}
}

/* Register or deregister until exactly @want registrations cover @p. */
static int revoke_set_regs(struct bench *b, void *p, uint64_t size,
			   uint32_t *keys, unsigned int *nkeys,
			   unsigned int want)
{
	int ret;

	while (*nkeys > want)
		vp2p_mr_deregister(b->ifd, keys[--*nkeys]);
	while (*nkeys < want) {
		ret = vp2p_mr_register(b->ifd, p, size, EDU_NIC_ACCESS_READ,
				       EDU_NIC_REG_MR_PREFETCH,
				       &keys[*nkeys]);
		if (ret)
			return ret;
		(*nkeys)++;
	}
	return 0;
}

/*
 * The rows of one size, a row per count (ratios, plain and paired, to
 * one registration, which ran beside every other count in each
 * repetition), and the line through the median latencies against the
 * number of registrations: the intercept is what a move costs before its
 * first revocation, the slope what each registration adds.
 */
static void revoke_report(struct bench *b, const char *name, uint64_t size,
			  const unsigned int *counts, unsigned int ncounts,
			  unsigned int reps, double lat[][reps],
			  double move[][reps],
			  int64_t cnt[][reps][NR_COUNTERS])
{
	double x[REVOKE_MAX_COUNTS], y[REVOKE_MAX_COUNTS];
	struct bench_row *row;
	struct bench_fit *fit;
	unsigned int i;

	for (i = 0; i < ncounts; i++) {
		row = bench_row_add(b, BENCH_REVOKE, name, size, counts[i]);
		if (!row)
			return;
		bench_row_times(row, lat[i], reps, cnt[i]);
		row->move_ns = bench_median(move[i], reps);
		row->mib_s = (double)size / MiB / (row->move_ns / 1e9);
		bench_ratio(b, row, name);
		x[i] = counts[i];
		y[i] = row->median_ns;
	}
	if (ncounts < 2 || b->nfits == BENCH_MAX_FITS)
		return;
	fit = &b->fits[b->nfits++];
	memset(fit, 0, sizeof(*fit));
	fit->bench = BENCH_REVOKE;
	snprintf(fit->name, sizeof(fit->name), "%s", name);
	fit->size = size;
	fit->per = "registration";
	fit->spread = NAN;
	bench_fit_line(x, y, ncounts, fit);
}

/*
 * Every repetition goes through every count, in its own order, so that
 * each count's repetition i ran beside one registration's repetition i.
 */
static int revoke_size(struct bench *b, uint64_t size, bool traced)
{
	struct revoke_obj o = { .b = b, .size = size };
	unsigned int counts[REVOKE_MAX_COUNTS], order[REVOKE_MAX_COUNTS];
	unsigned int ncounts = revoke_counts(b, counts);
	double lat[REVOKE_MAX_COUNTS][b->reps];
	double move[REVOKE_MAX_COUNTS][b->reps];
	int64_t cnt[REVOKE_MAX_COUNTS][b->reps][NR_COUNTERS];
	unsigned int i, k, r;
	int ret;

	ret = vp2p_bo_create(b->efd, size, 0, &o.bo);
	if (ret)
		return bench_fail(ret, "revoke: object");
	ret = vp2p_bo_mmap(b->efd, &o.bo, PROT_READ | PROT_WRITE, &o.p);
	if (ret)
		goto out_close;
	for (r = 0; r < b->reps && !ret; r++) {
		revoke_order(order, ncounts, r);
		bench_progress(b, "revoke: %llu MiB, repetition %u",
			       (unsigned long long)(size / MiB), r + 1);
		for (k = 0; k < ncounts && !ret; k++) {
			i = order[k];
			ret = revoke_set_regs(b, o.p, size, o.keys, &o.nkeys,
					      counts[i]);
			if (!ret)
				ret = revoke_once(&o, traced, &lat[i][r],
						  &move[i][r], cnt[i][r]);
			if (ret)
				bench_fail(ret, "revoke: %u registrations, %llu MiB",
					   counts[i],
					   (unsigned long long)(size / MiB));
		}
	}
	/* Without trace timestamps, the whole move bounds the latency. */
	if (!ret)
		revoke_report(b, traced ? "move" : "move-untraced", size,
			      counts, ncounts, b->reps, traced ? lat : move,
			      move, cnt);
	revoke_set_regs(b, o.p, size, o.keys, &o.nkeys, 0);
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
	unsigned int counts[REVOKE_MAX_COUNTS], order[REVOKE_MAX_COUNTS];
	unsigned int ncounts = revoke_counts(b, counts);
	double ns[REVOKE_MAX_COUNTS][b->reps];
	int64_t cnt[REVOKE_MAX_COUNTS][b->reps][NR_COUNTERS];
	unsigned int i, k, r;
	int ret, ifd = bench_ttm_begin(b);

	ret = bench_ttm_get(b, size, false, &o.buf);
	if (!ret)
		ret = bench_ttm_get(b, bench_ttm_max(), false, &o.evictor);
	for (r = 0; r < b->reps && !ret; r++) {
		revoke_order(order, ncounts, r);
		bench_progress(b, "revoke: ttm %llu MiB, repetition %u",
			       (unsigned long long)(size / MiB), r + 1);
		for (k = 0; k < ncounts && !ret; k++) {
			i = order[k];
			ret = revoke_set_regs(b, o.buf.map, o.buf.size, o.keys,
					      &o.nkeys, counts[i]);
			if (!ret)
				ret = revoke_ttm_once(&o, &ns[i][r],
						      cnt[i][r]);
			if (ret)
				bench_fail(ret, "revoke: ttm, %u registrations, %llu MiB",
					   counts[i],
					   (unsigned long long)(size / MiB));
		}
	}
	/* TTM has no trace event of its own: the whole move, twice */
	if (!ret)
		revoke_report(b, "ttm-move", o.buf.size, counts, ncounts,
			      b->reps, ns, ns, cnt);
	revoke_set_regs(b, o.buf.map, o.buf.size, o.keys, &o.nkeys, 0);
	bench_ttm_put(b, &o.evictor);
	bench_ttm_put(b, &o.buf);
	bench_ttm_end(b, ifd);
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
