/* SPDX-License-Identifier: MIT */
/*
 * vgem_p2p's VRAM seen from outside the driver: BAR 2 of the PCI device
 * a vgem_p2p node is open on, mapped read-only through sysfs (as
 * ttm_p2p_in_vram() reads bochs' BAR 0). VRAM is the start of the BAR
 * (the uAPI's DOC), so a VRAM offset from OBJ_INFO or MOVE is a BAR
 * offset. The exporter fills what a move leaves and what a freed object
 * held with VGEM_P2P_POISON_BYTE (vgem_p2p_vram_mgr_free(), as the range
 * is freed): a move has poisoned its old range when its ioctl returns; a
 * closed object's range is poisoned by the time STATS' vram_used has
 * dropped by its size (the manager's usage goes after the poison).
 *
 * Kept apart from vgem_p2p_common.h so that libvgem_p2p.c, which uses
 * the library's header rather than it, can use it too.
 */
#ifndef VGEM_P2P_BAR_H
#define VGEM_P2P_BAR_H

#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "igt.h"
#include "vgem_p2p_drm.h"

#define VGEM_P2P_VRAM_BAR	2

/*
 * The first byte of [@off, @off + @size) of the VRAM of the device @fd
 * (a card or render node) is open on that is not VGEM_P2P_POISON_BYTE:
 * its offset, or ~0 when all are poison; -2 when the BAR cannot be
 * mapped or the range is not inside it. No igt_assert, no igt_warn: a
 * forked child may call it and _exit() with the result.
 */
uint64_t __vgem_p2p_vram_unpoisoned(int fd, uint64_t off, uint64_t size);

/*
 * Does the BAR of @fd hold @want at [@off, @off + @size)? Where an
 * object's bytes are, read from the device's memory itself rather than
 * taken from OBJ_INFO or MOVE: a driver that placed them elsewhere than
 * it says fails here. Says where the first difference is.
 */
bool vgem_p2p_bar_holds(int fd, uint64_t off, const void *want, uint64_t size);

/* Is [@off, @off + @size) of @fd's VRAM all poison? Says where it is not. */
bool vgem_p2p_vram_poisoned(int fd, uint64_t off, uint64_t size);

#endif /* VGEM_P2P_BAR_H */
