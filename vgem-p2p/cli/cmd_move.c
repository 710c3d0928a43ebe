// SPDX-License-Identifier: MIT
/*
 * move: forced moves of an object while the NIC streams from it; every
 * pass is checked, so a stale address (the old VRAM is poisoned) shows.
 * evict: an object pushed out of VRAM, and what an importer then gets.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

struct stream {
	struct ctx *c;
	struct wl *w;
	volatile int stop;
	uint64_t passes;
	uint64_t bad_passes;
	int err;
};

static void msleep(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void *stream_thread(void *arg)
{
	struct stream *s = arg;
	uint8_t *buf = malloc(s->w->size);

	if (!buf) {
		s->err = -ENOMEM;
		return NULL;
	}
	while (!s->stop) {
		s->err = vp2p_dma(s->c->ifd, s->w->key, EDU_NIC_DMA_FROM_MR,
				  s->w->mode, 0, buf, s->w->size);
		if (s->err)
			break;
		if (pattern_check(buf, s->w->size, 0, s->w->seed) >= 0)
			s->bad_passes++;
		s->passes++;
	}
	free(buf);
	return NULL;
}

static int parse_target(const char *s, uint32_t *target)
{
	if (!strcmp(s, "vram"))
		*target = VGEM_P2P_MOVE_VRAM;
	else if (!strcmp(s, "vram-at"))
		*target = VGEM_P2P_MOVE_VRAM_AT;
	else if (!strcmp(s, "system"))
		*target = VGEM_P2P_MOVE_SYSTEM;
	else if (!strcmp(s, "cycle"))
		*target = ~0u;
	else
		return -EINVAL;
	return 0;
}

static int move_run(struct ctx *c, int argc, char **argv)
{
	static const struct option opts[] = {
		WL_LONGOPTS,
		WL_LONGOPT_MODE,
		WL_LONGOPTS_FLAGS,
		{ "target", required_argument, NULL, 'T' },
		{ "offset", required_argument, NULL, 'o' },
		{ "moves", required_argument, NULL, 'n' },
		{ "interval", required_argument, NULL, 't' },
		{ }
	};
	unsigned long moves = 1, interval = 500, i;
	uint32_t target = VGEM_P2P_MOVE_VRAM, t;
	const char *target_name = "vram";
	struct drm_vgem_p2p_obj_info before, after;
	struct stream s = { .c = c };
	uint64_t offset = 0, off;
	pthread_t thread;
	bool started = false, has_offset = false, ok;
	struct wl w;
	int opt, ret;
	char *end;

	wl_init(&w, MEM_VRAM, WL_MEM_OBJECT, WL_MODE | WL_FLAGS);
	while ((opt = getopt_long(argc, argv, WL_SHORTOPTS WL_SHORTOPT_MODE
				  "T:o:n:t:", opts, NULL)) != -1) {
		ret = wl_opt(&w, opt, optarg);
		if (ret == 0)
			continue;
		if (ret == 2)
			return 2;
		switch (opt) {
		case 'T':
			if (parse_target(optarg, &target))
				return out_usage("bad --target '%s' (vram, vram-at, system or cycle)",
						 optarg);
			target_name = optarg;
			break;
		case 'o':
			if (parse_size(optarg, &offset) && strcmp(optarg, "0"))
				return out_usage("bad --offset '%s' (bytes, with K, M or G)",
						 optarg);
			has_offset = true;
			break;
		case 'n':
		case 't':
			errno = 0;
			i = strtoul(optarg, &end, 0);
			if (!*optarg || *end || *optarg == '-' || errno ||
			    (opt == 'n' && !i))
				return out_usage("bad %s '%s' (a number%s)",
						 opt == 'n' ? "--moves" :
						 "--interval", optarg,
						 opt == 'n' ? ", 1 or more" : "");
			if (opt == 'n')
				moves = i;
			else
				interval = i;
			break;
		default:
			return out_badopt(opt, argv);
		}
	}
	ret = wl_check(&w, optind, argc, argv);
	if (ret)
		return ret;
	if (has_offset && target != VGEM_P2P_MOVE_VRAM_AT)
		return out_usage("--offset needs --target vram-at");
	if (dry_run_begin()) {
		wl_settings(&w);
		out_str("target", target_name);
		out_u64("offset", offset);
		out_u64("moves", moves);
		out_u64("interval", interval);
		out_end();
		return 0;
	}

	ret = wl_setup(c, &w, true);
	if (ret)
		goto out;
	w.access = EDU_NIC_ACCESS_READ;
	ret = wl_register(c, &w, 0);
	if (ret)
		goto out;
	ret = vp2p_bo_info(c->efd, &w.buf.bo, &before);
	if (ret) {
		ret = out_err(ret, "object info");
		goto out;
	}
	s.w = &w;
	ret = pthread_create(&thread, NULL, stream_thread, &s);
	if (ret) {
		ret = out_err(-ret, "start the stream");
		goto out;
	}
	started = true;

	/* let the stream map the object before the first move */
	msleep(interval);
	for (i = 0; i < moves; i++) {
		t = target == ~0u ? (i % 2 ? VGEM_P2P_MOVE_VRAM :
				     VGEM_P2P_MOVE_SYSTEM) : target;
		off = offset;
		ret = vp2p_bo_move(c->efd, &w.buf.bo, t, &off);
		if (ret) {
			ret = out_err(ret, "move %lu", i + 1);
			goto out;
		}
		progress("moves", i + 1, moves);
		msleep(interval);
	}
	progress_done();
	s.stop = 1;
	pthread_join(thread, NULL);
	started = false;
	if (s.err) {
		ret = out_err(s.err, "NIC DMA during the stream");
		goto out;
	}
	ret = vp2p_bo_info(c->efd, &w.buf.bo, &after);
	if (ret) {
		ret = out_err(ret, "object info");
		goto out;
	}

	ok = !s.bad_passes && s.passes;
	out_begin();
	out_obj("stream");
	out_u64("moves", moves);
	out_str("from", before.placement == VGEM_P2P_PLACEMENT_VRAM ?
		"vram" : "system");
	if (before.placement == VGEM_P2P_PLACEMENT_VRAM)
		out_hex("from_offset", before.vram_offset);
	out_u64("dma_passes", s.passes);
	out_u64("bad_passes", s.bad_passes);
	out_bool("data_ok", ok);
	out_close();
	wl_report(c, &w);
	out_end();
	if (!s.passes)
		ret = out_err(0, "the NIC made no pass during the moves");
	else if (s.bad_passes)
		ret = out_err(0, "%" PRIu64 " of %" PRIu64 " passes read wrong data",
			      s.bad_passes, s.passes);
