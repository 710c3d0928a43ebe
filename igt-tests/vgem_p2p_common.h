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

static inline void write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_TRUNC);

	igt_assert_f(fd >= 0, "%s: %s\n", path, strerror(errno));
	igt_assert_eq(write(fd, s, strlen(s)), (ssize_t)strlen(s));
	close(fd);
}

/* @path: the debugfs file @file of the vgem_p2p device @vfd is open on */
static inline void vgem_p2p_debugfs_path(int vfd, const char *file,
					 char *path, size_t len)
{
	struct stat st;

	igt_assert_eq(fstat(vfd, &st), 0);
	snprintf(path, len, "/sys/kernel/debug/dri/%u/%s", minor(st.st_rdev),
		 file);
}

/*
 * Write "0" to @path, ignoring failure: async-signal-safe, for the exit
 * handlers that turn a debugfs knob or a module parameter back off.
 */
static inline void vgem_p2p_knob_off(const char *path)
{
	int fd = open(path, O_WRONLY);

	if (fd >= 0) {
		ssize_t n = write(fd, "0", 1);

		(void)n;
		close(fd);
	}
}

static sigjmp_buf vgem_p2p_sigbus_jmp;

static inline void vgem_p2p_sigbus_handler(int sig)
{
	siglongjmp(vgem_p2p_sigbus_jmp, 1);
}

/* Returns true if reading *p raised SIGBUS */
static inline bool touch_sigbus(volatile uint32_t *p, bool write)
{
	struct sigaction sa = { .sa_handler = vgem_p2p_sigbus_handler }, old;
	bool bus = false;

	sigaction(SIGBUS, &sa, &old);
	if (sigsetjmp(vgem_p2p_sigbus_jmp, 1) == 0) {
		if (write)
			*p = 1;
		else
			(void)*p;
	} else {
		bus = true;
	}
	sigaction(SIGBUS, &old, NULL);
	return bus;
}

#define VGEM_P2P_QUOTA_PARAM "/sys/module/vgem_p2p/parameters/vram_quota_pages"

/* vram_quota_pages: the VRAM one file's objects may hold; 0, no limit */
static inline void vgem_p2p_set_vram_quota(uint64_t pages)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, pages);
	write_file(VGEM_P2P_QUOTA_PARAM, buf);
}

/* An exit handler: no limit again when the test ends, however */
static inline void vgem_p2p_restore_vram_quota(int sig)
{
	vgem_p2p_knob_off(VGEM_P2P_QUOTA_PARAM);
}

/* vgem's DRM_IOCTL_VGEM_FENCE_ATTACH: 0 and *@fence, or -errno */
static inline int vgem_p2p_fence_attach(int fd, uint32_t handle,
					uint32_t flags, uint32_t *fence)
{
	struct drm_vgem_fence_attach a = { .handle = handle, .flags = flags };

	if (drmIoctl(fd, DRM_IOCTL_VGEM_FENCE_ATTACH, &a))
		return -errno;
	*fence = a.out_fence;
	return 0;
}

/* 0 if the fence was pending, -ETIMEDOUT if it had signalled already */
static inline int vgem_p2p_fence_signal(int fd, uint32_t fence)
{
	struct drm_vgem_fence_signal s = { .fence = fence };

	return drmIoctl(fd, DRM_IOCTL_VGEM_FENCE_SIGNAL, &s) ? -errno : 0;
}

/* The value of a "KEY: N KiB" line of @fd's fdinfo, in KiB; ~0 without one */
static inline uint64_t vgem_p2p_fdinfo_kib(int fd, const char *key)
{
	char path[64], line[256];
	uint64_t kib = ~0ull;
	size_t n = strlen(key);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	igt_assert(f);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':')
			sscanf(line + n + 1, "%" SCNu64, &kib);
	fclose(f);
	return kib;
}

static inline bool vgem_p2p_is_ours(const char *node)
{
	int f = open(node, O_RDWR | O_CLOEXEC);
	drmVersionPtr v;
	bool ours;

	if (f < 0)
		return false;
	v = drmGetVersion(f);
	ours = v && !strcmp(v->name, "vgem_p2p");
	if (v)
		drmFreeVersion(v);
	close(f);
	return ours;
}

/* PCI order: domain, bus, device, function */
static inline uint64_t vgem_p2p_pci_key(const drmDevicePtr dev)
{
	const drmPciBusInfo *b = dev->businfo.pci;

	return (uint64_t)b->domain << 24 | b->bus << 16 | b->dev << 8 |
	       b->func;
}

/*
 * Opens node @type (DRM_NODE_*) of the @index-th vgem_p2p device, or -1.
 * Numbered in PCI order, as edu_nic numbers its devices (probe order):
 * drmGetDevices2() lists them in /dev/dri's directory order, which is
 * not, and tests that name "the exporter" or pair exporters with
 * importers need one numbering on every boot.
 */
