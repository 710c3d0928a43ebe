// SPDX-License-Identifier: MIT
/*
 * bochs, the in-tree TTM exporter, as the tests drive it: declared in
 * ttm_p2p_common.h.
 */
#include "ttm_p2p_common.h"

int ttm_p2p_find_bochs(void)
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

int ttm_p2p_open(int *minor)
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

struct ttm_p2p_bo ttm_p2p_dumb(int fd, uint32_t width,
			       uint32_t height)
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

void ttm_p2p_dumb_free(int fd, struct ttm_p2p_bo *bo)
{
	struct drm_mode_destroy_dumb d = { .handle = bo->handle };

	munmap(bo->map, bo->size);
	igt_assert_eq(drmIoctl(fd, DRM_IOCTL_MODE_DESTROY_DUMB, &d), 0);
}

void ttm_p2p_fill(char *p, uint64_t size, uint32_t seed)
{
	uint64_t off;

	p2p_fill(p, size, seed);
	for (off = 0; off < size; off += EDU_PAGE)
		snprintf(p + off, 32, "ttm_p2p:%08x:%06lx", seed,
			 (unsigned long)(off / EDU_PAGE));
}

bool ttm_p2p_in_vram(int minor, uint32_t seed, unsigned long page)
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

void ttm_p2p_check_read(int nic, uint32_t key, const char *want, uint64_t off)
{
	char buf[EDU_PAGE];

	memset(buf, 0xee, sizeof(buf));
	edu_dma(nic, key, EDU_NIC_DMA_FROM_MR, EDU_NIC_MODE_DEVICE, off,
		EDU_PAGE, buf);
	igt_assert_f(!memcmp(buf, want + off, EDU_PAGE),
		     "DMA read at %#lx: got \"%.24s\", want \"%.24s\"\n",
		     (unsigned long)off, buf, want + off);
}

void ttm_p2p_check_write(int nic, uint32_t key, char *map, uint32_t seed,
			 unsigned long page, uint32_t mode)
{
	char buf[EDU_PAGE];

	p2p_fill(buf, sizeof(buf), seed);
	snprintf(buf, 32, "ttm_p2p:%08x:%06lx", seed, page);
	edu_dma(nic, key, EDU_NIC_DMA_TO_MR, mode, page * EDU_PAGE, EDU_PAGE,
		buf);
	igt_assert_f(!memcmp(map + page * EDU_PAGE, buf, EDU_PAGE),
		     "CPU does not see the DMA write to page %lu\n", page);
}

bool ttm_p2p_topology_p2p(void)
{
	const char *topo = getenv("VP2P_TOPOLOGY");

	return !topo || strcmp(topo, "split");
}

struct ttm_p2p_scanout
ttm_p2p_scan_out(int fd, struct ttm_p2p_bo *bo, uint32_t w, uint32_t h)
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

void ttm_p2p_scan_out_off(int fd, struct ttm_p2p_scanout *so)
{
	igt_assert_eq(drmModeSetCrtc(fd, so->crtc, 0, 0, 0, NULL, 0, NULL), 0);
	igt_assert_eq(drmModeRmFB(fd, so->fb), 0);
}

void ttm_p2p_vram_read_write(void)
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
		/*
		 * TTM reports the BAR; edu_nic cannot map what the PCI
		 * core says it cannot reach
		 */
		ret = edu_reg_err(nic, bo.map, bo.size, TTM_P2P_RW,
				  EDU_NIC_REG_MR_PREFETCH, &key);
		igt_assert_eq(ret, -EFAULT);
		key = edu_reg(nic, bo.map, bo.size, TTM_P2P_RW, 0);
		ret = edu_dma_err(nic, key, EDU_NIC_DMA_FROM_MR,
				  EDU_NIC_MODE_DEVICE, 0, EDU_PAGE, bo.map);
		igt_assert_eq(ret, -EFAULT);
		igt_assert_eq_u64(edu_mr_stats(nic, key).stats.p2p_maps, 0);
		goto out;
	}

	key = edu_reg(nic, bo.map, bo.size, TTM_P2P_RW, EDU_NIC_REG_MR_PREFETCH);
	s = edu_mr_stats(nic, key);
	igt_assert_eq_u64(s.stats.cur_pages_p2p, bo.size / EDU_PAGE);
	igt_assert_eq_u64(s.stats.cur_pages_system, 0);

	ttm_p2p_check_read(nic, key, bo.map, 0);
	ttm_p2p_check_read(nic, key, bo.map, 77 * EDU_PAGE);
	ttm_p2p_check_read(nic, key, bo.map, bo.size - EDU_PAGE);
	ttm_p2p_check_write(nic, key, bo.map, seed + 1, 3,
			    EDU_NIC_MODE_DEVICE);
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
