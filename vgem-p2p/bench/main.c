// SPDX-License-Identifier: MIT
/*
 * vgem-p2p-bench: run the benchmarks, print a table, write CSV and JSON.
 * Nothing here judges a time: the program fails only when an operation
 * fails, never because something was slow.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

static int (*const bench_fns[NR_BENCHES])(struct bench *b) = {
	[BENCH_MAP] = bench_map,
	[BENCH_STREAM] = bench_stream,
	[BENCH_DEVMEM] = bench_devmem,
	[BENCH_REVOKE] = bench_revoke,
	[BENCH_DMABUF] = bench_dmabuf,
	[BENCH_SCALE] = bench_scale,
};

int bench_fail(int err, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "vgem-p2p-bench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s\n", strerror(-err));
	return err;
}

void bench_progress(struct bench *b, const char *fmt, ...)
{
	va_list ap;

	if (b->quiet)
		return;
	fprintf(stderr, "bench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void bench_note(struct bench *b, const char *fmt, ...)
{
	va_list ap;

	if (b->nnotes == BENCH_MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(b->notes[b->nnotes], sizeof(b->notes[0]), fmt, ap);
	va_end(ap);
	bench_progress(b, "note: %s", b->notes[b->nnotes]);
	b->nnotes++;
}

struct bench_row *bench_row_add(struct bench *b, enum bench_id id,
				const char *name, uint64_t size,
				unsigned int nregs)
{
	struct bench_row *row;
	int i;

	if (b->nrows == BENCH_MAX_ROWS)
		return NULL;
	row = &b->rows[b->nrows++];
	memset(row, 0, sizeof(*row));
	row->bench = id;
	snprintf(row->name, sizeof(row->name), "%s", name);
	row->size = size;
	row->nregs = nregs;
	for (i = 0; i < NR_COUNTERS; i++)
		row->cnt[i] = -1;
	return row;
}

/*
 * Fill in a row from its repetitions: median, spread, and the counters
 * of the repetition that gave the median (they are the same in every
 * repetition unless something raced, which the counters then show).
 */
void bench_row_times(struct bench_row *row, double *ns, unsigned int n,
		     int64_t (*cnt)[NR_COUNTERS])
{
	unsigned int m = bench_median_index(ns, n);

	row->reps = n;
	memcpy(row->rep_ns, ns, n * sizeof(*ns));
	row->median_ns = ns[m];
	row->min_ns = bench_min(ns, n);
	row->max_ns = bench_max(ns, n);
	if (cnt)
		memcpy(row->cnt, cnt[m], sizeof(row->cnt));
	if (row->median_ns > 0)
		row->mib_s = (double)row->size / MiB /
			     (row->median_ns / 1e9);
}

/*
 * Ratio of @row to the row of the same benchmark, size, registrations
 * and name @base, measured earlier in this run: of the medians, and
 * repetition by repetition (every benchmark runs repetition i of a case
 * beside repetition i of its baseline).
 */
