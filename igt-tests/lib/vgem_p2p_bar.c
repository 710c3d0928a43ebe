// SPDX-License-Identifier: MIT
/*
 * vgem_p2p's VRAM seen from outside the driver, through its BAR:
 * declared in vgem_p2p_bar.h.
 */
#include "vgem_p2p_bar.h"

/*
 * The BAR of the device @fd (a card or render node) is open on, mapped
 * read-only, its length at @len; NULL when it cannot be mapped or
 * [@off, @off + @size) is not inside it (or not 8-byte aligned).
 */
static const volatile uint8_t *
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

uint64_t __vgem_p2p_vram_unpoisoned(int fd, uint64_t off, uint64_t size)
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

bool vgem_p2p_bar_holds(int fd, uint64_t off, const void *want, uint64_t size)
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

bool vgem_p2p_vram_poisoned(int fd, uint64_t off, uint64_t size)
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
