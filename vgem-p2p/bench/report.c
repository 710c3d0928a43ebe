// SPDX-License-Identifier: MIT
/*
 * The results three ways: a table per benchmark on stdout, and in DIR
 * bench.csv (one row per case and size), bench-fits.csv (the map and
 * revocation benchmarks' linear fits) and bench.json (all of it plus the
 * machine, written by json-c).
 * All three come from the same rows, so they cannot disagree.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <json-c/json.h>

#include "bench.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

const char *const bench_names[NR_BENCHES] = {
	[BENCH_MAP] = "map",
	[BENCH_STREAM] = "stream",
	[BENCH_DEVMEM] = "devmem",
	[BENCH_REVOKE] = "revoke",
	[BENCH_DMABUF] = "dmabuf",
	[BENCH_SCALE] = "scale",
};

const char *const bench_counter_names[NR_COUNTERS] = {
	[CNT_PAGES_MIGRATED] = "pages_migrated",
	[CNT_SYSMEM_BYTES] = "sysmem_bytes",
	[CNT_BOUNCED_BYTES] = "bounced_bytes",
	[CNT_COPIED_BYTES] = "copied_bytes",
	[CNT_P2P_PAGES] = "p2p_pages",
	[CNT_P2P_MAPS] = "p2p_maps",
	[CNT_FAULTS] = "faults",
	[CNT_INVALIDATIONS] = "invalidations",
	[CNT_UNMAPS] = "unmaps",
	[CNT_MOVES] = "moves",
	[CNT_COMPACTIONS] = "compactions",
	[CNT_OBJ_INVALIDATIONS] = "obj_invalidations",
	[CNT_DMA_READS] = "dma_reads",
	[CNT_DATA_ERRORS] = "data_errors",
	[CNT_TIMED_REGS] = "timed_regs",
	[CNT_REGS_IN_MOVE] = "regs_in_move",
};

static const char *const bench_titles[NR_BENCHES] = {
	[BENCH_MAP] = "1. map cost: REG_MR + PREFETCH (hmm_range_fault), ratio to anon",
	[BENCH_STREAM] = "2. stream VRAM -> importer (bulk), p2p vs fallback through system memory",
	[BENCH_DEVMEM] = "3. importer reads device-private memory, p2p vs upstream (migrate to RAM)",
	[BENCH_REVOKE] = "4. revocation: forced move until no importer mapping is left",
	[BENCH_DMABUF] = "5. vma path vs dma-buf path on the same VRAM object: map, and revocation by a forced move",
	[BENCH_SCALE] = "6. scale: compaction under streaming importers; p2p_lookup of an unrelated object during a large move",
};

static double row_pages(const struct bench_row *r)
{
	return (double)r->size / BENCH_PAGE;
}

/* The exporter's invalidations per move: 1 if it zaps only what moves */
static double row_inval_per_move(const struct bench_row *r)
{
	if (r->cnt[CNT_MOVES] <= 0 || r->cnt[CNT_OBJ_INVALIDATIONS] < 0)
		return NAN;
	return (double)r->cnt[CNT_OBJ_INVALIDATIONS] / r->cnt[CNT_MOVES];
}

static void fmt_time(char *buf, size_t len, double ns)
{
	if (ns < 0)
		snprintf(buf, len, "-");
	else if (ns < 1e3)
		snprintf(buf, len, "%.0f ns", ns);
	else if (ns < 1e6)
		snprintf(buf, len, "%.1f us", ns / 1e3);
	else if (ns < 1e9)
		snprintf(buf, len, "%.1f ms", ns / 1e6);
	else
		snprintf(buf, len, "%.2f s", ns / 1e9);
}

static void fmt_size(char *buf, size_t len, uint64_t bytes)
{
	if (bytes >= MiB && !(bytes % MiB))
		snprintf(buf, len, "%lluM", (unsigned long long)(bytes / MiB));
	else
		snprintf(buf, len, "%lluK", (unsigned long long)(bytes >> 10));
}

