// SPDX-License-Identifier: MIT
/* Memory for the benchmarks to register, migrate and read; registering it. */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>

#include "bench.h"

/* Private anonymous memory, not yet touched; NULL on failure. */
void *bench_anon(uint64_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * Write every page, so that it is present (hmm_range_fault() then only
 * reads page tables) and so that readers can check where data came from:
 * each page starts with its index plus @seed.
 */
void bench_touch(void *p, uint64_t size, uint8_t seed)
{
	uint64_t off;

	for (off = 0; off < size; off += BENCH_PAGE) {
		uint64_t v = off / BENCH_PAGE + seed;

		*(volatile uint64_t *)((char *)p + off) = v;
	}
}

/*
 * Register with prefetch, as a patient caller does. Mirroring that makes
 * the memory move (the fallback's move to system memory, device-private
 * pages migrating to RAM without p2p) invalidates the mirror being made,
 * and edu_nic gives up with -EBUSY once its 1 s mirroring timeout has
 * passed: plenty on hardware, not for tens of MiB under TCG. What moved
 * stays moved, so trying again makes progress. @busy counts the retries.
 */
int bench_register(struct bench *b, void *p, uint64_t size, uint32_t flags,
		   uint32_t *key, unsigned int *busy)
{
	unsigned int tries;
	int ret;

	for (tries = 0; tries < 64; tries++) {
		ret = vp2p_mr_register(b->ifd, p, size, EDU_NIC_ACCESS_READ,
				       EDU_NIC_REG_MR_PREFETCH | flags, key);
		if (ret != -EBUSY)
			break;
		(*busy)++;
	}
	return ret;
}
