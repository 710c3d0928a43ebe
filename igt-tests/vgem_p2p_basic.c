// SPDX-License-Identifier: MIT
/*
 * vgem's uAPI on vgem-p2p (dumb buffers, mmap, PRIME, fences), and the
 * argument checking of every vgem-p2p ioctl.
 */
#include <inttypes.h>
#include <stdio.h>
#include <sys/ioctl.h>

#include <linux/dma-buf.h>

#include "vgem_p2p_common.h"

IGT_TEST_DESCRIPTION("vgem uAPI and ioctl argument checks on vgem_p2p");

static uint32_t dumb_create(int fd, uint32_t w, uint32_t h, uint32_t bpp,
			    uint64_t *size)
{
	struct drm_mode_create_dumb c = { .width = w, .height = h, .bpp = bpp };

	do_ioctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &c);
	igt_assert(c.pitch >= w * bpp / 8);
	igt_assert(c.size >= (uint64_t)c.pitch * h);
	*size = c.size;
	return c.handle;
}

/* Created over poisoned VRAM (vgem_p2p_poison_vram()), and zeroed */
static void test_dumb_create(int fd)
{
	uint64_t poisoned = vgem_p2p_poison_vram(fd, MiB), size;
	uint32_t h = dumb_create(fd, 64, 64, 32, &size);
	uint32_t *p;

	vgem_p2p_assert_on_poison(fd, h, poisoned, MiB);
	p = vgem_p2p_mmap(fd, h, size, PROT_READ | PROT_WRITE);
	/* zeroed, every word */
	vgem_p2p_assert_zeroed(p, size);
	fill_pattern(p, size, 1);
	igt_assert(check_pattern(p, size, 1));
	munmap(p, size);
	gem_close(fd, h);
}

static void test_dumb_larger_than_vram(int fd)
{
	uint64_t vram = vgem_p2p_stats(fd).vram_size, size;
	/* 4 bytes a pixel, 1024 pixels a row: 4 MiB more than VRAM */
	uint32_t rows = (vram + 4 * MiB) / 4096;
	uint32_t h = dumb_create(fd, 1024, rows, 32, &size);
	struct drm_vgem_p2p_obj_info info = vgem_p2p_info(fd, h);
	void *p;

	igt_assert(size > vram);
	igt_assert_eq_u32(info.placement, VGEM_P2P_PLACEMENT_SYSTEM);
	igt_assert_eq_u64(info.vram_offset, ~0ull);
	p = vgem_p2p_mmap(fd, h, size, PROT_READ | PROT_WRITE);
	igt_assert_eq(((uint32_t *)p)[size / 4 - 1], 0);	/* zeroed */
	fill_sparse(p, size, 2);
	igt_assert(check_sparse(p, size, 2));
	munmap(p, size);
	gem_close(fd, h);
}

/* A field of /proc/meminfo, in bytes */
static uint64_t meminfo_bytes(const char *key)
{
	char line[256];
	uint64_t kib = 0;
	bool found = false;
	FILE *f = fopen("/proc/meminfo", "r");

	igt_assert(f);
	while (fgets(line, sizeof(line), f)) {
		size_t n = strlen(key);

		if (!strncmp(line, key, n) && line[n] == ':')
			found = sscanf(line + n + 1, "%" SCNu64, &kib) == 1;
	}
	fclose(f);
	igt_assert_f(found, "no %s in /proc/meminfo\n", key);
	return kib << 10;
}

/* A "KEY: N KiB" line of the file's fdinfo, in bytes; ~0 without one */
static uint64_t fdinfo_bytes(int fd, const char *key)
{
	uint64_t kib = vgem_p2p_fdinfo_kib(fd, key);

	return kib == ~0ull ? kib : kib << 10;
}

/*
 * An object larger than RAM, alone on @fd, in system memory. It is a TTM
 * BO whose ttm_tt is populated whole on first use, and no object gets
 * more pages than half of RAM: it is created, holds none, and cannot get
 * them. The first CPU touch gets SIGBUS, as a shmem object's does when it
 * has no page; MOVE_SYSTEM, which populates it, fails with ENOMEM; a move
 * to VRAM, which it does not fit, with ENOSPC. Nothing is left held.
 */
