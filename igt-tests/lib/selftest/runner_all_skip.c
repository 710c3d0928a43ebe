// SPDX-License-Identifier: MIT
/*
 * A binary in which every subtest skips, as every subtest of p2p_observe,
 * p2p_fuzz and p2p_faultinject does on igt_require(vfd >= 0) when
 * vgem_p2p is not loaded. libigt exits 77 and each subtest is a SKIP;
 * run on a topology that igt-tests/topologies (here, the self-test's
 * list) names for it, the binary tested nothing where it promised to,
 * and qemu/guest/run-suite must report
 * "FAIL runner_all_skip (every subtest skipped)". Run only by the
 * harness's self-test boot (qemu/vp2p, runner_selftest).
 */
#include "igt.h"

IGT_TEST_DESCRIPTION("A binary whose every subtest skips fails where it is listed.");

igt_main
{
	igt_describe("Skips: what it needs is never there.");
	igt_subtest("first")
		igt_require(getenv("VP2P_SELFTEST_NEVER_SET"));

	igt_describe("Skips: what it needs is never there.");
	igt_subtest("second")
		igt_require(getenv("VP2P_SELFTEST_NEVER_SET"));
}
