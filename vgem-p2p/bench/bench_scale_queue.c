// SPDX-License-Identifier: MIT
/*
 * Scale, info-*: what importers queued for a shared DMA engine cost the
 * exporter's other clients. The streamers read with the edu engine
 * (EDU_NIC_MODE_DEVICE), each from its first registration only, so that
 * every streamed registration has a transfer queued for the one engine
 * most of the time. A forked mover moves the streamed objects within
 * VRAM in turn, 20 ms apart; each move invalidates their registrations
 * with the exporter's device lock held. The parent times OBJ_INFO of an
 * object nobody imports, which takes that lock: first with the streamers
 * parked and no mover (info-idle), then while they stream and it moves
 * (info-queue). An importer that held its registration's lock while it
 * queued for the engine made each move wait for the transfers ahead of
 * it, and OBJ_INFO with it: info-queue-max then approaches a queue of
 * commands (about 100 ms each under QEMU). The row's "move" column is
 * the mover's median move.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scale.h"

#define QUEUE_IDLE_SAMPLES	100
#define QUEUE_MOVES_PER_REP	8
#define QUEUE_MAX_SAMPLES	4096
#define QUEUE_PACE_US		2000	/* between two timed OBJ_INFOs */
#define QUEUE_MOVE_GAP_US	20000

/*
 * The objects the streamers read in device mode: the object of each
 * streamer's first registration (scale_streamer() registers in object
 * order). Return: how many distinct ones, in @objs.
 */
static unsigned int queue_streamed(const struct scale_ctx *s,
				   unsigned int *objs)
{
	unsigned int i, j, k, n = 0, m;

	for (k = 0; k < s->procs; k++) {
		for (i = 0; i < s->nobjs; i++) {
			for (j = 0; j < s->regs; j++)
				if (scale_owner(s, i, j) == k)
					break;
			if (j < s->regs)
				break;
		}
		if (i == s->nobjs)
			continue;
		for (m = 0; m < n && objs[m] != i; m++)
			;
		if (m == n)
			objs[n++] = i;
	}
	return n;
}

/* The mover: while told to run, moves the streamed objects in turn. */
static int queue_mover(struct scale_ctx *s, const unsigned int *objs,
		       unsigned int nobjs)
{
	struct scale_shm *sh = s->sh;
	unsigned int n, turn = 0;
	int ret;

	while (!LOAD(sh->mv_exit)) {
		n = LOAD(sh->mv_started);
		if (!LOAD(sh->mv_run) || n == SCALE_MAX_MOVES) {
			STORE(sh->mv_idle, 1);
			usleep(1000);
			continue;
		}
		STORE(sh->mv_to_vram[n], 1);
		STORE(sh->mv_t0[n], bench_now_ns());
		STORE(sh->mv_started, n + 1);
		ret = vp2p_bo_move(s->b->efd, &s->objs[objs[turn++ % nobjs]],
				   VGEM_P2P_MOVE_VRAM, NULL);
		STORE(sh->mv_t1[n], bench_now_ns());
		if (ret) {
			STORE(sh->mv_err, ret);
			return ret;
		}
		STORE(sh->mv_done, n + 1);
		usleep(QUEUE_MOVE_GAP_US);
	}
	return 0;
}

static int queue_info_once(struct scale_ctx *s, const struct vp2p_bo *bo,
			   double *ns)
{
	struct drm_vgem_p2p_obj_info info;
	uint64_t t0 = bench_now_ns();
	int ret = vp2p_bo_info(s->b->efd, bo, &info);

	*ns = bench_now_ns() - t0;
	if (ret)
		return bench_fail(ret, "scale: OBJ_INFO of the unrelated object");
	usleep(QUEUE_PACE_US);
	return 0;
}

static int queue_rep(struct scale_ctx *s, const struct vp2p_bo *unrelated,
		     struct scale_pair *out)
{
	static double lat[QUEUE_MAX_SAMPLES];
	struct scale_shm *sh = s->sh;
	uint64_t since[SCALE_MAX_PROCS], total0, total, errors;
	struct bench_snap s0, s1;
	double mv[SCALE_MAX_MOVES];
	unsigned int n, nmv;
	int ret, c;

