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
 * The BAR of the device @fd (a card or render node) is open on, mapped
 * read-only, its length at @len; NULL when it cannot be mapped or
 * [@off, @off + @size) is not inside it (or not 8-byte aligned).
 */
static inline const volatile uint8_t *
__vgem_p2p_bar_map(int fd, uint64_t off, uint64_t size, size_t *len)
{
	const volatile uint8_t *bar;
	char path[96];
	struct stat st;
	int f;

	if (fstat(fd, &st))
		return NULL;
	snprintf(path, sizeof(path), "/sys/dev/char/%u:%u/device/resource%d",
		 major(st.st_rdev), minor(st.st_rdev), VGEM_P2P_VRAM_BAR);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return NULL;
	if (fstat(f, &st) || off > (uint64_t)st.st_size ||
	    size > (uint64_t)st.st_size - off || (off | size) & 7) {
		close(f);
		return NULL;
	}
	bar = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, f, 0);
	close(f);
	if (bar == MAP_FAILED)
		return NULL;
	*len = st.st_size;
	return bar;
}

/*
 * The first byte of [@off, @off + @size) of the VRAM of the device @fd
 * (a card or render node) is open on that is not VGEM_P2P_POISON_BYTE:
 * its offset, or ~0 when all are poison; -2 when the BAR cannot be
 * mapped or the range is not inside it. No igt_assert, no igt_warn: a
 * forked child may call it and _exit() with the result.
 */
static inline uint64_t __vgem_p2p_vram_unpoisoned(int fd, uint64_t off,
						   uint64_t size)
{
	const uint64_t poison = 0x0101010101010101ull * VGEM_P2P_POISON_BYTE;
	const volatile uint8_t *bar;
	uint64_t first = ~0ull, i;
	size_t len;

	bar = __vgem_p2p_bar_map(fd, off, size, &len);
	if (!bar)
		return -2ull;
	/* eight bytes at a time: the BAR is read as a device would */
	for (i = off; i < off + size && first == ~0ull; i += 8) {
		if (*(const volatile uint64_t *)(bar + i) == poison)
			continue;
		for (first = i; bar[first] == VGEM_P2P_POISON_BYTE; first++)
			;
	}
	munmap((void *)bar, len);
	return first;
}

/*
 * Does the BAR of @fd hold @want at [@off, @off + @size)? Where an
 * object's bytes are, read from the device's memory itself rather than
 * taken from OBJ_INFO or MOVE: a driver that placed them elsewhere than
 * it says fails here. Says where the first difference is.
 */
static inline bool vgem_p2p_bar_holds(int fd, uint64_t off,
				      const void *want, uint64_t size)
{
	const uint8_t *w = want;
	const volatile uint8_t *bar;
	uint64_t i, v;
	size_t len;

	bar = __vgem_p2p_bar_map(fd, off, size, &len);
	igt_assert_f(bar, "cannot map the BAR's [%#" PRIx64 ", +%#" PRIx64 ") through sysfs\n",
		     off, size);
	for (i = 0; i < size; i += 8) {
		v = *(const volatile uint64_t *)(bar + off + i);
		if (memcmp(&v, w + i, 8))
			break;
	}
	munmap((void *)bar, len);
	if (i < size)
		igt_warn("BAR %#" PRIx64 " (of [%#" PRIx64 ", +%#" PRIx64
			 ")) does not hold the bytes expected there\n",
			 off + i, off, size);
	return i >= size;
}

/* Is [@off, @off + @size) of @fd's VRAM all poison? Says where it is not. */
static inline bool vgem_p2p_vram_poisoned(int fd, uint64_t off, uint64_t size)
{
	uint64_t at = __vgem_p2p_vram_unpoisoned(fd, off, size);

	igt_assert_f(at != -2ull,
		     "cannot map VRAM [%#" PRIx64 ", +%#" PRIx64 ") through sysfs\n",
		     off, size);
	if (at != ~0ull)
		igt_warn("VRAM %#" PRIx64 " (of [%#" PRIx64 ", +%#" PRIx64
			 ")) is not poison (%#x)\n", at, off, size,
			 VGEM_P2P_POISON_BYTE);
	return at == ~0ull;
}

#endif /* VGEM_P2P_BAR_H */
