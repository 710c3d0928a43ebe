// SPDX-License-Identifier: MIT
/*
 * The runner itself dies: "kill-runner" SIGKILLs its parent, which must
 * be qemu/guest/run-igt, as the OOM killer or a bug in run-igt would end
 * it. run-igt writes its result lines when the binary exits, so none of
 * this binary's are written: qemu/guest/run-suite must report
 * "FAIL runner_kills_runner (run-igt exit 137)" and every subtest as
 * "(no result)". Run only by the harness's self-test boot (qemu/vp2p,
 * runner_selftest); anywhere else the subtest skips rather than kill
 * what ran it.
 */
#include <signal.h>
#include <time.h>

#include "igt.h"

IGT_TEST_DESCRIPTION("The runner dying fails the binary it was running.");

/* Whether process @pid runs qemu/guest/run-igt. */
static bool runs_run_igt(pid_t pid)
{
	char path[64], cmdline[4096];
	size_t len, i;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	len = fread(cmdline, 1, sizeof(cmdline) - 1, f);
	fclose(f);
	for (i = 0; i < len; i++)
		if (!cmdline[i])
			cmdline[i] = ' ';
	cmdline[len] = '\0';
	return strstr(cmdline, "/qemu/guest/run-igt ") != NULL;
}

igt_main
{
	igt_describe("Passes, but run-igt dies before it writes the result.");
	igt_subtest("first")
		igt_assert(true);

	igt_describe("Kills run-igt, its parent.");
	igt_subtest("kill-runner") {
		pid_t runner = getppid();
		struct timespec tick = { .tv_nsec = 10 * 1000 * 1000 };
		int i;

		igt_require_f(runs_run_igt(runner),
			      "not run by qemu/guest/run-igt\n");
		igt_assert_eq(kill(runner, SIGKILL), 0);
		for (i = 0; i < 1000 && getppid() == runner; i++)
			nanosleep(&tick, NULL);
		igt_assert_neq(getppid(), runner);
		/* Nobody reads our output any more. */
		_exit(IGT_EXIT_SUCCESS);
	}

	igt_describe("Never runs: the binary ends in kill-runner.");
	igt_subtest("last")
		igt_assert(true);
}
