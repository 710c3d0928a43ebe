// SPDX-License-Identifier: MIT
/*
 * A real in-tree TTM driver as the exporter: bochs (drm_gem_vram_helper)
 * on QEMU's bochs-display, with edu_nic importing mmaps of its dumb
 * buffers through hmm_range_fault(). Only the uAPI bochs already has is
 * used: dumb buffers, MODE_MAP_DUMB, mmap, and a modeset to make TTM
 * evict.
 */
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <xf86drm.h>
#include <xf86drmMode.h>

#include "edu_nic_helpers.h"

IGT_TEST_DESCRIPTION("edu_nic importing bochs (TTM) dumb buffers: p2p, IOVAs, refusal, eviction, unbind.");

#define RW (EDU_NIC_ACCESS_READ | EDU_NIC_ACCESS_WRITE)
#define MIB (1ul << 20)

struct ttm_p2p_bo {
	uint32_t handle;
	uint32_t pitch;
	uint64_t size;
	char *map;
};

/* The bochs card's minor, or -1 */
static int ttm_p2p_find_bochs(void)
{
	char path[32];
	int i;

	for (i = 0; i < 16; i++) {
		drmVersionPtr v;
		bool bochs;
		int fd;

		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		v = drmGetVersion(fd);
		bochs = v && !strcmp(v->name, "bochs-drm");
		drmFreeVersion(v);
		close(fd);
		if (bochs)
			return i;
	}
	return -1;
}

static int ttm_p2p_open(int *minor)
{
	char path[32];
	int fd;

	*minor = ttm_p2p_find_bochs();
	igt_require_f(*minor >= 0, "no bochs-drm card (no bochs-display here)\n");
	snprintf(path, sizeof(path), "/dev/dri/card%d", *minor);
	fd = open(path, O_RDWR | O_CLOEXEC);
	igt_assert(fd >= 0);
	return fd;
}

/* A 32 bpp dumb buffer of @width x @height, mapped read-write */
static struct ttm_p2p_bo ttm_p2p_dumb(int fd, uint32_t width, uint32_t height)
{
	struct drm_mode_create_dumb c = {
		.width = width, .height = height, .bpp = 32,
	};
	struct drm_mode_map_dumb m = { 0 };
	struct ttm_p2p_bo bo;

	igt_assert_eq(drmIoctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &c), 0);
	m.handle = c.handle;
	igt_assert_eq(drmIoctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &m), 0);
	bo.handle = c.handle;
	bo.pitch = c.pitch;
	bo.size = c.size;
	bo.map = mmap(NULL, c.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		      m.offset);
	igt_assert(bo.map != MAP_FAILED);
	return bo;
}

static void ttm_p2p_dumb_free(int fd, struct ttm_p2p_bo *bo)
{
	struct drm_mode_destroy_dumb d = { .handle = bo->handle };

	munmap(bo->map, bo->size);
	igt_assert_eq(drmIoctl(fd, DRM_IOCTL_MODE_DESTROY_DUMB, &d), 0);
}

/* Every page starts with a tag naming @seed and the page */
static void ttm_p2p_fill(char *p, uint64_t size, uint32_t seed)
{
	uint64_t off;

	edu_fill(p, size, seed);
	for (off = 0; off < size; off += EDU_PAGE)
		snprintf(p + off, 32, "ttm_p2p:%08x:%06lx", seed,
			 (unsigned long)(off / EDU_PAGE));
}

/*
 * Does page @page of @seed's pattern sit in bochs' VRAM? Reads BAR 0
 * through sysfs, one tag per page, so that where a DMA landed is seen
 * from outside both drivers.
 */
static bool ttm_p2p_in_vram(int minor, uint32_t seed, unsigned long page)
{
	char path[64], tag[32];
	struct stat st;
	bool found = false;
	char *bar;
	off_t off;
	int f;

	snprintf(path, sizeof(path), "/sys/class/drm/card%d/device/resource0",
		 minor);
	f = open(path, O_RDONLY);
	igt_assert(f >= 0);
	igt_assert_eq(fstat(f, &st), 0);
	bar = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, f, 0);
	igt_assert(bar != MAP_FAILED);
	snprintf(tag, sizeof(tag), "ttm_p2p:%08x:%06lx", seed, page);
	for (off = 0; off < st.st_size && !found; off += EDU_PAGE)
		found = !memcmp(bar + off, tag, strlen(tag) + 1);
	munmap(bar, st.st_size);
	close(f);
	return found;
}

static void ttm_p2p_check_read(int nic, uint32_t key, const char *want,
			       uint64_t off)
{
	char buf[EDU_PAGE];

	memset(buf, 0xee, sizeof(buf));
	edu_dma(nic, key, EDU_NIC_DMA_FROM_MR, EDU_NIC_MODE_DEVICE, off,
		EDU_PAGE, buf);
	igt_assert_f(!memcmp(buf, want + off, EDU_PAGE),
		     "DMA read at %#lx: got \"%.24s\", want \"%.24s\"\n",
		     (unsigned long)off, buf, want + off);
}

/* Device write of @seed's page @page into the region, seen by the CPU */
static void ttm_p2p_check_write(int nic, uint32_t key, char *map,
				uint32_t seed, unsigned long page)
{
	char buf[EDU_PAGE];

	edu_fill(buf, sizeof(buf), seed);
	snprintf(buf, 32, "ttm_p2p:%08x:%06lx", seed, page);
	edu_dma(nic, key, EDU_NIC_DMA_TO_MR, EDU_NIC_MODE_DEVICE,
		page * EDU_PAGE, EDU_PAGE, buf);
	igt_assert_f(!memcmp(map + page * EDU_PAGE, buf, EDU_PAGE),
		     "CPU does not see the DMA write to page %lu\n", page);
}

