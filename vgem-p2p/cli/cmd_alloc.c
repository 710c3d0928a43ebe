// SPDX-License-Identifier: MIT
/*
 * alloc: create objects and show where they landed. A VRAM allocation
 * that does not fit compacts VRAM or evicts others: the counters show it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "workload.h"

static int alloc_run(struct ctx *c, int argc, char **argv)
{
	static const struct option opts[] = {
		WL_LONGOPTS,
		WL_LONGOPTS_FLAGS,
		WL_LONGOPT_DEVICE_ONLY,
		{ "count", required_argument, NULL, 'n' },
		{ "free-every", required_argument, NULL, 'f' },
		{ }
	};
	unsigned long count = 1, free_every = 0, i, n;
	struct drm_vgem_p2p_stats e0, e1;
	struct drm_vgem_p2p_obj_info info;
	struct vbuf *bufs = NULL;
	int64_t bad = -1;
	struct wl w;
	int opt, ret, fd;
	char *end;

	wl_init(&w, MEM_VRAM, WL_MEM_OBJECT, WL_FLAGS | WL_DEVICE_ONLY);
	while ((opt = getopt_long(argc, argv, WL_SHORTOPTS "n:f:", opts,
				  NULL)) != -1) {
		ret = wl_opt(&w, opt, optarg);
		if (ret == 0)
			continue;
		if (ret == 2)
			return 2;
		if (opt != 'n' && opt != 'f')
			return out_badopt(opt, argv);
		errno = 0;
		n = strtoul(optarg, &end, 0);
		if (!*optarg || *end || *optarg == '-' || errno ||
		    (opt == 'n' && !n))
			return out_usage("bad %s '%s' (a number%s)",
					 opt == 'n' ? "--count" : "--free-every",
					 optarg, opt == 'n' ? ", 1 or more" : "");
		if (opt == 'n')
			count = n;
		else
			free_every = n;
	}
	ret = wl_check(&w, optind, argc, argv);
	if (ret)
		return ret;
	if (dry_run_begin()) {
		wl_settings(&w);
		out_u64("count", count);
		out_u64("free_every", free_every);
		out_end();
		return 0;
	}

	fd = ctx_exporter(c);
	if (fd < 0)
		return 1;
	bufs = calloc(count, sizeof(*bufs));
	if (!bufs)
		return out_err(-ENOMEM, "%lu objects", count);
	ret = vp2p_exporter_stats(fd, &e0);
	if (ret) {
		ret = out_err(ret, "exporter statistics");
		goto out;
	}
	for (i = 0; i < count; i++) {
		ret = vbuf_create(c, w.mem, w.size, w.bo_flags, &bufs[i]);
		if (ret)
			goto out;
		if (!(w.bo_flags & VGEM_P2P_CREATE_DEVICE_ONLY))
			pattern_fill(bufs[i].ptr, bufs[i].size, 0, w.seed + i);
		/* holes between survivors: what makes compaction necessary */
		if (free_every && i % free_every == free_every - 1)
			vbuf_destroy(c, &bufs[i]);
		progress("objects", i + 1, count);
	}
	progress_done();
	ret = vp2p_exporter_stats(fd, &e1);
	if (ret) {
		ret = out_err(ret, "exporter statistics");
		goto out;
	}

	out_begin();
	out_arr("objects");
	for (i = 0; i < count; i++) {
		if (!bufs[i].bo.handle ||
		    vp2p_bo_info(fd, &bufs[i].bo, &info))
			continue;
		out_bo_info(NULL, &info);
		/* moves by compaction or eviction must keep the contents */
		if (!(w.bo_flags & VGEM_P2P_CREATE_DEVICE_ONLY) && bad < 0 &&
		    pattern_check(bufs[i].ptr, bufs[i].size, 0, w.seed + i) >= 0)
			bad = i;
	}
	out_close();
	out_bool("data_ok", bad < 0);
	out_u64("vram_used", e1.vram_used);
	out_u64("vram_size", e1.vram_size);
	out_exporter_delta("exporter", &e0, &e1);
	out_end();
	if (bad >= 0)
		ret = out_err(0, "object %" PRId64 " lost its contents", bad);
out:
	for (i = 0; i < count; i++)
		vbuf_destroy(c, &bufs[i]);
	free(bufs);
	return ret;
}

const struct command cmd_alloc = {
	.name = "alloc",
	.summary = "create objects and show placement, offsets, compaction",
	.run = alloc_run,
	.help =
	"[OPTIONS]\n"
	"\n"
	"Create objects with the given placement and export flags, fill each\n"
	"with its own pattern through the CPU mapping, and print where each\n"
	"one is (VRAM offset or system memory) after all of them exist, with\n"
	"the compactions and evictions the allocations caused. Every object is\n"
	"checked: moves must keep contents. Objects are freed on exit (they\n"
	"belong to the DRM file).\n"
	"\n"
	"  -m, --memory KIND  vram (default) or system\n"
	WL_HELP
	WL_HELP_FLAGS
	WL_HELP_DEVICE_ONLY
	"  -n, --count N      number of objects (default 1)\n"
	"  -f, --free-every K free every K-th object right away, to fragment\n"
	"                     VRAM (default 0: none)\n",
};
