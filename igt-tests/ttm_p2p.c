// SPDX-License-Identifier: MIT
/*
 * A real in-tree TTM driver as the exporter: bochs (drm_gem_vram_helper)
 * on QEMU's bochs-display, with edu_nic importing mmaps of its dumb
 * buffers through hmm_range_fault(). Only the uAPI bochs already has is
 * used: dumb buffers, MODE_MAP_DUMB, mmap, and a modeset to make TTM
 * evict.
 */
#include <inttypes.h>

#include "p2p_modules.h"
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
	uint32_t seed = getpid() << 8, key, k2;
	struct edu_nic_mr_stats s;

	ttm_p2p_fill(bo.map, bo.size, seed);
	igt_assert(!ttm_p2p_in_vram(minor, seed, 0));

	/* only TTM's p2p lookup lets an importer mirror the vma at all */
	igt_assert_eq(edu_reg_err(nic, bo.map, bo.size, RW,
				  EDU_NIC_REG_MR_NO_P2P |
				  EDU_NIC_REG_MR_PREFETCH, &k2), -EFAULT);
	key = edu_reg(nic, bo.map, bo.size, RW, EDU_NIC_REG_MR_PREFETCH);
	s = edu_mr_stats(nic, key);
	/*
	 * TTM says the BO is in its ttm pages: ordinary entries, which
	 * edu_nic maps itself; TTM keeps no lease.
	 */
	igt_assert_eq_u64(s.stats.cur_pages_system, bo.size / EDU_PAGE);
	igt_assert_eq_u64(s.stats.cur_pages_p2p, 0);
	igt_assert_eq_u64(s.stats.p2p_maps, 0);
	ttm_p2p_check_read(nic, key, bo.map, 0);
	ttm_p2p_check_read(nic, key, bo.map, 77 * EDU_PAGE);
	ttm_p2p_check_read(nic, key, bo.map, bo.size - EDU_PAGE);
	ttm_p2p_check_write(nic, key, bo.map, seed + 1, 3,
			    EDU_NIC_MODE_DEVICE);
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
	ttm_p2p_check_write(nic, key[0], bo.map, seed + 1, 16,
			    EDU_NIC_MODE_DEVICE);
	ttm_p2p_check_write(nic, key[2], bo.map + mid, seed + 2, 100 - 5,
			    EDU_NIC_MODE_DEVICE);
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
/*
 * A buffer left in VRAM after its scanout ended (the VRAM helper unpins
 * it and leaves it there until it needs the room). Where edu reaches the
 * BAR, a registration maps it there; where it does not, the helper's
 * fallback (ttm_device_funcs.p2p_unreachable) moves it to system memory
 * and edu maps its pages: the registration works either way, and edu
 * knows which it got. A pinned scanout buffer cannot move, and is
 * refused instead (vram-read-write).
 */
