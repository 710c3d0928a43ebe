// SPDX-License-Identifier: MIT
/*
 * The guest runner's per-subtest dmesg-warn check, tested on real
 * splats: "splat" loads qemu/selftest's vp2p_selftest_warn.ko (named by
 * VP2P_SELFTEST_WARN_KO), whose init WARNs, and "ubsan" loads
 * vp2p_selftest_ubsan.ko (VP2P_SELFTEST_UBSAN_KO), whose init indexes
 * past an array and shifts past a type's width, for UBSAN to report.
 * qemu/guest/run-igt must report "splat" and "ubsan" as dmesg-warn
 * failures and "before" and "after" as passed, although all four pass
 * by themselves. Run only by the harness's self-test boot (qemu/vp2p,
 * runner_selftest), never in a topology: the splats fail the boot on
 * purpose.
 */
#include <fcntl.h>
#include <sys/syscall.h>

#include "igt.h"

IGT_TEST_DESCRIPTION("A kernel splat in one subtest fails that subtest.");

/* Load the module the environment variable VAR names. */
static void load_module(const char *var)
{
	const char *ko = getenv(var);
	int fd;

	igt_require_f(ko && *ko, "%s not set\n", var);
	fd = open(ko, O_RDONLY | O_CLOEXEC);
	igt_assert_fd(fd);
	igt_assert_eq(syscall(SYS_finit_module, fd, "", 0), 0);
	close(fd);
}

igt_main
{
	igt_describe("Passes, before the splat.");
	igt_subtest("before")
		igt_assert(true);

	igt_describe("Loads a module that WARNs on load, and passes.");
	igt_subtest("splat")
		load_module("VP2P_SELFTEST_WARN_KO");

	igt_describe("Loads a module whose init UBSAN reports, and passes.");
	igt_subtest("ubsan")
		load_module("VP2P_SELFTEST_UBSAN_KO");

	igt_describe("Passes, after the splats.");
	igt_subtest("after")
		igt_assert(true);
}