static void fmt_cnt(char *buf, size_t len, int64_t v, bool bytes)
{
	if (v < 0)
		snprintf(buf, len, "-");
	else if (bytes)
		fmt_size(buf, len, v);
	else
		snprintf(buf, len, "%lld", (long long)v);
}

enum col {
	COL_CASE, COL_SIZE, COL_REGS, COL_MEDIAN, COL_SPREAD, COL_PER_PAGE,
	COL_MIBS, COL_RATIO, COL_PAIRED, COL_MOVE, COL_OBJS, COL_MOVES_PER_OBJ,
	COL_INVAL_PER_MOVE, COL_CNT0,
};

struct col_def {
	const char *hdr;
	int width;
};

static const struct col_def col_defs[COL_CNT0 + NR_COUNTERS] = {
	[COL_CASE] = { "case", 14 },
	[COL_SIZE] = { "size", 6 },
	[COL_REGS] = { "regs", 4 },
	[COL_MEDIAN] = { "median", 9 },
	[COL_SPREAD] = { "min..max", 19 },
	[COL_PER_PAGE] = { "per page", 9 },
	[COL_MIBS] = { "MiB/s", 8 },
	[COL_RATIO] = { "ratio", 18 },
	[COL_PAIRED] = { "paired [IQR]", 20 },
	[COL_MOVE] = { "move", 9 },
	[COL_OBJS] = { "objs", 4 },
	[COL_MOVES_PER_OBJ] = { "moves/obj", 9 },
	[COL_INVAL_PER_MOVE] = { "inval/move", 10 },
	[COL_CNT0 + CNT_PAGES_MIGRATED] = { "migrated", 8 },
	[COL_CNT0 + CNT_SYSMEM_BYTES] = { "sysmem", 6 },
	[COL_CNT0 + CNT_BOUNCED_BYTES] = { "bounced", 7 },
	[COL_CNT0 + CNT_COPIED_BYTES] = { "copied", 6 },
	[COL_CNT0 + CNT_P2P_PAGES] = { "p2p pgs", 7 },
	[COL_CNT0 + CNT_P2P_MAPS] = { "p2p maps", 8 },
	[COL_CNT0 + CNT_FAULTS] = { "faults", 6 },
	[COL_CNT0 + CNT_INVALIDATIONS] = { "inval", 5 },
	[COL_CNT0 + CNT_UNMAPS] = { "unmaps", 6 },
	[COL_CNT0 + CNT_MOVES] = { "moves", 5 },
	[COL_CNT0 + CNT_COMPACTIONS] = { "compact", 7 },
	[COL_CNT0 + CNT_OBJ_INVALIDATIONS] = { "obj inval", 9 },
	[COL_CNT0 + CNT_DMA_READS] = { "dma reads", 9 },
	[COL_CNT0 + CNT_DATA_ERRORS] = { "data errs", 9 },
	[COL_CNT0 + CNT_TIMED_REGS] = { "timed", 5 },
	[COL_CNT0 + CNT_REGS_IN_MOVE] = { "in move", 7 },
};

#define C(x)	(COL_CNT0 + (x))
#define END	-1

