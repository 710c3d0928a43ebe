/* SPDX-License-Identifier: MIT */
/*
 * vgem-p2p-bench: what p2p through a vma costs and saves, measured in a
 * guest. Absolute times under QEMU's TCG mean little, so every time is
 * reported with its ratio to a baseline measured in the same run, next to
 * counts read from the drivers' statistics, which do not depend on the
 * emulator at all.
 */
#ifndef VP2P_BENCH_H
#define VP2P_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vgem_p2p.h"

#define BENCH_PAGE	4096ull
#define MiB		(1ull << 20)
#define BENCH_MAX_REPS	99

enum bench_id {
	BENCH_MAP,
	BENCH_STREAM,
	BENCH_DEVMEM,
	BENCH_REVOKE,
	BENCH_DMABUF,
	BENCH_SCALE,
	NR_BENCHES,
};

/*
 * Counters a row reports: deltas of the drivers' statistics over one
 * measured operation. -1 where a counter says nothing about the case.
 */
enum bench_counter {
	CNT_PAGES_MIGRATED,	/* vgem_p2p devmem_to_ram */
	CNT_SYSMEM_BYTES,	/* edu_nic pages_system, in bytes */
	CNT_BOUNCED_BYTES,	/* vgem_p2p bytes_bounced */
	CNT_COPIED_BYTES,	/* vgem_p2p bytes_copied (moves) */
	CNT_P2P_PAGES,		/* edu_nic pages_p2p */
	CNT_P2P_MAPS,		/* edu_nic p2p_maps */
	CNT_FAULTS,		/* edu_nic faults */
	CNT_INVALIDATIONS,	/* edu_nic invalidations */
	CNT_UNMAPS,		/* vgem_p2p p2p_unmaps */
	CNT_MOVES,		/* vgem_p2p moves (of any kind) */
	CNT_COMPACTIONS,	/* vgem_p2p compactions */
	CNT_OBJ_INVALIDATIONS,	/* vgem_p2p invalidations (objects zapped) */
	CNT_DMA_READS,		/* scale: the streamers' DMA reads meanwhile */
	CNT_DATA_ERRORS,	/* scale: reads with wrong data, so far */
	CNT_TIMED_REGS,		/* scale: registrations the times are over */
	CNT_REGS_IN_MOVE,	/* scale: of those, completed inside a move */
	NR_COUNTERS,
};

extern const char *const bench_counter_names[NR_COUNTERS];
extern const char *const bench_names[NR_BENCHES];

/**
 * struct bench_row - one measured case at one size
 * @bench: enum bench_id.
 * @name: the case, e.g. "vram", "anon", "p2p-warm".
 * @size: bytes the operation covers.
 * @nregs: registrations involved.
 * @reps: repetitions the median is over.
 * @median_ns: median time of the operation.
 * @min_ns: fastest repetition.
 * @max_ns: slowest repetition.
 * @mib_s: throughput in MiB/s, 0 where meaningless.
 * @ratio: @median_ns over the baseline row's, 0 if none.
 * @ratio_to: the baseline's @name.
 * @paired: median over the repetitions of this row's time divided by the
 *	baseline's time in the same repetition (measured beside it); NaN
 *	where nothing paired, 0 without a baseline.
 * @paired_q1: first quartile of those per-repetition ratios.
 * @paired_q3: third quartile; @paired_q3 - @paired_q1 is their
 *	interquartile range.
 * @rep_ns: the time of every repetition, in the order they ran.
 * @move_ns: revocation only: median time of the whole move; scale: of
 *	the mover's moves.
 * @nobjs: scale only: objects streamed from (0 elsewhere).
 * @moves_per_obj: scale only: moves of each of those objects, on
 *	average, in the median repetition; 0 elsewhere.
 * @cnt: counter deltas of one repetition (the median one), see above.
 */
struct bench_row {
	enum bench_id bench;
	char name[24];
	uint64_t size;
	unsigned int nregs;
	unsigned int reps;
	double median_ns;
	double min_ns;
	double max_ns;
	double mib_s;
	double ratio;
	char ratio_to[24];
	double paired;
	double paired_q1;
	double paired_q3;
	double move_ns;
	unsigned int nobjs;
	double moves_per_obj;
	int64_t cnt[NR_COUNTERS];
	double rep_ns[BENCH_MAX_REPS];
};

/**
 * struct bench_fit - least-squares line through a case's median times
 * @bench: enum bench_id.
 * @name: the case.
 * @size: revoke: the object size the line is for; 0: all sizes.
 * @per: what x counts: "page" (map: time against pages) or
 *	"registration" (revoke: latency against registrations).
 * @n: points.
 * @slope_ns: ns per @per.
 * @intercept_ns: ns at x = 0 (fixed cost).
 * @r2: coefficient of determination; 1 is a perfect line.
 * @spread: map: the largest median cost per page over the smallest, over
 *	the sizes of 1 MiB and up (1 is the same cost per page at every
 *	such size); NaN where fewer than two sizes qualify or for revoke.
 * @spread_n: the sizes @spread is over.
 */
struct bench_fit {
	enum bench_id bench;
	char name[24];
	uint64_t size;
	const char *per;
	unsigned int n;
	double slope_ns;
	double intercept_ns;
	double r2;
	double spread;
	unsigned int spread_n;
};

#define BENCH_MAX_ROWS	256
#define BENCH_MAX_FITS	32
#define BENCH_MAX_NOTES	16

