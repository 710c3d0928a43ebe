// SPDX-License-Identifier: MIT
/*
 * A real in-tree TTM driver as the exporter: bochs (drm_gem_vram_helper)
 * on QEMU's bochs-display, with edu_nic importing mmaps of its dumb
 * buffers through hmm_range_fault(). Only the uAPI bochs already has is
 * used: dumb buffers, MODE_MAP_DUMB, mmap, and a modeset to make TTM
 * evict.
 */
#include <sys/syscall.h>

#include "ttm_p2p_common.h"

IGT_TEST_DESCRIPTION("edu_nic importing bochs (TTM) dumb buffers: p2p, IOVAs, refusal, eviction, unbind.");

#define RW (EDU_NIC_ACCESS_READ | EDU_NIC_ACCESS_WRITE)

/*
 * A dumb buffer of bochs lives in system memory until it is scanned out:
 * drm_gem_vram_helper creates BOs there and pins them in VRAM for the
 * display. An importer gets its pages, wherever edu sits.
 */
static void system_read_write(void)
{
	int minor, fd = ttm_p2p_open(&minor), nic = edu_open();
	struct ttm_p2p_bo bo = ttm_p2p_dumb(fd, 512, 512);	/* 1 MiB */
	uint32_t seed = getpid() << 8, key;
	struct edu_nic_mr_stats s;

	ttm_p2p_fill(bo.map, bo.size, seed);
	igt_assert(!ttm_p2p_in_vram(minor, seed, 0));

	key = edu_reg(nic, bo.map, bo.size, RW, EDU_NIC_REG_MR_PREFETCH);
	s = edu_mr_stats(nic, key);
	/* exporter-provided addresses (the core's P2P entries): TTM's */
	igt_assert_eq_u64(s.stats.cur_pages_p2p, bo.size / EDU_PAGE);
	ttm_p2p_check_read(nic, key, bo.map, 0);
	ttm_p2p_check_read(nic, key, bo.map, 77 * EDU_PAGE);
	ttm_p2p_check_read(nic, key, bo.map, bo.size - EDU_PAGE);
	ttm_p2p_check_write(nic, key, bo.map, seed + 1, 3);
	igt_assert(!ttm_p2p_in_vram(minor, seed + 1, 3));

	igt_assert_eq(edu_dereg_err(nic, key), 0);
	ttm_p2p_dumb_free(fd, &bo);
	close(nic);
	close(fd);
}

/*
 * Several registrations over one buffer in system memory, as an RDMA
 * user registering a buffer twice, or two processes sharing it: TTM maps
 * the same pages for each, and each syncs the page it DMAs, in both DMA
 * modes. One registration starts mid-way, so the pages it is given are
 * not aligned with the others'. With DMA-API debugging, a sync must find
 * the one mapping it belongs to among the others of the same pages.
 */
