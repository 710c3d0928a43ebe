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

/* edu_nic0's PCI address (0000:03:00.0): names its debugfs directory */
static inline void edu_bdf(char *bdf, size_t len)
{
	char link[256];
	ssize_t n = readlink("/sys/class/misc/edu_nic0/device", link,
			     sizeof(link) - 1);

	igt_assert(n > 0);
	link[n] = 0;
	snprintf(bdf, len, "%s", strrchr(link, '/') + 1);
}

/* The path of edu_nic0's debugfs file @file (stats, mrs, iovas) */
static inline void edu_debugfs_path(char *path, size_t len, const char *file)
{
	char bdf[32];

	edu_bdf(bdf, sizeof(bdf));
	snprintf(path, len, "/sys/kernel/debug/edu_nic/%s/%s", bdf, file);
}

/* The number a sysfs or debugfs file @path holds */
static inline int edu_read_int(const char *path)
{
	FILE *f = fopen(path, "r");
	int v = -1;

	igt_assert_f(f, "%s\n", path);
	igt_assert_eq(fscanf(f, "%d", &v), 1);
	fclose(f);
	return v;
}

/* The number on the line "@key N" of the debugfs file @path */
static inline long edu_read_value(const char *path, const char *key)
{
	size_t klen = strlen(key);
	char line[256];
	long v = -1;
	FILE *f = fopen(path, "r");

	igt_assert_f(f, "%s\n", path);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ' ')
			v = strtol(line + klen, NULL, 10);
	fclose(f);
	igt_assert_f(v >= 0, "%s: no %s\n", path, key);
	return v;
}

/* Write @s to the sysfs or debugfs file @path; false on any failure */
static inline bool edu_write_str(const char *path, const char *s)
{
	int f = open(path, O_WRONLY);
	bool ok;

	if (f < 0)
		return false;
	ok = write(f, s, strlen(s)) == (ssize_t)strlen(s);
	close(f);
	return ok;
}

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

static inline int edu_open_nth(int n)
{
	char path[32];

	snprintf(path, sizeof(path), "/dev/edu_nic%d", n);
	return open(path, O_RDWR | O_CLOEXEC);
}

/*
 * BAR @bar of the PCI device whose sysfs directory is @dev (such as
 * "/sys/class/drm/card0/device"), from its resource file: CPU physical
 * addresses, which are the bus's on x86. Return: false without the file
 * or the BAR's line.
 */
static inline bool pci_bar_range(const char *dev, int bar, uint64_t *start,
				 uint64_t *end)
{
	unsigned long long s = 0, e = 0, flags;
	char path[300];
	bool ok = true;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "%s/resource", dev);
	f = fopen(path, "r");
	if (!f)
		return false;
	for (i = 0; i <= bar && ok; i++)
		ok = fscanf(f, "%llx %llx %llx", &s, &e, &flags) == 3;
	fclose(f);
	*start = s;
	*end = e;
	return ok;
}

/* How many edu devices (PCI 1234:11e8) the machine has, bound or not */
static inline int edu_pci_count(void)
{
	DIR *d = opendir("/sys/bus/pci/devices");
	struct dirent *e;
	int n = 0;

	igt_assert(d);
	while ((e = readdir(d))) {
		char path[300], id[16] = "";
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/vendor",
			 e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%15s", id) != 1 || strcmp(id, "0x1234")) {
			fclose(f);
			continue;
		}
		fclose(f);
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/device",
			 e->d_name);
		f = fopen(path, "r");
		if (f && fscanf(f, "%15s", id) == 1 && !strcmp(id, "0x11e8"))
			n++;
		if (f)
			fclose(f);
	}
	closedir(d);
	return n;
}

/*
 * Open edu_nic@n where the machine has the device for it: skip only where
 * it has fewer than n + 1 edu devices, and fail where the device is there
 * but edu_nic did not give it a node.
 */