	for (c = 0; c < NR_COUNTERS; c++)
		out->idle_cnt[c] = out->move_cnt[c] = -1;

	ret = bench_snap(s->b, &s0);
	for (n = 0; n < QUEUE_IDLE_SAMPLES && !ret; n++)
		ret = queue_info_once(s, unrelated, &lat[n]);
	if (!ret)
		ret = bench_snap(s->b, &s1);
	if (ret)
		return ret;
	scale_delta(&s0, &s1, out->idle_cnt);
	out->idle_med = bench_median(lat, n);
	out->idle_max = bench_max(lat, n);

	/* every streamer queued on the engine before the first move */
	scale_reads(s, since, &total, &errors);
	scale_set_phase(s, PH_STREAM);
	ret = scale_wait_reads(s, since, 1);
	if (!ret)
		ret = bench_snap(s->b, &s0);
	if (ret)
		return ret;
	scale_reads(s, since, &total0, &errors);
	ret = scale_mover_start(s);
	for (n = 0; !ret && LOAD(sh->mv_done) < QUEUE_MOVES_PER_REP; ) {
		if (n == QUEUE_MAX_SAMPLES) {
			usleep(1000);
			ret = scale_children_ok(s);
			continue;
		}
		ret = queue_info_once(s, unrelated, &lat[n++]);
		if (!ret)
			ret = scale_children_ok(s);
	}
	if (!ret)
		ret = scale_mover_stop(s, mv, &nmv);
	if (!ret)
		ret = scale_park(s);
	if (!ret)
		ret = bench_snap(s->b, &s1);
	if (ret)
		return ret;
	scale_delta(&s0, &s1, out->move_cnt);
	scale_reads(s, since, &total, &errors);
	out->move_cnt[CNT_DMA_READS] = total - total0;
	out->move_cnt[CNT_DATA_ERRORS] = errors;
	out->move_med = bench_median(lat, n);
	out->move_max = bench_max(lat, n);
	out->move_ns = nmv ? bench_median(mv, nmv) : -1;
	return 0;
}

int scale_queue(struct scale_ctx *s)
{
	unsigned int objs[SCALE_MAX_PROCS], nobjs = queue_streamed(s, objs);
	struct bench *b = s->b;
	struct vp2p_bo unrelated;
	struct scale_pair *rep;
	unsigned int r;
	int status, ret;

	rep = calloc(b->reps, sizeof(*rep));
	if (!rep)
		return -ENOMEM;
	ret = vp2p_bo_create(b->efd, SCALE_UNRELATED, 0, &unrelated);
	if (ret) {
		free(rep);
		return bench_fail(ret, "scale: unrelated object");
	}
	STORE(s->sh->stream_device, 1);
	STORE(s->sh->mv_exit, 0);
	STORE(s->sh->mv_run, 0);
	s->mover = fork();
	if (s->mover < 0) {
		ret = bench_fail(-errno, "scale: fork");
		goto out;
	}
	if (!s->mover)
		_exit(queue_mover(s, objs, nobjs) ? 1 : 0);

	for (r = 0; r < b->reps && !ret; r++) {
		bench_progress(b, "scale: OBJ_INFO while %u processes queue device DMA and %u of their objects move, repetition %u",
			       s->procs, nobjs, r + 1);
		ret = queue_rep(s, &unrelated, &rep[r]);
	}
	STORE(s->sh->mv_exit, 1);
	waitpid(s->mover, &status, 0);
	s->mover = 0;
	if (!ret && (!WIFEXITED(status) || WEXITSTATUS(status)))
		ret = bench_fail(-ECHILD, "scale: mover failed");
	if (!ret) {
		static const char *const names[4] = {
			"info-idle", "info-queue", "info-idle-max",
			"info-queue-max",
		};

		scale_pair_rows(s, names, s->obj_size, s->procs, rep);
	}
out:
	STORE(s->sh->stream_device, 0);
	vp2p_bo_close(b->efd, &unrelated);
	free(rep);
	return ret;
}
