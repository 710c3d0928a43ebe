// SPDX-License-Identifier: MIT
/*
 * A failure in a trailing igt_fixture: both subtests pass, then the
 * fixture after them fails, as p2p_unload's module reload would if the
 * modules did not load again. libigt prints no result line for a
 * fixture and exits 98 (IGT_EXIT_FAILURE) with every subtest passed:
 * qemu/guest/run-igt must report "FAIL runner_fixture_fail (exit 98)"
 * beside the two passes. Run only by the harness's self-test boot
 * (qemu/vp2p, runner_selftest).
 */
#include "igt.h"

IGT_TEST_DESCRIPTION("A fixture failing after the last subtest fails the binary.");

igt_main
{
	igt_describe("Passes.");
	igt_subtest("first")
		igt_assert(true);

	igt_describe("Passes.");
	igt_subtest("second")
		igt_assert(true);

	igt_fixture
		igt_assert_f(false, "the trailing fixture fails on purpose\n");
}