static inline int vgem_p2p_open_node(int type, int index)
{
	drmDevicePtr devs[64], ours[64];
	int i, j, n, nours = 0, fd = -1;

	n = drmGetDevices2(0, devs, 64);
	for (i = 0; i < n; i++) {
		if (devs[i]->bustype != DRM_BUS_PCI ||
		    !(devs[i]->available_nodes & (1 << type)) ||
		    !vgem_p2p_is_ours(devs[i]->nodes[type]))
			continue;
		/* insertion sort: a handful of devices */
		for (j = nours++; j > 0 && vgem_p2p_pci_key(ours[j - 1]) >
					   vgem_p2p_pci_key(devs[i]); j--)
			ours[j] = ours[j - 1];
		ours[j] = devs[i];
	}
	if (index >= 0 && index < nours)
		fd = open(ours[index]->nodes[type], O_RDWR | O_CLOEXEC);
	if (n > 0)
		drmFreeDevices(devs, n);
	return fd;
}

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

static inline int __vgem_p2p_peer(int fd, struct drm_vgem_p2p_peer *q)
{
	return drmIoctl(fd, DRM_IOCTL_VGEM_P2P_PEER, q) ? -errno : 0;
}

static inline int vgem_p2p_open(void)
{
	int fd = vgem_p2p_open_nth(0);

	igt_require_f(fd >= 0, "no vgem_p2p device\n");
	return fd;
}

static inline int __vgem_p2p_create(int fd, uint64_t size, uint32_t flags,
				    uint32_t *handle)
{
	struct drm_vgem_p2p_create c = { .size = size, .flags = flags };

	if (drmIoctl(fd, DRM_IOCTL_VGEM_P2P_CREATE, &c))
		return -errno;
	*handle = c.handle;
	return 0;
}

static inline uint32_t vgem_p2p_create(int fd, uint64_t size, uint32_t flags)
{
	uint32_t handle = 0;

	igt_assert_eq(__vgem_p2p_create(fd, size, flags, &handle), 0);
	return handle;
}

static inline void *vgem_p2p_mmap(int fd, uint32_t handle, uint64_t size,
				  int prot)
{
	struct drm_mode_map_dumb m = { .handle = handle };
	void *p;

	do_ioctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &m);
	p = mmap(NULL, size, prot, MAP_SHARED, fd, m.offset);
	igt_assert(p != MAP_FAILED);
	return p;
}

static inline struct drm_vgem_p2p_obj_info vgem_p2p_info(int fd,
							 uint32_t handle)
{
	struct drm_vgem_p2p_obj_info i = { .handle = handle };

	do_ioctl(fd, DRM_IOCTL_VGEM_P2P_OBJ_INFO, &i);
	return i;
}

static inline struct drm_vgem_p2p_stats vgem_p2p_stats(int fd)
{
	struct drm_vgem_p2p_stats s = {};

	do_ioctl(fd, DRM_IOCTL_VGEM_P2P_STATS, &s);
	return s;
}

static inline int __vgem_p2p_move(int fd, uint32_t handle, uint32_t target,
				  uint64_t *offset)
{
	struct drm_vgem_p2p_move m = {
		.handle = handle, .target = target, .offset = *offset,
	};

	if (drmIoctl(fd, DRM_IOCTL_VGEM_P2P_MOVE, &m))
		return -errno;
	*offset = m.offset;
	return 0;
}

static inline uint64_t vgem_p2p_move(int fd, uint32_t handle, uint32_t target,
				     uint64_t offset)
{
	igt_assert_eq(__vgem_p2p_move(fd, handle, target, &offset), 0);
	return offset;
}

/*
 * Wait until STATS' vram_used is at most @bytes: closed objects are
 * freed from a workqueue, and what one held is poisoned before the
 * manager's usage drops. False if it is still above after 10 s.
 */
static inline bool vgem_p2p_wait_vram_used(int fd, uint64_t bytes)
{
	int i;

	for (i = 0; i < 1000; i++) {
		if (vgem_p2p_stats(fd).vram_used <= bytes)
			return true;
		usleep(10 * 1000);
	}
	igt_warn("vram_used %" PRIu64 " after 10 s, want at most %" PRIu64 "\n",
		 (uint64_t)vgem_p2p_stats(fd).vram_used, bytes);
	return false;
}

/* A pattern unique to (seed, word index) */
static inline void fill_pattern(void *p, size_t size, uint32_t seed)
{
	uint32_t *w = p;
	size_t i;

	for (i = 0; i < size / 4; i++)
		w[i] = seed ^ (uint32_t)(i * 2654435761u);
}