static void check_unpopulated_object(int fd, uint32_t h, uint64_t size)
{
	struct drm_vgem_p2p_obj_info info = vgem_p2p_info(fd, h);
	uint64_t mid = size / 2 & ~4095ull, avail = meminfo_bytes("MemAvailable");
	uint64_t offset = 0;
	uint8_t *p;

	igt_assert_eq_u32(info.placement, VGEM_P2P_PLACEMENT_SYSTEM);
	igt_assert_eq_u64(info.size, size);
	igt_assert_eq_u64(fdinfo_bytes(fd, "drm-memory-system"), size);
	igt_assert_eq_u64(fdinfo_bytes(fd, "drm-resident-system"), 0);

	p = vgem_p2p_mmap(fd, h, size, PROT_READ | PROT_WRITE);
	igt_assert(touch_sigbus((uint32_t *)(p + mid), false));
	igt_assert(touch_sigbus((uint32_t *)(p + mid), true));
	igt_assert_eq_u64(fdinfo_bytes(fd, "drm-resident-system"), 0);

	igt_assert_eq(__vgem_p2p_move(fd, h, VGEM_P2P_MOVE_SYSTEM, &offset),
		      -ENOMEM);
	igt_assert_eq_u64(fdinfo_bytes(fd, "drm-resident-system"), 0);
	offset = 0;
	igt_assert_eq(__vgem_p2p_move(fd, h, VGEM_P2P_MOVE_VRAM, &offset),
		      -ENOSPC);
	igt_assert_eq_u32(vgem_p2p_info(fd, h).placement,
			  VGEM_P2P_PLACEMENT_SYSTEM);
	igt_assert_f(meminfo_bytes("MemAvailable") + 64 * MiB > avail,
		     "MemAvailable went from %" PRIu64 " to %" PRIu64 " KiB\n",
		     avail >> 10, meminfo_bytes("MemAvailable") >> 10);

	munmap(p, size);
	gem_close(fd, h);
	igt_assert_eq_u64(fdinfo_bytes(fd, "drm-memory-system"), 0);
}

static void test_dumb_larger_than_ram(void)
{
	uint64_t ram = meminfo_bytes("MemTotal"), size;
	/* 4 bytes a pixel, 4096 pixels a row: 64 MiB more than RAM */
	uint32_t rows = (ram + 64 * MiB) / (4 * 4096) + 1;
	int fd = vgem_p2p_open();
	uint32_t h;

	/* the core's limit: a dumb buffer is below 4 GiB */
	igt_require_f((uint64_t)rows * 4 * 4096 < (4ull << 30),
		      "%" PRIu64 " KiB of RAM: no dumb buffer is larger\n",
		      ram >> 10);
	h = dumb_create(fd, 4096, rows, 32, &size);
	igt_assert(size > ram);
	check_unpopulated_object(fd, h, size);

	/* and a SYSTEM object twice the size of RAM */
	h = vgem_p2p_create(fd, 2 * ram, VGEM_P2P_CREATE_SYSTEM);
	check_unpopulated_object(fd, h, 2 * ram);
	close(fd);
}

static void test_dumb_create_invalid(int fd)
{
	struct drm_mode_create_dumb c = { .width = 0, .height = 1,
					  .bpp = 32 };

	do_ioctl_err(fd, DRM_IOCTL_MODE_CREATE_DUMB, &c, EINVAL);
	c = (struct drm_mode_create_dumb){ .width = 0xffffffff,
		.height = 0xffffffff, .bpp = 32 };
	igt_assert(igt_ioctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &c) == -1);
}

static void test_mmap(int fd)
{
	uint32_t h = vgem_p2p_create(fd, 1 << 20, 0);
	void *p = vgem_p2p_mmap(fd, h, 1 << 20, PROT_READ | PROT_WRITE);

	fill_pattern(p, 1 << 20, 2);
	munmap(p, 1 << 20);
	p = vgem_p2p_mmap(fd, h, 1 << 20, PROT_READ);
	igt_assert(check_pattern(p, 1 << 20, 2));
	munmap(p, 1 << 20);
	gem_close(fd, h);
}

static void test_mmap_private_rejected(int fd)
{
	struct drm_mode_map_dumb m;
	uint32_t h = vgem_p2p_create(fd, 4096, 0);

	m = (struct drm_mode_map_dumb){ .handle = h };
	do_ioctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &m);
	igt_assert(mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			MAP_PRIVATE, fd, m.offset) == MAP_FAILED);
	gem_close(fd, h);
}

