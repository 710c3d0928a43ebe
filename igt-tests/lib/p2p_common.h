/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the tests that drive both drivers: the exporter
 * (vgem_p2p_common.h) and the importer (edu_nic_helpers.h).
 */
#ifndef P2P_COMMON_H
#define P2P_COMMON_H

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "edu_nic_helpers.h"
#include "vgem_p2p_common.h"

#define TRACING	"/sys/kernel/debug/tracing"

/* The whole of a (small) debugfs or tracefs file, NUL-terminated */
char *slurp(const char *path);

/* The value of " KEY=" in a trace line, as printed, copied into @val */
bool trace_field(const char *line, const char *key, char *val, size_t len);

/* A marker in the kernel log, as IGT leaves them, to place a splat */
void p2p_kmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * The /proc/self/pagemap entry (from @fd, that file open) of the page at
 * @addr into *@entry: 0, or -1 if it could not be read.
 */
int p2p_pagemap_entry(int fd, const void *addr, uint64_t *entry);

/* Sleep @ms milliseconds */
void msleep(int ms);

/* DRM card number of the device behind @vfd, for its sysfs directory */
int vgem_p2p_card(int vfd);

/*
 * Does the exporter behind @vfd let the importer behind @fd reach VRAM
 * peer-to-peer (switch), or does it serve it from system memory (split)?
 * Register a small VRAM object through the vma path and see how the
 * importer mapped it, which *@out (if not NULL) receives: pages_bus or
 * pages_iova for the BAR, pages_system for the fallback.
 */
bool p2p_reachable_stats(int vfd, int fd, struct edu_nic_stats *out);

/* p2p_reachable_stats() without the stats */
static inline bool p2p_reachable(int vfd, int fd)
{
	return p2p_reachable_stats(vfd, fd, NULL);
}

/* The kernel's verdict (DRM_IOCTL_VGEM_P2P_PEER) on edu_nic@n as a peer */
struct drm_vgem_p2p_peer edu_peer_nth(int vfd, int n);

/* The kernel's verdict (PEER): does the exporter reach edu_nic@n p2p? */
static inline bool edu_peer_p2p(int vfd, int n)
{
	return edu_peer_nth(vfd, n).path != VGEM_P2P_PEER_NONE;
}

/*
 * p2p_reachable() for edu_nic@n, opened as @fd, held to the kernel's
 * verdict (DRM_IOCTL_VGEM_P2P_PEER): a mapping that silently fell back
 * where the kernel says p2p (or went p2p where it says no) fails here,
 * not later. p2p_e2e/peer-verdict holds the verdict to the topology.
 */
bool p2p_checked(int vfd, int fd, int n);

/* MOVE without the offset: 0 or -errno */
int vgem_p2p_move_err(int vfd, uint32_t handle, uint32_t target);

/*
 * Wait until @f(@arg) returns @want; not a timing bound: up to a minute
 * for a slow guest, by the clock (a poll under TCG takes more than its
 * sleep). Return: the last value.
 */
long wait_for_value(long (*f)(const void *), const void *arg, long want);

#endif /* P2P_COMMON_H */