static const int bench_cols[NR_BENCHES][20] = {
	[BENCH_MAP] = { COL_SIZE, COL_CASE, COL_MEDIAN, COL_SPREAD,
			COL_PER_PAGE, COL_RATIO, COL_PAIRED, C(CNT_P2P_PAGES),
			C(CNT_SYSMEM_BYTES), C(CNT_P2P_MAPS),
			C(CNT_PAGES_MIGRATED), END },
	/*
	 * The importer cannot tell the fallback's system pages from p2p
	 * ones (the exporter hands out both): the exporter's counters say.
	 */
	[BENCH_STREAM] = { COL_CASE, COL_SIZE, COL_MEDIAN, COL_SPREAD,
			   COL_MIBS, COL_RATIO, COL_PAIRED, C(CNT_BOUNCED_BYTES),
			   C(CNT_COPIED_BYTES), C(CNT_FAULTS), END },
	[BENCH_DEVMEM] = { COL_SIZE, COL_CASE, COL_MEDIAN, COL_SPREAD,
			   COL_MIBS, COL_RATIO, COL_PAIRED, C(CNT_PAGES_MIGRATED),
			   C(CNT_SYSMEM_BYTES), C(CNT_P2P_PAGES), END },
	[BENCH_REVOKE] = { COL_SIZE, COL_REGS, COL_MEDIAN, COL_SPREAD,
			   COL_RATIO, COL_PAIRED, COL_MOVE, COL_MIBS,
			   C(CNT_INVALIDATIONS), C(CNT_UNMAPS),
			   C(CNT_COPIED_BYTES), END },
	[BENCH_DMABUF] = { COL_SIZE, COL_CASE, COL_MEDIAN, COL_SPREAD,
			   COL_PER_PAGE, COL_RATIO, COL_PAIRED, COL_MOVE,
			   C(CNT_P2P_PAGES), C(CNT_FAULTS),
			   C(CNT_INVALIDATIONS), END },
	[BENCH_SCALE] = { COL_CASE, COL_SIZE, COL_OBJS, COL_REGS, COL_MEDIAN,
			  COL_SPREAD, COL_RATIO, COL_PAIRED, COL_MOVE,
			  COL_MOVES_PER_OBJ, COL_INVAL_PER_MOVE, C(CNT_MOVES),
			  C(CNT_COMPACTIONS), C(CNT_OBJ_INVALIDATIONS),
			  C(CNT_INVALIDATIONS), C(CNT_DMA_READS),
			  C(CNT_DATA_ERRORS), C(CNT_TIMED_REGS),
			  C(CNT_REGS_IN_MOVE), END },
};

static void fmt_col(char *buf, size_t len, const struct bench_row *r,
		    int col)
{
	char a[16], b[16];

	switch (col) {
	case COL_CASE:
		snprintf(buf, len, "%s", r->name);
		break;
	case COL_SIZE:
		fmt_size(buf, len, r->size);
		break;
	case COL_REGS:
		snprintf(buf, len, "%u", r->nregs);
		break;
	case COL_MEDIAN:
		fmt_time(buf, len, r->median_ns);
		break;
	case COL_SPREAD:
		fmt_time(a, sizeof(a), r->min_ns);
		fmt_time(b, sizeof(b), r->max_ns);
		snprintf(buf, len, "%s..%s", a, b);
		break;
	case COL_PER_PAGE:
		fmt_time(buf, len, r->median_ns / row_pages(r));
		break;
	case COL_MIBS:
		snprintf(buf, len, r->mib_s > 0 ? "%.1f" : "-", r->mib_s);
		break;
	case COL_RATIO:
		if (r->ratio > 0)
			snprintf(buf, len, "%.2fx %s", r->ratio, r->ratio_to);
		else
			snprintf(buf, len, "-");
		break;
	case COL_PAIRED:
		if (r->ratio > 0 && isfinite(r->paired))
			snprintf(buf, len, "%.2fx [%.2f-%.2f]", r->paired,
				 r->paired_q1, r->paired_q3);
		else
			snprintf(buf, len, "-");
		break;
	case COL_MOVE:
		fmt_time(buf, len, r->move_ns > 0 ? r->move_ns : -1);
		break;
	case COL_OBJS:
		snprintf(buf, len, "%u", r->nobjs);
		break;
	case COL_MOVES_PER_OBJ:
		snprintf(buf, len, r->moves_per_obj > 0 ? "%.2f" : "-",
			 r->moves_per_obj);
		break;
	case COL_INVAL_PER_MOVE:
		if (r->cnt[CNT_MOVES] > 0 && r->cnt[CNT_OBJ_INVALIDATIONS] >= 0)
			snprintf(buf, len, "%.2f", row_inval_per_move(r));
		else
			snprintf(buf, len, "-");
		break;
	default:
		col -= COL_CNT0;
		fmt_cnt(buf, len, r->cnt[col], col == CNT_SYSMEM_BYTES ||
			col == CNT_BOUNCED_BYTES || col == CNT_COPIED_BYTES);
	}
}