static void test_prime_roundtrip(int fd)
{
	uint32_t h = vgem_p2p_create(fd, 4096, 0), h2;
	int dmabuf;

	igt_assert_eq(drmPrimeHandleToFD(fd, h, DRM_CLOEXEC, &dmabuf), 0);
	igt_assert_eq(drmPrimeFDToHandle(fd, dmabuf, &h2), 0);
	igt_assert_eq_u32(h, h2);
	gem_close(fd, h);
	/* the dma-buf keeps the object: importing it again works */
	igt_assert_eq(drmPrimeFDToHandle(fd, dmabuf, &h2), 0);
	close(dmabuf);
	gem_close(fd, h2);
}

static void test_prime_other_fd(int fd)
{
	int fd2 = vgem_p2p_open();
	uint32_t h = vgem_p2p_create(fd, 8192, 0), h2;
	void *p = vgem_p2p_mmap(fd, h, 8192, PROT_READ | PROT_WRITE);
	int dmabuf;

	fill_pattern(p, 8192, 3);
	igt_assert_eq(drmPrimeHandleToFD(fd, h, DRM_CLOEXEC, &dmabuf), 0);
	igt_assert_eq(drmPrimeFDToHandle(fd2, dmabuf, &h2), 0);
	close(dmabuf);
	munmap(p, 8192);
	gem_close(fd, h);
	p = vgem_p2p_mmap(fd2, h2, 8192, PROT_READ);
	igt_assert(check_pattern(p, 8192, 3));
	munmap(p, 8192);
	close(fd2);
}

static void test_dmabuf_mmap(int fd)
{
	static const uint32_t flags[] = { 0, VGEM_P2P_CREATE_SYSTEM };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(flags); i++) {
		uint32_t h = vgem_p2p_create(fd, 8192, flags[i]);
		char *p = vgem_p2p_mmap(fd, h, 8192,
					PROT_READ | PROT_WRITE);
		struct dma_buf_sync sync = {
			.flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW,
		};
		int dmabuf;
		char *d;

		fill_pattern(p, 8192, 30 + i);
		igt_assert_eq(drmPrimeHandleToFD(fd, h,
						 DRM_CLOEXEC | DRM_RDWR,
						 &dmabuf), 0);
		d = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED,
			 dmabuf, 0);
		igt_assert(d != MAP_FAILED);
		do_ioctl(dmabuf, DMA_BUF_IOCTL_SYNC, &sync);
		igt_assert(check_pattern(d, 8192, 30 + i));
		fill_pattern(d, 4096, 40 + i);
		sync.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW;
		do_ioctl(dmabuf, DMA_BUF_IOCTL_SYNC, &sync);
		igt_assert(check_pattern(p, 4096, 40 + i));
		sync.flags = ~0ull;
		do_ioctl_err(dmabuf, DMA_BUF_IOCTL_SYNC, &sync, EINVAL);
		munmap(d, 8192);
		close(dmabuf);
		munmap(p, 8192);
		gem_close(fd, h);
	}
}

/* mmap() of @dmabuf with @prot and @flags: 0, or -errno */
static int dmabuf_mmap_err(int dmabuf, int prot, int flags)
{
	void *d = mmap(NULL, 8192, prot, flags, dmabuf, 0);

	if (d == MAP_FAILED)
		return -errno;
	munmap(d, 8192);
	return 0;
}