static void unpinned_vram(void)
{
	int minor, fd = ttm_p2p_open(&minor), nic = edu_open();
	struct ttm_p2p_bo bo = ttm_p2p_dumb(fd, 1024, 768);
	struct ttm_p2p_bo next = ttm_p2p_dumb(fd, 1024, 768);
	uint32_t seed = getpid() << 8, key;
	struct ttm_p2p_scanout so, so_next;
	struct edu_nic_mr_stats s;
	unsigned long npages = bo.size / EDU_PAGE;

	ttm_p2p_fill(bo.map, bo.size, seed);
	ttm_p2p_fill(next.map, next.size, seed + 1);
	so = ttm_p2p_scan_out(fd, &bo, 1024, 768);
	so_next = ttm_p2p_scan_out(fd, &next, 1024, 768);
	igt_assert_eq(drmModeRmFB(fd, so.fb), 0);
	igt_assert_f(ttm_p2p_in_vram(minor, seed, 7),
		     "an unpinned buffer left VRAM at once\n");

	key = edu_reg(nic, bo.map, bo.size, RW, EDU_NIC_REG_MR_PREFETCH);
	s = edu_mr_stats(nic, key);
	igt_info("p2p pages %llu (bus %llu, iova %llu), system pages %llu\n",
		 (unsigned long long)s.stats.cur_pages_p2p,
		 (unsigned long long)s.stats.pages_bus,
		 (unsigned long long)s.stats.pages_iova,
		 (unsigned long long)s.stats.cur_pages_system);
	ttm_p2p_check_read(nic, key, bo.map, 7 * EDU_PAGE);
	ttm_p2p_check_read(nic, key, bo.map, bo.size - EDU_PAGE);
	ttm_p2p_check_write(nic, key, bo.map, seed + 2, 3,
			    EDU_NIC_MODE_DEVICE);
	s = edu_mr_stats(nic, key);
	if (ttm_p2p_topology_p2p()) {
		igt_assert_eq_u64(s.stats.cur_pages_p2p, npages);
		igt_assert(ttm_p2p_in_vram(minor, seed + 2, 3));
	} else {
		/* moved to system memory for edu, which maps its pages */
		igt_assert_eq_u64(s.stats.cur_pages_system, npages);
		igt_assert_eq_u64(s.stats.pages_p2p, 0);
		igt_assert(!ttm_p2p_in_vram(minor, seed + 2, 3));
	}

	igt_assert_eq(edu_dereg_err(nic, key), 0);
	ttm_p2p_scan_out_off(fd, &so_next);
	ttm_p2p_dumb_free(fd, &next);
	ttm_p2p_dumb_free(fd, &bo);
	close(nic);
	close(fd);
}

