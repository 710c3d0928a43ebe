/* SPDX-License-Identifier: MIT */
/*
 * The data pattern every DMA and copy test writes and checks.
 */
#ifndef P2P_FILL_H
#define P2P_FILL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * A pattern with no period: each 8-byte word is a hash (splitmix64's
 * finaliser) of its index and the seed. A transfer that lands at the
 * wrong offset, or a stale buffer from an earlier command, never compares
 * equal by accident, as it did with a pattern that repeated every 256
 * bytes and a device that moves 2 KiB at a time. A shorter fill is a
 * prefix of a longer one with the same seed.
 */
void p2p_fill(void *buf, size_t len, uint32_t seed);

#endif /* P2P_FILL_H */