static void test_dmabuf_read_only(int fd)
{
	static const uint32_t flags[] = { 0, VGEM_P2P_CREATE_SYSTEM };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(flags); i++) {
		uint32_t h = vgem_p2p_create(fd, 8192, flags[i]);
		char *p = vgem_p2p_mmap(fd, h, 8192,
					PROT_READ | PROT_WRITE);
		int ro, again;
		char *d;

		fill_pattern(p, 8192, 60 + i);
		/* the first export makes the dma-buf: read-only */
		igt_assert_eq(drmPrimeHandleToFD(fd, h, DRM_CLOEXEC, &ro), 0);
		igt_assert_eq(dmabuf_mmap_err(ro, PROT_READ | PROT_WRITE,
					      MAP_SHARED), -EACCES);
		igt_assert_eq(dmabuf_mmap_err(ro, PROT_WRITE, MAP_SHARED),
			      -EACCES);
		igt_assert_eq(dmabuf_mmap_err(ro, PROT_READ | PROT_WRITE,
					      MAP_PRIVATE), -EINVAL);
		igt_assert_eq(fcntl(ro, F_GETFL) & O_ACCMODE, O_RDONLY);

		/* reading works; write access cannot be added later */
		d = mmap(NULL, 8192, PROT_READ, MAP_SHARED, ro, 0);
		igt_assert(d != MAP_FAILED);
		igt_assert(check_pattern(d, 8192, 60 + i));
		igt_assert_eq(mprotect(d, 8192, PROT_READ | PROT_WRITE), -1);
		igt_assert_eq(errno, EACCES);
		munmap(d, 8192);

		/* a later DRM_RDWR export gets the same, read-only, file */
		igt_assert_eq(drmPrimeHandleToFD(fd, h,
						 DRM_CLOEXEC | DRM_RDWR,
						 &again), 0);
		igt_assert_eq(fcntl(again, F_GETFL) & O_ACCMODE, O_RDONLY);
		igt_assert_eq(dmabuf_mmap_err(again, PROT_READ | PROT_WRITE,
					      MAP_SHARED), -EACCES);
		igt_assert(check_pattern(p, 8192, 60 + i));
		close(again);
		close(ro);
		munmap(p, 8192);
		gem_close(fd, h);
	}
}

static void test_dmabuf_read_only_import(int fd)
{
	int fd2 = vgem_p2p_open(), ro;
	uint32_t h = vgem_p2p_create(fd, 8192, 0), h2;
	char *p = vgem_p2p_mmap(fd, h, 8192, PROT_READ | PROT_WRITE);
	char *q;

	fill_pattern(p, 8192, 70);
	igt_assert_eq(drmPrimeHandleToFD(fd, h, DRM_CLOEXEC, &ro), 0);
	igt_assert_eq(fcntl(ro, F_GETFL) & O_ACCMODE, O_RDONLY);
	/* another file of the device, as another process would have */
	igt_assert_eq(drmPrimeFDToHandle(fd2, ro, &h2), 0);
	q = vgem_p2p_mmap(fd2, h2, 8192, PROT_READ | PROT_WRITE);
	igt_assert(check_pattern(q, 8192, 70));
	fill_pattern(q, 4096, 71);
	igt_assert(check_pattern(p, 4096, 71));
	munmap(q, 8192);
	gem_close(fd2, h2);
	close(fd2);
	close(ro);
	munmap(p, 8192);
	gem_close(fd, h);
}

static void test_dmabuf_mmap_move(int fd)
{
	uint32_t h = vgem_p2p_create(fd, 8192, 0);
	char *p = vgem_p2p_mmap(fd, h, 8192, PROT_READ | PROT_WRITE);
	uint64_t old;
	int dmabuf;
	char *d;

	fill_pattern(p, 8192, 50);
	igt_assert_eq(drmPrimeHandleToFD(fd, h, DRM_CLOEXEC | DRM_RDWR,
					 &dmabuf), 0);
	d = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED,
		 dmabuf, 0);
	igt_assert(d != MAP_FAILED);
	igt_assert(check_pattern(d, 8192, 50));	/* faulted in */

	old = vgem_p2p_info(fd, h).vram_offset;
	vgem_p2p_move(fd, h, VGEM_P2P_MOVE_VRAM, 0);
	igt_assert(vgem_p2p_vram_poisoned(fd, old, 8192));
	igt_assert_f(check_pattern(d, 8192, 50),
		     "the dma-buf mmap still maps the old VRAM\n");
	/* new bytes through the GEM mmap, read through the older one */
	fill_pattern(p, 8192, 52);
	igt_assert(check_pattern(d, 8192, 52));
	old = vgem_p2p_info(fd, h).vram_offset;
	vgem_p2p_move(fd, h, VGEM_P2P_MOVE_SYSTEM, 0);
	igt_assert(vgem_p2p_vram_poisoned(fd, old, 8192));
	igt_assert_eq(vgem_p2p_info(fd, h).placement,
		      VGEM_P2P_PLACEMENT_SYSTEM);
	/* (a CPU fault may bring it back to VRAM: another move) */
	igt_assert(check_pattern(d, 8192, 52));
	fill_pattern(d, 8192, 51);
	igt_assert(check_pattern(p, 8192, 51));

	munmap(d, 8192);
	close(dmabuf);
	munmap(p, 8192);
	gem_close(fd, h);
}

