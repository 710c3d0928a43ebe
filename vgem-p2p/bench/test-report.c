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
	for (c = 0; c < NR_COUNTERS; c++)
		r->cnt[c] = c & 1 ? -1 : (int64_t)c;
	b.nrows = 1;
	b.fits[0].bench = BENCH_MAP;
	snprintf(b.fits[0].name, sizeof(b.fits[0].name), "%s", NASTY);
	b.fits[0].n = 2;
	b.fits[0].slope_ns = 12.345;
	b.fits[0].r2 = 1;
	b.nfits = 1;
	snprintf(b.notes[0], sizeof(b.notes[0]), "%s", NASTY);
	b.nnotes = 1;
	return bench_report_files(&b, argv[1]) ? 1 : 0;
}
