/* SPDX-License-Identifier: MIT */
/*
 * The drivers' counts that must be back at their start values once a test
 * has released all it made: what is left is a leak, or a count gone
 * wrong, whatever errors the calls returned. p2p_faultinject holds each
 * injected failure to them, p2p_fuzz each run's pool.
 */
#ifndef P2P_COUNTS_H
#define P2P_COUNTS_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "p2p_common.h"

struct p2p_counts {
	long objects;		/* vgem_p2p objects (debugfs objects) */
	long maps;		/* their importer leases (debugfs objects) */
	long live_p2p;		/* counters: p2p_maps - p2p_unmaps */
	uint64_t vram_used;
	uint64_t devmem_used;
	/*
	 * live attachments to its dma-bufs (counters): one without a
	 * mapping shows in nothing else
	 */
	uint64_t dmabuf_attachments;
	long nr_mrs;		/* edu_nic registrations */
	/*
	 * edu_nic pages mirrored now, each kind on its own: a page counted
	 * as the other kind at its release would cancel out in a sum
	 */
	long cur_pages_p2p;
	long cur_pages_system;
};

/* Where they are read: the exporter's debugfs, and edu_nic0's */
struct p2p_counts_src {
	int vfd;
	char dri_dir[64];
	char edu_dir[128];	/* "" without edu_nic0: nothing of it counted */
};

/* Find the directories the counts of @vfd's exporter and edu_nic0 are in */
void p2p_counts_src_init(struct p2p_counts_src *src, int vfd);

/* The counts now */
struct p2p_counts p2p_counts_read(const struct p2p_counts_src *src);

/*
 * Objects are freed by a worker after their last reference goes: wait
 * for the counts to come back to @start (wait_for_value()'s minute).
 * Return: "" if they did; else what is not back, at @buf.
 */
const char *p2p_counts_check(const struct p2p_counts_src *src,
			     const struct p2p_counts *start,
			     char *buf, size_t size);

#endif /* P2P_COUNTS_H */
