/* SPDX-License-Identifier: MIT */
/*
 * Scale: many objects, many registrations, several importer processes,
 * and the exporter moving memory under them. Two benchmarks, run one
 * after the other by bench_scale() ("--bench scale"):
 *
 *  - compact (bench_scale_compact.c): VRAM compaction while forked
 *    importer processes stream DMA reads from the objects it slides.
 *  - map-* (bench_scale_map.c): the cost of a p2p_lookup of an object
 *    that has nothing to do with a move, with and without a forked mover.
 *  - info-* (bench_scale_queue.c): the latency of an exporter ioctl on
 *    an object that has nothing to do with a move, while the streamers
 *    queue device DMA for the one engine and a mover moves the objects
 *    they stream.
 *
 * scale.c holds what they share: the forked processes (streamers, and
 * the mover's slots) and the shared page that commands them;
 * bench_scale.c, the run that sets the benchmarks up and calls them.
 */
#ifndef VP2P_BENCH_SCALE_H
#define VP2P_BENCH_SCALE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "bench.h"

#define SCALE_MAX_PROCS		8
#define SCALE_MAX_MOVES		64	/* moves of one repetition's map-move */
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
	/* stream with the engine, from the first registration only */
	int stream_device;
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

/*
 * One repetition of a timed operation on an object nobody moves: median
 * and max with nothing going on (idle_*), and while the mover moves
 * (move_*), the mover's median move, and the counters of each part.
 * What map-* and info-* report, as four rows each.
 */
struct scale_pair {
	double idle_med, idle_max, move_med, move_max, move_ns;
	int64_t idle_cnt[NR_COUNTERS], move_cnt[NR_COUNTERS];
};

/* scale.c: the forked processes and what they share */
unsigned int scale_owner(const struct scale_ctx *s, unsigned int i,
			 unsigned int j);
void scale_fill(void *p, uint64_t size, unsigned int obj);
int scale_children_ok(struct scale_ctx *s);
void scale_set_phase(struct scale_ctx *s, int phase);
int scale_park(struct scale_ctx *s);
int scale_wait_reads(struct scale_ctx *s, const uint64_t *since,
		     unsigned int rounds);
void scale_reads(struct scale_ctx *s, uint64_t *reads, uint64_t *total,
		 uint64_t *errors);
int scale_wait_vram(struct scale_ctx *s, uint64_t used);
void scale_delta(const struct bench_snap *s0, const struct bench_snap *s1,
		 int64_t *cnt);
int scale_mover_start(struct scale_ctx *s);
int scale_mover_stop(struct scale_ctx *s, double *mv, unsigned int *nmv);
void scale_pair_rows(struct scale_ctx *s, const char *const names[4],
		     uint64_t size, unsigned int nregs,
		     const struct scale_pair *rep);
int scale_fork(struct scale_ctx *s);
void scale_reap(struct scale_ctx *s);

/* bench_scale_compact.c */
int scale_layout(struct scale_ctx *s, bool first);
int scale_compact(struct scale_ctx *s, struct vp2p_bo *big);

/* bench_scale_map.c */
int scale_map(struct scale_ctx *s, uint64_t move_size);

/* bench_scale_queue.c */
int scale_queue(struct scale_ctx *s);

#endif
