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
	unsigned int mems;	/* the kinds the command takes, MEM_BIT()s */
	unsigned int takes;	/* the other shared options it takes, WL_* */
	uint64_t size;
	uint32_t mode;
	uint32_t bo_flags;
	uint32_t access;
	uint32_t seed;
	struct vbuf buf;
	uint32_t key;
	struct drm_vgem_p2p_stats e0;	/* exporter counters at the start */
};

#define MEM_BIT(kind)	(1u << (kind))
#define WL_MEM_ANY	(MEM_BIT(MEM_VRAM) | MEM_BIT(MEM_SYSTEM) | \
			 MEM_BIT(MEM_ANON) | MEM_BIT(MEM_DEVMEM))
#define WL_MEM_OBJECT	(MEM_BIT(MEM_VRAM) | MEM_BIT(MEM_SYSTEM))

/*
 * Every workload takes --memory (of the kinds in wl.mems), --size and
 * --seed; the others only where they mean something: --mode where the
 * NIC does DMA, the object flags where the memory is an object.
 */
#define WL_MODE		(1u << 0)	/* --mode */
#define WL_FLAGS	(1u << 1)	/* --read-only, --no-p2p */
#define WL_DEVICE_ONLY	(1u << 2)	/* --device-only */

/*
 * The options' tables, as the command takes them. ":": getopt_long()
 * returns ':' for a missing argument.
 */
#define WL_SHORTOPTS ":m:s:S:"
#define WL_SHORTOPT_MODE "M:"
#define WL_LONGOPTS \
	{ "memory", required_argument, NULL, 'm' }, \
	{ "size", required_argument, NULL, 's' }, \
	{ "seed", required_argument, NULL, 'S' }
#define WL_LONGOPT_MODE \
	{ "mode", required_argument, NULL, 'M' }
#define WL_LONGOPTS_FLAGS \
	{ "read-only", no_argument, NULL, 0x100 }, \
	{ "no-p2p", no_argument, NULL, 0x101 }
#define WL_LONGOPT_DEVICE_ONLY \
	{ "device-only", no_argument, NULL, 0x102 }

/*
 * Their help, in the same pieces; each command gives its own --memory
 * line unless it takes every kind. A default is "(default X)" or a value
 * followed by a parenthesis that says "default": check-cli.py reads them
 * so, and holds each to what --dry-run prints.
 */
#define WL_HELP_MEMORY \
	"  -m, --memory KIND  vram (default), system, anon, or devmem\n" \
	"                     (anonymous memory migrated to device memory)\n"
#define WL_HELP \
	"  -s, --size SIZE    bytes, with K, M or G (default 16K)\n" \
	"  -S, --seed N       data pattern seed (default 1)\n"
#define WL_HELP_MODE \
	"  -M, --mode MODE    NIC DMA: device (real edu DMA, ~0.2 s a page;\n" \
	"                     the default) or bulk (emulated, fast)\n"
#define WL_HELP_FLAGS \
	"      --read-only    object exported read-only to importers\n" \
	"      --no-p2p       object denies p2p: served by the fallback\n"
#define WL_HELP_DEVICE_ONLY \
	"      --device-only  object never mapped to the CPU (the NIC fills it)\n"

/* @mem is the default kind, @mems the kinds, @takes the WL_* options */
void wl_init(struct wl *w, enum mem_kind mem, unsigned int mems,
	     unsigned int takes);
/* 0 if handled, 1 if not a common option, 2 on bad usage (printed) */
int wl_opt(struct wl *w, int opt, const char *arg);
/*
 * After the options, argv[optind] on: no operand, and object flags only
 * for objects. 0, or 2 on bad usage (printed).
 */
int wl_check(struct wl *w, int optind, int argc, char **argv);
/* --dry-run: the shared settings, as the command would use them */
void wl_settings(const struct wl *w);
/*
 * The arguments of a command that takes the shared options and its own
 * long options @opts only, with @shortopts: parsed and checked. True to
 * go on; false to return *@status (bad usage, or --dry-run done).
 */
bool wl_args(struct wl *w, int argc, char **argv, const char *shortopts,
	     const struct option *opts, int *status);
/* allocate, fill with the pattern (unless device-only), migrate devmem */
int wl_setup(struct ctx *c, struct wl *w, bool fill);
/* register with the importer, snapshotting the exporter's counters first */
int wl_register(struct ctx *c, struct wl *w, uint32_t flags);
void wl_teardown(struct ctx *c, struct wl *w);
/* the common part of every workload report */
void wl_report(struct ctx *c, struct wl *w);

#endif /* VP2P_CLI_WORKLOAD_H */