static void table_fit(const struct bench_fit *f)
{
	char size[24];

	if (f->size) {
		fmt_size(size, sizeof(size), f->size);
		printf("   fit %-8s %-5s latency = %.0f ns + %.0f ns/%s x %ss, R^2 = %.4f (%u points)\n",
		       f->name, size, f->intercept_ns, f->slope_ns, f->per,
		       f->per, f->r2, f->n);
		return;
	}
	printf("   fit %-8s time = %.0f ns + %.1f ns/%s x %ss, R^2 = %.4f (%u points)",
	       f->name, f->intercept_ns, f->slope_ns, f->per, f->per, f->r2,
	       f->n);
	if (isfinite(f->spread))
		printf("; per %s, max/min over %u sizes >= 1M: %.2fx",
		       f->per, f->spread_n, f->spread);
	printf("\n");
}

static void table_bench(const struct bench *b, enum bench_id id)
{
	const int *cols = bench_cols[id];
	char buf[48];
	unsigned int i;
	int c;

	printf("\n%s\n", bench_titles[id]);
	if (id == BENCH_REVOKE || id == BENCH_DMABUF)
		printf("   (revocation: median = latency until the last importer mapping went; move = whole ioctl)\n");
	if (id == BENCH_SCALE)
		printf("   (compact: the move that compacts, regs = all registrations; map-*: one registration (prefetch) of the unrelated object, median or max within each repetition, then their median over repetitions; move = the mover's move; timed = registrations in the median repetition, in move = of those, completed while a move ran)\n");
	for (c = 0; cols[c] != END; c++)
		printf("%s%-*s", c ? "  " : "", col_defs[cols[c]].width,
		       col_defs[cols[c]].hdr);
	printf("\n");
	for (i = 0; i < b->nrows; i++) {
		if (b->rows[i].bench != id)
			continue;
		for (c = 0; cols[c] != END; c++) {
			fmt_col(buf, sizeof(buf), &b->rows[i], cols[c]);
			printf("%s%-*s", c ? "  " : "",
			       col_defs[cols[c]].width, buf);
		}
		printf("\n");
	}
	for (i = 0; i < b->nfits; i++) {
		const struct bench_fit *f = &b->fits[i];

		if (f->bench != id)
			continue;
		table_fit(f);
	}
}

/*
 * The kernel's debugging facilities that tax the measured paths, as the
 * files they create tell: every figure is read against them. A kernel
 * with none of them is reported as "production".
 */
static const struct {
	const char *name;
	const char *path;
} kernel_debug[] = {
	{ "dma-api-debug", "/sys/kernel/debug/dma-api" },
	{ "kmemleak", "/sys/kernel/debug/kmemleak" },
	{ "lockdep", "/proc/lockdep" },
	{ "fault-injection", "/sys/kernel/debug/fail_page_alloc" },
};

static void kernel_debug_list(char *buf, size_t len)
{
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < ARRAY_SIZE(kernel_debug); i++)
		if (!access(kernel_debug[i].path, F_OK))
			n += snprintf(buf + n, len - n, "%s%s", n ? "," : "",
				      kernel_debug[i].name);
	if (!n)
		snprintf(buf, len, "production");
}

void bench_report_table(const struct bench *b)
{
	char debug[128];
	unsigned int i;
	int id;

	kernel_debug_list(debug, sizeof(debug));
	printf("vgem-p2p-bench: median of %u repetitions; ratios are to a baseline measured in the same run\n",
	       b->reps);
	printf("ratio: of the medians; paired: median [first-third quartile] of each repetition's time over the baseline's in the same repetition\n");
	printf("kernel: %s\n", debug);
	for (id = 0; id < NR_BENCHES; id++)
		if (b->which & (1u << id))
			table_bench(b, id);
	if (b->nnotes)
		printf("\nnotes:\n");
	for (i = 0; i < b->nnotes; i++)
		printf("  - %s\n", b->notes[i]);
}