void bench_ratio(struct bench *b, struct bench_row *row, const char *base)
{
	unsigned int i;

	for (i = 0; i < b->nrows; i++) {
		const struct bench_row *r = &b->rows[i];

		if (r->bench != row->bench || r->size != row->size ||
		    strcmp(r->name, base) || r->median_ns <= 0)
			continue;
		/* Revocation: against one registration of the same size. */
		if (r->nregs != (row->bench == BENCH_REVOKE ? 1 : row->nregs))
			continue;
		row->ratio = row->median_ns / r->median_ns;
		row->paired = row->paired_q1 = row->paired_q3 = NAN;
		if (r->reps == row->reps)
			bench_paired(row->rep_ns, r->rep_ns, row->reps,
				     &row->paired, &row->paired_q1,
				     &row->paired_q3);
		snprintf(row->ratio_to, sizeof(row->ratio_to), "%s", base);
		return;
	}
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vgem-p2p-bench [OPTIONS]\n"
		"\n"
		"Benchmarks of vgem-p2p (exporter) and edu_nic (importer); needs\n"
		"both modules loaded and root (for tracefs). Prints a table, and with\n"
		"-o writes bench.csv, bench-fits.csv and bench.json into DIR.\n"
		"\n"
		"  -b, --bench LIST     benchmarks, comma-separated (default all):\n"
		"                       map, stream, devmem, revoke, dmabuf, scale\n"
		"  -r, --reps N         repetitions per point, median reported (5);\n"
		"                       ratios also per repetition, paired with the\n"
		"                       baseline's same repetition\n"
		"      --map-max SIZE   largest registration of 'map' (256M)\n"
		"      --devmem-max SIZE  largest size of 'devmem' (16M)\n"
		"      --revoke-max SIZE  largest object of 'revoke' and 'dmabuf' (64M)\n"
		"      --regs N         most registrations of 'revoke' (8)\n"
		"      --stream SIZE    bytes of 'stream' (64M)\n"
		"      --ttm-importer N  the TTM exporter's cases register with\n"
		"                       /dev/edu_nicN (0), the importer that\n"
		"                       reaches bochs-display p2p\n"
		"      --objs N         objects of 'scale' (64, at most 1000)\n"
		"      --obj-regs M     registrations per object of 'scale' (2, at\n"
		"                       most 256)\n"
		"      --procs K        importer processes of 'scale' (4, at most 8)\n"
		"      --scale-move SIZE  the large move of 'scale' (64M)\n"
		"      --full           devmem to 64M, 7 repetitions; scale with\n"
		"                       1000 objects over 8 processes\n"
		"  -o, --out DIR        write the result files there\n"
		"  -q, --quiet          no progress on stderr\n"
		"  -h, --help           this help\n"
		"\n"
		"Sizes take K, M, G suffixes and are multiples of 4K. Sizes are\n"
		"capped by the VRAM and device-private memory the exporter has; the\n"
		"output says so.\n"
		"\n"
		"The cases of each benchmark (the rows of the table):\n"
		"  map     anon, vram, devmem; ttm-vram, ttm-sys (with a bochs-display)\n"
		"  stream  memcpy-bar, p2p-cold, p2p-warm, fallback-cold,\n"
		"          fallback-warm\n"
		"  devmem  upstream, p2p\n"
		"  revoke  move (move-untraced without tracefs); ttm-move (with a\n"
		"          bochs-display)\n"
		"  dmabuf  vma-map, dmabuf-map, vma-revoke, dmabuf-revoke\n"
		"  scale   compact, map-idle, map-move, map-idle-max, map-move-max,\n"
		"          info-idle, info-queue, info-idle-max, info-queue-max\n"
		"The ttm-* cases run the TTM exporter (bochs, through TTM's\n"
		"p2p_lookup) where the machine has a bochs-display, and are skipped,\n"
		"with a note, where it has none.\n"
		"\n"
		"Exit status: 0 success, 1 a failed operation, 2 bad usage (one\n"
		"line naming the option and the value).\n");
}

/* One line naming what was wrong: exit status 2 */
static int bad_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "vgem-p2p-bench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see 'vgem-p2p-bench --help')\n");
	return -EINVAL;
}

static int parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *s == '-')
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K':
		v <<= 10; end++; break;
	case 'm': case 'M':
		v <<= 20; end++; break;
	case 'g': case 'G':
		v <<= 30; end++; break;
	}
	if (*end || !v || v % BENCH_PAGE)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_benches(const char *s, unsigned int *which)
{
	char buf[128], *tok, *save;
	int i;

	snprintf(buf, sizeof(buf), "%s", s);
	*which = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < NR_BENCHES; i++)
			if (!strcmp(tok, bench_names[i]))
				break;
		if (i == NR_BENCHES)
			return -EINVAL;
		*which |= 1u << i;
	}
	return *which ? 0 : -EINVAL;
}