static void test_fence_basic(int fd)
{
	uint32_t h = vgem_p2p_create(fd, 4096, 0), f1, f2;

	igt_assert_eq(vgem_p2p_fence_attach(fd, h, 0, &f1), 0);
	igt_assert_eq(vgem_p2p_fence_attach(fd, h, 0, &f2), 0);	/* 2 readers */
	igt_assert_eq(vgem_p2p_fence_attach(fd, h, VGEM_FENCE_WRITE, &f2), -EBUSY);
	igt_assert_eq(vgem_p2p_fence_signal(fd, f1), 0);
	igt_assert_eq(vgem_p2p_fence_signal(fd, f1), -ENOENT);
	gem_close(fd, h);
}

static void test_fence_errnos(int fd)
{
	struct drm_vgem_fence_attach a = {};
	struct drm_vgem_fence_signal s = {};
	uint32_t h = vgem_p2p_create(fd, 4096, 0);

	a.handle = 0xdead;
	do_ioctl_err(fd, DRM_IOCTL_VGEM_FENCE_ATTACH, &a, ENOENT);
	a = (struct drm_vgem_fence_attach){ .handle = h, .flags = 2 };
	do_ioctl_err(fd, DRM_IOCTL_VGEM_FENCE_ATTACH, &a, EINVAL);
	a = (struct drm_vgem_fence_attach){ .handle = h, .pad = 1 };
	do_ioctl_err(fd, DRM_IOCTL_VGEM_FENCE_ATTACH, &a, EINVAL);
	s.fence = 0xdead;
	do_ioctl_err(fd, DRM_IOCTL_VGEM_FENCE_SIGNAL, &s, ENOENT);
	s = (struct drm_vgem_fence_signal){ .flags = 1 };
	do_ioctl_err(fd, DRM_IOCTL_VGEM_FENCE_SIGNAL, &s, EINVAL);
	gem_close(fd, h);
}

static void test_create_errnos(int fd)
{
	uint32_t h;

	igt_assert_eq(__vgem_p2p_create(fd, 0, 0, &h), -EINVAL);
	igt_assert_eq(__vgem_p2p_create(fd, ~0ull, 0, &h), -EINVAL);
	igt_assert_eq(__vgem_p2p_create(fd, ~0ull - 4095, 0, &h), -EINVAL);
	igt_assert_eq(__vgem_p2p_create(fd, 4096, 1u << 4, &h), -EINVAL);
	igt_assert_eq(__vgem_p2p_create(fd, 4096, 1u << 31, &h), -EINVAL);
	igt_assert_eq(__vgem_p2p_create(fd, 1ull << 40, 0, &h), -ENOSPC);
	/*
	 * in system memory, populated on use: not refused for its size,
	 * which costs only its page array (8 bytes a page) until then
	 */
	igt_assert_eq(__vgem_p2p_create(fd, 1ull << 36,
					VGEM_P2P_CREATE_SYSTEM, &h), 0);
	igt_assert_eq_u32(vgem_p2p_info(fd, h).placement,
			  VGEM_P2P_PLACEMENT_SYSTEM);
	gem_close(fd, h);
	/* but the page array, and a file's size, have their limits */
	igt_assert_eq(__vgem_p2p_create(fd, 1ull << 62,
					VGEM_P2P_CREATE_SYSTEM, &h),
		      -ENOMEM);
	igt_assert_eq(__vgem_p2p_create(fd, 1ull << 63,
					VGEM_P2P_CREATE_SYSTEM, &h),
		      -EINVAL);
}

static void test_create_rounds_size(int fd)
{
	struct drm_vgem_p2p_create c = { .size = 1 };

	do_ioctl(fd, DRM_IOCTL_VGEM_P2P_CREATE, &c);
	igt_assert_eq_u64(c.size, 4096);
	igt_assert_eq_u64(vgem_p2p_info(fd, c.handle).size, 4096);
	gem_close(fd, c.handle);
}

