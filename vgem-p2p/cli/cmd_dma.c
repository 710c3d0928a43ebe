// SPDX-License-Identifier: MIT
/*
 * register: what an importer gets when it mirrors a range.
 * dma: the NIC reads or writes a range, the data is checked, and the
 * counters say how it got there (p2p, IOVA, or bounced through memory);
 * with --monitor, the NIC polls a progress counter the "GPU" advances.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

static const char *access_name(uint32_t access)
{
	return access == EDU_NIC_ACCESS_READ ? "r" :
	       access == EDU_NIC_ACCESS_WRITE ? "w" : "rw";
}

static int register_run(struct ctx *c, int argc, char **argv)
{
	static const struct option opts[] = {
		WL_LONGOPTS,
		WL_LONGOPT_MODE,
		WL_LONGOPTS_FLAGS,
		WL_LONGOPT_DEVICE_ONLY,
		{ "access", required_argument, NULL, 'a' },
		{ "no-prefetch", no_argument, NULL, 'n' },
		{ }
	};
	uint32_t flags = EDU_NIC_REG_MR_PREFETCH;
	struct wl w;
	int opt, ret;

	wl_init(&w, MEM_VRAM, WL_MEM_ANY, WL_MODE | WL_FLAGS | WL_DEVICE_ONLY);
	while ((opt = getopt_long(argc, argv, WL_SHORTOPTS WL_SHORTOPT_MODE
				  "a:n", opts, NULL)) != -1) {
		ret = wl_opt(&w, opt, optarg);
		if (ret == 0)
			continue;
		if (ret == 2)
			return 2;
		if (opt == 'a' && !strcmp(optarg, "r"))
			w.access = EDU_NIC_ACCESS_READ;
		else if (opt == 'a' && !strcmp(optarg, "w"))
			w.access = EDU_NIC_ACCESS_WRITE;
		else if (opt == 'a' && !strcmp(optarg, "rw"))
			w.access = EDU_NIC_ACCESS_READ | EDU_NIC_ACCESS_WRITE;
		else if (opt == 'n')
			flags = 0;
		else if (opt == 'a')
			return out_usage("bad --access '%s' (r, w or rw)",
					 optarg);
		else
			return out_badopt(opt, argv);
	}
	ret = wl_check(&w, optind, argc, argv);
	if (ret)
		return ret;
	if (dry_run_begin()) {
		wl_settings(&w);
		out_str("access", access_name(w.access));
		out_bool("no_prefetch", !flags);
		out_end();
		return 0;
	}

	ret = wl_setup(c, &w, true);
	if (ret)
		goto out;
	ret = wl_register(c, &w, flags);
	if (ret)
		goto out;
	out_begin();
	out_str("access", access_name(w.access));
	out_bool("prefetch", flags);
	wl_report(c, &w);
	out_end();
out:
	wl_teardown(c, &w);
	return ret;
}

const struct command cmd_register = {
	.name = "register",
	.summary = "register memory with the NIC and show how it is mirrored",
	.run = register_run,
	.help =
	"[OPTIONS]\n"
	"\n"
	"Allocate memory of the given kind, register it with the importer\n"
	"(mirrored at once unless --no-prefetch) and show the registration:\n"
	"pages mirrored p2p or through system memory, the object's placement\n"
	"and live importer mappings, and what the exporter handed out.\n"
	"The registration is released when the command exits.\n"
	"\n"
	WL_HELP_MEMORY
	WL_HELP
	WL_HELP_MODE
	WL_HELP_FLAGS
	WL_HELP_DEVICE_ONLY
	"  -a, --access ACC   r, w or rw (default rw)\n"
	"  -n, --no-prefetch  register only; mirror on first DMA\n",
};

/* The "GPU": advances a counter in the region through the CPU mapping */
struct gpu {
	volatile uint64_t *counter;
	uint64_t target;
	unsigned int interval_ms;
	volatile int stop;
};

