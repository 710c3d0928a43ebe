// SPDX-License-Identifier: GPL-2.0
/*
 * Splats on load, on purpose: the harness must turn a kernel WARN in the
 * guest into a failed run even when the command itself succeeds. Built
 * and loaded only by the runner's own self-test.
 */
#include <linux/bug.h>
#include <linux/module.h>

static int __init vp2p_selftest_warn_init(void)
{
	WARN(1, "vp2p_selftest_warn: deliberate splat for the runner self-test\n");
	return 0;
}

static void __exit vp2p_selftest_warn_exit(void)
{
}

module_init(vp2p_selftest_warn_init);
module_exit(vp2p_selftest_warn_exit);
MODULE_DESCRIPTION("vgem-p2p harness self-test: a deliberate WARN");
MODULE_LICENSE("GPL");
