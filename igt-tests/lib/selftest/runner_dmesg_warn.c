// SPDX-License-Identifier: MIT
/*
 * The guest runner's per-subtest dmesg-warn check, tested on a real
 * splat: "splat" loads qemu/selftest's vp2p_selftest_warn.ko (named by
 * VP2P_SELFTEST_WARN_KO), whose init WARNs. qemu/guest/run-igt must
 * report "splat" as a dmesg-warn failure and "before" and "after" as
 * passed, although all three pass by themselves. Run only by the
 * harness's self-test boot (qemu/vp2p, runner_selftest), never in a
 * topology: the splat fails the boot on purpose.
 */
#include <fcntl.h>
#include <sys/syscall.h>

#include "igt.h"

IGT_TEST_DESCRIPTION("A kernel splat in one subtest fails that subtest.");

igt_main
{
	igt_describe("Passes, before the splat.");
	igt_subtest("before")
		igt_assert(true);

	igt_describe("Loads a module that WARNs on load, and passes.");
	igt_subtest("splat") {
		const char *ko = getenv("VP2P_SELFTEST_WARN_KO");
		int fd;

		igt_require_f(ko && *ko, "VP2P_SELFTEST_WARN_KO not set\n");
		fd = open(ko, O_RDONLY | O_CLOEXEC);
		igt_assert_fd(fd);
		igt_assert_eq(syscall(SYS_finit_module, fd, "", 0), 0);
		close(fd);
	}

	igt_describe("Passes, after the splat.");
	igt_subtest("after")
		igt_assert(true);
}
