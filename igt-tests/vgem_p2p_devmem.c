// SPDX-License-Identifier: MIT
/*
 * Device-private memory: migrate anonymous memory into vgem_p2p's
 * MEMORY_DEVICE_PRIVATE VRAM and back, explicitly and by CPU fault.
 */
#include "vgem_p2p_common.h"

IGT_TEST_DESCRIPTION("vgem_p2p device-private memory (HMM migration)");

static int migrate(int fd, void *addr, size_t size, uint32_t dir,
		   uint64_t *npages)
{
	struct drm_vgem_p2p_migrate m = {
		.addr = (uintptr_t)addr, .size = size, .direction = dir,
	};

	if (drmIoctl(fd, DRM_IOCTL_VGEM_P2P_MIGRATE, &m))
		return -errno;
	*npages = m.npages;
	return 0;
}

static void *anon(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	igt_assert(p != MAP_FAILED);
	return p;
}

igt_main
{
	int fd = -1;

	igt_fixture {
		fd = vgem_p2p_open();
		igt_require_f(vgem_p2p_stats(fd).devmem_size,
			      "no device-private memory\n");
	}

	igt_subtest("migrate-roundtrip") {
		size_t size = 64 * 4096;
		void *p = anon(size);
		struct drm_vgem_p2p_stats s0, s1;
		uint64_t n;

		fill_pattern(p, size, 300);
		s0 = vgem_p2p_stats(fd);
		igt_assert_eq(migrate(fd, p, size, VGEM_P2P_MIGRATE_TO_DEVICE,
				      &n), 0);
		igt_assert_eq_u64(n, 64);
		s1 = vgem_p2p_stats(fd);
		igt_assert_eq_u64(s1.devmem_to_device, s0.devmem_to_device + 64);
		igt_assert(s1.devmem_used >= s0.devmem_used + size);
		/* already there: nothing to do */
		igt_assert_eq(migrate(fd, p, size, VGEM_P2P_MIGRATE_TO_DEVICE,
				      &n), 0);
		igt_assert_eq_u64(n, 0);
		igt_assert_eq(migrate(fd, p, size, VGEM_P2P_MIGRATE_TO_RAM,
				      &n), 0);
		igt_assert_eq_u64(n, 64);
		s1 = vgem_p2p_stats(fd);
		igt_assert_eq_u64(s1.devmem_to_ram, s0.devmem_to_ram + 64);
		igt_assert(check_pattern(p, size, 300));
		munmap(p, size);
	}

	igt_subtest("cpu-fault-migrates-back") {
		size_t size = 16 * 4096;
		void *p = anon(size);
		struct drm_vgem_p2p_stats s0, s1;
		uint64_t n;

		fill_pattern(p, size, 301);
		igt_assert_eq(migrate(fd, p, size, VGEM_P2P_MIGRATE_TO_DEVICE,
				      &n), 0);
		igt_assert_eq_u64(n, 16);
		s0 = vgem_p2p_stats(fd);
		igt_assert(check_pattern(p, size, 301));
		s1 = vgem_p2p_stats(fd);
		igt_assert_eq_u64(s1.devmem_to_ram, s0.devmem_to_ram + 16);
		munmap(p, size);
	}

	igt_subtest("munmap-while-on-device") {
		size_t size = 32 * 4096;
		struct drm_vgem_p2p_stats s0 = vgem_p2p_stats(fd);
		void *p = anon(size);
		uint64_t n;

		fill_pattern(p, size, 302);
		igt_assert_eq(migrate(fd, p, size, VGEM_P2P_MIGRATE_TO_DEVICE,
				      &n), 0);
		munmap(p, size);
		/* the device pages were freed */
		igt_assert_eq_u64(vgem_p2p_stats(fd).devmem_used,
				  s0.devmem_used);
	}

	igt_subtest("exit-while-on-device") {
		size_t size = 8 * 4096;

		igt_fork(child, 1) {
			void *p = anon(size);
			uint64_t n;

			fill_pattern(p, size, 303);
			igt_assert_eq(migrate(fd, p, size,
					      VGEM_P2P_MIGRATE_TO_DEVICE, &n), 0);
			igt_assert_eq_u64(n, 8);
		}
		igt_waitchildren();
	}

	igt_subtest("unpopulated-pages") {
		size_t size = 8 * 4096;
		void *p = anon(size);
		uint64_t n;

		/* never touched: zero pages migrate as zero */
		igt_assert_eq(migrate(fd, p, size, VGEM_P2P_MIGRATE_TO_DEVICE,
				      &n), 0);
		igt_assert(check_pattern(p, 0, 0));
		igt_assert_eq_u32(((uint32_t *)p)[0], 0);
		igt_assert_eq_u32(((uint32_t *)p)[size / 4 - 1], 0);
		munmap(p, size);
	}

	igt_subtest("not-anonymous") {
		uint32_t h = vgem_p2p_create(fd, 8192, 0);
		void *p = vgem_p2p_mmap(fd, h, 8192, PROT_READ | PROT_WRITE);
		uint64_t n;

		igt_assert_eq(migrate(fd, p, 8192, VGEM_P2P_MIGRATE_TO_DEVICE,
				      &n), -EINVAL);
		munmap(p, 8192);
		gem_close(fd, h);
	}

	igt_fixture
		close(fd);
}