static void system_shared(void)
{
	int minor, fd = ttm_p2p_open(&minor), nic = edu_open();
	struct ttm_p2p_bo bo = ttm_p2p_dumb(fd, 1024, 1024);	/* 4 MiB */
	uint64_t mid = 5 * EDU_PAGE;
	uint32_t seed = getpid() << 8, key[3];
	unsigned long pages[] = { 0, 1, 15, 16, 17, 100, 1023 };
	char buf[EDU_PAGE];
	unsigned int i, k;

	ttm_p2p_fill(bo.map, bo.size, seed);
	key[0] = edu_reg(nic, bo.map, bo.size, RW, EDU_NIC_REG_MR_PREFETCH);
	key[1] = edu_reg(nic, bo.map, bo.size, EDU_NIC_ACCESS_READ,
			 EDU_NIC_REG_MR_PREFETCH);
	key[2] = edu_reg(nic, bo.map + mid, bo.size - mid, RW,
			 EDU_NIC_REG_MR_PREFETCH);
	for (k = 0; k < 3; k++)
		igt_assert(edu_mr_stats(nic, key[k]).state &
			   EDU_NIC_MR_MIRRORED);

	for (i = 0; i < ARRAY_SIZE(pages); i++) {
		uint64_t off = pages[i] * EDU_PAGE;

		ttm_p2p_check_read(nic, key[0], bo.map, off);
		ttm_p2p_check_read(nic, key[1], bo.map, off);
		if (off >= mid)
			ttm_p2p_check_read(nic, key[2], bo.map + mid,
					   off - mid);
		edu_dma(nic, key[1], EDU_NIC_DMA_FROM_MR, EDU_NIC_MODE_BULK,
			off, EDU_PAGE, buf);
		igt_assert(!memcmp(buf, bo.map + off, EDU_PAGE));
	}
	/* writes through both writable registrations, one page each */
	ttm_p2p_check_write(nic, key[0], bo.map, seed + 1, 16);
	ttm_p2p_check_write(nic, key[2], bo.map + mid, seed + 2, 100 - 5);
	ttm_p2p_check_read(nic, key[1], bo.map, 16 * EDU_PAGE);
	ttm_p2p_check_read(nic, key[1], bo.map, 100 * EDU_PAGE);

	/* nothing moved: each registration was mirrored once */
	for (k = 0; k < 3; k++) {
		igt_assert_eq_u64(edu_mr_stats(nic, key[k]).stats.faults, 1);
		igt_assert_eq(edu_dereg_err(nic, key[k]), 0);
	}
	ttm_p2p_dumb_free(fd, &bo);
	close(nic);
	close(fd);
}

#define TTM_P2P_MAX_SCANOUTS	32	/* 3 MiB each: 96 MiB > 64 MiB VRAM */

/*
 * Real TTM eviction revokes importers. Our buffer is scanned out, so in
 * VRAM, and registered with edu_nic; then other buffers are scanned out
 * one after the other. Each is pinned in VRAM and unpins the one before,
 * which stays there, until VRAM is full and TTM evicts the least recently
 * placed unpinned buffer: ours. The importer is invalidated before the
 * move, its next DMA maps the buffer where it went (system pages) and
 * reads what the CPU wrote, never what the new owners of its VRAM hold.
 */
static void evict_revokes(void)
{
	int minor, fd = ttm_p2p_open(&minor), nic = edu_open();
	struct ttm_p2p_bo victim, other[TTM_P2P_MAX_SCANOUTS];
	uint32_t seed = getpid() << 8, key;
	struct edu_nic_mr_stats before, after;
	struct ttm_p2p_scanout so, next;
	int i, n;

	igt_require(ttm_p2p_topology_p2p());
	victim = ttm_p2p_dumb(fd, 1024, 768);
	ttm_p2p_fill(victim.map, victim.size, seed);
	so = ttm_p2p_scan_out(fd, &victim, 1024, 768);
	igt_assert(ttm_p2p_in_vram(minor, seed, 5));
	key = edu_reg(nic, victim.map, victim.size, RW,
		      EDU_NIC_REG_MR_PREFETCH);
	ttm_p2p_check_read(nic, key, victim.map, 5 * EDU_PAGE);
	before = edu_mr_stats(nic, key);
	igt_assert(before.state & EDU_NIC_MR_MIRRORED);

	for (n = 0; n < TTM_P2P_MAX_SCANOUTS; n++) {
		other[n] = ttm_p2p_dumb(fd, 1024, 768);
		ttm_p2p_fill(other[n].map, other[n].size, seed + 1 + n);
		next = ttm_p2p_scan_out(fd, &other[n], 1024, 768);
		igt_assert_eq(drmModeRmFB(fd, so.fb), 0);
		so = next;
		after = edu_mr_stats(nic, key);
		if (after.stats.invalidations > before.stats.invalidations)
			break;
	}
	igt_info("evicted after %d scanouts\n", n + 1);
	igt_assert_f(n < TTM_P2P_MAX_SCANOUTS,
		     "%d scanouts of 3 MiB never evicted our buffer\n", n);
	igt_assert_eq(after.state & EDU_NIC_MR_MIRRORED, 0);
	/* the newest scanout is in VRAM, in room the evictions made */
	igt_assert(ttm_p2p_in_vram(minor, seed + 1 + n, 0));

	/* re-faulted where it went, with its own data */
	ttm_p2p_check_read(nic, key, victim.map, 5 * EDU_PAGE);
	ttm_p2p_check_read(nic, key, victim.map, 0);
	ttm_p2p_check_read(nic, key, victim.map, victim.size - EDU_PAGE);
	after = edu_mr_stats(nic, key);
	igt_assert(after.stats.remaps > before.stats.remaps);
	/* and a device write lands in system memory, not in VRAM */
	ttm_p2p_check_write(nic, key, victim.map, seed + 64, 9);
	igt_assert_f(!ttm_p2p_in_vram(minor, seed + 64, 9),
		     "the registered buffer was not the one evicted\n");

	ttm_p2p_scan_out_off(fd, &so);
	igt_assert_eq(edu_dereg_err(nic, key), 0);
	for (i = 0; i <= n; i++)
		ttm_p2p_dumb_free(fd, &other[i]);
	ttm_p2p_dumb_free(fd, &victim);
	close(nic);
	close(fd);
}