static inline int edu_open_promised(int n)
{
	int have = edu_pci_count(), fd;

	igt_require_f(have > n, "needs %d edu devices, the machine has %d\n",
		      n + 1, have);
	fd = edu_open_nth(n);
	igt_assert_f(fd >= 0, "/dev/edu_nic%d: %s, though the machine has %d edu devices\n",
		     n, strerror(errno), have);
	return fd;
}

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
static inline void edu_child_ready(int ready[2])
{
	char c;

	close(ready[1]);
	igt_assert_f(read(ready[0], &c, 1) == 1 && c == 'r',
		     "the child ended before its first DMA read right\n");
	close(ready[0]);
}

/* SIGKILL the child and reap it: it died of the signal, not of a failure */
static inline void edu_child_kill(void)
{
	igt_kill_children(SIGKILL);
	igt_assert_eq(__igt_waitchildren(), 128 + SIGKILL);
}

static inline int edu_open(void)
{
	int fd = edu_open_nth(0);

	igt_require_f(fd >= 0, "no /dev/edu_nic0 (edu_nic.ko not loaded?)\n");
	return fd;
}

static inline int edu_ioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret == -1 && errno == EINTR);
	return ret == -1 ? -errno : 0;
}

static inline int edu_reg_err(int fd, void *addr, uint64_t len,
			      uint32_t access, uint32_t flags, uint32_t *key)
{
	struct edu_nic_reg_mr r = {
		.addr = (uintptr_t)addr,
		.length = len,
		.access = access,
		.flags = flags,
	};
	int ret = edu_ioctl(fd, EDU_NIC_IOCTL_REG_MR, &r);

	if (!ret && key)
		*key = r.key;
	return ret;
}

static inline uint32_t edu_reg(int fd, void *addr, uint64_t len,
			       uint32_t access, uint32_t flags)
{
	uint32_t key = 0;

	igt_assert_eq(edu_reg_err(fd, addr, len, access, flags, &key), 0);
	igt_assert_neq(key, 0);
	return key;
}

static inline int edu_dereg_err(int fd, uint32_t key)
{
	struct edu_nic_dereg_mr d = { .key = key };

	return edu_ioctl(fd, EDU_NIC_IOCTL_DEREG_MR, &d);
}

static inline int edu_dma_err(int fd, uint32_t key, uint32_t dir,
			      uint32_t mode, uint64_t off, uint64_t len,
			      void *buf)
{
	struct edu_nic_dma d = {
		.key = key,
		.direction = dir,
		.mode = mode,
		.offset = off,
		.length = len,
		.user_ptr = (uintptr_t)buf,
	};

	return edu_ioctl(fd, EDU_NIC_IOCTL_DMA, &d);
}

static inline void edu_dma(int fd, uint32_t key, uint32_t dir, uint32_t mode,
			   uint64_t off, uint64_t len, void *buf)
{
	igt_assert_eq(edu_dma_err(fd, key, dir, mode, off, len, buf), 0);
}

static inline struct edu_nic_mr_stats edu_mr_stats(int fd, uint32_t key)
{
	struct edu_nic_mr_stats s = { .key = key };

	igt_assert_eq(edu_ioctl(fd, EDU_NIC_IOCTL_MR_STATS, &s), 0);
	return s;
}

static inline struct edu_nic_dev_stats edu_dev_stats(int fd)
{
	struct edu_nic_dev_stats s = { 0 };

	igt_assert_eq(edu_ioctl(fd, EDU_NIC_IOCTL_DEV_STATS, &s), 0);
	return s;
}

static inline void *edu_anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	igt_assert(p != MAP_FAILED);
	return p;
}

static inline uint64_t edu_csum(const void *buf, size_t len)
{
	const uint8_t *b = buf;
	uint64_t h = 1469598103934665603ull;	/* FNV-1a */
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

#endif /* EDU_NIC_HELPERS_H */
