/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the vgem_p2p_* tests: find the device by driver name,
 * and thin wrappers around its ioctls.
 */
#ifndef VGEM_P2P_COMMON_H
#define VGEM_P2P_COMMON_H

#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <xf86drm.h>

#include "igt.h"
#include "vgem_p2p_drm.h"
#include "vgem_p2p_bar.h"

#define MiB (1ull << 20)

/* Write @s to the file @path, which must succeed */
void write_file(const char *path, const char *s);

/* @path: the debugfs file @file of the vgem_p2p device @vfd is open on */
void vgem_p2p_debugfs_path(int vfd, const char *file, char *path, size_t len);

/*
 * Write "0" to @path, ignoring failure: async-signal-safe, for the exit
 * handlers that turn a debugfs knob or a module parameter back off.
 */
void vgem_p2p_knob_off(const char *path);

/* Returns true if reading *p raised SIGBUS */
bool touch_sigbus(volatile uint32_t *p, bool write);

#define VGEM_P2P_QUOTA_PARAM "/sys/module/vgem_p2p/parameters/vram_quota_pages"

/* vram_quota_pages: the VRAM one file's objects may hold; 0, no limit */
void vgem_p2p_set_vram_quota(uint64_t pages);

/* An exit handler: no limit again when the test ends, however */
static inline void vgem_p2p_restore_vram_quota(int sig)
{
	vgem_p2p_knob_off(VGEM_P2P_QUOTA_PARAM);
}

/* vgem's DRM_IOCTL_VGEM_FENCE_ATTACH: 0 and *@fence, or -errno */
int vgem_p2p_fence_attach(int fd, uint32_t handle, uint32_t flags,
			  uint32_t *fence);

/* 0 if the fence was pending, -ETIMEDOUT if it had signalled already */
int vgem_p2p_fence_signal(int fd, uint32_t fence);

/* The value of a "KEY: N KiB" line of @fd's fdinfo, in KiB; ~0 without one */
uint64_t vgem_p2p_fdinfo_kib(int fd, const char *key);

/*
 * Opens node @type (DRM_NODE_*) of the @index-th vgem_p2p device, or -1.
 * Numbered in PCI order, as edu_nic numbers its devices (probe order):
 * drmGetDevices2() lists them in /dev/dri's directory order, which is
 * not, and tests that name "the exporter" or pair exporters with
 * importers need one numbering on every boot.
 */
int vgem_p2p_open_node(int type, int index);

/* Opens the @index-th vgem_p2p device's primary node, or -1. */
static inline int vgem_p2p_open_nth(int index)
{
	return vgem_p2p_open_node(DRM_NODE_PRIMARY, index);
}

/* Opens the first vgem_p2p device's render node, or -1. */
static inline int vgem_p2p_open_render(void)
{
	return vgem_p2p_open_node(DRM_NODE_RENDER, 0);
}

/* DRM_IOCTL_VGEM_P2P_PEER: 0 or -errno */
static inline int __vgem_p2p_peer(int fd, struct drm_vgem_p2p_peer *q)
{
	return drmIoctl(fd, DRM_IOCTL_VGEM_P2P_PEER, q) ? -errno : 0;
}

/* Open the first vgem_p2p device's primary node; skip without one */
int vgem_p2p_open(void);

/* CREATE: 0 and *@handle, or -errno */
int __vgem_p2p_create(int fd, uint64_t size, uint32_t flags, uint32_t *handle);

/* CREATE, which must succeed: the handle */
uint32_t vgem_p2p_create(int fd, uint64_t size, uint32_t flags);

/* mmap @size bytes of object @handle with @prot, shared */
void *vgem_p2p_mmap(int fd, uint32_t handle, uint64_t size, int prot);

/* OBJ_INFO of @handle */
struct drm_vgem_p2p_obj_info vgem_p2p_info(int fd, uint32_t handle);

/* STATS of the device */
struct drm_vgem_p2p_stats vgem_p2p_stats(int fd);

/* MOVE to @target, at *@offset in VRAM: 0 and where it went, or -errno */
int __vgem_p2p_move(int fd, uint32_t handle, uint32_t target, uint64_t *offset);

/* MOVE, which must succeed: the VRAM offset it went to */
uint64_t vgem_p2p_move(int fd, uint32_t handle, uint32_t target,
		       uint64_t offset);

/*
 * Wait until STATS' vram_used is at most @bytes: closed objects are
 * freed from a workqueue, and what one held is poisoned before the
 * manager's usage drops. False if it is still above after 10 s.
 */
bool vgem_p2p_wait_vram_used(int fd, uint64_t bytes);

/* A pattern unique to (seed, word index) */
void fill_pattern(void *p, size_t size, uint32_t seed);

/* Does @p hold fill_pattern()'s? Says where it does not. */
bool check_pattern(const void *p, size_t size, uint32_t seed);

/*
 * Poison the start of VRAM for a "zeroed at creation" check: the BAR is
 * a fresh memfd each boot, so VRAM never written reads zeroes whether a
 * creation clears it or not. With nothing in VRAM (the objects closed
 * before are waited for: freed from a workqueue, they would change
 * VRAM's holes under the caller), an object of @size is created and
 * moved to system memory, which poisons its range before the move
 * returns, and the range is checked to read poison through the BAR.
 * VRAM is then one hole again, so the caller's next creations land from
 * its start, over the poison (drm_mm's best fit takes a hole from its
 * start): vgem_p2p_assert_on_poison() checks that one did.
 * Return: the range's offset.
 */
uint64_t vgem_p2p_poison_vram(int fd, uint64_t size);

/* @h is in VRAM, inside what vgem_p2p_poison_vram() poisoned */
void vgem_p2p_assert_on_poison(int fd, uint32_t h, uint64_t off, uint64_t size);

/* Every word of @p is zero; the first that is not is named */
void vgem_p2p_assert_zeroed(const void *p, size_t size);

/*
 * The same, on one word in every 256 bytes: enough to catch a page that
 * moved wrong, at a sixty-fourth of the cost of touching VRAM under TCG.
 */
void fill_sparse(void *p, size_t size, uint32_t seed);

/* Does @p hold fill_sparse()'s? Says where it does not. */
bool check_sparse(const void *p, size_t size, uint32_t seed);

/* Is @pid blocked in an ioctl? (/proc/PID/syscall: its number first) */
bool in_ioctl(pid_t pid);

/* @pid's system time so far, in clock ticks (/proc/PID/stat's stime) */
long proc_stime(pid_t pid);

/*
 * Wait, up to @ms milliseconds, until @pid is inside a system call it
 * just made: blocked in it (/proc/PID/syscall), or running in the kernel
 * (its system time grew by @ticks since @stime0, as a CPU-bound ioctl's
 * does while /proc/PID/syscall says only "running").
 */
bool wait_in_kernel(pid_t pid, long stime0, long ticks, unsigned int ms);

/* Reap @pid within @ms milliseconds: its wait status, or -1 if it lives */
int reap_within(pid_t pid, unsigned int ms);
#endif /* VGEM_P2P_COMMON_H */
