// SPDX-License-Identifier: MIT
/*
 * Self-test of our declarations of libigt's API (igt-tests/lib), driven
 * by check.sh: every macro the tests use, run on the real libigt.so.0.
 * Environment knobs let one binary cover every fixture path:
 *   SELFTEST_SKIP_ALL   - the first fixture skips: all subtests SKIP
 *   SELFTEST_FAIL_ALL   - the first fixture asserts: all subtests FAIL
 *   SELFTEST_GROUP_FAIL - the fixture of the second group asserts
 */
#include <sys/ioctl.h>

#include "igt.h"

IGT_TEST_DESCRIPTION("Self-test of the declarations of libigt's API.");

/* Out of line so that the assertion message has a stable function name. */
static void fail_eq(int v)
{
	igt_assert_eq(v, 2);
}

igt_main
{
	int fds[2] = { -1, -1 };

	igt_fixture {
		igt_info("fixture ran\n");
		igt_require_f(!getenv("SELFTEST_SKIP_ALL"), "skip all\n");
		igt_assert(!getenv("SELFTEST_FAIL_ALL"));
		igt_assert_eq(pipe(fds), 0);
	}

	igt_describe("Passes with every assertion macro.");
	igt_subtest("pass") {
		uint64_t big = 1ull << 40;

		igt_assert(true);
		igt_assert_f(1, "not printed\n");
		igt_assert_eq(2, 2);
		igt_assert_neq(1, 2);
		igt_assert_eq_u32(0xffffffffu, ~0u);
		igt_assert_eq_u64(big, 1ull << 40);
		igt_assert_lt(1, 2);
		igt_assert_lte(2, 2);
		igt_assert_fd(fds[0]);
		igt_require(true);
		igt_skip_on(false);
		igt_debug("debug only\n");
	}

	igt_subtest_f("pass-fmt-%d", 7)
		igt_info("formatted name %s\n", igt_subtest_name());

	igt_subtest("skip")
		igt_require_f(0, "not today\n");

	igt_subtest("skip-on")
		igt_skip_on(1 + 1 == 2);

	igt_subtest("fail")
		fail_eq(1);

	igt_subtest("fail-code")
		igt_fail(IGT_EXIT_FAILURE);

	igt_subtest("fork-pass") {
		igt_fork(child, 3)
			igt_assert_lt(child, 3);
		igt_waitchildren();
	}

	igt_subtest("fork-fail") {
		igt_fork(child, 2)
			igt_assert_neq(child, 1);
		igt_waitchildren();
	}

	igt_subtest("ioctl") {
		int n = 0;

		igt_assert_eq(write(fds[1], "abc", 3), 3);
		do_ioctl(fds[0], FIONREAD, &n);
		igt_assert_eq(n, 3);
		do_ioctl_err(-1, FIONREAD, &n, EBADF);
	}

	igt_describe("Subtests needing what nobody has.");
	igt_subtest_group {
		igt_fixture
			igt_require(getenv("SELFTEST_NEVER_SET"));
		igt_subtest("group-skipped")
			igt_info("not reached\n");
	}

	igt_subtest_group {
		igt_fixture
			igt_assert(!getenv("SELFTEST_GROUP_FAIL"));
		igt_subtest("group-failed")
			igt_info("group fixture passed\n");
	}

	igt_subtest("after-groups")
		igt_info("group state was restored\n");

	igt_fixture {
		close(fds[0]);
		close(fds[1]);
	}
}