static FILE *open_out(const char *dir, const char *name)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "we");
	if (!f)
		bench_fail(-errno, "%s", path);
	return f;
}

/* A number, or nothing where there is none (NaN, or no baseline) */
static void csv_num(FILE *f, double v, const char *fmt)
{
	if (isfinite(v) && v > 0)
		fprintf(f, fmt, v);
}

static int write_csv(const struct bench *b, FILE *f)
{
	unsigned int i, c;

	fprintf(f, "bench,case,size_bytes,registrations,reps,median_ns,min_ns,max_ns,per_page_ns,mib_s,ratio,ratio_to,paired_ratio,paired_q1,paired_q3,move_ns");
	for (c = 0; c < NR_COUNTERS; c++)
		fprintf(f, ",%s", bench_counter_names[c]);
	fprintf(f, ",objects,moves_per_object,invalidations_per_move\n");
	for (i = 0; i < b->nrows; i++) {
		const struct bench_row *r = &b->rows[i];

		fprintf(f, "%s,%s,%llu,%u,%u,%.0f,%.0f,%.0f,%.1f,%.2f,%.4f,%s,",
			bench_names[r->bench], r->name,
			(unsigned long long)r->size, r->nregs, r->reps,
			r->median_ns, r->min_ns, r->max_ns,
			r->median_ns / row_pages(r), r->mib_s, r->ratio,
			r->ratio_to);
		csv_num(f, r->paired, "%.4f");
		fprintf(f, ",");
		csv_num(f, r->paired_q1, "%.4f");
		fprintf(f, ",");
		csv_num(f, r->paired_q3, "%.4f");
		fprintf(f, ",");
		if (r->move_ns > 0)
			fprintf(f, "%.0f", r->move_ns);
		for (c = 0; c < NR_COUNTERS; c++) {
			if (r->cnt[c] >= 0)
				fprintf(f, ",%lld", (long long)r->cnt[c]);
			else
				fprintf(f, ",");
		}
		fprintf(f, ",%u,", r->nobjs);
		csv_num(f, r->moves_per_obj, "%.4f");
		fprintf(f, ",");
		csv_num(f, row_inval_per_move(r), "%.4f");
		fprintf(f, "\n");
	}
	return ferror(f) ? -EIO : 0;
}

static int write_fits_csv(const struct bench *b, FILE *f)
{
	unsigned int i;

	fprintf(f, "bench,case,size_bytes,per,points,slope_ns,intercept_ns,r2,per_page_spread,spread_sizes\n");
	for (i = 0; i < b->nfits; i++) {
		const struct bench_fit *t = &b->fits[i];

		fprintf(f, "%s,%s,%llu,%s,%u,%.2f,%.0f,%.6f,",
			bench_names[t->bench], t->name,
			(unsigned long long)t->size, t->per, t->n,
			t->slope_ns, t->intercept_ns, t->r2);
		csv_num(f, t->spread, "%.4f");
		fprintf(f, ",%u\n", t->spread_n);
	}
	return ferror(f) ? -EIO : 0;
}

/* The value of the first line of @path starting with @key. */
static void read_field(const char *path, const char *key, char *buf,
		       size_t len)
{
	char line[256];
	FILE *f = fopen(path, "re");

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *v;

		if (strncmp(line, key, strlen(key)))
			continue;
		v = strchr(line, ':');
		v = v ? v + 1 : line;
		while (*v == ' ' || *v == '\t')
			v++;
		v[strcspn(v, "\n")] = '\0';
		snprintf(buf, len, "%s", v);
		break;
	}
	fclose(f);
}

