// SPDX-License-Identifier: MIT
/*
 * Scale: many objects, many registrations, several importer processes,
 * and the exporter moving memory under them. Two parts, in one run:
 *
 *  - compact: N objects in VRAM, each registered M times, the
 *    registrations spread over K forked processes that stream DMA reads
 *    from them (EDU_NIC_MODE_BULK, a page at a time) and check every page
 *    against its object's pattern. Each repetition lays the objects out
 *    with a freed hole of their size between any two, then moves one
 *    object of half their total size into VRAM: no hole holds it, so the
 *    exporter compacts, sliding the streamed objects down while their
 *    importers stream. Timed: the move ioctl. Counted: moves of the
 *    streamed objects per object, the exporter's invalidations per move
 *    (above 1, compaction invalidated objects it did not move), the
 *    importers' invalidations, the DMA reads that ran meanwhile, and data
 *    errors, which must be 0 (the benchmark fails otherwise).
 *
 *  - map-*: the cost of a p2p_map of an object that has nothing to do
 *    with a move. One process registers (with prefetch: hmm_range_fault()
 *    calls the exporter's p2p_map) and deregisters a small VRAM object
 *    again and again, timing each registration; in each repetition first
 *    with nothing else going on (map-idle), then while a forked mover
 *    moves a large object system -> VRAM -> system, with 20 ms between
 *    moves (map-move, only the registrations that overlapped a move).
 *    Median and max of each
 *    repetition, and the registrations that completed while a move was
 *    in progress. An exporter that holds a device-wide lock across the
 *    copy stalls the registration for the rest of the move: the max
 *    approaches a whole move, and none completes inside one.
 *
 * The streamers are parked during the map part, and while the objects
 * are laid out, so that they neither compete for the CPUs there nor
 * fault objects back into VRAM (a p2p mapping of an object in system
 * memory returns it) in an order of their own.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#define SCALE_MAX_PROCS		8
#define SCALE_MAX_MOVES		64	/* moves of one repetition's map-move */
#define SCALE_MAX_SAMPLES	4096	/* registrations timed per sub-phase */
#define SCALE_IDLE_SAMPLES	100
#define SCALE_MOVES_PER_REP	4	/* to VRAM and back, twice */
#define SCALE_PACE_US		500	/* between two timed registrations */
#define SCALE_MOVE_GAP_US	20000	/* between two of the mover's moves */
#define SCALE_UNRELATED		(64 * 1024)

enum scale_phase { PH_PARK, PH_STREAM, PH_EXIT };

/*
 * Shared between the parent and its children (MAP_SHARED): the parent
 * writes the commands, each child its own slot. Accessed with
 * __atomic builtins, sequentially consistent, as it is not hot.
 */
struct scale_shm {
	int phase;
	unsigned int gen;			/* bumped on every phase change */
	/* streamer k */
	unsigned int parked_gen[SCALE_MAX_PROCS];
	int ready[SCALE_MAX_PROCS];
	int err[SCALE_MAX_PROCS];
	uint64_t reads[SCALE_MAX_PROCS];
	uint64_t errors[SCALE_MAX_PROCS];
	uint64_t busy[SCALE_MAX_PROCS];
	uint64_t bad_obj, bad_page, bad_got;	/* the first data error */
	/* mover */
	int mv_run;
	int mv_idle;			/* the mover saw mv_run 0, no move on */
	int mv_exit;
	int mv_err;
	unsigned int mv_started;
	unsigned int mv_done;
	uint64_t mv_t0[SCALE_MAX_MOVES];
	uint64_t mv_t1[SCALE_MAX_MOVES];
	int mv_to_vram[SCALE_MAX_MOVES];
};

#define LOAD(x)		__atomic_load_n(&(x), __ATOMIC_SEQ_CST)
#define STORE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_SEQ_CST)
#define ADD(x, v)	__atomic_add_fetch(&(x), (v), __ATOMIC_SEQ_CST)

struct scale_ctx {
	struct bench *b;
	struct scale_shm *sh;
	unsigned int nobjs;
	unsigned int regs;		/* registrations per object */
	unsigned int procs;
	uint64_t obj_size;
	uint64_t big_size;		/* the object that forces compaction */
	uint64_t base_used;		/* VRAM others used when we started */
	struct vp2p_bo *objs;
	struct vp2p_bo *fillers;
	pid_t pids[SCALE_MAX_PROCS];
	pid_t mover;
	uint64_t nmr[SCALE_MAX_PROCS];	/* registrations of streamer k */
};

