// SPDX-License-Identifier: MIT
/*
 * A binary that leaves its list half run: "first" passes, then the
 * fixture after it ends the process with _exit(0), as a forked helper's
 * exit path run in the parent by mistake would. (exit() would not do:
 * libigt's exit handler aborts a process that exits without
 * igt_exit(), and the abort's status is seen.) "second" and "third"
 * never start, and nothing but the subtest list says so: no subtest is
 * left unfinished and the exit status is a pass. qemu/guest/run-suite
 * must report each as "FAIL runner_exit_mid_list/NAME (no result)". Run
 * only by the harness's self-test boot (qemu/vp2p, runner_selftest).
 */
#include "igt.h"

IGT_TEST_DESCRIPTION("Subtests that never report fail, even when the binary exits 0.");

igt_main
{
	igt_describe("Passes.");
	igt_subtest("first")
		igt_assert(true);

	igt_fixture {
		igt_info("exiting with status 0 before the rest of the list\n");
		fflush(NULL);
		_exit(IGT_EXIT_SUCCESS);
	}

	igt_describe("Never runs: the binary exits before it.");
	igt_subtest("second")
		igt_assert(true);

	igt_describe("Never runs: the binary exits before it.");
	igt_subtest("third")
		igt_assert(true);
}