static void msleep(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void *gpu_thread(void *arg)
{
	struct gpu *g = arg;
	uint64_t v;

	for (v = 1; v <= g->target && !g->stop; v++) {
		msleep(g->interval_ms);
		__atomic_store_n(g->counter, v, __ATOMIC_RELEASE);
	}
	return NULL;
}

/*
 * The NIC polls the counter by DMA until it sees the target. An 8-byte
 * DMA of an aligned word cannot tear, so a value going backwards or one
 * the GPU never wrote would mean a stale or wrong address.
 */
static int monitor(struct ctx *c, struct wl *w, uint64_t target,
		   unsigned int interval_ms)
{
	struct gpu g = {
		.counter = (volatile uint64_t *)w->buf.ptr,
		.target = target,
		.interval_ms = interval_ms,
	};
	uint64_t v = 0, last = 0, polls = 0, changes = 0, backwards = 0;
	uint64_t limit = target * 64 + 256;
	pthread_t t;
	int ret;

	*g.counter = 0;
	ret = pthread_create(&t, NULL, gpu_thread, &g);
	if (ret)
		return out_err(-ret, "start the GPU thread");
	while (last < target && polls < limit) {
		ret = vp2p_dma(c->ifd, w->key, EDU_NIC_DMA_FROM_MR, w->mode, 0,
			       &v, sizeof(v));
		if (ret)
			break;
		polls++;
		if (v < last || v > target)
			backwards++;
		else if (v != last)
			changes++;
		if (v > last)
			last = v;
		progress("counter", last, target);
	}
	progress_done();
	g.stop = 1;
	pthread_join(t, NULL);
	if (ret)
		return out_err(ret, "NIC DMA of the counter");

	out_obj("monitor");
	out_u64("target", target);
	out_u64("seen", last);
	out_u64("polls", polls);
	out_u64("changes_seen", changes);
	out_u64("bad_values", backwards);
	out_bool("ok", last == target && !backwards);
	out_close();
	if (backwards)
		return out_err(0, "the NIC saw %" PRIu64 " values the GPU never wrote",
			       backwards);
	if (last != target)
		return out_err(0, "the NIC saw %" PRIu64 " of %" PRIu64 " after %" PRIu64 " polls",
			       last, target, polls);
	return 0;
}

/* One pass: read the region and check it, or write it and check it. */
static int pass(struct ctx *c, struct wl *w, bool write, uint8_t *buf,
		uint32_t seed, int64_t *bad)
{
	bool cpu_check = !(w->bo_flags & VGEM_P2P_CREATE_DEVICE_ONLY) &&
			 w->mem != MEM_DEVMEM;
	int ret;

	if (!write) {
		memset(buf, 0, w->size);
		ret = dma_range(c, w->key, EDU_NIC_DMA_FROM_MR, w->mode, 0,
				buf, w->size, "NIC read");
		if (ret)
			return out_err(ret, "NIC DMA from the region");
		*bad = pattern_check(buf, w->size, 0, seed);
		return 0;
	}
	pattern_fill(buf, w->size, 0, seed);
	ret = dma_range(c, w->key, EDU_NIC_DMA_TO_MR, w->mode, 0, buf,
			w->size, "NIC write");
	if (ret)
		return out_err(ret, "NIC DMA to the region");
	/*
	 * Check through the CPU where it can look without side effects; a
	 * CPU touch of device-private pages would migrate them back.
	 */
	if (cpu_check) {
		*bad = pattern_check(w->buf.ptr, w->size, 0, seed);
		return 0;
	}
	memset(buf, 0, w->size);
	ret = dma_range(c, w->key, EDU_NIC_DMA_FROM_MR, w->mode, 0, buf,
			w->size, "NIC read back");
	if (ret)
		return out_err(ret, "NIC DMA from the region");
	*bad = pattern_check(buf, w->size, 0, seed);
	return 0;
}

static int dma_run(struct ctx *c, int argc, char **argv)
{
	static const struct option opts[] = {
		WL_LONGOPTS,
		WL_LONGOPT_MODE,
		WL_LONGOPTS_FLAGS,
		WL_LONGOPT_DEVICE_ONLY,
		{ "write", no_argument, NULL, 'w' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "monitor", required_argument, NULL, 'c' },
		{ "interval", required_argument, NULL, 't' },
		{ }
	};
	unsigned long iterations = 1, n, target = 0, interval = 50;
	int64_t bad = -1, first_bad = -1;
	bool write = false;
	unsigned int seen = 0;	/* --iterations, --monitor, --interval */
	uint64_t bad_passes = 0;
	uint8_t *buf = NULL;
	struct wl w;
	int opt, ret;
	char *end;

	wl_init(&w, MEM_VRAM, WL_MEM_ANY, WL_MODE | WL_FLAGS | WL_DEVICE_ONLY);
	while ((opt = getopt_long(argc, argv, WL_SHORTOPTS WL_SHORTOPT_MODE
				  "wn:c:t:", opts, NULL)) != -1) {
		ret = wl_opt(&w, opt, optarg);
		if (ret == 0)
			continue;
		if (ret == 2)
			return 2;
		switch (opt) {
		case 'w':
			write = true;
			break;
		case 'n':
		case 'c':
		case 't':
			errno = 0;
			n = strtoul(optarg, &end, 0);
			if (!*optarg || *end || !n || *optarg == '-' || errno)
				return out_usage("bad %s '%s' (a number, 1 or more)",
						 opt == 'n' ? "--iterations" :
						 opt == 'c' ? "--monitor" :
						 "--interval", optarg);
			if (opt == 'n')
				iterations = n;
			else if (opt == 'c')
				target = n;
			else
				interval = n;
			seen |= 1u << (opt == 'n' ? 0 : opt == 'c' ? 1 : 2);
			break;
		default:
			return out_badopt(opt, argv);
		}
	}
	ret = wl_check(&w, optind, argc, argv);
	if (ret)
		return ret;
	/* --monitor polls a counter: no pass to repeat, nothing to write */
	if (target && write)
		return out_usage("--monitor and --write conflict");
	if (target && (seen & 1))
		return out_usage("--monitor and --iterations conflict");
	if (!target && (seen & 4))
		return out_usage("--interval needs --monitor");
	if (target && (w.mem == MEM_DEVMEM ||
		       (w.bo_flags & VGEM_P2P_CREATE_DEVICE_ONLY)))
		return out_usage("--monitor needs memory the CPU writes");
	if (dry_run_begin()) {
		wl_settings(&w);
		out_bool("write", write);
		out_u64("iterations", iterations);
		out_u64("monitor", target);
		out_u64("interval", interval);
		out_end();
		return 0;
	}

	ret = wl_setup(c, &w, !write);
	if (ret)
		goto out;
	ret = wl_register(c, &w, 0);
	if (ret)
		goto out;
	if (target) {
		out_begin();
		ret = monitor(c, &w, target, interval);
		if (ret == 0 || ret == 1)
			wl_report(c, &w);
		out_end();
		goto out;
	}

	buf = malloc(w.size);
	if (!buf) {
		ret = out_err(-ENOMEM, "buffer");
		goto out;
	}
	for (n = 0; n < iterations; n++) {
		ret = pass(c, &w, write, buf, write ? w.seed + n : w.seed,
			   &bad);
		if (ret)
			goto out;
		if (bad >= 0 && !bad_passes++)
			first_bad = bad;
	}
	out_begin();
	out_str("direction", write ? "write" : "read");
	out_u64("iterations", iterations);
	out_u64("bytes", iterations * w.size);
	out_u64("bad_passes", bad_passes);
	if (bad_passes)
		out_i64("first_bad_offset", first_bad);
	out_bool("data_ok", !bad_passes);
	wl_report(c, &w);
	out_end();
	if (bad_passes)
		ret = out_err(0, "data mismatch at offset %" PRId64, first_bad);
out:
	free(buf);
	wl_teardown(c, &w);
	return ret;
}

const struct command cmd_dma = {
	.name = "dma",
	.summary = "NIC DMA from or to memory, checked, with the counters",
	.run = dma_run,
	.help =
	"[OPTIONS]\n"
	"\n"
	"The CPU (standing in for the GPU) fills the memory with a pattern,\n"
	"the NIC reads it by DMA and the data is checked; with --write the NIC\n"
	"writes and the CPU (or a NIC read back, for device-only objects and\n"
	"device-private memory) checks. Prints the object's placement, the\n"
	"registration's counters (pages p2p, as bus addresses or IOVAs, or\n"
	"through system memory; faults, invalidations) and what the exporter's\n"
	"counters did meanwhile (leases, fallbacks, bytes bounced).\n"
	"Exits 1 if any byte is wrong.\n"
	"\n"
	WL_HELP_MEMORY
	WL_HELP
	WL_HELP_MODE
	WL_HELP_FLAGS
	WL_HELP_DEVICE_ONLY
	"  -w, --write        the NIC writes instead of reading\n"
	"  -n, --iterations N repeat the transfer N times, a stream (default 1)\n"
	"  -c, --monitor N    instead: a GPU thread advances a counter to N in\n"
	"                     the memory while the NIC polls it by DMA\n"
	"  -t, --interval MS  the GPU's step, with --monitor (default 50)\n",
};
