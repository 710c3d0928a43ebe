// SPDX-License-Identifier: MIT
/*
 * The data pattern every DMA and copy test writes and checks.
 */
#include "p2p_fill.h"

void p2p_fill(void *buf, size_t len, uint32_t seed)
{
	uint8_t *b = buf;
	size_t i;

	for (i = 0; i < len; i += 8) {
		uint64_t x = i / 8 + seed * 0x9e3779b97f4a7c15ull;
		size_t n = len - i < 8 ? len - i : 8;

		x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
		x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
		x ^= x >> 31;
		memcpy(b + i, &x, n);
	}
}
