// SPDX-License-Identifier: MIT
/*
 * The scale benchmarks' forked processes: K streamers, each with its own
 * importer file and mmaps, reading a page at a time from its share of
 * the objects' registrations and checking every page against its
 * object's pattern, commanded through a shared page; the checks that
 * any child died or failed; the mover's commands and the rows timed
 * with and without it. What bench_scale.c's run and the benchmarks it
 * calls (bench_scale_*.c) share; nothing here calls back into them.
 *
 * The streamers are parked during the map part, and while the objects
 * are laid out, so that they neither compete for the CPUs there nor
 * fault objects back into VRAM (a p2p mapping of an object in system
 * memory returns it) in an order of their own.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scale.h"

static uint64_t scale_pattern(unsigned int obj, uint64_t page)
{
	return ((uint64_t)(obj + 1) << 32) | page;
}

/* Every page says which object and page it is, at its start and end. */
void scale_fill(void *p, uint64_t size, unsigned int obj)
{
	uint64_t pg;

	for (pg = 0; pg < size / BENCH_PAGE; pg++) {
		uint64_t *w = (uint64_t *)((char *)p + pg * BENCH_PAGE);

		w[0] = scale_pattern(obj, pg);
		w[BENCH_PAGE / 8 - 1] = ~scale_pattern(obj, pg);
	}
}

/* Registration j of object i goes to streamer (i * regs + j) % procs. */
unsigned int scale_owner(const struct scale_ctx *s, unsigned int i,
			 unsigned int j)
{
	return (i * s->regs + j) % s->procs;
}

struct scale_mr {
	uint32_t key;
	unsigned int obj;
};

/*
 * A streamer: its own importer file, its own mmaps of the objects it
 * has registrations on, registered without prefetch (nothing faults
 * until the first read); then, while the phase says so, reads a page at
 * a time from its registrations in turn and checks it.
 */
static int scale_streamer(struct scale_ctx *s, unsigned int k)
{
	struct scale_shm *sh = s->sh;
	uint64_t npages = s->obj_size / BENCH_PAGE, iter = 0;
	struct scale_mr *mrs;
	unsigned int i, j, n = 0;
	void **maps;
	uint64_t *buf;
	int ifd, ret = 0;

	ifd = vp2p_importer_open(0);
	mrs = calloc(s->nobjs * s->regs, sizeof(*mrs));
	maps = calloc(s->nobjs, sizeof(*maps));
	buf = bench_anon(BENCH_PAGE);
	if (ifd < 0 || !mrs || !maps || !buf) {
		ret = ifd < 0 ? ifd : -ENOMEM;
		goto out;
	}
	for (i = 0; i < s->nobjs && !ret; i++) {
		for (j = 0; j < s->regs && !ret; j++) {
			if (scale_owner(s, i, j) != k)
				continue;
			if (!maps[i])
				ret = vp2p_bo_mmap(s->b->efd, &s->objs[i],
						   PROT_READ, &maps[i]);
			if (!ret)
				ret = vp2p_mr_register(ifd, maps[i],
						       s->obj_size,
						       EDU_NIC_ACCESS_READ, 0,
						       &mrs[n].key);
			mrs[n++].obj = i;
		}
	}
	if (ret)
		goto out;
	STORE(sh->ready[k], 1);

	for (;;) {
		unsigned int gen = LOAD(sh->gen);
		int phase = LOAD(sh->phase);
		struct scale_mr *mr;
		bool device;
		uint64_t pg;

		if (phase == PH_EXIT)
			break;
		if (phase == PH_PARK || !n) {
			STORE(sh->parked_gen[k], gen);
			usleep(1000);
			continue;
		}
		device = LOAD(sh->stream_device);
		if (device) {
			mr = &mrs[0];
			pg = (iter * 7 + k) % npages;
		} else {
			mr = &mrs[iter % n];
			pg = (iter / n * 7 + k) % npages;
		}
		iter++;
		ret = vp2p_dma(ifd, mr->key, EDU_NIC_DMA_FROM_MR,
			       device ? EDU_NIC_MODE_DEVICE : EDU_NIC_MODE_BULK,
			       pg * BENCH_PAGE, buf, BENCH_PAGE);
		/* gave up waiting for a move to end: contention, try again */
		if (ret == -EBUSY) {
			ADD(sh->busy[k], 1);
			ret = 0;
			continue;
		}
		if (ret)
			break;
		if (buf[0] != scale_pattern(mr->obj, pg) ||
		    buf[BENCH_PAGE / 8 - 1] != ~scale_pattern(mr->obj, pg)) {
			if (ADD(sh->errors[k], 1) == 1) {
				STORE(sh->bad_obj, mr->obj);
				STORE(sh->bad_page, pg);
				STORE(sh->bad_got, buf[0]);
			}
		}
		ADD(sh->reads[k], 1);
	}
out:
	if (ret)
		STORE(sh->err[k], ret);
	STORE(sh->ready[k], ret ? -1 : 1);
	/* deregistering, munmap and close: exit does all of it */
	return ret;
}