static void test_move_errnos(int fd)
{
	struct drm_vgem_p2p_move m = { .handle = 0xdead };
	uint32_t h = vgem_p2p_create(fd, 4096, 0);

	do_ioctl_err(fd, DRM_IOCTL_VGEM_P2P_MOVE, &m, ENOENT);
	m = (struct drm_vgem_p2p_move){ .handle = h, .target = 3 };
	do_ioctl_err(fd, DRM_IOCTL_VGEM_P2P_MOVE, &m, EINVAL);
	m = (struct drm_vgem_p2p_move){ .handle = h, .flags = 1 };
	do_ioctl_err(fd, DRM_IOCTL_VGEM_P2P_MOVE, &m, EINVAL);
	m = (struct drm_vgem_p2p_move){ .handle = h, .pad = 1 };
	do_ioctl_err(fd, DRM_IOCTL_VGEM_P2P_MOVE, &m, EINVAL);
	m = (struct drm_vgem_p2p_move){ .handle = h, .offset = 4096 };
	do_ioctl_err(fd, DRM_IOCTL_VGEM_P2P_MOVE, &m, EINVAL);
	m = (struct drm_vgem_p2p_move){ .handle = h,
		.target = VGEM_P2P_MOVE_VRAM_AT, .offset = 100 };
	do_ioctl_err(fd, DRM_IOCTL_VGEM_P2P_MOVE, &m, EINVAL);
	m = (struct drm_vgem_p2p_move){ .handle = h,
		.target = VGEM_P2P_MOVE_VRAM_AT, .offset = 1ull << 40 };
	do_ioctl_err(fd, DRM_IOCTL_VGEM_P2P_MOVE, &m, EINVAL);
	gem_close(fd, h);
}

static void test_info_errnos(int fd)
{
	struct drm_vgem_p2p_obj_info i = { .handle = 0xdead };
	uint32_t h = vgem_p2p_create(fd, 4096, 0);

	do_ioctl_err(fd, DRM_IOCTL_VGEM_P2P_OBJ_INFO, &i, ENOENT);
	i = (struct drm_vgem_p2p_obj_info){ .handle = h, .pad = 1 };
	do_ioctl_err(fd, DRM_IOCTL_VGEM_P2P_OBJ_INFO, &i, EINVAL);
	gem_close(fd, h);
}

static void test_stats_errnos(int fd)
{
	struct drm_vgem_p2p_stats s = { .flags = 1 };

	do_ioctl_err(fd, DRM_IOCTL_VGEM_P2P_STATS, &s, EINVAL);
	s = (struct drm_vgem_p2p_stats){ .pad = 1 };
	do_ioctl_err(fd, DRM_IOCTL_VGEM_P2P_STATS, &s, EINVAL);
	s = vgem_p2p_stats(fd);
	igt_assert(s.vram_size >= 1 << 20);
}

static void test_migrate_errnos(int fd)
{
	struct drm_vgem_p2p_migrate m = {};
	void *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	igt_assert(p != MAP_FAILED);
	m = (struct drm_vgem_p2p_migrate){ .addr = (uintptr_t)p,
		.size = 8192, .flags = 1 };
	do_ioctl_err(fd, DRM_IOCTL_VGEM_P2P_MIGRATE, &m, EINVAL);
	m.flags = 0;
	m.direction = 2;
	do_ioctl_err(fd, DRM_IOCTL_VGEM_P2P_MIGRATE, &m, EINVAL);
	m.direction = 0;
	m.size = 0;
	do_ioctl_err(fd, DRM_IOCTL_VGEM_P2P_MIGRATE, &m, EINVAL);
	m.size = 100;
	do_ioctl_err(fd, DRM_IOCTL_VGEM_P2P_MIGRATE, &m, EINVAL);
	m.size = 8192;
	m.addr += 1;
	do_ioctl_err(fd, DRM_IOCTL_VGEM_P2P_MIGRATE, &m, EINVAL);
	m.addr = ~0ull & ~4095ull;
	do_ioctl_err(fd, DRM_IOCTL_VGEM_P2P_MIGRATE, &m, EINVAL);
	munmap(p, 8192);
}