/*
 * The same after an eviction, as a driver's own eviction populates the
 * system pages: two registrations of a scanout buffer, mapped in the
 * BAR, then evicted by a scanout as large as the VRAM, and each
 * re-mirrored by its next DMA in system memory.
 */
static void evicted_shared(void)
{
	int minor, fd = ttm_p2p_open(&minor), nic = edu_open();
	struct ttm_p2p_bo bo, evictor;
	struct ttm_p2p_scanout so;
	uint32_t seed = getpid() << 8, key[2];
	char buf[EDU_PAGE];
	unsigned int k;

	igt_require(ttm_p2p_topology_p2p());
	bo = ttm_p2p_dumb(fd, 1024, 1024);	/* 4 MiB */
	ttm_p2p_fill(bo.map, bo.size, seed);
	so = ttm_p2p_scan_out(fd, &bo, 1024, 768);
	for (k = 0; k < 2; k++)
		key[k] = edu_reg(nic, bo.map, bo.size, EDU_NIC_ACCESS_READ,
				 EDU_NIC_REG_MR_PREFETCH);
	ttm_p2p_scan_out_off(fd, &so);

	evictor = ttm_p2p_dumb(fd, 2048, 8192);	/* 64 MiB: all of it */
	so = ttm_p2p_scan_out(fd, &evictor, 2048, 8192);
	for (k = 0; k < 2; k++)
		igt_assert_eq(edu_mr_stats(nic, key[k]).state &
			      EDU_NIC_MR_MIRRORED, 0);
	igt_assert(!ttm_p2p_in_vram(minor, seed, 0));

	for (k = 0; k < 2; k++) {
		edu_dma(nic, key[k], EDU_NIC_DMA_FROM_MR, EDU_NIC_MODE_BULK,
			0, EDU_PAGE, buf);
		igt_assert(!memcmp(buf, bo.map, EDU_PAGE));
		ttm_p2p_check_read(nic, key[k], bo.map, 17 * EDU_PAGE);
		ttm_p2p_check_read(nic, key[k], bo.map, bo.size - EDU_PAGE);
		igt_assert_eq_u64(edu_mr_stats(nic, key[k]).stats.remaps, 1);
	}

	ttm_p2p_scan_out_off(fd, &so);
	for (k = 0; k < 2; k++)
		igt_assert_eq(edu_dereg_err(nic, key[k]), 0);
	ttm_p2p_dumb_free(fd, &evictor);
	ttm_p2p_dumb_free(fd, &bo);
	close(nic);
	close(fd);
}

/* The bochs device's PCI address, for its driver's bind/unbind files */
static void ttm_p2p_bdf(int minor, char *bdf, size_t len)
{
	char path[64], link[256];
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/class/drm/card%d/device", minor);
	n = readlink(path, link, sizeof(link) - 1);
	igt_assert(n > 0);
	link[n] = 0;
	snprintf(bdf, len, "%s", strrchr(link, '/') + 1);
}

/*
 * The exporter's device goes away under a live registration, mmap and
 * open file: the importer is invalidated by the unplug, and its next DMA
 * fails cleanly instead of reaching a BAR that no driver owns.
 */