/**
 * struct bench - the run: options, devices, and what was measured
 * @reps: repetitions per point.
 * @map_max: largest registration of the map benchmark.
 * @devmem_max: largest size of the device-private benchmark.
 * @revoke_max: largest object of the revocation benchmark.
 * @max_regs: most registrations of the revocation benchmark.
 * @stream_size: bytes of the stream benchmark.
 * @ttm_importer: the edu_nic device the TTM exporter's cases use.
 * @scale_objs: objects of the scale benchmark.
 * @scale_regs: registrations per object of the scale benchmark.
 * @scale_procs: importer processes of the scale benchmark.
 * @scale_move: size of the scale benchmark's large move.
 * @which: bit per enum bench_id to run.
 * @quiet: no progress on stderr.
 * @efd: the vgem_p2p device.
 * @ifd: the edu_nic device; while a TTM case runs, @tfd.
 * @tfd: the edu_nic device that maps the TTM exporter (@ttm_importer: in
 *	the topology 'bench', bochs-display sits beside another importer
 *	behind a switch of its own), -1 or @ifd's value where it is @ifd.
 * @bfd: the bochs card (the TTM exporter), -1 where there is none.
 * @vinfo: the exporter's counters at start (VRAM sizes).
 * @rows: the results, in order.
 * @fits: linear fits of the map and revocation benchmarks.
 * @notes: caps and caveats met during the run, for every output.
 */
struct bench {
	unsigned int reps;
	uint64_t map_max;
	uint64_t devmem_max;
	uint64_t revoke_max;
	unsigned int max_regs;
	uint64_t stream_size;
	int ttm_importer;
	unsigned int scale_objs;
	unsigned int scale_regs;
	unsigned int scale_procs;
	uint64_t scale_move;
	unsigned int which;
	bool quiet;

	int efd;
	int ifd;
	int tfd;
	int bfd;
	struct drm_vgem_p2p_stats vinfo;

	struct bench_row rows[BENCH_MAX_ROWS];
	unsigned int nrows;
	struct bench_fit fits[BENCH_MAX_FITS];
	unsigned int nfits;
	char notes[BENCH_MAX_NOTES][224];
	unsigned int nnotes;
};

/* stats.c: clocks, medians, fits, counter snapshots */
uint64_t bench_now_ns(void);
double bench_median(const double *v, unsigned int n);
double bench_min(const double *v, unsigned int n);
double bench_max(const double *v, unsigned int n);
double bench_quantile(const double *v, unsigned int n, double q);
unsigned int bench_paired(const double *ns, const double *base,
			  unsigned int n, double *med, double *q1, double *q3);
unsigned int bench_median_index(const double *v, unsigned int n);
void bench_fit_line(const double *x, const double *y, unsigned int n,
		    struct bench_fit *fit);

struct bench_snap {
	struct drm_vgem_p2p_stats v;
	struct edu_nic_dev_stats e;
};

int bench_snap(struct bench *b, struct bench_snap *s);
void bench_delta(const struct bench_snap *s0, const struct bench_snap *s1,
		 int64_t *cnt);

/* main.c: results */
struct bench_row *bench_row_add(struct bench *b, enum bench_id id,
				const char *name, uint64_t size,
				unsigned int nregs);
void bench_row_times(struct bench_row *row, double *ns, unsigned int n,
		     int64_t (*cnt)[NR_COUNTERS]);
void bench_ratio(struct bench *b, struct bench_row *row, const char *base);
void bench_note(struct bench *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void bench_progress(struct bench *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int bench_fail(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* buffers.c: memory the benchmarks register */
void *bench_anon(uint64_t size);
void bench_touch(void *p, uint64_t size, uint8_t seed);
int bench_register(struct bench *b, void *p, uint64_t size, uint32_t flags,
		   uint32_t *key, unsigned int *busy);

/* bench_ttm.c: bochs dumb buffers, the TTM exporter's memory */
struct bench_ttm_buf {
	uint32_t handle;
	uint32_t fb;
	uint32_t crtc;		/* non-zero while scanned out */
	uint32_t width;
	uint32_t lines;
	uint32_t pitch;
	uint64_t size;
	void *map;
};

int bench_ttm_open(struct bench *b);
int bench_ttm_begin(struct bench *b);
void bench_ttm_end(struct bench *b, int ifd);
uint64_t bench_ttm_max(void);
int bench_ttm_get(struct bench *b, uint64_t size, bool vram,
		  struct bench_ttm_buf *t);
int bench_ttm_scan_out(struct bench *b, struct bench_ttm_buf *t);
int bench_ttm_off(struct bench *b, struct bench_ttm_buf *t);
void bench_ttm_put(struct bench *b, struct bench_ttm_buf *t);

/* report.c: table, CSV, JSON */
void bench_report_table(const struct bench *b);
int bench_report_files(const struct bench *b, const char *dir);

/* trace.c: kernel timestamps of importer unmaps, for revocation latency */
int bench_trace_start(void);
void bench_trace_clear(void);
int bench_trace_last(const char *event, uint64_t *last_ns,
		     unsigned int *count);
void bench_trace_stop(void);

/* The benchmarks; each returns 0 or -errno (the run stops). */
int bench_map(struct bench *b);
int bench_stream(struct bench *b);
int bench_devmem(struct bench *b);
int bench_revoke(struct bench *b);
int bench_dmabuf(struct bench *b);
int bench_scale(struct bench *b);

#endif /* VP2P_BENCH_H */