/*
 * Numbers as the CSV has them: json-c prints doubles with "%.17g" unless
 * told a format, and the digits past these are noise.
 */
static struct json_object *json_fmt(double v, const char *fmt)
{
	char buf[64];

	/* JSON has no NaN nor infinity: null, as for a missing counter */
	if (!isfinite(v))
		return NULL;
	snprintf(buf, sizeof(buf), fmt, v);
	return json_object_new_double_s(v, buf);
}

static void add(struct json_object *obj, const char *key,
		struct json_object *val)
{
	json_object_object_add(obj, key, val);
}

static struct json_object *json_machine(const struct bench *b)
{
	char model[256], product[256], mem[256], debug[128];
	struct json_object *m = json_object_new_object();
	struct utsname u;

	uname(&u);
	read_field("/proc/cpuinfo", "model name", model, sizeof(model));
	read_field("/sys/class/dmi/id/product_name", "", product,
		   sizeof(product));
	read_field("/proc/meminfo", "MemTotal", mem, sizeof(mem));
	add(m, "kernel", json_object_new_string(u.release));
	kernel_debug_list(debug, sizeof(debug));
	add(m, "kernel_debug", json_object_new_string(debug));
	add(m, "cpus", json_object_new_int64(sysconf(_SC_NPROCESSORS_ONLN)));
	add(m, "cpu_model", json_object_new_string(model));
	add(m, "product", json_object_new_string(product));
	add(m, "mem_total", json_object_new_string(mem));
	add(m, "vram_bytes", json_object_new_uint64(b->vinfo.vram_size));
	add(m, "devmem_bytes", json_object_new_uint64(b->vinfo.devmem_size));
	return m;
}

static struct json_object *json_config(const struct bench *b)
{
	struct json_object *c = json_object_new_object();

	add(c, "reps", json_object_new_uint64(b->reps));
	add(c, "map_max", json_object_new_uint64(b->map_max));
	add(c, "devmem_max", json_object_new_uint64(b->devmem_max));
	add(c, "revoke_max", json_object_new_uint64(b->revoke_max));
	add(c, "max_regs", json_object_new_uint64(b->max_regs));
	add(c, "stream_size", json_object_new_uint64(b->stream_size));
	add(c, "scale_objs", json_object_new_uint64(b->scale_objs));
	add(c, "scale_regs", json_object_new_uint64(b->scale_regs));
	add(c, "scale_procs", json_object_new_uint64(b->scale_procs));
	add(c, "scale_move", json_object_new_uint64(b->scale_move));
	return c;
}

static struct json_object *json_row(const struct bench_row *r)
{
	struct json_object *o = json_object_new_object();
	struct json_object *cnt = json_object_new_object();
	struct json_object *reps;
	unsigned int c;