enum { OPT_MAP_MAX = 256, OPT_DEVMEM_MAX, OPT_REVOKE_MAX, OPT_REGS,
       OPT_STREAM, OPT_FULL, OPT_TTM_IMPORTER, OPT_OBJS, OPT_OBJ_REGS,
       OPT_PROCS, OPT_SCALE_MOVE };

static const struct option long_opts[] = {
	{ "bench", required_argument, NULL, 'b' },
	{ "reps", required_argument, NULL, 'r' },
	{ "map-max", required_argument, NULL, OPT_MAP_MAX },
	{ "devmem-max", required_argument, NULL, OPT_DEVMEM_MAX },
	{ "revoke-max", required_argument, NULL, OPT_REVOKE_MAX },
	{ "regs", required_argument, NULL, OPT_REGS },
	{ "stream", required_argument, NULL, OPT_STREAM },
	{ "full", no_argument, NULL, OPT_FULL },
	{ "ttm-importer", required_argument, NULL, OPT_TTM_IMPORTER },
	{ "objs", required_argument, NULL, OPT_OBJS },
	{ "obj-regs", required_argument, NULL, OPT_OBJ_REGS },
	{ "procs", required_argument, NULL, OPT_PROCS },
	{ "scale-move", required_argument, NULL, OPT_SCALE_MOVE },
	{ "out", required_argument, NULL, 'o' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ }
};

/* The long name of option @c, for messages */
static const char *opt_name(int c)
{
	const struct option *o;

	for (o = long_opts; o->name; o++)
		if (o->val == c)
			return o->name;
	return "?";
}

/* A count option: a whole decimal number within [@min, @max] */
static int parse_count(int c, const char *s, int min, int max,
		       unsigned int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < min || v > max)
		return bad_usage("bad --%s '%s' (a number, %d to %d)",
				 opt_name(c), s, min, max);
	*out = v;
	return 0;
}

static int parse_args(struct bench *b, int argc, char **argv,
		      const char **outdir)
{
	unsigned int n;
	uint64_t *size;
	int c;

	/* ":": a missing argument is told apart from an unknown option */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":b:r:o:qh", long_opts,
				NULL)) != -1) {
		size = NULL;
		switch (c) {
		case 'b':
			if (parse_benches(optarg, &b->which))
				return bad_usage("bad --bench '%s' (a comma-separated list of: map, stream, devmem, revoke, dmabuf, scale)",
						 optarg);
			break;
		case 'r':
			if (parse_count(c, optarg, 1, BENCH_MAX_REPS, &b->reps))
				return -EINVAL;
			break;
		case OPT_MAP_MAX:
			size = &b->map_max;
			break;
		case OPT_DEVMEM_MAX:
			size = &b->devmem_max;
			break;
		case OPT_REVOKE_MAX:
			size = &b->revoke_max;
			break;
		case OPT_STREAM:
			size = &b->stream_size;
			break;
		case OPT_REGS:
			if (parse_count(c, optarg, 1, 64, &b->max_regs))
				return -EINVAL;
			break;
		case OPT_TTM_IMPORTER:
			if (parse_count(c, optarg, 0, 15, &n))
				return -EINVAL;
			b->ttm_importer = n;
			break;
		case OPT_FULL:
			b->devmem_max = 64 * MiB;
			b->reps = 7;
			b->scale_objs = 1000;
			b->scale_procs = 8;
			break;
		case OPT_OBJS:
			if (parse_count(c, optarg, 4, 1000, &b->scale_objs))
				return -EINVAL;
			break;
		case OPT_OBJ_REGS:
			if (parse_count(c, optarg, 1, 256, &b->scale_regs))
				return -EINVAL;
			break;
		case OPT_PROCS:
			if (parse_count(c, optarg, 1, 8, &b->scale_procs))
				return -EINVAL;
			break;
		case OPT_SCALE_MOVE:
			size = &b->scale_move;
			break;
		case 'o':
			*outdir = optarg;
			break;
		case 'q':
			b->quiet = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case ':':
			return bad_usage("option '%.*s' requires an argument",
					 (int)strcspn(argv[optind - 1], "="),
					 argv[optind - 1]);
		default:
			if (optopt && argv[optind - 1][1] != '-')
				return bad_usage("unknown option '-%c'", optopt);
			return bad_usage("unknown option '%.*s'",
					 (int)strcspn(argv[optind - 1], "="),
					 argv[optind - 1]);
		}
		if (size && parse_size(optarg, size))
			return bad_usage("bad --%s '%s' (bytes, a multiple of 4K, with K, M or G)",
					 opt_name(c), optarg);
	}
	if (optind < argc)
		return bad_usage("unexpected argument '%s'", argv[optind]);
	return 0;
}