static void unbind_live(void)
{
	int minor, fd = ttm_p2p_open(&minor), nic = edu_open();
	struct ttm_p2p_bo bo = ttm_p2p_dumb(fd, 256, 256);
	uint32_t seed = getpid(), key;
	char bdf[32], buf[EDU_PAGE];
	int ret;

	/*
	 * Never scanned out: the buffer is in system memory on every
	 * topology, split included, and TTM maps its pages for edu there.
	 */
	ttm_p2p_fill(bo.map, bo.size, seed);
	igt_assert(!ttm_p2p_in_vram(minor, seed, 0));
	key = edu_reg(nic, bo.map, bo.size, RW, EDU_NIC_REG_MR_PREFETCH);
	igt_assert(edu_mr_stats(nic, key).state & EDU_NIC_MR_MIRRORED);
	ttm_p2p_check_read(nic, key, bo.map, 0);

	ttm_p2p_bdf(minor, bdf, sizeof(bdf));
	igt_assert(edu_write_str("/sys/bus/pci/drivers/bochs-drm/unbind", bdf));
	igt_assert_eq(edu_mr_stats(nic, key).state & EDU_NIC_MR_MIRRORED, 0);
	ret = edu_dma_err(nic, key, EDU_NIC_DMA_FROM_MR, EDU_NIC_MODE_DEVICE,
			  0, EDU_PAGE, buf);
	/* the vma outlives the device; TTM's p2p_map says it is gone */
	igt_assert_eq(ret, -ENODEV);

	igt_assert_eq(edu_dereg_err(nic, key), 0);
	munmap(bo.map, bo.size);
	close(fd);
	close(nic);
	igt_assert(edu_write_str("/sys/bus/pci/drivers/bochs-drm/bind", bdf));
	igt_assert(ttm_p2p_find_bochs() >= 0);
}

/* The two drivers of the pair, and where the suite runner loads them from */
enum { TTM_P2P_BOCHS, TTM_P2P_EDU, TTM_P2P_NR_MODS };

static const char *const ttm_p2p_mod_name[] = { "bochs", "edu_nic" };

static int ttm_p2p_mod_unload(int m)
{
	if (syscall(SYS_delete_module, ttm_p2p_mod_name[m], O_NONBLOCK))
		return -errno;
	return 0;
}

