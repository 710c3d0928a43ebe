// SPDX-License-Identifier: MIT
/*
 * test-report DIR: writes the report files of a made-up run into DIR,
 * with quotes, backslashes and control characters in every string the
 * JSON has and a NaN among the numbers; check-report.py then parses
 * DIR/bench.json. The strings of a real run come partly from outside
 * (/proc/cpuinfo, DMI product name, which a VM's owner sets).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"

#define NASTY	"q\"b\\s/\x01\x02\t\n\r\x1b\x1f\x7f\xc3\xa9"

int bench_fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s\n", strerror(-err));
	return err;
}

static struct bench b;

int main(int argc, char **argv)
{
	struct bench_row *r = &b.rows[0];
	unsigned int c;

	if (argc != 2) {
		fprintf(stderr, "usage: test-report DIR\n");
		return 2;
	}
	b.reps = 3;
	b.which = 1u << BENCH_MAP;
	r->bench = BENCH_MAP;
	snprintf(r->name, sizeof(r->name), "%s", NASTY);
	snprintf(r->ratio_to, sizeof(r->ratio_to), "%s", NASTY);
	r->size = 2 * BENCH_PAGE;
	r->nregs = 1;
	r->reps = 3;
	r->median_ns = 1500;
	r->min_ns = 1000;
	r->max_ns = 2000;
	r->ratio = NAN;
	r->paired = 0.5;
	r->paired_q1 = 0.25;
	r->paired_q3 = 0.75;
	for (c = 0; c < NR_COUNTERS; c++)
		r->cnt[c] = c & 1 ? -1 : (int64_t)c;
	/* A revocation row with a baseline, where no repetition paired */
	r = &b.rows[1];
	r->bench = BENCH_REVOKE;
	snprintf(r->name, sizeof(r->name), "move");
	snprintf(r->ratio_to, sizeof(r->ratio_to), "move");
	r->size = MiB;
	r->nregs = 2;
	r->reps = 3;
	r->median_ns = 3000;
	r->ratio = 2;
	r->paired = r->paired_q1 = r->paired_q3 = NAN;
	for (c = 0; c < NR_COUNTERS; c++)
		r->cnt[c] = -1;
	/* A scale row: objects, moves per object, invalidations per move */
	r = &b.rows[2];
	r->bench = BENCH_SCALE;
	snprintf(r->name, sizeof(r->name), "compact");
	r->size = 4 * MiB;
	r->nregs = 128;
	r->nobjs = 64;
	r->moves_per_obj = 0.984375;
	r->reps = 3;
	r->median_ns = 5000;
	r->ratio = NAN;
	for (c = 0; c < NR_COUNTERS; c++)
		r->cnt[c] = -1;
	r->cnt[CNT_MOVES] = 64;
	r->cnt[CNT_OBJ_INVALIDATIONS] = 80;
	r->cnt[CNT_DATA_ERRORS] = 0;
	b.nrows = 3;
	b.fits[0].bench = BENCH_MAP;
	snprintf(b.fits[0].name, sizeof(b.fits[0].name), "%s", NASTY);
	b.fits[0].per = "page";
	b.fits[0].n = 2;
	b.fits[0].slope_ns = 12.345;
	b.fits[0].r2 = 1;
	b.fits[0].spread = 1.25;
	b.fits[0].spread_n = 3;
	b.fits[1].bench = BENCH_REVOKE;
	snprintf(b.fits[1].name, sizeof(b.fits[1].name), "move");
	b.fits[1].size = MiB;
	b.fits[1].per = "registration";
	b.fits[1].n = 4;
	b.fits[1].slope_ns = 500;
	b.fits[1].intercept_ns = 300;
	b.fits[1].r2 = 0.99;
	b.fits[1].spread = NAN;
	b.nfits = 2;
	snprintf(b.notes[0], sizeof(b.notes[0]), "%s", NASTY);
	b.nnotes = 1;
	return bench_report_files(&b, argv[1]) ? 1 : 0;
}
