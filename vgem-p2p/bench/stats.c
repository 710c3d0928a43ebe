// SPDX-License-Identifier: MIT
/* Clocks, medians, least-squares fits and the drivers' counters. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	/* The clock the kernel's "mono" trace clock reads, too. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of @n values (the lower middle one for even @n). */
double bench_median(const double *v, unsigned int n)
{
	double sorted[n];

	memcpy(sorted, v, sizeof(sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_double);
	return sorted[(n - 1) / 2];
}

/* Which repetition gave the median, so its counters go with it. */
unsigned int bench_median_index(const double *v, unsigned int n)
{
	double m = bench_median(v, n);
	unsigned int i;

	for (i = 0; i < n; i++)
		if (v[i] == m)
			return i;
	return 0;
}

/*
 * The @q quantile (0 <= q <= 1) of @n values, interpolated linearly
 * between the two nearest order statistics (numpy's default, R's type
 * 7): with 5 values, the first quartile is the second smallest and the
 * third quartile the second largest.
 */
double bench_quantile(const double *v, unsigned int n, double q)
{
	double sorted[n ? n : 1], pos, frac;
	unsigned int lo;

	if (!n)
		return NAN;
	memcpy(sorted, v, n * sizeof(*v));
	qsort(sorted, n, sizeof(*sorted), cmp_double);
	pos = q * (n - 1);
	lo = (unsigned int)pos;
	if (lo >= n - 1)
		return sorted[n - 1];
	frac = pos - lo;
	return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

/*
 * Paired ratios: repetition i of a case over repetition i of its
 * baseline, which ran beside it, so that a slow spell of the emulator
 * that hit both cancels out. Repetitions where either time is missing
 * (<= 0) are left out. Fills in the median and quartiles of the ratios;
 * NaN where no repetition pairs.
 */
unsigned int bench_paired(const double *ns, const double *base,
			  unsigned int n, double *med, double *q1, double *q3)
{
	double r[n ? n : 1];
	unsigned int i, k = 0;

	for (i = 0; i < n; i++)
		if (ns[i] > 0 && base[i] > 0)
			r[k++] = ns[i] / base[i];
	*med = bench_quantile(r, k, 0.5);
	*q1 = bench_quantile(r, k, 0.25);
	*q3 = bench_quantile(r, k, 0.75);
	return k;
}

double bench_min(const double *v, unsigned int n)
{
	double m = v[0];
	unsigned int i;

	for (i = 1; i < n; i++)
		if (v[i] < m)
			m = v[i];
	return m;
}

double bench_max(const double *v, unsigned int n)
{
	double m = v[0];
	unsigned int i;

	for (i = 1; i < n; i++)
		if (v[i] > m)
			m = v[i];
	return m;
}

/* Ordinary least squares, y = intercept + slope * x. */
void bench_fit_line(const double *x, const double *y, unsigned int n,
		    struct bench_fit *fit)
{
	double sx = 0, sy = 0, sxx = 0, sxy = 0, ss_tot = 0, ss_res = 0;
	double mean, d;
	unsigned int i;

	fit->n = n;
	fit->slope_ns = fit->intercept_ns = fit->r2 = 0;
	if (n < 2)
		return;
	for (i = 0; i < n; i++) {
		sx += x[i];
		sy += y[i];
		sxx += x[i] * x[i];
		sxy += x[i] * y[i];
	}
	d = n * sxx - sx * sx;
	if (d == 0)
		return;
	fit->slope_ns = (n * sxy - sx * sy) / d;
	fit->intercept_ns = (sy - fit->slope_ns * sx) / n;
	mean = sy / n;
	for (i = 0; i < n; i++) {
		double r = y[i] - (fit->intercept_ns + fit->slope_ns * x[i]);

		ss_res += r * r;
		ss_tot += (y[i] - mean) * (y[i] - mean);
	}
	fit->r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : 1;
}

int bench_snap(struct bench *b, struct bench_snap *s)
{
	int ret;

	ret = vp2p_exporter_stats(b->efd, &s->v);
	if (ret)
		return ret;
	return vp2p_importer_stats(b->ifd, &s->e);
}

void bench_delta(const struct bench_snap *s0, const struct bench_snap *s1,
		 int64_t *cnt)
{
	cnt[CNT_PAGES_MIGRATED] = s1->v.devmem_to_ram - s0->v.devmem_to_ram;
	cnt[CNT_SYSMEM_BYTES] = (s1->e.stats.pages_system -
				 s0->e.stats.pages_system) * BENCH_PAGE;
	cnt[CNT_BOUNCED_BYTES] = s1->v.bytes_bounced - s0->v.bytes_bounced;
	cnt[CNT_COPIED_BYTES] = s1->v.bytes_copied - s0->v.bytes_copied;
	cnt[CNT_P2P_PAGES] = s1->e.stats.pages_p2p - s0->e.stats.pages_p2p;
	cnt[CNT_P2P_MAPS] = s1->e.stats.p2p_maps - s0->e.stats.p2p_maps;
	cnt[CNT_FAULTS] = s1->e.stats.faults - s0->e.stats.faults;
	cnt[CNT_INVALIDATIONS] = s1->e.stats.invalidations -
				 s0->e.stats.invalidations;
	cnt[CNT_UNMAPS] = s1->v.p2p_unmaps - s0->v.p2p_unmaps;
}