/* Any child that died or failed fails the run. */
int scale_children_ok(struct scale_ctx *s)
{
	unsigned int k;
	int status;

	for (k = 0; k < s->procs; k++) {
		if (LOAD(s->sh->err[k]))
			return bench_fail(LOAD(s->sh->err[k]),
					  "scale: streamer %u", k);
		if (s->pids[k] > 0 &&
		    waitpid(s->pids[k], &status, WNOHANG) == s->pids[k]) {
			s->pids[k] = 0;
			return bench_fail(-ECHILD, "scale: streamer %u died", k);
		}
	}
	if (LOAD(s->sh->mv_err))
		return bench_fail(LOAD(s->sh->mv_err), "scale: mover");
	return 0;
}

void scale_set_phase(struct scale_ctx *s, int phase)
{
	STORE(s->sh->phase, phase);
	ADD(s->sh->gen, 1);
}

/* Park the streamers and wait until none is inside a read any more. */
int scale_park(struct scale_ctx *s)
{
	unsigned int k, gen;
	int ret;

	scale_set_phase(s, PH_PARK);
	gen = LOAD(s->sh->gen);
	for (k = 0; k < s->procs; k++) {
		while (LOAD(s->sh->parked_gen[k]) != gen) {
			ret = scale_children_ok(s);
			if (ret)
				return ret;
			usleep(1000);
		}
	}
	return 0;
}

/*
 * Wait until every streamer has read @rounds times from each of the
 * registrations it streams from (all of its own; in device mode, its
 * first) since @since (a snapshot of the reads).
 */
int scale_wait_reads(struct scale_ctx *s, const uint64_t *since,
		     unsigned int rounds)
{
	bool device = LOAD(s->sh->stream_device);
	unsigned int k;
	int ret;

	for (k = 0; k < s->procs; k++) {
		uint64_t want = since[k] + rounds * (device ? 1 : s->nmr[k]);

		while (LOAD(s->sh->reads[k]) < want) {
			ret = scale_children_ok(s);
			if (ret)
				return ret;
			usleep(2000);
		}
	}
	return 0;
}

void scale_reads(struct scale_ctx *s, uint64_t *reads, uint64_t *total,
		 uint64_t *errors)
{
	unsigned int k;

	*total = *errors = 0;
	for (k = 0; k < s->procs; k++) {
		reads[k] = LOAD(s->sh->reads[k]);
		*total += reads[k];
		*errors += LOAD(s->sh->errors[k]);
	}
}

/*
 * Objects are freed by a worker after their last reference goes: wait
 * until VRAM holds no more than @used bytes besides what others held at
 * the start, so that the fillers' holes are holes and nothing dying gets
 * compacted along.
 */
int scale_wait_vram(struct scale_ctx *s, uint64_t used)
{
	struct drm_vgem_p2p_stats st;
	int ret;

	for (;;) {
		ret = vp2p_exporter_stats(s->b->efd, &st);
		if (ret)
			return bench_fail(ret, "scale: exporter stats");
		if (st.vram_used <= s->base_used + used)
			return 0;
		usleep(1000);
	}
}

