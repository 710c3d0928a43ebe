// SPDX-License-Identifier: MIT
/*
 * The vgem_p2p tests' helpers, declared in vgem_p2p_common.h.
 */
#include "vgem_p2p_common.h"

void write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_TRUNC);

	igt_assert_f(fd >= 0, "%s: %s\n", path, strerror(errno));
	igt_assert_eq(write(fd, s, strlen(s)), (ssize_t)strlen(s));
	close(fd);
}

void vgem_p2p_debugfs_path(int vfd, const char *file, char *path, size_t len)
{
	struct stat st;

	igt_assert_eq(fstat(vfd, &st), 0);
	snprintf(path, len, "/sys/kernel/debug/dri/%u/%s", minor(st.st_rdev),
		 file);
}

void vgem_p2p_knob_off(const char *path)
{
	int fd = open(path, O_WRONLY);

	if (fd >= 0) {
		ssize_t n = write(fd, "0", 1);

		(void)n;
		close(fd);
	}
}

static sigjmp_buf vgem_p2p_sigbus_jmp;

static void vgem_p2p_sigbus_handler(int sig)
{
	siglongjmp(vgem_p2p_sigbus_jmp, 1);
}

bool touch_sigbus(volatile uint32_t *p, bool write)
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

void vgem_p2p_set_vram_quota(uint64_t pages)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, pages);
	write_file(VGEM_P2P_QUOTA_PARAM, buf);
}

int vgem_p2p_fence_attach(int fd, uint32_t handle, uint32_t flags,
			  uint32_t *fence)
{
	struct drm_vgem_fence_attach a = { .handle = handle, .flags = flags };

	if (drmIoctl(fd, DRM_IOCTL_VGEM_FENCE_ATTACH, &a))
		return -errno;
	*fence = a.out_fence;
	return 0;
}

int vgem_p2p_fence_signal(int fd, uint32_t fence)
{
	struct drm_vgem_fence_signal s = { .fence = fence };

	return drmIoctl(fd, DRM_IOCTL_VGEM_FENCE_SIGNAL, &s) ? -errno : 0;
}

uint64_t vgem_p2p_fdinfo_kib(int fd, const char *key)
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

static bool vgem_p2p_is_ours(const char *node)
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
static uint64_t vgem_p2p_pci_key(const drmDevicePtr dev)
{
	const drmPciBusInfo *b = dev->businfo.pci;

	return (uint64_t)b->domain << 24 | b->bus << 16 | b->dev << 8 |
	       b->func;
}

int vgem_p2p_open_node(int type, int index)
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

int vgem_p2p_open(void)
{
	int fd = vgem_p2p_open_nth(0);

	igt_require_f(fd >= 0, "no vgem_p2p device\n");
	return fd;
}

int __vgem_p2p_create(int fd, uint64_t size, uint32_t flags, uint32_t *handle)
{
	struct drm_vgem_p2p_create c = { .size = size, .flags = flags };

	if (drmIoctl(fd, DRM_IOCTL_VGEM_P2P_CREATE, &c))
		return -errno;
	*handle = c.handle;
	return 0;
}

uint32_t vgem_p2p_create(int fd, uint64_t size, uint32_t flags)
{
	uint32_t handle = 0;

	igt_assert_eq(__vgem_p2p_create(fd, size, flags, &handle), 0);
	return handle;
}

void *vgem_p2p_mmap(int fd, uint32_t handle, uint64_t size, int prot)
{
	struct drm_mode_map_dumb m = { .handle = handle };
	void *p;

	do_ioctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &m);
	p = mmap(NULL, size, prot, MAP_SHARED, fd, m.offset);
	igt_assert(p != MAP_FAILED);
	return p;
}

struct drm_vgem_p2p_obj_info vgem_p2p_info(int fd, uint32_t handle)
{
	struct drm_vgem_p2p_obj_info i = { .handle = handle };

	do_ioctl(fd, DRM_IOCTL_VGEM_P2P_OBJ_INFO, &i);
	return i;
}

struct drm_vgem_p2p_stats vgem_p2p_stats(int fd)
{
	struct drm_vgem_p2p_stats s = {};

	do_ioctl(fd, DRM_IOCTL_VGEM_P2P_STATS, &s);
	return s;
}

int __vgem_p2p_move(int fd, uint32_t handle, uint32_t target, uint64_t *offset)
{
	struct drm_vgem_p2p_move m = {
		.handle = handle, .target = target, .offset = *offset,
	};

	if (drmIoctl(fd, DRM_IOCTL_VGEM_P2P_MOVE, &m))
		return -errno;
	*offset = m.offset;
	return 0;
}

uint64_t vgem_p2p_move(int fd, uint32_t handle, uint32_t target,
		       uint64_t offset)
{
	igt_assert_eq(__vgem_p2p_move(fd, handle, target, &offset), 0);
	return offset;
}

bool vgem_p2p_wait_vram_used(int fd, uint64_t bytes)
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

void fill_pattern(void *p, size_t size, uint32_t seed)
{
	uint32_t *w = p;
	size_t i;

	for (i = 0; i < size / 4; i++)
		w[i] = seed ^ (uint32_t)(i * 2654435761u);
}

bool check_pattern(const void *p, size_t size, uint32_t seed)
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

uint64_t vgem_p2p_poison_vram(int fd, uint64_t size)
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

void vgem_p2p_assert_on_poison(int fd, uint32_t h, uint64_t off, uint64_t size)
{
	struct drm_vgem_p2p_obj_info i = vgem_p2p_info(fd, h);

	igt_assert_eq_u32(i.placement, VGEM_P2P_PLACEMENT_VRAM);
	igt_assert_f(i.vram_offset >= off &&
		     i.vram_offset + i.size <= off + size,
		     "created at [%#" PRIx64 ", +%#" PRIx64 "), not inside the poisoned [%#" PRIx64 ", +%#" PRIx64 ")\n",
		     (uint64_t)i.vram_offset, (uint64_t)i.size, off, size);
}

void vgem_p2p_assert_zeroed(const void *p, size_t size)
{
	const volatile uint32_t *w = p;
	size_t i;

	for (i = 0; i < size / 4; i++)
		igt_assert_f(!w[i], "word %zu: 0x%08x, expected 0%s\n", i,
			     w[i], w[i] == 0x01010101u * VGEM_P2P_POISON_BYTE ?
			     " (poison: never cleared)" : "");
}

void fill_sparse(void *p, size_t size, uint32_t seed)
{
	uint32_t *w = p;
	size_t i;

	for (i = 0; i < size / 4; i += 64)
		w[i] = seed ^ (uint32_t)(i * 2654435761u);
}

bool check_sparse(const void *p, size_t size, uint32_t seed)
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

bool in_ioctl(pid_t pid)
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

long proc_stime(pid_t pid)
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

bool wait_in_kernel(pid_t pid, long stime0, long ticks, unsigned int ms)
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

int reap_within(pid_t pid, unsigned int ms)
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