/* p2p here? Only split puts edu where the PCI core refuses it. */
static bool ttm_p2p_topology_p2p(void)
{
	const char *topo = getenv("VP2P_TOPOLOGY");

	return !topo || strcmp(topo, "split");
}

struct ttm_p2p_scanout {
	uint32_t crtc, connector, fb;
	drmModeModeInfo mode;
};

/* Scan @bo out: bochs pins it in VRAM, and TTM evicts to make room */
static struct ttm_p2p_scanout ttm_p2p_scan_out(int fd, struct ttm_p2p_bo *bo,
					       uint32_t w, uint32_t h)
{
	struct ttm_p2p_scanout so = { 0 };
	drmModeConnectorPtr conn = NULL;
	drmModeResPtr res;
	int i;

	res = drmModeGetResources(fd);
	igt_assert(res && res->count_crtcs > 0);
	for (i = 0; i < res->count_connectors && !conn; i++) {
		conn = drmModeGetConnector(fd, res->connectors[i]);
		if (conn && !conn->count_modes) {
			drmModeFreeConnector(conn);
			conn = NULL;
		}
	}
	igt_require_f(conn, "no connector with a mode\n");
	so.crtc = res->crtcs[0];
	so.connector = conn->connector_id;
	so.mode = conn->modes[0];
	for (i = 0; i < conn->count_modes; i++)
		if (conn->modes[i].hdisplay == w && conn->modes[i].vdisplay == h)
			so.mode = conn->modes[i];
	igt_assert(so.mode.hdisplay <= w && so.mode.vdisplay <= h);
	drmModeFreeConnector(conn);
	drmModeFreeResources(res);

	igt_assert_eq(drmModeAddFB(fd, w, h, 24, 32, bo->pitch, bo->handle,
				   &so.fb), 0);
	igt_assert_eq(drmModeSetCrtc(fd, so.crtc, so.fb, 0, 0, &so.connector,
				     1, &so.mode), 0);
	return so;
}

static void ttm_p2p_scan_out_off(int fd, struct ttm_p2p_scanout *so)
{
	igt_assert_eq(drmModeSetCrtc(fd, so->crtc, 0, 0, 0, NULL, 0, NULL), 0);
	igt_assert_eq(drmModeRmFB(fd, so->fb), 0);
}

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

/*
 * A scanout buffer, pinned in VRAM: edu reads and writes it in the BAR,
 * peer-to-peer (bus addresses behind the switch, IOVAs under the
 * vIOMMU), or is refused where the PCI core says it cannot reach it.
 */
static void vram_read_write(void)
{
	int minor, fd = ttm_p2p_open(&minor), nic = edu_open();
	struct ttm_p2p_bo bo = ttm_p2p_dumb(fd, 1024, 768);
	uint32_t seed = getpid() << 8, key;
	struct ttm_p2p_scanout so;
	struct edu_nic_mr_stats s;
	int ret;

	ttm_p2p_fill(bo.map, bo.size, seed);
	so = ttm_p2p_scan_out(fd, &bo, 1024, 768);
	igt_assert_f(ttm_p2p_in_vram(minor, seed, 0),
		     "a scanout buffer is not in VRAM\n");

	if (!ttm_p2p_topology_p2p()) {
		/* TTM refuses what the PCI core says edu cannot reach */
		ret = edu_reg_err(nic, bo.map, bo.size, RW,
				  EDU_NIC_REG_MR_PREFETCH, &key);
		igt_assert_eq(ret, -EFAULT);
		key = edu_reg(nic, bo.map, bo.size, RW, 0);
		ret = edu_dma_err(nic, key, EDU_NIC_DMA_FROM_MR,
				  EDU_NIC_MODE_DEVICE, 0, EDU_PAGE, bo.map);
		igt_assert_eq(ret, -EFAULT);
		igt_assert_eq_u64(edu_mr_stats(nic, key).stats.p2p_maps, 0);
		goto out;
	}

	key = edu_reg(nic, bo.map, bo.size, RW, EDU_NIC_REG_MR_PREFETCH);
	s = edu_mr_stats(nic, key);
	igt_assert_eq_u64(s.stats.cur_pages_p2p, bo.size / EDU_PAGE);
	igt_assert_eq_u64(s.stats.cur_pages_system, 0);

	ttm_p2p_check_read(nic, key, bo.map, 0);
	ttm_p2p_check_read(nic, key, bo.map, 77 * EDU_PAGE);
	ttm_p2p_check_read(nic, key, bo.map, bo.size - EDU_PAGE);
	ttm_p2p_check_write(nic, key, bo.map, seed + 1, 3);
	/* the write went to the BAR, peer-to-peer */
	igt_assert(ttm_p2p_in_vram(minor, seed + 1, 3));
	/* nothing moved: one mirroring served it all */
	igt_assert_eq_u64(edu_mr_stats(nic, key).stats.invalidations, 0);
out:
	igt_assert_eq(edu_dereg_err(nic, key), 0);
	ttm_p2p_scan_out_off(fd, &so);
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
	vram_read_write();
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
		vram_read_write();

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
