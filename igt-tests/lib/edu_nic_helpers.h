/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the edu_nic tests: open the device, register, DMA,
 * read counters. Each asserts success; the *_err variants return -errno.
 */
#ifndef EDU_NIC_HELPERS_H
#define EDU_NIC_HELPERS_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "igt.h"
#include "linux/edu_nic.h"
#include "p2p_fill.h"

#define EDU_PAGE 4096ul

/*
 * edu_nic@n's PCI address (0000:03:00.0): names its debugfs directory.
 * Return: false where edu_nic gave no device that number.
 */
bool edu_bdf_nth(int nic, char *bdf, size_t len);

/* edu_nic0's PCI address */
void edu_bdf(char *bdf, size_t len);

/* The path of edu_nic0's debugfs file @file (stats, mrs, iovas) */
void edu_debugfs_path(char *path, size_t len, const char *file);

/* The number a sysfs or debugfs file @path holds */
int edu_read_int(const char *path);

/* The number on the line "@key N" of the debugfs file @path */
long edu_read_value(const char *path, const char *key);

/*
 * edu_nic@n's DMA mask, as the DMA API holds it (the "dma_mask" line of
 * its debugfs stats): what its probe made of the dma_bits parameter.
 * Return: false where edu_nic gave no device that number.
 */
bool edu_dma_mask_nth(int nic, uint64_t *mask);

/* Write @s to the sysfs or debugfs file @path; false on any failure */
bool edu_write_str(const char *path, const char *s);

/* The number in the file @path names, for wait_for_value() */
static inline long edu_read_int_at(const void *path)
{
	return edu_read_int(path);
}

/*
 * edu_nic's engine hold: while hold_dma is 1, a transfer that has taken
 * the engine waits there before its first command; held_dma counts those
 * waiting.
 */
#define EDU_HOLD_DMA	"/sys/kernel/debug/edu_nic/hold_dma"
#define EDU_HELD_DMA	"/sys/kernel/debug/edu_nic/held_dma"

/* An exit handler: a failed subtest must not leave the engine held */
static inline void edu_release_dma(int sig)
{
	edu_write_str(EDU_HOLD_DMA, "0");
}

/* Open /dev/edu_nic@n: the fd, or -1 */
int edu_open_nth(int n);

/*
 * BAR @bar of the PCI device whose sysfs directory is @dev (such as
 * "/sys/class/drm/card0/device"), from its resource file: CPU physical
 * addresses, which are the bus's on x86. Return: false without the file
 * or the BAR's line.
 */
bool pci_bar_range(const char *dev, int bar, uint64_t *start, uint64_t *end);

/* How many edu devices (PCI 1234:11e8) the machine has, bound or not */
int edu_pci_count(void);

/*
 * Open edu_nic@n where the machine has the device for it: skip only where
 * it has fewer than n + 1 edu devices, and fail where the device is there
 * but edu_nic did not give it a node.
 */
int edu_open_promised(int n);

/*
 * A child that DMAs until the parent SIGKILLs it runs under igt_fork(),
 * not plain fork(): in libigt 1.27.1 a failed igt_assert() or
 * igt_require() in a plain fork() child longjmps into the copy of
 * igt_main the child holds and runs the rest of the binary a second
 * time, module unloads included. In an igt_fork() child it exits with
 * its verdict, which the parent asserts (edu_child_kill()); and when the
 * parent fails first, libigt kills and reaps the child as the subtest
 * ends, so it keeps nothing mapped through the subtests that follow.
 * The child checks everything before its word and nothing after it: a
 * failure while the parent kills it can end as the SIGKILL (seen with
 * an assertion put there on purpose).
 */

/* In the child: its first DMA read right (checked there); say so */
static inline void edu_child_report(int wfd)
{
	igt_assert_eq(write(wfd, "r", 1), 1);
}

/* In the parent: wait for the child's word (a failed child sends none) */
void edu_child_ready(int ready[2]);

/* SIGKILL the child and reap it: it died of the signal, not of a failure */
void edu_child_kill(void);

/* Open edu_nic0; skip without it */
int edu_open(void);

/* An ioctl of edu_nic, again on EINTR: 0 or -errno */
int edu_ioctl(int fd, unsigned long req, void *arg);

/* REG_MR of [@addr, @addr + @len): 0 and *@key (if not NULL), or -errno */
int edu_reg_err(int fd, void *addr, uint64_t len, uint32_t access,
		uint32_t flags, uint32_t *key);

/* REG_MR, which must succeed: the key */
uint32_t edu_reg(int fd, void *addr, uint64_t len, uint32_t access,
		 uint32_t flags);

/* DEREG_MR: 0 or -errno */
int edu_dereg_err(int fd, uint32_t key);

/* A DMA of [@off, @off + @len) of @key in direction @dir: 0 or -errno */
int edu_dma_err(int fd, uint32_t key, uint32_t dir, uint32_t mode, uint64_t off,
		uint64_t len, void *buf);

/* The same, which must succeed */
static inline void edu_dma(int fd, uint32_t key, uint32_t dir, uint32_t mode,
			   uint64_t off, uint64_t len, void *buf)
{
	igt_assert_eq(edu_dma_err(fd, key, dir, mode, off, len, buf), 0);
}

/* MR_STATS of @key */
struct edu_nic_mr_stats edu_mr_stats(int fd, uint32_t key);

/* DEV_STATS */
struct edu_nic_dev_stats edu_dev_stats(int fd);

/* @len bytes of private anonymous memory, read-write */
void *edu_anon(size_t len);

/* A checksum (FNV-1a) of @len bytes at @buf */
uint64_t edu_csum(const void *buf, size_t len);

#endif /* EDU_NIC_HELPERS_H */
