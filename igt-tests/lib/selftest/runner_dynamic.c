// SPDX-License-Identifier: MIT
/*
 * A test with a dynamic subtest per case, as a test per exporter is
 * written (igt_subtest_with_dynamic()): "passes" passes and "fails"
 * fails. --list-subtests lists only "per-case"; libigt fails "per-case"
 * because "fails" failed, and exits 98. qemu/guest/run-igt must report
 * "PASS runner_dynamic/per-case/passes" and "FAIL runner_dynamic/
 * per-case/fails", and nothing else about the binary: no line for
 * "per-case", whose result its dynamic subtests' give, no "(exit 98)",
 * which the failed one explains, and no "(no result)" from run-suite.
 * Run only by the harness's self-test boot (qemu/vp2p, runner_selftest).
 */
#include "igt.h"

IGT_TEST_DESCRIPTION("A dynamic subtest that fails fails the run; one that passes is reported too.");

igt_main
{
	igt_describe("Two dynamic subtests: one passes, one fails.");
	igt_subtest_with_dynamic("per-case") {
		igt_dynamic("passes")
			igt_assert(true);
		igt_dynamic("fails")
			igt_assert_f(false, "this dynamic subtest fails on purpose\n");
	}
}