static void test_render_node_mmap(void)
{
	int rfd = vgem_p2p_open_render();
	struct drm_vgem_p2p_mmap_offset o = { 0 };
	struct drm_mode_map_dumb m = { 0 };
	uint32_t h;
	char *p;

	/* vgem_p2p is a DRIVER_RENDER driver: it always has one */
	igt_assert_f(rfd >= 0, "no vgem_p2p render node\n");
	h = vgem_p2p_create(rfd, 2 * 4096, 0);
	m.handle = h;
	do_ioctl_err(rfd, DRM_IOCTL_MODE_MAP_DUMB, &m, EACCES);
	o.handle = h;
	do_ioctl(rfd, DRM_IOCTL_VGEM_P2P_MMAP_OFFSET, &o);
	igt_assert_neq_u64(o.offset, 0);
	p = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
		 rfd, o.offset);
	igt_assert(p != MAP_FAILED);
	fill_pattern(p, 2 * 4096, 21);
	igt_assert(check_pattern(p, 2 * 4096, 21));
	munmap(p, 2 * 4096);

	o.flags = 1;
	do_ioctl_err(rfd, DRM_IOCTL_VGEM_P2P_MMAP_OFFSET, &o, EINVAL);
	o.flags = 0;
	o.handle = h + 1000;
	do_ioctl_err(rfd, DRM_IOCTL_VGEM_P2P_MMAP_OFFSET, &o, ENOENT);
	gem_close(rfd, h);
	close(rfd);
}

static void test_peer_errnos(int fd)
{
	struct drm_vgem_p2p_peer q = { .flags = 1 };

	igt_assert_eq(__vgem_p2p_peer(fd, &q), -EINVAL);
	q = (struct drm_vgem_p2p_peer){ .bus = 256 };
	igt_assert_eq(__vgem_p2p_peer(fd, &q), -EINVAL);
	q = (struct drm_vgem_p2p_peer){ .devfn = 256 };
	igt_assert_eq(__vgem_p2p_peer(fd, &q), -EINVAL);
	q = (struct drm_vgem_p2p_peer){ .domain = 0xffff, .bus = 0xff,
					.devfn = 0xff };
	igt_assert_eq(__vgem_p2p_peer(fd, &q), -ENODEV);
}

static void test_bad_ioctl(int fd)
{
	uint32_t dummy[8] = {};

	/* past the driver's table */
	do_ioctl_err(fd, DRM_IOWR(DRM_COMMAND_BASE + 0x20, uint32_t[8]),
		     dummy, EINVAL);
}

