// SPDX-License-Identifier: MIT
/*
 * Scale, map-*: the cost of a p2p_lookup of an object that has nothing
 * to do with a move. One process registers (with prefetch: hmm_range_fault()
 * calls the exporter's p2p_lookup) and deregisters a small VRAM object
 * again and again, timing each registration; in each repetition first
 * with nothing else going on (map-idle), then while a forked mover
 * moves a large object system -> VRAM -> system, with 20 ms between
 * moves (map-move, only the registrations that overlapped a move).
 * Median and max of each repetition, and the registrations that
 * completed while a move was in progress. An exporter that holds a
 * device-wide lock across the copy stalls the registration for the rest
 * of the move: the max approaches a whole move, and none completes
 * inside one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scale.h"

#define SCALE_MAX_SAMPLES	4096	/* registrations timed per sub-phase */
#define SCALE_IDLE_SAMPLES	100
#define SCALE_MOVES_PER_REP	4	/* to VRAM and back, twice */
#define SCALE_PACE_US		500	/* between two timed registrations */
#define SCALE_MOVE_GAP_US	20000	/* between two of the mover's moves */

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
	struct scale_pair p;
	unsigned int nmoves;		/* the mover's */
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
		out->p.idle_cnt[c] = out->p.move_cnt[c] = -1;

	ret = bench_snap(b, &s0);
	for (n = 0; n < SCALE_IDLE_SAMPLES && !ret; n++) {
		ret = scale_map_once(b, p, &st0[n], &st1[n]);
		lat[n] = st1[n] - st0[n];
	}
	if (!ret)
		ret = bench_snap(b, &s1);
	if (ret)
		return ret;
	scale_delta(&s0, &s1, out->p.idle_cnt);
	out->p.idle_cnt[CNT_TIMED_REGS] = n;
	out->p.idle_cnt[CNT_REGS_IN_MOVE] = 0;
	out->p.idle_med = bench_median(lat, n);
	out->p.idle_max = bench_max(lat, n);

	ret = bench_snap(b, &s0);
	if (!ret)
		ret = scale_mover_start(s);
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
	if (!ret)
		ret = scale_mover_stop(s, mv, &nmv);
	if (!ret)
		ret = bench_snap(b, &s1);
	if (ret)
		return ret;
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
	scale_delta(&s0, &s1, out->p.move_cnt);
	out->p.move_cnt[CNT_TIMED_REGS] = m;
	out->p.move_cnt[CNT_REGS_IN_MOVE] = inside;
	out->p.move_med = scale_median_of(lat, m);
	out->p.move_max = scale_max_of(lat, m);
	out->p.move_ns = nmv ? bench_median(mv, nmv) : -1;
	out->nmoves = nmv;
	return 0;
}

int scale_map(struct scale_ctx *s, uint64_t move_size)
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
		bench_progress(b, "scale: p2p_lookup of an unrelated object during %llu MiB moves, repetition %u",
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
		if (rep[r].p.move_cnt[CNT_COMPACTIONS] > 0 ||
		    rep[r].p.move_cnt[CNT_MOVES] > rep[r].nmoves) {
			bench_note(b, "scale: repetition %u: the mover's moves compacted (%lld) or moved other objects (%lld moves): map-move includes that",
				   r + 1,
				   (long long)rep[r].p.move_cnt[CNT_COMPACTIONS],
				   (long long)rep[r].p.move_cnt[CNT_MOVES]);
			break;
		}
	}
	if (!ret) {
		static const char *const names[4] = {
			"map-idle", "map-move", "map-idle-max", "map-move-max",
		};
		struct scale_pair pairs[b->reps];

		for (r = 0; r < b->reps; r++)
			pairs[r] = rep[r].p;
		scale_pair_rows(s, names, SCALE_UNRELATED, 1, pairs);
	}
out_big:
	vp2p_bo_close(b->efd, &big);
out_unmap:
	vp2p_bo_munmap(&small, p);
out_small:
	vp2p_bo_close(b->efd, &small);
	free(rep);
	return ret;
}