	add(o, "bench", json_object_new_string(bench_names[r->bench]));
	add(o, "case", json_object_new_string(r->name));
	add(o, "size_bytes", json_object_new_uint64(r->size));
	add(o, "registrations", json_object_new_uint64(r->nregs));
	add(o, "reps", json_object_new_uint64(r->reps));
	add(o, "median_ns", json_fmt(r->median_ns, "%.0f"));
	add(o, "min_ns", json_fmt(r->min_ns, "%.0f"));
	add(o, "max_ns", json_fmt(r->max_ns, "%.0f"));
	add(o, "per_page_ns", json_fmt(r->median_ns / row_pages(r), "%.1f"));
	add(o, "mib_s", json_fmt(r->mib_s, "%.2f"));
	add(o, "ratio", json_fmt(r->ratio, "%.4f"));
	add(o, "ratio_to", json_object_new_string(r->ratio_to));
	/* null without a baseline or where no repetition paired */
	add(o, "paired_ratio", r->ratio > 0 ? json_fmt(r->paired, "%.4f") :
	    NULL);
	add(o, "paired_ratio_q1", r->ratio > 0 ?
	    json_fmt(r->paired_q1, "%.4f") : NULL);
	add(o, "paired_ratio_q3", r->ratio > 0 ?
	    json_fmt(r->paired_q3, "%.4f") : NULL);
	add(o, "paired_ratio_iqr", r->ratio > 0 ?
	    json_fmt(r->paired_q3 - r->paired_q1, "%.4f") : NULL);
	add(o, "move_ns", json_fmt(r->move_ns, "%.0f"));
	/* Each repetition's time, in order: the spread behind the median */
	reps = json_object_new_array();
	for (c = 0; c < r->reps; c++)
		json_object_array_add(reps, json_fmt(r->rep_ns[c], "%.0f"));
	add(o, "rep_ns", reps);
	add(o, "objects", json_object_new_uint64(r->nobjs));
	add(o, "moves_per_object", r->moves_per_obj > 0 ?
	    json_fmt(r->moves_per_obj, "%.4f") : NULL);
	add(o, "invalidations_per_move",
	    json_fmt(row_inval_per_move(r), "%.4f"));
	/* NULL is JSON's null: the counter says nothing about the case */
	for (c = 0; c < NR_COUNTERS; c++)
		add(cnt, bench_counter_names[c], r->cnt[c] >= 0 ?
		    json_object_new_int64(r->cnt[c]) : NULL);
	add(o, "counters", cnt);
	return o;
}

static struct json_object *json_fit(const struct bench_fit *f)
{
	struct json_object *o = json_object_new_object();

	add(o, "bench", json_object_new_string(bench_names[f->bench]));
	add(o, "case", json_object_new_string(f->name));
	add(o, "size_bytes", json_object_new_uint64(f->size));
	add(o, "per", json_object_new_string(f->per ? f->per : ""));
	add(o, "points", json_object_new_uint64(f->n));
	add(o, "slope_ns", json_fmt(f->slope_ns, "%.2f"));
	add(o, "intercept_ns", json_fmt(f->intercept_ns, "%.0f"));
	add(o, "r2", json_fmt(f->r2, "%.6f"));
	add(o, "per_page_spread", json_fmt(f->spread, "%.4f"));
	add(o, "spread_sizes", json_object_new_uint64(f->spread_n));
	return o;
}

static int write_json(const struct bench *b, FILE *f)
{
	struct json_object *doc = json_object_new_object();
	struct json_object *arr;
	unsigned int i;

	add(doc, "tool", json_object_new_string("vgem-p2p-bench"));
	add(doc, "version", json_object_new_string(vp2p_version()));
	add(doc, "machine", json_machine(b));
	add(doc, "config", json_config(b));
	arr = json_object_new_array();
	for (i = 0; i < b->nnotes; i++)
		json_object_array_add(arr, json_object_new_string(b->notes[i]));
	add(doc, "notes", arr);
	arr = json_object_new_array();
	for (i = 0; i < b->nrows; i++)
		json_object_array_add(arr, json_row(&b->rows[i]));
	add(doc, "results", arr);
	arr = json_object_new_array();
	for (i = 0; i < b->nfits; i++)
		json_object_array_add(arr, json_fit(&b->fits[i]));
	add(doc, "fits", arr);
	fprintf(f, "%s\n", json_object_to_json_string_ext(doc,
		JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
		JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(doc);
	return ferror(f) ? -EIO : 0;
}

int bench_report_files(const struct bench *b, const char *dir)
{
	static const struct {
		const char *name;
		int (*write)(const struct bench *b, FILE *f);
	} files[] = {
		{ "bench.csv", write_csv },
		{ "bench-fits.csv", write_fits_csv },
		{ "bench.json", write_json },
	};
	unsigned int i;
	int ret;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		FILE *f = open_out(dir, files[i].name);

		if (!f)
			return -EIO;
		ret = files[i].write(b, f);
		if (fclose(f) && !ret)
			ret = -EIO;
		if (ret)
			return bench_fail(ret, "writing %s/%s", dir,
					  files[i].name);
	}
	return 0;
}
