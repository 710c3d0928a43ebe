// SPDX-License-Identifier: MIT
/*
 * Map cost: registering a region with EDU_NIC_REG_MR_PREFETCH runs
 * hmm_range_fault() over all of it with the importer named, and DMA-maps
 * what comes back. Three kinds of memory, present before the clock starts:
 *  - vram:   a vgem-p2p VRAM mmap; the vma's p2p_lookup hands out
 *            addresses;
 *  - devmem: anonymous memory migrated to vgem-p2p's device-private
 *            pages, mapped p2p by their owner without migrating back;
 *  - anon:   ordinary anonymous memory, the path upstream already has
 *            (one dma_map_page() per page): the baseline;
 *  - ttm-vram, ttm-sys: a bochs dumb buffer, through TTM's p2p_lookup (the
 *            generic path every TTM driver gets), scanned out so pinned
 *            in VRAM, or in the system memory bochs creates it in.
 * The cases alternate within each repetition, so that a slow spell of the
 * emulator hits all three alike.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "bench.h"

enum map_case { MC_ANON, MC_VRAM, MC_DEVMEM, MC_TTM_VRAM, MC_TTM_SYS, NR_MC };

static const char *const map_case_names[NR_MC] = {
	"anon", "vram", "devmem", "ttm-vram", "ttm-sys",
};

/* One prefetched registration, timed, with its counters. */
static int map_once(struct bench *b, void *p, uint64_t size, double *ns,
		    int64_t *cnt)
{
	struct bench_snap s0, s1;
	uint64_t t0, t1;
	uint32_t key;
	int ret;

	ret = bench_snap(b, &s0);
	if (ret)
		return ret;
	t0 = bench_now_ns();
	ret = vp2p_mr_register(b->ifd, p, size, EDU_NIC_ACCESS_READ,
			       EDU_NIC_REG_MR_PREFETCH, &key);
	t1 = bench_now_ns();
	if (ret)
		return ret;
	ret = bench_snap(b, &s1);
	vp2p_mr_deregister(b->ifd, key);
	if (ret)
		return ret;
	*ns = t1 - t0;
	bench_delta(&s0, &s1, cnt);
	return 0;
}

struct map_bufs {
	void *p[NR_MC];
	struct vp2p_bo bo;
	bool has_bo;
	struct bench_ttm_buf ttm[2];	/* ttm-vram, ttm-sys */
};

static void map_bufs_free(struct bench *b, struct map_bufs *m,
			  uint64_t size)
{
	if (m->p[MC_VRAM])
		vp2p_bo_munmap(&m->bo, m->p[MC_VRAM]);
	if (m->has_bo)
		vp2p_bo_close(b->efd, &m->bo);
	if (m->p[MC_ANON])
		munmap(m->p[MC_ANON], size);
	if (m->p[MC_DEVMEM])
		munmap(m->p[MC_DEVMEM], size);
	bench_ttm_put(b, &m->ttm[0]);
	bench_ttm_put(b, &m->ttm[1]);
}

/* Set up the memory of every case that fits at @size; NULL: skipped. */
static int map_bufs_get(struct bench *b, struct map_bufs *m, uint64_t size)
{
	uint64_t npages = 0;
	int ret;

	m->p[MC_ANON] = bench_anon(size);
	if (!m->p[MC_ANON])
		return -ENOMEM;
	bench_touch(m->p[MC_ANON], size, 1);

	if (size <= b->vinfo.vram_size) {
		ret = vp2p_bo_create(b->efd, size, 0, &m->bo);
		if (ret)
			return bench_fail(ret, "VRAM object of %llu bytes",
					  (unsigned long long)size);
		m->has_bo = true;
		ret = vp2p_bo_mmap(b->efd, &m->bo, PROT_READ | PROT_WRITE,
				   &m->p[MC_VRAM]);
		if (ret)
			return bench_fail(ret, "mmap of the VRAM object");
	}

	if (size <= b->vinfo.devmem_size) {
		m->p[MC_DEVMEM] = bench_anon(size);
		if (!m->p[MC_DEVMEM])
			return -ENOMEM;
		bench_touch(m->p[MC_DEVMEM], size, 2);
		ret = vp2p_migrate(b->efd, m->p[MC_DEVMEM], size,
				   VGEM_P2P_MIGRATE_TO_DEVICE, &npages);
		if (ret == -ENOMEM || npages != size / BENCH_PAGE) {
			/* What did not fit stays in RAM: not the case. */
			munmap(m->p[MC_DEVMEM], size);
			m->p[MC_DEVMEM] = NULL;
			bench_note(b, "map: devmem at %llu MiB skipped: only %llu pages fitted in device-private memory (or the exporter's per-process quota, devmem_quota_pages)",
				   (unsigned long long)(size / MiB),
				   (unsigned long long)npages);
		} else if (ret) {
			return bench_fail(ret, "migration to device memory");
		}
	}

	/* Only the first @size bytes are registered: a scanout is 3 MiB+ */
	if (b->bfd >= 0 && size <= bench_ttm_max()) {
		ret = bench_ttm_get(b, size, true, &m->ttm[0]);
		if (ret)
			return bench_fail(ret, "bochs scanout buffer of %llu bytes",
					  (unsigned long long)size);
		m->p[MC_TTM_VRAM] = m->ttm[0].map;
		ret = bench_ttm_get(b, size, false, &m->ttm[1]);
		if (ret)
			return bench_fail(ret, "bochs dumb buffer of %llu bytes",
					  (unsigned long long)size);
		m->p[MC_TTM_SYS] = m->ttm[1].map;
	}
	return 0;
}