static void evict_revokes(void)
{
	int minor, fd, nic;
	struct ttm_p2p_bo victim, other[TTM_P2P_MAX_SCANOUTS];
	uint32_t seed = getpid() << 8, key;
	struct edu_nic_mr_stats before, after;
	struct ttm_p2p_scanout so, next;
	int i, n;

	/* first: a skip must leave no file open (edu_nic, DRM master) */
	igt_require(ttm_p2p_topology_p2p());
	fd = ttm_p2p_open(&minor);
	nic = edu_open();
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
	ttm_p2p_check_write(nic, key, victim.map, seed + 64, 9,
			    EDU_NIC_MODE_DEVICE);
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
	int minor, fd, nic;
	struct ttm_p2p_bo bo, evictor;
	struct ttm_p2p_scanout so;
	uint32_t seed = getpid() << 8, key[2];
	char buf[EDU_PAGE];
	unsigned int k;

	/* first: a skip must leave no file open (edu_nic, DRM master) */
	igt_require(ttm_p2p_topology_p2p());
	fd = ttm_p2p_open(&minor);
	nic = edu_open();
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

/*
 * The sysfs directory of the switch above the PCI device @dev_link names:
 * its upstream port, the grandparent of the device. Empty where the
 * device sits on a root port (its grandparent is the host bridge).
 */
static void pci_switch_of(const char *dev_link, char *out, size_t len)
{
	char real[PATH_MAX], *slash;
	int up;

	igt_assert_f(realpath(dev_link, real), "%s\n", dev_link);
	for (up = 0; up < 2; up++) {
		slash = strrchr(real, '/');
		igt_assert(slash);
		*slash = 0;
	}
	slash = strrchr(real, '/');
	if (!strncmp(slash + 1, "pci", 3))
		real[0] = 0;
	snprintf(out, len, "%s", real);
}

/* The first edu_nic behind the same switch as bochs' card @minor, or -1 */
static int edu_beside_bochs(int minor)
{
	char link[64], sw[PATH_MAX], esw[PATH_MAX];
	int n;

	snprintf(link, sizeof(link), "/sys/class/drm/card%d/device", minor);
	pci_switch_of(link, sw, sizeof(sw));
	if (!sw[0])
		return -1;
	for (n = 0; n < 8; n++) {
		snprintf(link, sizeof(link), "/sys/class/misc/edu_nic%d/device",
			 n);
		if (access(link, F_OK))
			break;
		pci_switch_of(link, esw, sizeof(esw));
		if (!strcmp(sw, esw))
			return n;
	}
	return -1;
}

/*
 * An edu behind bochs' switch maps bochs' VRAM by bus address: the switch
 * routes it, and under an IOMMU it never reaches the IOMMU. The bulk mode
 * (CPU copies through the device's addresses) must read such an address
 * as the bus does, not through the IOMMU's tables, where it has no
 * translation. On QEMU the vIOMMU translates even switch-local DMA, so
 * there the device mode is run only without an IOMMU.
 */
static void bus_address_bulk(void)
{
	int minor, fd = ttm_p2p_open(&minor), n = edu_beside_bochs(minor);
	char *buf;
	struct ttm_p2p_scanout so;
	struct edu_nic_mr_stats s;
	struct ttm_p2p_bo bo;
	uint32_t seed = getpid() << 8, key;
	uint64_t npages;
	bool iommu;
	int nic;

	if (n < 0) {
		const char *topo = getenv("VP2P_TOPOLOGY");

		close(fd);	/* a skip must leave DRM master free */
		/*
		 * switch and iommu put an edu behind bochs' switch
		 * (qemu/lib/topologies.sh); split, which has none, lists
		 * the skip (igt-tests/skips).
		 */
		igt_assert_f(!topo || (strcmp(topo, "switch") &&
				       strcmp(topo, "iommu")),
			     "%s: no edu behind bochs' switch\n", topo);
		igt_skip("no edu behind bochs' switch here\n");
	}
	nic = edu_open_nth(n);
	iommu = edu_dev_stats(nic).caps & EDU_NIC_CAP_IOMMU;
	igt_info("edu_nic%d shares bochs' switch, iommu %d\n", n, iommu);

	bo = ttm_p2p_dumb(fd, 1024, 768);
	npages = bo.size / EDU_PAGE;
	ttm_p2p_fill(bo.map, bo.size, seed);
	so = ttm_p2p_scan_out(fd, &bo, 1024, 768);
	igt_assert(ttm_p2p_in_vram(minor, seed, 0));

	key = edu_reg(nic, bo.map, bo.size, RW, EDU_NIC_REG_MR_PREFETCH);
	s = edu_mr_stats(nic, key);
	igt_assert_eq_u64(s.stats.pages_bus, npages);
	igt_assert_eq_u64(s.stats.pages_iova, 0);

	buf = malloc(bo.size);
	igt_assert(buf);
	edu_dma(nic, key, EDU_NIC_DMA_FROM_MR, EDU_NIC_MODE_BULK, 0, bo.size,
		buf);
	igt_assert(!memcmp(buf, bo.map, bo.size));

	ttm_p2p_check_write(nic, key, bo.map, seed + 1, 5, EDU_NIC_MODE_BULK);
	igt_assert(ttm_p2p_in_vram(minor, seed + 1, 5));

	if (!iommu)
		ttm_p2p_check_read(nic, key, bo.map, 77 * EDU_PAGE);
	/* one mirroring, no error */
	s = edu_mr_stats(nic, key);
	igt_assert_eq_u64(s.stats.faults, 1);
	igt_assert_eq_u64(s.stats.errors, 0);

	igt_assert_eq(edu_dereg_err(nic, key), 0);
	free(buf);
	ttm_p2p_scan_out_off(fd, &so);
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
	char bdf[32], buf[EDU_PAGE], ref[EDU_PAGE];
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
	/* other bytes than the buffer's: a refused DMA leaves them */
	ttm_p2p_fill(ref, EDU_PAGE, seed + 1);
	memcpy(buf, ref, EDU_PAGE);
	ret = edu_dma_err(nic, key, EDU_NIC_DMA_FROM_MR, EDU_NIC_MODE_DEVICE,
			  0, EDU_PAGE, buf);
	/* the vma outlives the device; TTM's p2p_map says it is gone */
	igt_assert_eq(ret, -ENODEV);
	igt_assert_f(!memcmp(buf, ref, EDU_PAGE),
		     "a DMA refused after the unbind wrote into its buffer\n");

	igt_assert_eq(edu_dereg_err(nic, key), 0);
	munmap(bo.map, bo.size);
	close(fd);
	close(nic);
	igt_assert(edu_write_str("/sys/bus/pci/drivers/bochs-drm/bind", bdf));
	igt_assert(ttm_p2p_find_bochs() >= 0);
}

/* The end of bochs' VRAM BAR (BAR 0) on the bus */
static uint64_t bochs_vram_end(int minor)
{
	uint64_t start, end;
	char dev[64];

	snprintf(dev, sizeof(dev), "/sys/class/drm/card%d/device", minor);
	igt_assert(pci_bar_range(dev, 0, &start, &end));
	return end;
}

/*
 * Every edu of the machine is bound to edu_nic with the mask @mask:
 * dma_bits is one module parameter, which each device's probe must
 * apply. Return: the first edu_nic that is missing or has another mask
 * (in *@got; 0 where missing), or -1.
 */
static int edu_nic_other_mask(int count, uint64_t mask, uint64_t *got)
{
	int n;

	for (n = 0; n < count; n++) {
		*got = 0;
		if (!edu_dma_mask_nth(n, got) || *got != mask)
			return n;
	}
	return -1;
}

/*
 * TTM's p2p lookup holds an importer's DMA mask against the bus address
 * it would hand out, as pci_p2pdma_map_resource() will: an importer that
 * cannot use bochs' VRAM addresses (untranslated, or behind bochs' switch,
 * whose bus addresses never reach the IOMMU) gets the buffer in system
 * memory, and its registration works, instead of pfns it cannot map.
 * Every edu of the machine (iommu: one beside bochs, one across the host
 * bridge) gets the 31-bit mask, and the suite's mask back after.
 */
static void importer_dma_bits(void)
{
	int minor, fd, beside, nic, n, bad, count = edu_pci_count();
	uint64_t got;

	igt_require_f(getenv("VP2P_MODULES"),
		      "VP2P_MODULES names the modules' build tree\n");
	fd = ttm_p2p_open(&minor);
	if (bochs_vram_end(minor) <= 0x7fffffffull) {
		close(fd);	/* a skip must leave DRM master free */
		igt_skip("bochs' VRAM is below 2 GiB: a 31-bit mask covers it\n");
	}
	igt_assert(count > 0);
	beside = edu_beside_bochs(minor);
	reload_importer("dma_bits=31");
	bad = edu_nic_other_mask(count, 0x7fffffffull, &got);
	if (bad >= 0) {
		/* the subtests after this one want edu_nic as it was */
		close(fd);
		reload_importer(mod_params[IMPORTER]);
	}
	igt_assert_f(bad < 0,
		     "edu_nic%d of %d: dma_mask %#" PRIx64 " under dma_bits=31, expected 0x7fffffff\n",
		     bad, count, got);

	for (n = 0; n < count; n++) {
		struct ttm_p2p_bo bo = ttm_p2p_dumb(fd, 1024, 768);
		struct ttm_p2p_bo next = ttm_p2p_dumb(fd, 1024, 768);
		uint64_t npages = bo.size / EDU_PAGE;
		struct ttm_p2p_scanout so, so_next;
		uint32_t seed = getpid() << 8 | n, key;
		struct edu_nic_mr_stats s;
		bool iommu;
		/* where a bus address would be all it could get */
		bool bus_only;

		nic = edu_open_promised(n);
		iommu = edu_dev_stats(nic).caps & EDU_NIC_CAP_IOMMU;
		bus_only = !iommu || n == beside;

		/* scanned out, then not: unpinned, in VRAM */
		ttm_p2p_fill(bo.map, bo.size, seed);
		so = ttm_p2p_scan_out(fd, &bo, 1024, 768);
		so_next = ttm_p2p_scan_out(fd, &next, 1024, 768);
		igt_assert_eq(drmModeRmFB(fd, so.fb), 0);
		igt_assert(ttm_p2p_in_vram(minor, seed, 7));

		key = edu_reg(nic, bo.map, bo.size, RW,
			      EDU_NIC_REG_MR_PREFETCH);
		s = edu_mr_stats(nic, key);
		igt_info("edu_nic%d (iommu %d, beside bochs %d): bus %llu, iova %llu, system %llu pages\n",
			 n, iommu, n == beside,
			 (unsigned long long)s.stats.pages_bus,
			 (unsigned long long)s.stats.pages_iova,
			 (unsigned long long)s.stats.cur_pages_system);
		igt_assert_eq_u64(s.stats.pages_bus, 0);
		if (bus_only || !ttm_p2p_topology_p2p())
			igt_assert_eq_u64(s.stats.cur_pages_system, npages);
		ttm_p2p_check_read(nic, key, bo.map, 7 * EDU_PAGE);
		ttm_p2p_check_write(nic, key, bo.map, seed + 1, 3,
				    EDU_NIC_MODE_DEVICE);
		igt_assert_eq(edu_dereg_err(nic, key), 0);

		ttm_p2p_scan_out_off(fd, &so_next);
		ttm_p2p_dumb_free(fd, &next);
		ttm_p2p_dumb_free(fd, &bo);
		close(nic);
	}
	close(fd);
	reload_importer(mod_params[IMPORTER]);
	/* mod_params' dma_bits=64, on every edu again */
	bad = edu_nic_other_mask(count, ~0ull, &got);
	igt_assert_f(bad < 0,
		     "edu_nic%d of %d: dma_mask %#" PRIx64 " reloaded with %s, expected all ones\n",
		     bad, count, got, mod_params[IMPORTER]);
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

	igt_describe("A buffer left in VRAM after its scanout ended is registered: mapped in the BAR where edu reaches it, moved to system memory by the VRAM helper's fallback (p2p_unreachable) where it does not, and edu knows which it got.");
	igt_subtest("unpinned-vram")
		unpinned_vram();

	igt_describe("TTM evicting a registered VRAM buffer to make room for scanouts invalidates the importer, which re-faults and reads the same data from system memory.");
	igt_subtest("evict-revokes")
		evict_revokes();

	igt_describe("Two registrations of a scanout buffer, evicted by a VRAM-sized scanout: each re-mirrors the system pages TTM's eviction populated, DMA in both modes.");
	igt_subtest("evicted-shared")
		evicted_shared();

	igt_describe("An edu behind bochs' switch maps a scanout buffer by bus address, with or without an IOMMU, and the bulk mode reads and writes it through them (as the bus resolves them, not through the IOMMU); device DMA too where no IOMMU is on. Skips where the topology puts no edu behind bochs' switch (split), and fails where it does (switch, iommu) and edu_nic has none there.");
	igt_subtest("bus-address-bulk")
		bus_address_bulk();

	igt_describe("An importer whose DMA mask does not cover bochs' VRAM, and that nothing translates on the way (no IOMMU, or behind bochs' switch), gets an unpinned VRAM buffer in system memory from TTM's p2p lookup, not bus addresses it cannot map; edu_nic is reloaded with a 31-bit mask for it, which every edu of the machine must then have (debugfs dma_mask), each one registering and DMAing in turn, and every one has the suite's 64-bit mask again after.");
	igt_subtest("importer-dma-bits")
		importer_dma_bits();

	igt_describe("Unbinding bochs under a live registration of a buffer in system memory invalidates it; the next DMA fails cleanly, its buffer untouched; bochs binds again. Runs on every topology with bochs, split included.");
	igt_subtest("unbind-live")
		unbind_live();
}
