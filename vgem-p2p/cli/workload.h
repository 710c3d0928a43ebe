/* SPDX-License-Identifier: MIT */
/*
 * Options every workload subcommand shares, and the register-and-measure
 * steps they all go through.
 */
#ifndef VP2P_CLI_WORKLOAD_H
#define VP2P_CLI_WORKLOAD_H

#include <getopt.h>

#include "cli.h"

struct wl {
	enum mem_kind mem;
	uint64_t size;
	uint32_t mode;
	uint32_t bo_flags;
	uint32_t access;
	uint32_t seed;
	struct vbuf buf;
	uint32_t key;
	struct drm_vgem_p2p_stats e0;	/* exporter counters at the start */
};

/* ":": getopt_long() returns ':' for a missing argument */
#define WL_SHORTOPTS ":m:s:M:S:"
#define WL_LONGOPTS \
	{ "memory", required_argument, NULL, 'm' }, \
	{ "size", required_argument, NULL, 's' }, \
	{ "mode", required_argument, NULL, 'M' }, \
	{ "seed", required_argument, NULL, 'S' }, \
	{ "read-only", no_argument, NULL, 0x100 }, \
	{ "no-p2p", no_argument, NULL, 0x101 }, \
	{ "device-only", no_argument, NULL, 0x102 }

#define WL_HELP \
	"  -m, --memory KIND  vram (default), system, anon, or devmem\n" \
	"                     (anonymous memory migrated to device memory)\n" \
	"  -s, --size SIZE    bytes, with K, M or G (default 16K)\n" \
	"  -M, --mode MODE    NIC DMA: device (real edu DMA, ~0.2 s a page;\n" \
	"                     the default) or bulk (emulated, fast)\n" \
	"  -S, --seed N       data pattern seed\n" \
	"      --read-only    object exported read-only to importers\n" \
	"      --no-p2p       object denies p2p: served by the fallback\n" \
	"      --device-only  object never mapped to the CPU (the NIC fills it)\n"

void wl_init(struct wl *w);
/* 0 if handled, 1 if not a common option, 2 on bad usage (printed) */
int wl_opt(struct wl *w, int opt, const char *arg);
/*
 * After the options, argv[optind] on: no operand, and object flags only
 * for objects. 0, or 2 on bad usage (printed).
 */
int wl_check(struct wl *w, int optind, int argc, char **argv);
/* --dry-run: the shared settings, as the command would use them */
void wl_settings(const struct wl *w);
/* allocate, fill with the pattern (unless device-only), migrate devmem */
int wl_setup(struct ctx *c, struct wl *w, bool fill);
/* register with the importer, snapshotting the exporter's counters first */
int wl_register(struct ctx *c, struct wl *w, uint32_t flags);
void wl_teardown(struct ctx *c, struct wl *w);
/* the common part of every workload report */
void wl_report(struct ctx *c, struct wl *w);

#endif /* VP2P_CLI_WORKLOAD_H */