static int map_size(struct bench *b, uint64_t size)
{
	double ns[NR_MC][b->reps];
	int64_t cnt[NR_MC][b->reps][NR_COUNTERS];
	struct map_bufs m = { };
	struct bench_row *row;
	unsigned int r, c;
	int ret;

	ret = map_bufs_get(b, &m, size);
	if (ret)
		goto out_free;
	for (r = 0; r < b->reps; r++) {
		for (c = 0; c < NR_MC; c++) {
			int ifd;

			if (!m.p[c])
				continue;
			ifd = c >= MC_TTM_VRAM ? bench_ttm_begin(b) : b->ifd;
			ret = map_once(b, m.p[c], size, &ns[c][r], cnt[c][r]);
			bench_ttm_end(b, ifd);
			if (ret) {
				bench_fail(ret, "map: %s, %llu bytes",
					   map_case_names[c],
					   (unsigned long long)size);
				goto out_free;
			}
		}
	}
	for (c = 0; c < NR_MC; c++) {
		if (!m.p[c])
			continue;
		row = bench_row_add(b, BENCH_MAP, map_case_names[c], size, 1);
		if (!row)
			break;
		bench_row_times(row, ns[c], b->reps, cnt[c]);
		bench_ratio(b, row, "anon");
	}
out_free:
	map_bufs_free(b, &m, size);
	return ret;
}

/*
 * Time against pages, per case: a straight line means linear cost. The
 * largest size dominates a least-squares fit over sizes growing by 4x,
 * so R^2 alone hides a cost per page that changes with size: the spread
 * is the largest median cost per page over the smallest, over the sizes
 * of 1 MiB and up (where a registration's fixed cost no longer
 * dominates).
 */
static void map_fits(struct bench *b)
{
	double x[BENCH_MAX_ROWS], y[BENCH_MAX_ROWS], pp[BENCH_MAX_ROWS];
	struct bench_fit *fit;
	unsigned int c, i, n, np;

	for (c = 0; c < NR_MC && b->nfits < BENCH_MAX_FITS; c++) {
		n = np = 0;
		for (i = 0; i < b->nrows; i++) {
			const struct bench_row *row = &b->rows[i];

			if (row->bench != BENCH_MAP ||
			    strcmp(row->name, map_case_names[c]))
				continue;
			x[n] = row->size / BENCH_PAGE;
			y[n] = row->median_ns;
			if (row->size >= MiB && row->median_ns > 0)
				pp[np++] = y[n] / x[n];
			n++;
		}
		if (n < 2)
			continue;
		fit = &b->fits[b->nfits++];
		fit->bench = BENCH_MAP;
		snprintf(fit->name, sizeof(fit->name), "%s",
			 map_case_names[c]);
		fit->per = "page";
		bench_fit_line(x, y, n, fit);
		fit->spread_n = np;
		fit->spread = np >= 2 ? bench_max(pp, np) / bench_min(pp, np) :
			      NAN;
	}
}

/* Powers of 4, then @top itself if it falls between two of them. */
static uint64_t map_next(uint64_t size, uint64_t top)
{
	if (size < top && size * 4 > top)
		return top;
	return size * 4;
}

int bench_map(struct bench *b)
{
	uint64_t cap = b->vinfo.vram_size < b->vinfo.devmem_size ?
		       b->vinfo.vram_size : b->vinfo.devmem_size;
	uint64_t size, top = b->map_max;
	int ret;

	/*
	 * A size VRAM cannot hold measures anon alone, which says nothing:
	 * stop at the largest power of two VRAM holds instead (with a
	 * 256 MiB BAR, 128 MiB of its 192 MiB of VRAM; vp2p bench's 1 GiB
	 * BAR holds all 256 MiB), as an extra point if it is not a power
	 * of 4.
	 */
	if (top > b->vinfo.vram_size && b->vinfo.vram_size >= BENCH_PAGE) {
		top = BENCH_PAGE;
		while (top * 2 <= b->vinfo.vram_size)
			top *= 2;
		bench_note(b, "map: up to %llu MiB, not %llu: the largest power of two the exporter's %llu MiB of VRAM holds",
			   (unsigned long long)(top / MiB),
			   (unsigned long long)(b->map_max / MiB),
			   (unsigned long long)(b->vinfo.vram_size / MiB));
	}
	if (top > cap)
		bench_note(b, "map: vram and devmem capped at %llu and %llu MiB (the exporter's VRAM and device-private memory)",
			   (unsigned long long)(b->vinfo.vram_size / MiB),
			   (unsigned long long)(b->vinfo.devmem_size / MiB));
	if (b->bfd >= 0 && top > bench_ttm_max())
		bench_note(b, "map: ttm-vram and ttm-sys capped at %llu MiB (bochs' VRAM)",
			   (unsigned long long)(bench_ttm_max() / MiB));
	for (size = BENCH_PAGE; size <= top; size = map_next(size, top)) {
		bench_progress(b, "map: %llu KiB",
			       (unsigned long long)(size >> 10));
		ret = map_size(b, size);
		if (ret)
			return ret;
	}
	map_fits(b);
	return 0;
}
