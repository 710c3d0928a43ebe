/* SPDX-License-Identifier: MIT */
/* The vgem-p2p CLI: shared state, the workload buffer, subcommands. */
#ifndef VP2P_CLI_H
#define VP2P_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "vgem_p2p.h"
#include "out.h"

struct ctx {
	int exporter;		/* --exporter N */
	int importer;		/* --importer N */
	int efd;		/* opened on demand, -1 until then */
	int ifd;
};

/* What a workload's memory is: where "the GPU" put the data. */
enum mem_kind {
	MEM_VRAM,	/* a vgem-p2p object in VRAM, mmapped */
	MEM_SYSTEM,	/* a vgem-p2p object placed in system memory */
	MEM_ANON,	/* plain anonymous memory, the baseline */
	MEM_DEVMEM,	/* anonymous memory migrated to device-private VRAM */
};

struct vbuf {
	enum mem_kind kind;
	struct vp2p_bo bo;	/* MEM_VRAM and MEM_SYSTEM */
	uint8_t *ptr;
	uint64_t size;
	uint64_t migrated;	/* MEM_DEVMEM: pages migrated */
};

/* why @module ("vgem_p2p", "edu_nic") offers no device, and the fix */
void module_hint(const char *module, char *buf, size_t len);
int ctx_exporter(struct ctx *c);
int ctx_importer(struct ctx *c);

int parse_size(const char *s, uint64_t *out);
int parse_mem(const char *s, enum mem_kind *kind);
const char *mem_name(enum mem_kind kind);
int parse_mode(const char *s, uint32_t *mode);
const char *mode_name(uint32_t mode);

int vbuf_create(struct ctx *c, enum mem_kind kind, uint64_t size,
		uint32_t bo_flags, struct vbuf *b);
int vbuf_migrate(struct ctx *c, struct vbuf *b);
void vbuf_destroy(struct ctx *c, struct vbuf *b);

void pattern_fill(void *buf, uint64_t len, uint64_t base, uint32_t seed);
int64_t pattern_check(const void *buf, uint64_t len, uint64_t base,
		      uint32_t seed);

/* NIC DMA of a whole range in chunks, with progress */
int dma_range(struct ctx *c, uint32_t key, uint32_t dir, uint32_t mode,
	      uint64_t off, void *buf, uint64_t len, const char *what);

void out_exporter_stats(const char *key, const struct drm_vgem_p2p_stats *s);
void out_exporter_delta(const char *key, const struct drm_vgem_p2p_stats *a,
			const struct drm_vgem_p2p_stats *b);
void out_importer_stats(const char *key, const struct edu_nic_stats *s);
void out_bo_info(const char *key, const struct drm_vgem_p2p_obj_info *i);

/*
 * A subcommand: argv[0] is its name. Returns the exit status: 0, 1 for a
 * failed operation or claim, 2 for bad usage.
 */
struct command {
	const char *name;
	const char *summary;
	int (*run)(struct ctx *c, int argc, char **argv);
	const char *help;
};

extern const struct command cmd_info, cmd_alloc, cmd_register, cmd_dma,
	cmd_move, cmd_evict, cmd_migrate, cmd_stats;

/* getopt_long over a subcommand's argv; prints its help on -h */
bool want_help(const struct command *cmd, int argc, char **argv);

/* --dry-run: check the arguments, print the settings, open no device */
extern bool cli_dry_run;
/*
 * Where a command has checked its arguments and would open a device:
 * with --dry-run, begins the output of its settings (the caller prints
 * them, each under its option's long name with '_' for '-', and calls
 * out_end()) and returns true.
 */
bool dry_run_begin(void);

#endif /* VP2P_CLI_H */
