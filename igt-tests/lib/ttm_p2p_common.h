/* SPDX-License-Identifier: MIT */
/*
 * bochs (drm_gem_vram_helper on QEMU's bochs-display), the in-tree TTM
 * exporter, as the tests drive it: its card, dumb buffers and their
 * mmaps, tagged patterns found in its BAR from outside both drivers, and
 * a scanout to pin a buffer in VRAM. Shared by ttm_p2p and p2p_unload.
 */
#ifndef TTM_P2P_COMMON_H
#define TTM_P2P_COMMON_H

#include <sys/stat.h>
#include <xf86drm.h>
#include <xf86drmMode.h>

#include "edu_nic_helpers.h"

#define TTM_P2P_RW (EDU_NIC_ACCESS_READ | EDU_NIC_ACCESS_WRITE)

struct ttm_p2p_bo {
	uint32_t handle;
	uint32_t pitch;
	uint64_t size;
	char *map;
};

/* The bochs card's minor, or -1 */
int ttm_p2p_find_bochs(void);

/* Open the bochs card, its minor at *@minor; skip without one */
int ttm_p2p_open(int *minor);

/* A 32 bpp dumb buffer of @width x @height, mapped read-write */
struct ttm_p2p_bo ttm_p2p_dumb(int fd, uint32_t width,
			       uint32_t height);

/* Unmap and destroy a ttm_p2p_dumb() buffer */
void ttm_p2p_dumb_free(int fd, struct ttm_p2p_bo *bo);

/* Every page starts with a tag naming @seed and the page */
void ttm_p2p_fill(char *p, uint64_t size, uint32_t seed);

/*
 * Does page @page of @seed's pattern sit in bochs' VRAM? Reads BAR 0
 * through sysfs, one tag per page, so that where a DMA landed is seen
 * from outside both drivers.
 */
bool ttm_p2p_in_vram(int minor, uint32_t seed, unsigned long page);

/* A device-mode DMA read of the page at @off reads what @want holds there */
void ttm_p2p_check_read(int nic, uint32_t key, const char *want, uint64_t off);

/* A @mode write of @seed's page @page into the region, seen by the CPU */
void ttm_p2p_check_write(int nic, uint32_t key, char *map, uint32_t seed,
			 unsigned long page, uint32_t mode);

/* p2p here? Only split puts edu where the PCI core refuses it. */
bool ttm_p2p_topology_p2p(void);

struct ttm_p2p_scanout {
	uint32_t crtc, connector, fb;
	drmModeModeInfo mode;
};

/* Scan @bo out: bochs pins it in VRAM, and TTM evicts to make room */
struct ttm_p2p_scanout
ttm_p2p_scan_out(int fd, struct ttm_p2p_bo *bo, uint32_t w, uint32_t h);

/* Stop scanning out what ttm_p2p_scan_out() did */
void ttm_p2p_scan_out_off(int fd, struct ttm_p2p_scanout *so);

/*
 * A scanout buffer, pinned in VRAM: edu reads and writes it in the BAR,
 * peer-to-peer (bus addresses behind the switch, IOVAs under the
 * vIOMMU), or is refused where the PCI core says it cannot reach it.
 */
void ttm_p2p_vram_read_write(void);

#endif /* TTM_P2P_COMMON_H */