static int open_devices(struct bench *b)
{
	int ret;

	b->efd = vp2p_exporter_open(0);
	if (b->efd < 0)
		return bench_fail(b->efd, "vgem_p2p device (load vgem_p2p.ko: modprobe drm_ttm_helper && insmod $VP2P_MODULES/vgem-p2p/exporter/vgem_p2p.ko)");
	b->ifd = vp2p_importer_open(0);
	if (b->ifd < 0)
		return bench_fail(b->ifd, "/dev/edu_nic0 (modprobe ib_uverbs && insmod $VP2P_MODULES/vgem-p2p/importer/edu_nic.ko dma_bits=64)");
	/* Optional: the TTM cases run where there is a bochs-display */
	if (bench_ttm_open(b)) {
		bench_note(b, "no bochs card: the TTM exporter's cases are skipped");
	} else if (b->ttm_importer) {
		b->tfd = vp2p_importer_open(b->ttm_importer);
		if (b->tfd < 0)
			return bench_fail(b->tfd, "/dev/edu_nic%d (--ttm-importer)",
					  b->ttm_importer);
		bench_note(b, "ttm-*: registered with edu_nic%d, the importer beside bochs-display",
			   b->ttm_importer);
	}
	if (b->tfd < 0)
		b->tfd = b->ifd;
	ret = vp2p_exporter_stats(b->efd, &b->vinfo);
	if (ret)
		return bench_fail(ret, "exporter stats");
	return 0;
}

int main(int argc, char **argv)
{
	static struct bench b = {
		.reps = 5,
		.map_max = EDU_NIC_MR_MAX_LENGTH,
		.devmem_max = 16 * MiB,
		.revoke_max = 64 * MiB,
		.max_regs = 8,
		.stream_size = 64 * MiB,
		.scale_objs = 64,
		.scale_regs = 2,
		.scale_procs = 4,
		.scale_move = 64 * MiB,
		.which = (1u << NR_BENCHES) - 1,
		.efd = -1,
		.ifd = -1,
		.tfd = -1,
		.bfd = -1,
	};
	const char *outdir = NULL;
	uint64_t t0 = bench_now_ns();
	int i, ret;

	if (parse_args(&b, argc, argv, &outdir))
		return 2;
	if (open_devices(&b))
		return 1;

	for (i = 0; i < NR_BENCHES; i++) {
		if (!(b.which & (1u << i)))
			continue;
		bench_progress(&b, "%s ...", bench_names[i]);
		ret = bench_fns[i](&b);
		if (ret)
			return 1;
	}
	bench_progress(&b, "done in %.0f s", (bench_now_ns() - t0) / 1e9);

	bench_report_table(&b);
	if (outdir && bench_report_files(&b, outdir))
		return 1;
	if (b.bfd >= 0)
		close(b.bfd);
	if (b.tfd != b.ifd)
		close(b.tfd);
	close(b.ifd);
	close(b.efd);
	return 0;
}