/* The exporter's counters the driver-neutral bench_delta() leaves out. */
void scale_delta(const struct bench_snap *s0, const struct bench_snap *s1,
		 int64_t *cnt)
{
	bench_delta(s0, s1, cnt);
	cnt[CNT_MOVES] = s1->v.moves - s0->v.moves;
	cnt[CNT_COMPACTIONS] = s1->v.compactions - s0->v.compactions;
	cnt[CNT_OBJ_INVALIDATIONS] = s1->v.invalidations -
				     s0->v.invalidations;
}

/*
 * Set the forked mover going, and return once its first move has begun:
 * from then on it writes mv_idle only once told to stop.
 */
int scale_mover_start(struct scale_ctx *s)
{
	struct scale_shm *sh = s->sh;
	int ret = 0;

	STORE(sh->mv_started, 0);
	STORE(sh->mv_done, 0);
	STORE(sh->mv_run, 1);
	while (!LOAD(sh->mv_started) && !(ret = scale_children_ok(s)))
		usleep(100);
	STORE(sh->mv_idle, 0);
	return ret;
}

/*
 * Stop the mover, which may be in one more move: wait until it has seen
 * the stop. Return: 0, with the moves' durations in @mv and their count
 * in *@nmv.
 */
int scale_mover_stop(struct scale_ctx *s, double *mv, unsigned int *nmv)
{
	struct scale_shm *sh = s->sh;
	unsigned int i;
	int ret = 0;

	STORE(sh->mv_run, 0);
	while (!ret && !LOAD(sh->mv_idle)) {
		usleep(1000);
		ret = scale_children_ok(s);
	}
	*nmv = LOAD(sh->mv_done);
	for (i = 0; i < *nmv; i++)
		mv[i] = LOAD(sh->mv_t1[i]) - LOAD(sh->mv_t0[i]);
	return ret;
}

/*
 * The four rows of a part timed idle and during moves (names: idle,
 * during moves, idle max, max during moves), one value per repetition
 * each; the "during" rows get their ratio to the idle ones and the
 * mover's median move.
 */
void scale_pair_rows(struct scale_ctx *s, const char *const names[4],
		     uint64_t size, unsigned int nregs,
		     const struct scale_pair *rep)
{
	struct bench *b = s->b;
	double ns[b->reps], mv[b->reps];
	int64_t cnt[b->reps][NR_COUNTERS];
	struct bench_row *row;
	unsigned int c, r;

	for (r = 0; r < b->reps; r++)
		mv[r] = rep[r].move_ns;
	for (c = 0; c < 4; c++) {
		for (r = 0; r < b->reps; r++) {
			const struct scale_pair *x = &rep[r];

			ns[r] = c == 0 ? x->idle_med : c == 1 ? x->move_med :
				c == 2 ? x->idle_max : x->move_max;
			memcpy(cnt[r], c % 2 ? x->move_cnt : x->idle_cnt,
			       sizeof(cnt[r]));
		}
		row = bench_row_add(b, BENCH_SCALE, names[c], size, nregs);
		if (!row)
			return;
		row->nobjs = s->nobjs;
		bench_row_times(row, ns, b->reps, cnt);
		row->mib_s = 0;
		if (c % 2) {
			row->move_ns = bench_median(mv, b->reps);
			bench_ratio(b, row, names[c - 1]);
		}
	}
}

/* Fork the streamers; each registers its share and reports ready. */
int scale_fork(struct scale_ctx *s)
{
	unsigned int i, j, k;
	int ret;

	for (i = 0; i < s->nobjs; i++)
		for (j = 0; j < s->regs; j++)
			s->nmr[scale_owner(s, i, j)]++;
	for (k = 0; k < s->procs; k++) {
		s->pids[k] = fork();
		if (s->pids[k] < 0)
			return bench_fail(-errno, "scale: fork");
		if (!s->pids[k])
			_exit(scale_streamer(s, k) ? 1 : 0);
	}
	for (k = 0; k < s->procs; k++) {
		while (!LOAD(s->sh->ready[k])) {
			ret = scale_children_ok(s);
			if (ret)
				return ret;
			usleep(1000);
		}
	}
	return scale_children_ok(s);
}

void scale_reap(struct scale_ctx *s)
{
	unsigned int k;
	int status;

	scale_set_phase(s, PH_EXIT);
	for (k = 0; k < s->procs; k++)
		if (s->pids[k] > 0)
			waitpid(s->pids[k], &status, 0);
}
