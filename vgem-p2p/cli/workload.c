// SPDX-License-Identifier: MIT
/* The steps shared by the workload subcommands; see workload.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workload.h"

void wl_init(struct wl *w, enum mem_kind mem, unsigned int mems,
	     unsigned int takes)
{
	memset(w, 0, sizeof(*w));
	w->mem = mem;
	w->mems = mems;
	w->takes = takes;
	w->size = 16 << 10;
	w->mode = EDU_NIC_MODE_DEVICE;
	w->access = EDU_NIC_ACCESS_READ | EDU_NIC_ACCESS_WRITE;
	w->seed = 1;
}

/* "vram, system, anon or devmem": the kinds in @mems */
static void mem_list(unsigned int mems, char *buf, size_t len)
{
	unsigned int k, left = __builtin_popcount(mems);
	size_t n = 0;

	buf[0] = 0;
	for (k = MEM_VRAM; k <= MEM_DEVMEM && n < len; k++) {
		if (!(mems & MEM_BIT(k)))
			continue;
		left--;
		n += snprintf(buf + n, len - n, "%s%s", mem_name(k),
			      left > 1 ? ", " : left ? " or " : "");
	}
}

int wl_opt(struct wl *w, int opt, const char *arg)
{
	enum mem_kind kind;
	unsigned long n;
	char kinds[64];
	char *end;

	switch (opt) {
	case 'm':
		if (parse_mem(arg, &kind) || !(w->mems & MEM_BIT(kind))) {
			mem_list(w->mems, kinds, sizeof(kinds));
			return out_usage("bad --memory '%s' (%s%s)", arg,
					 w->mems & (w->mems - 1) ? "" :
					 "only ", kinds);
		}
		w->mem = kind;
		return 0;
	case 's':
		if (parse_size(arg, &w->size))
			return out_usage("bad --size '%s' (bytes, with K, M or G)",
					 arg);
		return 0;
	case 'M':
		if (parse_mode(arg, &w->mode))
			return out_usage("bad --mode '%s' (device or bulk)", arg);
		return 0;
	case 'S':
		errno = 0;
		n = strtoul(arg, &end, 0);
		if (!*arg || *end || *arg == '-' || errno || n > UINT32_MAX)
			return out_usage("bad --seed '%s' (0 to %u)", arg,
					 UINT32_MAX);
		w->seed = n;
		return 0;
	case 0x100:
		w->bo_flags |= VGEM_P2P_CREATE_READ_ONLY;
		return 0;
	case 0x101:
		w->bo_flags |= VGEM_P2P_CREATE_NO_P2P;
		return 0;
	case 0x102:
		w->bo_flags |= VGEM_P2P_CREATE_DEVICE_ONLY;
		return 0;
	}
	return 1;
}

int wl_check(struct wl *w, int optind, int argc, char **argv)
{
	if (optind < argc)
		return out_usage("unexpected argument '%s'", argv[optind]);
	if (w->bo_flags && !(WL_MEM_OBJECT & MEM_BIT(w->mem)))
		return out_usage("object flags need --memory vram or system");
	return 0;
}

bool wl_args(struct wl *w, int argc, char **argv, const char *shortopts,
	     const struct option *opts, int *status)
{
	int opt, ret;

	while ((opt = getopt_long(argc, argv, shortopts, opts, NULL)) != -1) {
		ret = wl_opt(w, opt, optarg);
		if (ret) {
			*status = ret == 2 ? 2 : out_badopt(opt, argv);
			return false;
		}
	}
	*status = wl_check(w, optind, argc, argv);
	if (*status)
		return false;
	if (dry_run_begin()) {
		wl_settings(w);
		out_end();
		return false;
	}
	return true;
}

void wl_settings(const struct wl *w)
{
	long page = sysconf(_SC_PAGESIZE);

	out_str("memory", mem_name(w->mem));
	/* as vbuf_create() rounds it */
	out_u64("size", (w->size + page - 1) & ~(uint64_t)(page - 1));
	out_u64("seed", w->seed);
	if (w->takes & WL_MODE)
		out_str("mode", mode_name(w->mode));
	if (w->takes & WL_FLAGS) {
		out_bool("read_only", w->bo_flags & VGEM_P2P_CREATE_READ_ONLY);
		out_bool("no_p2p", w->bo_flags & VGEM_P2P_CREATE_NO_P2P);
	}
	if (w->takes & WL_DEVICE_ONLY)
		out_bool("device_only",
			 w->bo_flags & VGEM_P2P_CREATE_DEVICE_ONLY);
}

int wl_setup(struct ctx *c, struct wl *w, bool fill)
{
	int ret;

	if (ctx_importer(c) < 0 || ctx_exporter(c) < 0)
		return 1;
	ret = vbuf_create(c, w->mem, w->size, w->bo_flags, &w->buf);
	if (ret)
		return ret;
	w->size = w->buf.size;
	/* "the GPU" writes its results: CPU stores through the mmap */
	if (fill && !(w->bo_flags & VGEM_P2P_CREATE_DEVICE_ONLY))
		pattern_fill(w->buf.ptr, w->size, 0, w->seed);
	if (w->mem == MEM_DEVMEM)
		return vbuf_migrate(c, &w->buf);
	return 0;
}

int wl_register(struct ctx *c, struct wl *w, uint32_t flags)
{
	int ret;

	ret = vp2p_exporter_stats(c->efd, &w->e0);
	if (ret)
		return out_err(ret, "exporter statistics");
	ret = vp2p_mr_register(c->ifd, w->buf.ptr, w->size, w->access, flags,
			       &w->key);
	if (ret)
		return out_err(ret, "register %" PRIu64 " bytes of %s memory",
			       w->size, mem_name(w->mem));
	return 0;
}

void wl_teardown(struct ctx *c, struct wl *w)
{
	if (w->key)
		vp2p_mr_deregister(c->ifd, w->key);
	w->key = 0;
	vbuf_destroy(c, &w->buf);
}

void wl_report(struct ctx *c, struct wl *w)
{
	struct drm_vgem_p2p_obj_info info;
	struct drm_vgem_p2p_stats e1;
	struct edu_nic_mr_stats m;

	out_str("memory", mem_name(w->mem));
	out_u64("size", w->size);
	out_str("mode", mode_name(w->mode));
	if (w->mem == MEM_DEVMEM)
		out_u64("pages_migrated", w->buf.migrated);
	if (w->buf.bo.handle && !vp2p_bo_info(c->efd, &w->buf.bo, &info))
		out_bo_info("object", &info);
	if (w->key && !vp2p_mr_stats(c->ifd, w->key, &m)) {
		out_obj("registration");
		out_u64("key", w->key);
		out_bool("mirrored", m.state & EDU_NIC_MR_MIRRORED);
		out_close();
		out_importer_stats("importer", &m.stats);
	}
	if (!vp2p_exporter_stats(c->efd, &e1))
		out_exporter_delta("exporter", &w->e0, &e1);
}
