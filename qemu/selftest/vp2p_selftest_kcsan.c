// SPDX-License-Identifier: GPL-2.0
/*
 * A data race on load, on purpose: on the KCSAN kernel the harness must
 * turn KCSAN's report into a failed run, and KCSAN must see into an
 * external (M=) module. Two kernel threads, on the guest's two CPUs,
 * access one word without a lock or READ_ONCE()/WRITE_ONCE() for up to
 * `seconds`: one writes a new value each time, the other reads it. KCSAN
 * reports "BUG: KCSAN: data-race in vp2p_selftest_race_read
 * [vp2p_selftest_kcsan] / vp2p_selftest_race_write [vp2p_selftest_kcsan]".
 * (No function here has "kcsan_" or "tsan_"
 * in its name: KCSAN takes a frame whose name does and skips it as its
 * own runtime's, and the title would name the caller, kthread.) Built
 * beside the other self-test modules; loaded only by `qemu/vp2p
 * kcsan`'s self-test boot, on the KCSAN kernel (on another kernel it
 * races unseen).
 */
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/printk.h>
#include <linux/sched.h>

static unsigned int seconds = 4;
module_param(seconds, uint, 0444);
MODULE_PARM_DESC(seconds, "how long the two threads race (default 4)");

static unsigned long vp2p_selftest_race_word;
static DECLARE_COMPLETION(vp2p_selftest_race_wdone);
static DECLARE_COMPLETION(vp2p_selftest_race_rdone);

static noinline void vp2p_selftest_race_write(unsigned long v)
{
	vp2p_selftest_race_word = v;	/* the race, on purpose */
}

static noinline unsigned long vp2p_selftest_race_read(void)
{
	return vp2p_selftest_race_word;	/* the race, on purpose */
}

static int vp2p_selftest_race_writer(void *arg)
{
	unsigned long end = jiffies + seconds * HZ, v = 1;

	while (time_before(jiffies, end)) {
		vp2p_selftest_race_write(v);
		v = v * 3 + 1;
		cond_resched();
	}
	kthread_complete_and_exit(&vp2p_selftest_race_wdone, 0);
}

static int vp2p_selftest_race_reader(void *arg)
{
	unsigned long end = jiffies + seconds * HZ, sum = 0;

	while (time_before(jiffies, end)) {
		sum += vp2p_selftest_race_read();
		cond_resched();
	}
	pr_info("vp2p_selftest_kcsan: reader done (sum %lx)\n", sum);
	kthread_complete_and_exit(&vp2p_selftest_race_rdone, 0);
}

static int __init vp2p_selftest_kcsan_init(void)
{
	struct task_struct *w, *r;

	pr_info("vp2p_selftest_kcsan: a deliberate data race for the runner self-test, %u s\n",
		seconds);
	w = kthread_create(vp2p_selftest_race_writer, NULL, "vp2p-kcsan-w");
	if (IS_ERR(w))
		return PTR_ERR(w);
	r = kthread_create(vp2p_selftest_race_reader, NULL, "vp2p-kcsan-r");
	if (IS_ERR(r)) {
		kthread_stop(w);
		return PTR_ERR(r);
	}
	kthread_bind(w, 0);
	kthread_bind(r, num_online_cpus() > 1 ? 1 : 0);
	wake_up_process(w);
	wake_up_process(r);
	wait_for_completion(&vp2p_selftest_race_wdone);
	wait_for_completion(&vp2p_selftest_race_rdone);
	return 0;
}

static void __exit vp2p_selftest_kcsan_exit(void)
{
}

module_init(vp2p_selftest_kcsan_init);
module_exit(vp2p_selftest_kcsan_exit);
MODULE_DESCRIPTION("vgem-p2p harness self-test: a deliberate data race");
MODULE_LICENSE("GPL");
