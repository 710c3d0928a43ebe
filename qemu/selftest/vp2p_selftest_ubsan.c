// SPDX-License-Identifier: GPL-2.0
/*
 * Undefined behaviour on load, on purpose: the harness must turn a UBSAN
 * report in the guest into a failed run, as it does a WARN. An array
 * index one past the end of an array that is not the last member of its
 * struct (UBSAN_BOUNDS; the element read is still inside the struct, so
 * KASAN stays quiet), then a shift by more than the type's width
 * (UBSAN_SHIFT). Both operands are module parameters, which the compiler
 * cannot fold. Built and loaded only by the runner's own self-test.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/printk.h>

static unsigned int at = 4;
module_param(at, uint, 0444);
MODULE_PARM_DESC(at, "index into an int[4] (default 4: out of bounds)");

static unsigned int shift = 40;
module_param(shift, uint, 0444);
MODULE_PARM_DESC(shift, "shift of a 32-bit value (default 40: too large)");

static struct {
	int a[4];
	int b[4];
} vp2p_selftest_ubsan_data = { { 1, 2, 3, 4 }, { 5, 6, 7, 8 } };

static int __init vp2p_selftest_ubsan_init(void)
{
	int v = vp2p_selftest_ubsan_data.a[at];
	u32 w = 1U << shift;

	pr_info("vp2p_selftest_ubsan: deliberate undefined behaviour for the runner self-test: a[%u] = %d, 1 << %u = %u\n",
		at, v, shift, w);
	return 0;
}

static void __exit vp2p_selftest_ubsan_exit(void)
{
}

module_init(vp2p_selftest_ubsan_init);
module_exit(vp2p_selftest_ubsan_exit);
MODULE_DESCRIPTION("vgem-p2p harness self-test: deliberate undefined behaviour");
MODULE_LICENSE("GPL");
