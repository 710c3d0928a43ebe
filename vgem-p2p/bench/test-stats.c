// SPDX-License-Identifier: MIT
/*
 * test-stats: the statistics vgem-p2p-bench reports, on made-up
 * repetitions whose answers are known: quantiles and the interquartile
 * range, paired ratios, the least-squares line. Exits non-zero on the
 * first wrong answer. No time is measured.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static int failed;

static void check(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s: ", ok ? "ok" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	failed += !ok;
}

static bool near(double a, double b)
{
	return fabs(a - b) <= 1e-9 * (fabs(b) > 1 ? fabs(b) : 1);
}

static void test_quantiles(void)
{
	/* Unsorted on purpose: the quantiles sort a copy */
	const double five[] = { 50, 10, 40, 20, 30 };
	const double four[] = { 4, 1, 3, 2 };
	const double one[] = { 7 };
	double copy[5];

	memcpy(copy, five, sizeof(copy));
	check(near(bench_quantile(five, 5, 0.25), 20) &&
	      near(bench_quantile(five, 5, 0.5), 30) &&
	      near(bench_quantile(five, 5, 0.75), 40),
	      "quartiles of 5 values are the 2nd, 3rd and 4th smallest");
	check(!memcmp(copy, five, sizeof(copy)), "the input is left as it was");
	check(near(bench_quantile(five, 5, 0), 10) &&
	      near(bench_quantile(five, 5, 1), 50), "0 and 1 are min and max");
	/* positions 0.75, 1.5, 2.25 between 1 2 3 4 */
	check(near(bench_quantile(four, 4, 0.25), 1.75) &&
	      near(bench_quantile(four, 4, 0.5), 2.5) &&
	      near(bench_quantile(four, 4, 0.75), 3.25),
	      "quartiles of 4 values interpolate: 1.75, 2.5, 3.25");
	check(near(bench_quantile(four, 4, 0.75) -
		   bench_quantile(four, 4, 0.25), 1.5), "IQR of 1..4 is 1.5");
	check(near(bench_quantile(one, 1, 0.25), 7) &&
	      near(bench_quantile(one, 1, 0.75), 7), "one value: IQR 0");
	check(isnan(bench_quantile(one, 0, 0.5)), "no value: NaN");
}

static void test_paired(void)
{
	/*
	 * A slow spell (repetition 2) hits case and baseline alike: the
	 * times spread 10x, the paired ratios not at all.
	 */
	const double base[] = { 100, 110, 1000, 90, 105 };
	const double ns[] = { 50, 55, 500, 45, 52.5 };
	/* Ratios 2, 4, 1, 3, 5; a missing time (-1) drops repetition 5 */
	const double base2[] = { 10, 10, 10, 10, 10, 10 };
	const double ns2[] = { 20, 40, 10, 30, 50, -1 };
	double med, q1, q3;
	unsigned int n;

	n = bench_paired(ns, base, ARRAY_SIZE(ns), &med, &q1, &q3);
	check(n == 5 && near(med, 0.5) && near(q1, 0.5) && near(q3, 0.5),
	      "paired ratios cancel a slow repetition: 0.5 [0.5-0.5]");

	n = bench_paired(ns2, base2, ARRAY_SIZE(ns2), &med, &q1, &q3);
	check(n == 5 && near(med, 3) && near(q1, 2) && near(q3, 4),
	      "paired ratios 2,4,1,3,5 (one missing): 3 [2-4], n %u", n);

	n = bench_paired(ns2 + 5, base2, 1, &med, &q1, &q3);
	check(n == 0 && isnan(med) && isnan(q1) && isnan(q3),
	      "nothing paired: NaN");
}

static void test_fit(void)
{
	/* latency = 300 + 50 x registrations, exactly */
	const double x[] = { 1, 2, 4, 8 };
	const double y[] = { 350, 400, 500, 700 };
	const double flat[] = { 5, 5, 5, 5 };
	struct bench_fit fit;

	bench_fit_line(x, y, 4, &fit);
	check(fit.n == 4 && near(fit.slope_ns, 50) &&
	      near(fit.intercept_ns, 300) && near(fit.r2, 1),
	      "a line is fitted exactly: 300 + 50 x, R^2 1");
	bench_fit_line(x, flat, 4, &fit);
	check(near(fit.slope_ns, 0) && near(fit.intercept_ns, 5) &&
	      near(fit.r2, 1), "a constant: slope 0, R^2 1");
	bench_fit_line(x, y, 1, &fit);
	check(fit.n == 1 && fit.slope_ns == 0 && fit.r2 == 0,
	      "one point: no line");
}

int main(void)
{
	test_quantiles();
	test_paired();
	test_fit();
	return failed ? 1 : 0;
}