static int ttm_p2p_mod_load(int m)
{
	static const char *const env[] = { "VP2P_KOBJ", "VP2P_MODULES" };
	static const char *const rel[] = {
		"drivers/gpu/drm/tiny/bochs.ko",
		"vgem-p2p/importer/edu_nic.ko",
	};
	/* as qemu/guest/run-suite loads them */
	static const char *const params[] = { "", "dma_bits=64" };
	char path[512];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s", getenv(env[m]), rel[m]);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (syscall(SYS_finit_module, fd, params[m], 0))
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * A child scans a buffer out (so it is in VRAM), registers it with edu_nic,
 * reads it right once by DMA, says so, and DMAs from it until it is
 * killed. Before the kill the buffer is in VRAM and edu_nic holds its
 * registration, mirrored peer-to-peer; after it, neither. Then both
 * drivers unload and load again, in every order. Nothing may stay
 * mapped, leak or splat.
 */
static void unload_every_order(void)
{
	const uint64_t pages = 1024 * 768 * 4 / EDU_PAGE;
	int order;

	igt_require_f(getenv("VP2P_KOBJ") && getenv("VP2P_MODULES"),
		      "VP2P_KOBJ and VP2P_MODULES name the modules' trees\n");
	igt_require(ttm_p2p_topology_p2p());
	for (order = 0; order < 4; order++) {
		int first_out = order & 1 ? TTM_P2P_EDU : TTM_P2P_BOCHS;
		int first_in = order & 2 ? TTM_P2P_EDU : TTM_P2P_BOCHS;
		/* a tag no other subtest leaves in VRAM */
		uint32_t seed = (getpid() << 8) + 0x80 + order;
		int minor, nic, ready[2];
		struct edu_nic_stats e0, e1;
		pid_t pid;

		nic = edu_open();
		e0 = edu_dev_stats(nic).stats;
		igt_assert_eq(pipe(ready), 0);
		pid = fork();
		igt_assert(pid >= 0);
		if (pid == 0) {
			int fd = ttm_p2p_open(&minor), cnic = edu_open();
			struct ttm_p2p_bo bo = ttm_p2p_dumb(fd, 1024, 768);
			char buf[EDU_PAGE];
			uint32_t key;

			ttm_p2p_fill(bo.map, bo.size, seed);
			ttm_p2p_scan_out(fd, &bo, 1024, 768);
			key = edu_reg(cnic, bo.map, bo.size, RW,
				      EDU_NIC_REG_MR_PREFETCH);
			edu_child_report(ready[1],
					 !edu_dma_err(cnic, key,
						      EDU_NIC_DMA_FROM_MR,
						      EDU_NIC_MODE_DEVICE, 0,
						      sizeof(buf), buf) &&
					 !memcmp(buf, bo.map, sizeof(buf)));
			for (;;)
				edu_dma_err(cnic, key, EDU_NIC_DMA_FROM_MR,
					    EDU_NIC_MODE_DEVICE, 0,
					    sizeof(buf), buf);
		}
		/* its device DMA read the right bytes */
		edu_child_ready(pid, ready);
		/* the child's buffer is in VRAM, registered and mirrored */
		minor = ttm_p2p_find_bochs();
		edu_child_assert(pid, minor >= 0);
		edu_child_assert(pid, ttm_p2p_in_vram(minor, seed, 0));
		e1 = edu_dev_stats(nic).stats;
		edu_child_assert(pid, e1.nr_mrs == e0.nr_mrs + 1);
		edu_child_assert(pid, e1.cur_pages_p2p ==
				      e0.cur_pages_p2p + pages);

		edu_child_kill(pid);
		e1 = edu_dev_stats(nic).stats;
		igt_assert_eq_u64(e1.nr_mrs, e0.nr_mrs);
		igt_assert_eq_u64(e1.cur_pages_p2p, e0.cur_pages_p2p);
		close(nic);

		igt_info("order %d: unload %s first, load %s first\n", order,
			 ttm_p2p_mod_name[first_out],
			 ttm_p2p_mod_name[first_in]);
		igt_assert_eq(ttm_p2p_mod_unload(first_out), 0);
		igt_assert_eq(ttm_p2p_mod_unload(!first_out), 0);
		igt_assert_eq(ttm_p2p_mod_load(first_in), 0);
		igt_assert_eq(ttm_p2p_mod_load(!first_in), 0);
	}
	/* and the pair still works */
	ttm_p2p_vram_read_write();
}

igt_main
{
	igt_describe("edu DMA reads and writes a bochs dumb buffer in system memory (where bochs creates them) through the pages TTM maps for it.");
	igt_subtest("system-read-write")
		system_read_write();

	igt_describe("Three registrations of one buffer in system memory, one starting mid-way: DMA in both modes through each, reads and writes.");
	igt_subtest("system-shared")
		system_shared();

	igt_describe("edu DMA reads and writes a scanout buffer, pinned in VRAM, peer-to-peer; refused where the PCI core says edu cannot reach it.");
	igt_subtest("vram-read-write")
		ttm_p2p_vram_read_write();

	igt_describe("TTM evicting a registered VRAM buffer to make room for scanouts invalidates the importer, which re-faults and reads the same data from system memory.");
	igt_subtest("evict-revokes")
		evict_revokes();

	igt_describe("Two registrations of a scanout buffer, evicted by a VRAM-sized scanout: each re-mirrors the system pages TTM's eviction populated, DMA in both modes.");
	igt_subtest("evicted-shared")
		evicted_shared();

	igt_describe("Unbinding bochs under a live registration of a buffer in system memory invalidates it; the next DMA fails cleanly; bochs binds again. Runs on every topology with bochs, split included.");
	igt_subtest("unbind-live")
		unbind_live();

	igt_describe("A process DMAing from a registered bochs scanout buffer is killed once the parent has seen the buffer in VRAM and its registration mirrored, and sees both gone after; bochs and edu_nic then unload and load again in every order, and the pair still works.");
	igt_subtest("unload-every-order")
		unload_every_order();
}