igt_main
{
	int fd = -1;

	igt_fixture
		fd = vgem_p2p_open();

	igt_describe("A 64x64 32 bpp dumb buffer, created over VRAM a freed object left poisoned (0x6b, checked through the BAR), reads zero, every word; it maps through DRM_IOCTL_MODE_MAP_DUMB and holds what the CPU writes.");
	igt_subtest("dumb-create")
		test_dumb_create(fd);

	igt_describe("A dumb buffer 4 MiB larger than VRAM is created in system memory (no VRAM offset), zeroed, and reads back what the CPU wrote.");
	igt_subtest("dumb-larger-than-vram")
		test_dumb_larger_than_vram(fd);

	igt_describe("A dumb buffer larger than the guest's RAM (MemTotal), and a SYSTEM object twice that, are created in system memory, as vgem's are, but hold no pages and cannot get them (a TTM object is populated whole, and none gets more than half of RAM): a CPU touch gets SIGBUS, MOVE_SYSTEM fails with ENOMEM, a move to VRAM with ENOSPC, and nothing is left resident.");
	igt_subtest("dumb-larger-than-ram")
		test_dumb_larger_than_ram();

	igt_describe("CREATE_DUMB refuses a zero width with EINVAL, and a size that overflows.");
	igt_subtest("dumb-create-invalid")
		test_dumb_create_invalid(fd);

	igt_describe("What the CPU writes through one mmap of an object reads back through a second, read-only one.");
	igt_subtest("mmap")
		test_mmap(fd);

	igt_describe("A MAP_PRIVATE mapping of an object is refused.");
	igt_subtest("mmap-private-rejected")
		test_mmap_private_rejected(fd);

	igt_describe("Exporting an object and importing its dma-buf on the same file gives back the same handle, and the dma-buf keeps the object alive after its handle is closed.");
	igt_subtest("prime-roundtrip")
		test_prime_roundtrip(fd);

	igt_describe("An object imported through its dma-buf on another file shows the bytes written through the exporting file, after the exporter's handle and mapping are gone.");
	igt_subtest("prime-other-fd")
		test_prime_other_fd(fd);

	igt_describe("mmap() of an exported dma-buf, as on vgem, for a VRAM and a system object: it shows and takes what the object's own mmap does, and DMA_BUF_IOCTL_SYNC brackets CPU access.");
	igt_subtest("dmabuf-mmap")
		test_dmabuf_mmap(fd);

	igt_describe("A move revokes a dma-buf mmap as any other CPU mapping: after moves within VRAM and to system memory, each of whose old VRAM ranges reads poison (0x6b) through the BAR, the dma-buf mapping reads what the GEM mapping wrote after the move, and reads and writes the object where it went.");
	igt_subtest("dmabuf-mmap-move")
		test_dmabuf_mmap_move(fd);

	igt_describe("A dma-buf exported without DRM_RDWR is a read-only file, for a VRAM and a system object: mmap() with PROT_WRITE and MAP_SHARED gets EACCES, MAP_PRIVATE EINVAL, mprotect() cannot add PROT_WRITE to a read mapping (EACCES), and a later export with DRM_RDWR returns the same read-only file; reading works and the object is unchanged.");
	igt_subtest("dmabuf-read-only")
		test_dmabuf_read_only(fd);

	igt_describe("What a read-only dma-buf does not prevent, as in every DRM driver: another file of the device imports it as a GEM handle and maps the object for writing, and the write reaches the object (docs/uapi.md, Read-only dma-bufs: this holds the documented behaviour, it is no guarantee).");
	igt_subtest("dmabuf-read-only-import")
		test_dmabuf_read_only_import(fd);

	igt_describe("Two read fences share an object, a write fence then gets EBUSY; a fence signals once, then ENOENT.");
	igt_subtest("fence-basic")
		test_fence_basic(fd);

	igt_describe("FENCE_ATTACH and FENCE_SIGNAL reject unknown handles and fences (ENOENT) and unknown flags and padding (EINVAL).");
	igt_subtest("fence-errnos")
		test_fence_errnos(fd);

	igt_describe("CREATE rejects a zero or overflowing size and unknown flags with EINVAL and a VRAM object larger than VRAM with ENOSPC; a SYSTEM object of 64 GiB is created (it holds no page until used), one whose page array cannot be allocated gets ENOMEM, one past a file's largest size EINVAL.");
	igt_subtest("create-errnos")
		test_create_errnos(fd);

	igt_describe("CREATE rounds a size up to a page and reports the rounded size, as OBJ_INFO does.");
	igt_subtest("create-rounds-size")
		test_create_rounds_size(fd);

	igt_describe("MOVE rejects an unknown handle (ENOENT), and an unknown target, flags, padding, an offset without MOVE_VRAM_AT, and an unaligned or out-of-range offset (EINVAL).");
	igt_subtest("move-errnos")
		test_move_errnos(fd);

	igt_describe("OBJ_INFO rejects an unknown handle (ENOENT) and non-zero padding (EINVAL).");
	igt_subtest("info-errnos")
		test_info_errnos(fd);

	igt_describe("STATS rejects non-zero flags and padding with EINVAL, and reports a VRAM size of at least 1 MiB.");
	igt_subtest("stats-errnos")
		test_stats_errnos(fd);

	igt_describe("MIGRATE rejects unknown flags and direction, a zero or unaligned size, an unaligned address and a range past the address space with EINVAL.");
	igt_subtest("migrate-errnos")
		test_migrate_errnos(fd);

	igt_describe("On a render node, MODE_MAP_DUMB is refused and DRM_IOCTL_VGEM_P2P_MMAP_OFFSET gives the offset to mmap an object; bad flags and handles get EINVAL and ENOENT.");
	igt_subtest("render-node-mmap")
		test_render_node_mmap();

	igt_describe("DRM_IOCTL_VGEM_P2P_PEER rejects unknown flags and out-of-range bus or devfn with EINVAL, and a device that does not exist with ENODEV.");
	igt_subtest("peer-errnos")
		test_peer_errnos(fd);

	igt_describe("An ioctl number past the driver's table gets EINVAL.");
	igt_subtest("bad-ioctl")
		test_bad_ioctl(fd);

	igt_fixture
		close(fd);
}