out:
	if (started) {
		s.stop = 1;
		pthread_join(thread, NULL);
	}
	wl_teardown(c, &w);
	return ret;
}

const struct command cmd_move = {
	.name = "move",
	.summary = "forced moves of an object while the NIC streams from it",
	.run = move_run,
	.help =
	"[OPTIONS]\n"
	"\n"
	"Fill an object, register it, and stream NIC DMA reads of all of it in\n"
	"a thread, checking every pass, while the object is moved. A move\n"
	"invalidates the NIC's mapping; the NIC re-faults and gets the new\n"
	"address; the old VRAM is poisoned, so a stale address fails a pass.\n"
	"Prints the passes, the importer's invalidations and re-maps, and the\n"
	"exporter's moves and invalidations. Exits 1 on any bad pass.\n"
	"\n"
	"  -m, --memory KIND  vram (default) or system\n"
	WL_HELP
	WL_HELP_MODE
	WL_HELP_FLAGS
	"  -T, --target T     vram (elsewhere in VRAM, the default), vram-at,\n"
	"                     system, or cycle (system, vram, system, ...)\n"
	"  -o, --offset OFF   VRAM offset for vram-at (default 0)\n"
	"  -n, --moves N      number of moves (default 1)\n"
	"  -t, --interval MS  time between moves (default 500)\n",
};