static uint64_t scale_pattern(unsigned int obj, uint64_t page)
{
	return ((uint64_t)(obj + 1) << 32) | page;
}

/* Every page says which object and page it is, at its start and end. */
static void scale_fill(void *p, uint64_t size, unsigned int obj)
{
	uint64_t pg;

	for (pg = 0; pg < size / BENCH_PAGE; pg++) {
		uint64_t *w = (uint64_t *)((char *)p + pg * BENCH_PAGE);

		w[0] = scale_pattern(obj, pg);
		w[BENCH_PAGE / 8 - 1] = ~scale_pattern(obj, pg);
	}
}

/* Registration j of object i goes to streamer (i * regs + j) % procs. */
static unsigned int scale_owner(const struct scale_ctx *s, unsigned int i,
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
		uint64_t pg;

		if (phase == PH_EXIT)
			break;
		if (phase == PH_PARK || !n) {
			STORE(sh->parked_gen[k], gen);
			usleep(1000);
			continue;
		}
		mr = &mrs[iter % n];
		pg = (iter / n * 7 + k) % npages;
		iter++;
		ret = vp2p_dma(ifd, mr->key, EDU_NIC_DMA_FROM_MR,
			       EDU_NIC_MODE_BULK, pg * BENCH_PAGE, buf,
			       BENCH_PAGE);
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

/*
 * The mover: while told to run, moves @big system -> VRAM -> system ...,
 * recording when each move ran. Where to is read from the object, never
 * assumed: a move to VRAM of an object already there is a move within
 * VRAM, which needs room for a second copy and would evict the streamed
 * objects to find it.
 */
static int scale_mover(struct scale_ctx *s, const struct vp2p_bo *big)
{
	struct scale_shm *sh = s->sh;
	struct drm_vgem_p2p_obj_info info;
	bool to_vram;
	unsigned int n;
	int ret;

	while (!LOAD(sh->mv_exit)) {
		if (!LOAD(sh->mv_run)) {
			STORE(sh->mv_idle, 1);
			usleep(1000);
			continue;
		}
		ret = vp2p_bo_info(s->b->efd, big, &info);
		if (ret) {
			STORE(sh->mv_err, ret);
			return ret;
		}
		to_vram = info.placement == VGEM_P2P_PLACEMENT_SYSTEM;
		n = LOAD(sh->mv_started);
		if (n == SCALE_MAX_MOVES) {
			usleep(1000);
			continue;
		}
		STORE(sh->mv_to_vram[n], to_vram);
		STORE(sh->mv_t0[n], bench_now_ns());
		STORE(sh->mv_started, n + 1);
		ret = vp2p_bo_move(s->b->efd, big, to_vram ?
				   VGEM_P2P_MOVE_VRAM : VGEM_P2P_MOVE_SYSTEM,
				   NULL);
		STORE(sh->mv_t1[n], bench_now_ns());
		if (ret) {
			STORE(sh->mv_err, ret);
			return ret;
		}
		STORE(sh->mv_done, n + 1);
		/*
		 * A pause, as between two moves of a real driver: back to
		 * back, a mutex the moves hold would let a waiter in only
		 * now and then, and "completed inside a move" would mean
		 * "inside the mover's ioctl, waiting for the lock".
		 */
		usleep(SCALE_MOVE_GAP_US);
	}
	return 0;
}

/* Any child that died or failed fails the run. */
static int scale_children_ok(struct scale_ctx *s)
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

static void scale_set_phase(struct scale_ctx *s, int phase)
{
	STORE(s->sh->phase, phase);
	ADD(s->sh->gen, 1);
}

/* Park the streamers and wait until none is inside a read any more. */
static int scale_park(struct scale_ctx *s)
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
 * Wait until every streamer has read @rounds times from each of its
 * registrations since @since (a snapshot of the reads).
 */
static int scale_wait_reads(struct scale_ctx *s, const uint64_t *since,
			    unsigned int rounds)
{
	unsigned int k;
	int ret;

	for (k = 0; k < s->procs; k++) {
		while (LOAD(s->sh->reads[k]) < since[k] + rounds * s->nmr[k]) {
			ret = scale_children_ok(s);
			if (ret)
				return ret;
			usleep(2000);
		}
	}
	return 0;
}

static void scale_reads(struct scale_ctx *s, uint64_t *reads,
			uint64_t *total, uint64_t *errors)
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
static int scale_wait_vram(struct scale_ctx *s, uint64_t used)
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

/*
 * Lay the objects out with a hole of their size between any two: each
 * goes to VRAM (from system memory: where the allocator puts it, the
 * lowest fitting place in an empty VRAM), then a filler of the same size
 * behind it; then the fillers go. The first time the objects are created
 * that way; later they are evicted first (the streamers are parked).
 */
static int scale_layout(struct scale_ctx *s, bool first)
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

/* The exporter's counters the driver-neutral bench_delta() leaves out. */
static void scale_delta(const struct bench_snap *s0,
			const struct bench_snap *s1, int64_t *cnt)
{
	bench_delta(s0, s1, cnt);
	cnt[CNT_MOVES] = s1->v.moves - s0->v.moves;
	cnt[CNT_COMPACTIONS] = s1->v.compactions - s0->v.compactions;
	cnt[CNT_OBJ_INVALIDATIONS] = s1->v.invalidations -
				     s0->v.invalidations;
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

static int scale_compact(struct scale_ctx *s, struct vp2p_bo *big)
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

/* One timed registration of the unrelated object. */
static int scale_map_once(struct bench *b, void *p, uint64_t *t0,
			  uint64_t *t1)
{
	uint32_t key;
	int ret;

	*t0 = bench_now_ns();
	ret = vp2p_mr_register(b->ifd, p, SCALE_UNRELATED, EDU_NIC_ACCESS_READ,
			       EDU_NIC_REG_MR_PREFETCH, &key);
	*t1 = bench_now_ns();
	if (ret)
		return bench_fail(ret, "scale: registering the unrelated object");
	vp2p_mr_deregister(b->ifd, key);
	usleep(SCALE_PACE_US);
	return 0;
}

struct scale_map_rep {
	double idle_med, idle_max, move_med, move_max, move_ns;
	unsigned int nmoves;		/* the mover's */
	int64_t idle_cnt[NR_COUNTERS], move_cnt[NR_COUNTERS];
	/*
	 * The slowest registration during moves, against the last move
	 * that began before it returned: ms from that move's start to the
	 * registration's, from the move's end to its return; the moves it
	 * overlapped.
	 */
	double slow_ns, slow_start_ms, slow_end_ms, slow_move_ms;
	unsigned int slow_over;
	bool slow_to_vram;
};

static double scale_max_of(const double *v, unsigned int n)
{
	return n ? bench_max(v, n) : -1;
}

static double scale_median_of(const double *v, unsigned int n)
{
	return n ? bench_median(v, n) : -1;
}

/*
 * One repetition: registrations with nothing going on, then while the
 * mover moves the big object there and back. A registration counts as
 * during a move if its interval overlaps a move's; as completed inside
 * one if it returned while a move was still running.
 */
static int scale_map_rep(struct scale_ctx *s, void *p,
			 struct scale_map_rep *out)
{
	static uint64_t st0[SCALE_MAX_SAMPLES], st1[SCALE_MAX_SAMPLES];
	static double lat[SCALE_MAX_SAMPLES];
	struct scale_shm *sh = s->sh;
	struct bench *b = s->b;
	struct bench_snap s0, s1;
	double mv[SCALE_MAX_MOVES];
	unsigned int i, n, m, nmv, inside = 0;
	int ret, c;

	for (c = 0; c < NR_COUNTERS; c++)
		out->idle_cnt[c] = out->move_cnt[c] = -1;

	ret = bench_snap(b, &s0);
	for (n = 0; n < SCALE_IDLE_SAMPLES && !ret; n++) {
		ret = scale_map_once(b, p, &st0[n], &st1[n]);
		lat[n] = st1[n] - st0[n];
	}
	if (!ret)
		ret = bench_snap(b, &s1);
	if (ret)
		return ret;
	scale_delta(&s0, &s1, out->idle_cnt);
	out->idle_cnt[CNT_TIMED_REGS] = n;
	out->idle_cnt[CNT_REGS_IN_MOVE] = 0;
	out->idle_med = bench_median(lat, n);
	out->idle_max = bench_max(lat, n);

	STORE(sh->mv_started, 0);
	STORE(sh->mv_done, 0);
	ret = bench_snap(b, &s0);
	if (ret)
		return ret;
	STORE(sh->mv_run, 1);
	while (!LOAD(sh->mv_started) && !(ret = scale_children_ok(s)))
		usleep(100);
	/* From now on the mover writes mv_idle only once told to stop */
	STORE(sh->mv_idle, 0);
	for (n = 0; !ret && LOAD(sh->mv_done) < SCALE_MOVES_PER_REP; ) {
		if (n == SCALE_MAX_SAMPLES) {
			usleep(1000);
			ret = scale_children_ok(s);
			continue;
		}
		ret = scale_map_once(b, p, &st0[n], &st1[n]);
		n++;
		if (!ret)
			ret = scale_children_ok(s);
	}
	/* it may be in one more move: wait until it has seen the stop */
	STORE(sh->mv_run, 0);
	while (!ret && !LOAD(sh->mv_idle)) {
		usleep(1000);
		ret = scale_children_ok(s);
	}
	if (!ret)
		ret = bench_snap(b, &s1);
	if (ret)
		return ret;
	nmv = LOAD(sh->mv_done);
	for (i = 0; i < nmv; i++)
		mv[i] = LOAD(sh->mv_t1[i]) - LOAD(sh->mv_t0[i]);
	out->slow_ns = -1;
	for (i = 0, m = 0; i < n; i++) {
		unsigned int j, nover = 0, last = 0;

		for (j = 0; j < nmv; j++) {
			uint64_t a = LOAD(sh->mv_t0[j]), z = LOAD(sh->mv_t1[j]);

			if (st0[i] < z && st1[i] > a)
				nover++;
			if (st1[i] > a && st1[i] < z)
				inside++;
			if (a < st1[i])
				last = j;
		}
		if (!nover)
			continue;
		lat[m++] = st1[i] - st0[i];
		if (lat[m - 1] > out->slow_ns) {
			double a = LOAD(sh->mv_t0[last]);
			double z = LOAD(sh->mv_t1[last]);

			out->slow_ns = lat[m - 1];
			out->slow_start_ms = (st0[i] - a) / 1e6;
			out->slow_end_ms = (st1[i] - z) / 1e6;
			out->slow_move_ms = (z - a) / 1e6;
			out->slow_over = nover;
			out->slow_to_vram = LOAD(sh->mv_to_vram[last]);
		}
	}
	scale_delta(&s0, &s1, out->move_cnt);
	out->move_cnt[CNT_TIMED_REGS] = m;
	out->move_cnt[CNT_REGS_IN_MOVE] = inside;
	out->move_med = scale_median_of(lat, m);
	out->move_max = scale_max_of(lat, m);
	out->move_ns = nmv ? bench_median(mv, nmv) : -1;
	out->nmoves = nmv;
	return 0;
}

static void scale_map_rows(struct scale_ctx *s, struct scale_map_rep *rep)
{
	static const char *const names[4] = {
		"map-idle", "map-move", "map-idle-max", "map-move-max",
	};
	struct bench *b = s->b;
	double ns[b->reps], mv[b->reps];
	int64_t cnt[b->reps][NR_COUNTERS];
	struct bench_row *row;
	unsigned int c, r;

	for (r = 0; r < b->reps; r++)
		mv[r] = rep[r].move_ns;
	for (c = 0; c < 4; c++) {
		for (r = 0; r < b->reps; r++) {
			const struct scale_map_rep *x = &rep[r];

			ns[r] = c == 0 ? x->idle_med : c == 1 ? x->move_med :
				c == 2 ? x->idle_max : x->move_max;
			memcpy(cnt[r], c % 2 ? x->move_cnt : x->idle_cnt,
			       sizeof(cnt[r]));
		}
		row = bench_row_add(b, BENCH_SCALE, names[c], SCALE_UNRELATED,
				    1);
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

static int scale_map(struct scale_ctx *s, uint64_t move_size)
{
	struct bench *b = s->b;
	struct scale_map_rep *rep;
	struct vp2p_bo small, big;
	int status, ret;
	void *p = NULL;
	unsigned int r, i;

	rep = calloc(b->reps, sizeof(*rep));
	if (!rep)
		return -ENOMEM;
	ret = vp2p_bo_create(b->efd, SCALE_UNRELATED, 0, &small);
	if (ret) {
		free(rep);
		return bench_fail(ret, "scale: unrelated object");
	}
	ret = vp2p_bo_mmap(b->efd, &small, PROT_READ | PROT_WRITE, &p);
	if (ret)
		goto out_small;
	scale_fill(p, SCALE_UNRELATED, ~0u - 1);
	/*
	 * The big object starts in system memory with its pages in place: a
	 * move from there copies, not just zero-fills. Not through a CPU
	 * fault, which would bring it to VRAM: MOVE_SYSTEM populates it.
	 */
	ret = vp2p_bo_create(b->efd, move_size, VGEM_P2P_CREATE_SYSTEM, &big);
	if (ret) {
		bench_fail(ret, "scale: %llu MiB object",
			   (unsigned long long)(move_size / MiB));
		goto out_unmap;
	}
	ret = vp2p_bo_move(b->efd, &big, VGEM_P2P_MOVE_SYSTEM, NULL);
	if (ret)
		goto out_big;

	s->mover = fork();
	if (s->mover < 0) {
		ret = -errno;
		goto out_big;
	}
	if (!s->mover)
		_exit(scale_mover(s, &big) ? 1 : 0);

	for (r = 0; r < b->reps && !ret; r++) {
		bench_progress(b, "scale: p2p_map of an unrelated object during %llu MiB moves, repetition %u",
			       (unsigned long long)(move_size / MiB), r + 1);
		ret = scale_map_rep(s, p, &rep[r]);
		/* an odd count of moves left it in VRAM: back, off the clock */
		if (!ret)
			ret = vp2p_bo_move(b->efd, &big, VGEM_P2P_MOVE_SYSTEM,
					   NULL);
	}
	STORE(s->sh->mv_exit, 1);
	waitpid(s->mover, &status, 0);
	s->mover = 0;
	if (!ret && (!WIFEXITED(status) || WEXITSTATUS(status)))
		ret = bench_fail(-ECHILD, "scale: mover failed");
	/* Where the slowest of them all waited, for whoever reads the max */
	for (r = 0, i = 0; r < b->reps && !ret; r++)
		if (rep[r].slow_ns > rep[i].slow_ns)
			i = r;
	if (!ret && rep[i].slow_ns > 0)
		bench_note(b, "scale: slowest registration during moves: %.1f ms (rep %u, over %u moves); began %+.1f ms from the start of the last move begun before it returned, returned %+.1f ms from its end (move to %s: %.1f ms)",
			   rep[i].slow_ns / 1e6, i + 1, rep[i].slow_over,
			   rep[i].slow_start_ms, rep[i].slow_end_ms,
			   rep[i].slow_to_vram ? "VRAM" : "system",
			   rep[i].slow_move_ms);
	for (r = 0; r < b->reps && !ret; r++) {
		if (rep[r].move_cnt[CNT_COMPACTIONS] > 0 ||
		    rep[r].move_cnt[CNT_MOVES] > rep[r].nmoves) {
			bench_note(b, "scale: repetition %u: the mover's moves compacted (%lld) or moved other objects (%lld moves): map-move includes that",
				   r + 1,
				   (long long)rep[r].move_cnt[CNT_COMPACTIONS],
				   (long long)rep[r].move_cnt[CNT_MOVES]);
			break;
		}
	}
	if (!ret)
		scale_map_rows(s, rep);
out_big:
	vp2p_bo_close(b->efd, &big);
out_unmap:
	vp2p_bo_munmap(&small, p);
out_small:
	vp2p_bo_close(b->efd, &small);
	free(rep);
	return ret;
}

/* Fork the streamers; each registers its share and reports ready. */
static int scale_fork(struct scale_ctx *s)
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

static void scale_reap(struct scale_ctx *s)
{
	unsigned int k;
	int status;

	scale_set_phase(s, PH_EXIT);
	for (k = 0; k < s->procs; k++)
		if (s->pids[k] > 0)
			waitpid(s->pids[k], &status, 0);
}

int bench_scale(struct bench *b)
{
	struct drm_vgem_p2p_stats st;
	struct scale_ctx s = {
		.b = b,
		.nobjs = b->scale_objs,
		.regs = b->scale_regs,
		.procs = b->scale_procs,
	};
	uint64_t avail, tail, move_size = b->scale_move;
	uint64_t busy = 0, errors = 0, reads = 0;
	struct vp2p_bo big = { };
	unsigned int i, k;
	void *p;
	int ret;

	ret = vp2p_exporter_stats(b->efd, &st);
	if (ret)
		return bench_fail(ret, "scale: exporter stats");
	avail = st.vram_size - st.vram_used;
	s.base_used = st.vram_used;
	/* The objects and their fillers take all of VRAM but a tail. */
	s.obj_size = avail / (2 * s.nobjs) / BENCH_PAGE * BENCH_PAGE;
	if (s.obj_size < BENCH_PAGE)
		return bench_fail(-ENOSPC, "scale: %u objects and as many holes in %llu MiB of free VRAM",
				  s.nobjs, (unsigned long long)(avail / MiB));
	if (s.obj_size > EDU_NIC_MR_MAX_LENGTH)
		s.obj_size = EDU_NIC_MR_MAX_LENGTH;
	tail = avail - 2 * s.nobjs * s.obj_size;
	/* Larger than any hole (the top one is a filler and the tail) */
	s.big_size = s.nobjs * s.obj_size / 2 / BENCH_PAGE * BENCH_PAGE;
	if (s.big_size <= s.obj_size + tail)
		bench_note(b, "scale: the %llu KiB object fits in a hole of %llu KiB: no compaction",
			   (unsigned long long)(s.big_size >> 10),
			   (unsigned long long)((s.obj_size + tail) >> 10));
	/* After the compaction part, the big mover needs that much room */
	if (move_size > avail - s.nobjs * s.obj_size - SCALE_UNRELATED) {
		move_size = (avail - s.nobjs * s.obj_size - SCALE_UNRELATED) /
			    MiB * MiB;
		bench_note(b, "scale: moves of %llu MiB, not %llu: the VRAM left beside the objects",
			   (unsigned long long)(move_size / MiB),
			   (unsigned long long)(b->scale_move / MiB));
	}

	s.sh = mmap(NULL, sizeof(*s.sh), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	s.objs = calloc(s.nobjs, sizeof(*s.objs));
	s.fillers = calloc(s.nobjs, sizeof(*s.fillers));
	if (s.sh == MAP_FAILED || !s.objs || !s.fillers) {
		ret = -ENOMEM;
		goto out_free;
	}
	memset(s.sh, 0, sizeof(*s.sh));
	s.sh->phase = PH_PARK;

	bench_progress(b, "scale: %u objects of %llu KiB, %u registrations each over %u processes",
		       s.nobjs, (unsigned long long)(s.obj_size >> 10),
		       s.regs, s.procs);
	ret = scale_layout(&s, true);
	for (i = 0; i < s.nobjs && !ret; i++) {
		ret = vp2p_bo_mmap(b->efd, &s.objs[i], PROT_READ | PROT_WRITE,
				   &p);
		if (ret)
			break;
		scale_fill(p, s.obj_size, i);
		vp2p_bo_munmap(&s.objs[i], p);
	}
	/* In system memory, populated, as it is for later repetitions */
	if (!ret)
		ret = vp2p_bo_create(b->efd, s.big_size,
				     VGEM_P2P_CREATE_SYSTEM, &big);
	if (!ret)
		ret = vp2p_bo_move(b->efd, &big, VGEM_P2P_MOVE_SYSTEM, NULL);
	if (!ret)
		ret = scale_fork(&s);
	if (!ret)
		ret = scale_compact(&s, &big);
	if (!ret)
		ret = scale_park(&s);
	if (big.handle)
		vp2p_bo_close(b->efd, &big);
	/* its VRAM free before the unrelated object takes its place */
	if (!ret)
		ret = scale_wait_vram(&s, s.nobjs * s.obj_size);
	if (!ret)
		ret = scale_map(&s, move_size);

	for (k = 0; k < s.procs; k++) {
		reads += LOAD(s.sh->reads[k]);
		errors += LOAD(s.sh->errors[k]);
		busy += LOAD(s.sh->busy[k]);
	}
	scale_reap(&s);
	if (busy)
		bench_note(b, "scale: %llu DMA reads got -EBUSY (edu_nic gave up waiting for a move) and were retried",
			   (unsigned long long)busy);
	if (!ret && errors) {
		bench_note(b, "scale: %llu of %llu DMA reads returned wrong data; first: object %llu page %llu read 0x%llx",
			   (unsigned long long)errors,
			   (unsigned long long)reads,
			   (unsigned long long)LOAD(s.sh->bad_obj),
			   (unsigned long long)LOAD(s.sh->bad_page),
			   (unsigned long long)LOAD(s.sh->bad_got));
		ret = bench_fail(-EIO, "scale: data errors");
	}
	for (i = 0; i < s.nobjs; i++)
		if (s.objs[i].handle)
			vp2p_bo_close(b->efd, &s.objs[i]);
out_free:
	free(s.fillers);
	free(s.objs);
	if (s.sh != MAP_FAILED)
		munmap(s.sh, sizeof(*s.sh));
	return ret;
}