static inline bool check_pattern(const void *p, size_t size, uint32_t seed)
{
	const volatile uint32_t *w = p;
	size_t i;

	for (i = 0; i < size / 4; i++) {
		if (w[i] != (seed ^ (uint32_t)(i * 2654435761u))) {
			igt_warn("word %zu: 0x%08x, expected 0x%08x\n", i,
				 w[i], seed ^ (uint32_t)(i * 2654435761u));
			return false;
		}
	}
	return true;
}

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
static inline uint64_t vgem_p2p_poison_vram(int fd, uint64_t size)
{
	uint64_t off;
	uint32_t h;

	igt_assert_f(vgem_p2p_wait_vram_used(fd, 0),
		     "VRAM still in use before the subtest\n");
	h = vgem_p2p_create(fd, size, 0);
	off = vgem_p2p_info(fd, h).vram_offset;
	igt_assert(off != ~0ull);
	vgem_p2p_move(fd, h, VGEM_P2P_MOVE_SYSTEM, 0);
	igt_assert_f(vgem_p2p_vram_poisoned(fd, off, size),
		     "VRAM [%#" PRIx64 ", +%#" PRIx64 ") is not poison after its object left\n",
		     off, size);
	gem_close(fd, h);
	return off;
}

/* @h is in VRAM, inside what vgem_p2p_poison_vram() poisoned */
static inline void vgem_p2p_assert_on_poison(int fd, uint32_t h, uint64_t off,
					     uint64_t size)
{
	struct drm_vgem_p2p_obj_info i = vgem_p2p_info(fd, h);

	igt_assert_eq_u32(i.placement, VGEM_P2P_PLACEMENT_VRAM);
	igt_assert_f(i.vram_offset >= off &&
		     i.vram_offset + i.size <= off + size,
		     "created at [%#" PRIx64 ", +%#" PRIx64 "), not inside the poisoned [%#" PRIx64 ", +%#" PRIx64 ")\n",
		     (uint64_t)i.vram_offset, (uint64_t)i.size, off, size);
}

/* Every word of @p is zero; the first that is not is named */
static inline void vgem_p2p_assert_zeroed(const void *p, size_t size)
{
	const volatile uint32_t *w = p;
	size_t i;

	for (i = 0; i < size / 4; i++)
		igt_assert_f(!w[i], "word %zu: 0x%08x, expected 0%s\n", i,
			     w[i], w[i] == 0x01010101u * VGEM_P2P_POISON_BYTE ?
			     " (poison: never cleared)" : "");
}

/*
 * The same, on one word in every 256 bytes: enough to catch a page that
 * moved wrong, at a sixty-fourth of the cost of touching VRAM under TCG.
 */
static inline void fill_sparse(void *p, size_t size, uint32_t seed)
{
	uint32_t *w = p;
	size_t i;

	for (i = 0; i < size / 4; i += 64)
		w[i] = seed ^ (uint32_t)(i * 2654435761u);
}

static inline bool check_sparse(const void *p, size_t size, uint32_t seed)
{
	const volatile uint32_t *w = p;
	size_t i;

	for (i = 0; i < size / 4; i += 64) {
		if (w[i] != (seed ^ (uint32_t)(i * 2654435761u))) {
			igt_warn("word %zu: 0x%08x, expected 0x%08x\n", i,
				 w[i], seed ^ (uint32_t)(i * 2654435761u));
			return false;
		}
	}
	return true;
}

/* Is @pid blocked in an ioctl? (/proc/PID/syscall: its number first) */
static inline bool in_ioctl(pid_t pid)
{
	char path[64], line[256];
	bool in = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/syscall", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (fgets(line, sizeof(line), f))
		in = atoi(line) == SYS_ioctl;
	fclose(f);
	return in;
}

/* @pid's system time so far, in clock ticks (/proc/PID/stat's stime) */
static inline long proc_stime(pid_t pid)
{
	char path[64], line[1024], *p;
	long utime, stime;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	p = fgets(line, sizeof(line), f);
	fclose(f);
	/* after the command's ")": state and 10 fields, then utime, stime */
	if (!p || !(p = strrchr(line, ')')) ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %ld %ld",
		   &utime, &stime) != 2)
		return -1;
	return stime;
}

/*
 * Wait, up to @ms milliseconds, until @pid is inside a system call it
 * just made: blocked in it (/proc/PID/syscall), or running in the kernel
 * (its system time grew by @ticks since @stime0, as a CPU-bound ioctl's
 * does while /proc/PID/syscall says only "running").
 */
static inline bool wait_in_kernel(pid_t pid, long stime0, long ticks,
				  unsigned int ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		if (in_ioctl(pid) || proc_stime(pid) - stime0 >= ticks)
			return true;
		usleep(1000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 +
		 (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
	return false;
}

/* Reap @pid within @ms milliseconds: its wait status, or -1 if it lives */
static inline int reap_within(pid_t pid, unsigned int ms)
{
	unsigned int waited;
	int status;

	for (waited = 0; waited < ms; waited += 10) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		usleep(10 * 1000);
	}
	return -1;
}
#endif /* VGEM_P2P_COMMON_H */
