// SPDX-License-Identifier: MIT
/*
 * Device-private access: the importer reads N MiB of anonymous memory
 * that lives in vgem-p2p's device-private pages.
 *  - upstream: registered with EDU_NIC_REG_MR_NO_P2P, i.e. as an importer
 *    without p2p support: hmm_range_fault() migrates every page back to
 *    system memory first (what 6.1 does for another driver's pages);
 *  - p2p: the owner maps its pages for the importer where they are.
 * Each repetition migrates the memory to the device again (not timed);
 * the clock covers registration and the read of every byte.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/mman.h>

#include "bench.h"

#define DEVMEM_CHUNK	MiB

enum devmem_case { DM_UPSTREAM, DM_P2P, NR_DEVMEM_CASES };

static const char *const devmem_names[NR_DEVMEM_CASES] = {
	"upstream", "p2p",
};

static const uint32_t devmem_flags[NR_DEVMEM_CASES] = {
	EDU_NIC_REG_MR_NO_P2P, 0,
};

static int devmem_read(struct bench *b, char *p, uint64_t size, char *buf,
		       uint32_t flags, double *ns, int64_t *cnt,
		       unsigned int *busy)
{
	struct bench_snap s0, s1;
	uint64_t t0, t1, off;
	uint32_t key;
	int ret;

	ret = bench_snap(b, &s0);
	if (ret)
		return ret;
	t0 = bench_now_ns();
	ret = bench_register(b, p, size, flags, &key, busy);
	if (ret)
		return ret;
	for (off = 0; off < size && !ret; off += DEVMEM_CHUNK)
		ret = vp2p_dma(b->ifd, key, EDU_NIC_DMA_FROM_MR,
			       EDU_NIC_MODE_BULK, off, buf, DEVMEM_CHUNK);
	t1 = bench_now_ns();
	if (!ret)
		ret = bench_snap(b, &s1);
	vp2p_mr_deregister(b->ifd, key);
	if (ret)
		return ret;
	/* The last chunk's first page, as bench_touch() wrote it. */
	if (*(uint64_t *)buf != (size - DEVMEM_CHUNK) / BENCH_PAGE + 3)
		return -EIO;
	*ns = t1 - t0;
	bench_delta(&s0, &s1, cnt);
	return 0;
}

static int devmem_size(struct bench *b, uint64_t size, char *buf)
{
	double ns[NR_DEVMEM_CASES][b->reps];
	int64_t cnt[NR_DEVMEM_CASES][b->reps][NR_COUNTERS];
	unsigned int busy[NR_DEVMEM_CASES] = { };
	struct bench_row *row;
	unsigned int r, c;
	uint64_t npages;
	char *p;
	int ret = 0;

	p = bench_anon(size);
	if (!p)
		return -ENOMEM;
	bench_touch(p, size, 3);
	for (r = 0; r < b->reps && !ret; r++) {
		for (c = 0; c < NR_DEVMEM_CASES && !ret; c++) {
			ret = vp2p_migrate(b->efd, p, size,
					   VGEM_P2P_MIGRATE_TO_DEVICE,
					   &npages);
			if (ret) {
				bench_fail(ret, "devmem: migration");
				break;
			}
			ret = devmem_read(b, p, size, buf, devmem_flags[c],
					  &ns[c][r], cnt[c][r], &busy[c]);
			if (ret)
				bench_fail(ret, "devmem: %s, %llu MiB",
					   devmem_names[c],
					   (unsigned long long)(size / MiB));
		}
	}
	munmap(p, size);
	if (ret)
		return ret;

	for (c = 0; c < NR_DEVMEM_CASES; c++) {
		if (busy[c])
			bench_note(b, "devmem: %s at %llu MiB: registration got -EBUSY %u times in %u repetitions (edu_nic waits for a racing migration: this is a bug); retried, on the clock",
				   devmem_names[c],
				   (unsigned long long)(size / MiB), busy[c],
				   b->reps);
		row = bench_row_add(b, BENCH_DEVMEM, devmem_names[c], size, 1);
		if (!row)
			break;
		bench_row_times(row, ns[c], b->reps, cnt[c]);
		bench_ratio(b, row, "upstream");
	}
	return 0;
}

int bench_devmem(struct bench *b)
{
	uint64_t size, max = b->devmem_max;
	char *buf;
	int ret = 0;

	if (max > b->vinfo.devmem_size) {
		max = b->vinfo.devmem_size;
		bench_note(b, "devmem: capped at %llu MiB (the exporter's device-private memory)",
			   (unsigned long long)(max / MiB));
	}
	buf = bench_anon(DEVMEM_CHUNK);
	if (!buf)
		return -ENOMEM;
	for (size = MiB; size <= max && !ret; size *= 4) {
		bench_progress(b, "devmem: %llu MiB",
			       (unsigned long long)(size / MiB));
		ret = devmem_size(b, size, buf);
	}
	munmap(buf, DEVMEM_CHUNK);
	return ret;
}
