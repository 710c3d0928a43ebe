// SPDX-License-Identifier: MIT
/*
 * A seeded, bounded ioctl fuzzer for vgem_p2p and edu_nic, in the style of
 * syzkaller's DRM descriptions: each ioctl has an argument generator that
 * mixes valid values (live handles, keys, fence ids, dma-buf fds, mmapped
 * ranges, sizes) with random flags, non-zero pads, stale or bad handles,
 * zero, huge and overflowing sizes, unaligned and wrapping ranges and bad
 * fds. Several threads share the object pools. Every errno an ioctl
 * returns must be in the set the uAPI headers document for it, and every
 * call holds to the invariants of enum fz_rule: a pad, an unknown flag or
 * enum value gets EINVAL; no EIO or ENODEV, as nothing is unbound; with
 * one thread, SIGBUS only where the uAPI promises it; a DMA that
 * succeeded left its bytes where it put them. Once the pool is freed,
 * the drivers' counts are back at their start values.
 *
 * The seed comes from --seed N, else VP2P_FUZZ_SEED, else the clock; it
 * is printed first. With one thread a run is reproducible; with several,
 * the interleaving is not, but each thread's call sequence is.
 *
 * This file is the test binary alone: its subtests, their sizes and the
 * seed. The engine (p2p_fuzz_engine.c: pools, threads, generators,
 * counting, the invariants) is below it and below the operation tables,
 * one per driver (p2p_fuzz_vgem_p2p.c, p2p_fuzz_edu_nic.c), each op with
 * its documented errnos; this file hands the engine the tables.
 */
#include <inttypes.h>
#include <time.h>

#include "igt.h"
#include "p2p_fuzz_drivers.h"
#include "p2p_fuzz_engine.h"

IGT_TEST_DESCRIPTION("Seeded ioctl fuzzing of vgem_p2p and edu_nic: every errno must be a documented one, and the uAPI's invariants hold.");

/* Calls per subtest; both-threads runs this many per thread. */
#define CALLS_EXPORTER	34000
#define CALLS_IMPORTER	30000
#define CALLS_THREAD	9000

/* The drivers whose operations the threads pick from, in this order */
static const struct fz_driver *const drivers[] = { &fz_vgem_p2p, &fz_edu_nic };

static uint64_t base_seed;
static const char *seed_from;

/* --seed N, or --seed=N */
static int opt_handler(int opt, int opt_index, void *data)
{
	if (opt != 's')
		return IGT_OPT_HANDLER_ERROR;
	base_seed = strtoull(optarg, NULL, 0);
	seed_from = "--seed";
	return IGT_OPT_HANDLER_SUCCESS;
}

static const struct option long_opts[] = {
	{ "seed", required_argument, NULL, 's' },
	{ }
};

static const char help_str[] =
	"  --seed N\tthe seed (default: VP2P_FUZZ_SEED, else the clock)\n";

/* The seed, unless --seed gave it, and where it came from */
static void seed_init(void)
{
	const char *env = getenv("VP2P_FUZZ_SEED");

	if (seed_from)
		return;
	if (env) {
		base_seed = strtoull(env, NULL, 0);
		seed_from = "VP2P_FUZZ_SEED";
	} else {
		base_seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
		seed_from = "clock";
	}
}

igt_main_args(NULL, long_opts, help_str, opt_handler, NULL)
{
	seed_init();
	/* stderr: stdout of --list-subtests is the subtest list */
	fprintf(stderr,
		"p2p_fuzz: seed %" PRIu64 " (from %s); rerun with --seed %" PRIu64 "\n",
		base_seed, seed_from, base_seed);
	fz_engine_init();

	igt_describe("One thread: every vgem_p2p and DRM core ioctl the driver offers, with mmaps, touches and dma-bufs.");
	igt_subtest("exporter")
		fz_run(drivers, ARRAY_SIZE(drivers), MODE_EXPORTER, 1,
		       CALLS_EXPORTER, base_seed);

	igt_describe("One thread: every edu_nic ioctl, over anonymous memory, vgem_p2p mmaps that move and vgem_p2p dma-bufs.");
	igt_subtest("importer")
		fz_run(drivers, ARRAY_SIZE(drivers), MODE_IMPORTER, 1,
		       CALLS_IMPORTER, base_seed);

	igt_describe("Four threads sharing the pools: every ioctl of both drivers at once, but edu_nic's dma-buf registration.");
	igt_subtest("both-threads")
		fz_run(drivers, ARRAY_SIZE(drivers), MODE_BOTH, NR_THREADS,
		       CALLS_THREAD, base_seed);
}