static int evict_run(struct ctx *c, int argc, char **argv)
{
	static const struct option opts[] = {
		WL_LONGOPTS,
		WL_LONGOPT_MODE,
		WL_LONGOPTS_FLAGS,
		{ }
	};
	struct drm_vgem_p2p_obj_info i0, i1, i2;
	struct drm_vgem_p2p_stats e1;
	struct edu_nic_mr_stats m1;
	uint8_t *buf = NULL;
	int64_t bad0, bad1;
	struct wl w;
	int ret;

	wl_init(&w, MEM_VRAM, MEM_BIT(MEM_VRAM), WL_MODE | WL_FLAGS);
	if (!wl_args(&w, argc, argv, WL_SHORTOPTS WL_SHORTOPT_MODE, opts,
		     &ret))
		return ret;

	ret = wl_setup(c, &w, true);
	if (ret)
		goto out;
	w.access = EDU_NIC_ACCESS_READ;
	ret = wl_register(c, &w, 0);
	if (ret)
		goto out;
	buf = malloc(w.size);
	if (!buf) {
		ret = out_err(-ENOMEM, "buffer");
		goto out;
	}

	/* mapped before: the eviction has an importer mapping to tear down */
	ret = dma_range(c, w.key, EDU_NIC_DMA_FROM_MR, w.mode, 0, buf, w.size,
			"NIC read");
	if (ret) {
		ret = out_err(ret, "NIC DMA before the eviction");
		goto out;
	}
	bad0 = pattern_check(buf, w.size, 0, w.seed);
	vp2p_bo_info(c->efd, &w.buf.bo, &i0);

	ret = vp2p_bo_evict(c->efd, &w.buf.bo);
	if (ret) {
		ret = out_err(ret, "evict");
		goto out;
	}
	vp2p_bo_info(c->efd, &w.buf.bo, &i1);
	vp2p_mr_stats(c->ifd, w.key, &m1);
	vp2p_exporter_stats(c->efd, &e1);

	/* and after: the NIC re-faults; p2p brings the object back */
	memset(buf, 0, w.size);
	ret = dma_range(c, w.key, EDU_NIC_DMA_FROM_MR, w.mode, 0, buf, w.size,
			"NIC read");
	if (ret) {
		ret = out_err(ret, "NIC DMA after the eviction");
		goto out;
	}
	bad1 = pattern_check(buf, w.size, 0, w.seed);
	vp2p_bo_info(c->efd, &w.buf.bo, &i2);

	out_begin();
	out_bo_info("before", &i0);
	out_bo_info("evicted", &i1);
	out_obj("at_eviction");
	out_u64("importer_invalidations", m1.stats.invalidations);
	out_u64("exporter_evictions", e1.evictions - w.e0.evictions);
	out_close();
	out_bool("data_ok_before", bad0 < 0);
	out_bool("data_ok_after", bad1 < 0);
	wl_report(c, &w);
	out_end();
	if (bad0 >= 0 || bad1 >= 0)
		ret = out_err(0, "data mismatch at offset %" PRId64,
			      bad0 >= 0 ? bad0 : bad1);
out:
	free(buf);
	wl_teardown(c, &w);
	return ret;
}

const struct command cmd_evict = {
	.name = "evict",
	.summary = "evict a VRAM object the NIC maps, and map it again",
	.run = evict_run,
	.help =
	"[OPTIONS]\n"
	"\n"
	"Fill a VRAM object, register it and let the NIC read it, evict it to\n"
	"system memory (its importer mapping is invalidated), and let the NIC\n"
	"read it again: where p2p works the object comes back to VRAM on that\n"
	"fault, otherwise the NIC is served from system memory. Both reads are\n"
	"checked; prints the placement at each step and the counters.\n"
	"\n"
	"  -m, --memory KIND  vram (the default, and the only kind)\n"
	WL_HELP
	WL_HELP_MODE
	WL_HELP_FLAGS,
};
