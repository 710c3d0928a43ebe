// SPDX-License-Identifier: MIT
/*
 * The TTM exporter, for the cases that compare it with vgem-p2p: bochs
 * (drm_gem_vram_helper) on bochs-display, through the uAPI it has. Its
 * dumb buffers start in system memory; a buffer is put in VRAM by
 * scanning it out, which pins it there for as long as it is on screen.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xf86drm.h>
#include <xf86drmMode.h>

#include "bench.h"

#define TTM_WIDTH	1024	/* 4 KiB per line: a page per line */
#define TTM_MIN_LINES	768	/* a 1024x768 mode scans it out */
#define TTM_MAX_LINES	8192	/* bochs' mode_config.max_height */
#define TTM_MAX_WIDTH	2048	/* 64 MiB at 8192 lines: all of the VRAM */

/* The bochs card, or -ENODEV where there is no bochs-display */
int bench_ttm_open(struct bench *b)
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
		if (bochs) {
			b->bfd = fd;
			return 0;
		}
		close(fd);
	}
	return -ENODEV;
}

/*
 * Between bench_ttm_begin() and bench_ttm_end(), b->ifd is the importer
 * that maps the TTM exporter, so that registrations and counters (struct
 * bench_snap) are that importer's. Returns the importer to restore.
 */
int bench_ttm_begin(struct bench *b)
{
	int ifd = b->ifd;

	b->ifd = b->tfd;
	return ifd;
}

void bench_ttm_end(struct bench *b, int ifd)
{
	b->ifd = ifd;
}

/* The most a scanout buffer of ours holds: bochs' 8192-line limit */
uint64_t bench_ttm_max(void)
{
	return (uint64_t)TTM_MAX_WIDTH * 4 * TTM_MAX_LINES;
}

/* Put @t on screen: bochs pins it in VRAM, moving it there if need be */
int bench_ttm_scan_out(struct bench *b, struct bench_ttm_buf *t)
{
	drmModeConnectorPtr conn = NULL;
	drmModeModeInfo mode;
	drmModeResPtr res;
	int i, ret;

	res = drmModeGetResources(b->bfd);
	if (!res)
		return -errno;
	for (i = 0; i < res->count_connectors && !conn; i++) {
		conn = drmModeGetConnector(b->bfd, res->connectors[i]);
		if (conn && !conn->count_modes) {
			drmModeFreeConnector(conn);
			conn = NULL;
		}
	}
	ret = -ENODEV;
	if (!conn || !res->count_crtcs)
		goto out_free;
	mode = conn->modes[0];
	for (i = 0; i < conn->count_modes; i++)
		if (conn->modes[i].hdisplay == TTM_WIDTH &&
		    conn->modes[i].vdisplay == TTM_MIN_LINES)
			mode = conn->modes[i];
	t->crtc = res->crtcs[0];
	ret = 0;
	if (!t->fb)
		ret = drmModeAddFB(b->bfd, t->width, t->lines, 24, 32, t->pitch,
				   t->handle, &t->fb);
	if (!ret)
		ret = drmModeSetCrtc(b->bfd, t->crtc, t->fb, 0, 0,
				     &conn->connector_id, 1, &mode);
	ret = ret ? -errno : 0;
out_free:
	drmModeFreeConnector(conn);
	drmModeFreeResources(res);
	return ret;
}

/* Take @t off screen: unpinned, it stays in VRAM until evicted */
int bench_ttm_off(struct bench *b, struct bench_ttm_buf *t)
{
	if (!t->crtc)
		return 0;
	if (drmModeSetCrtc(b->bfd, t->crtc, 0, 0, 0, NULL, 0, NULL))
		return -errno;
	t->crtc = 0;
	return 0;
}

/*
 * A dumb buffer of at least @size bytes (a 1024x768 scanout at least if
 * @vram), mapped and touched, in system memory; scanned out, so pinned
 * in VRAM, if @vram.
 */
int bench_ttm_get(struct bench *b, uint64_t size, bool vram,
		  struct bench_ttm_buf *t)
{
	struct drm_mode_create_dumb c = { .bpp = 32 };
	struct drm_mode_map_dumb m = { 0 };

	memset(t, 0, sizeof(*t));
	if (size > bench_ttm_max())
		return -E2BIG;
	t->width = size > (uint64_t)TTM_WIDTH * 4 * TTM_MAX_LINES ?
		   TTM_MAX_WIDTH : TTM_WIDTH;
	t->lines = (size + t->width * 4 - 1) / (t->width * 4);
	if (vram && t->lines < TTM_MIN_LINES)
		t->lines = TTM_MIN_LINES;
	c.width = t->width;
	c.height = t->lines;
	if (drmIoctl(b->bfd, DRM_IOCTL_MODE_CREATE_DUMB, &c))
		return -errno;
	t->handle = c.handle;
	t->pitch = c.pitch;
	t->size = c.size;
	m.handle = c.handle;
	if (drmIoctl(b->bfd, DRM_IOCTL_MODE_MAP_DUMB, &m))
		return -errno;
	t->map = mmap(NULL, c.size, PROT_READ | PROT_WRITE, MAP_SHARED,
		      b->bfd, m.offset);
	if (t->map == MAP_FAILED) {
		t->map = NULL;
		return -errno;
	}
	bench_touch(t->map, t->size, 3);
	return vram ? bench_ttm_scan_out(b, t) : 0;
}

void bench_ttm_put(struct bench *b, struct bench_ttm_buf *t)
{
	struct drm_mode_destroy_dumb d = { .handle = t->handle };

	bench_ttm_off(b, t);
	if (t->fb)
		drmModeRmFB(b->bfd, t->fb);
	if (t->map)
		munmap(t->map, t->size);
	if (t->handle)
		drmIoctl(b->bfd, DRM_IOCTL_MODE_DESTROY_DUMB, &d);
	memset(t, 0, sizeof(*t));
}
