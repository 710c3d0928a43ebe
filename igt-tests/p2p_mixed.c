// SPDX-License-Identifier: MIT
/*
 * Importers of mixed reachability on one object: one edu behind the
 * exporter's switch (p2p), one on a root port of its own (refused: served
 * from system memory). The exporter's placement must settle: once the
 * refused importer maps the object, it stays in system memory while that
 * importer does (VGEM_P2P_REASON_NO_P2P_IMPORTER), and comes back to VRAM
 * at the next p2p mapping after it has gone (docs/design.md, "Placement
 * with importers of mixed reachability"). DMAs racing with a move wait
 * for it: no EBUSY.
 *
 * Runs on `multi`, whose edu2 sits on a root port of its own.
 */
#include <pthread.h>

#include "p2p_common.h"

IGT_TEST_DESCRIPTION("Importers of mixed reachability on one object: placement settles, no EBUSY.");

#define RW (EDU_NIC_ACCESS_READ | EDU_NIC_ACCESS_WRITE)
#define MAX_EDU 8
/* A DMA that gets EBUSY is retried at most this often, then fails */
#define EBUSY_RETRIES 50

static int vfd = -1, near_fd = -1, far_fd = -1;

/*
 * EDU_NIC_IOCTL_DMA, counting and retrying EBUSY (so that the old
 * behaviour can be measured rather than only fail); any other error fails.
 */
static void dma_count_busy(int fd, uint32_t key, uint32_t dir, uint64_t off,
			   uint64_t len, void *buf, unsigned int *ebusy)
{
	int i, ret = 0;

	for (i = 0; i < EBUSY_RETRIES; i++) {
		ret = edu_dma_err(fd, key, dir, EDU_NIC_MODE_BULK, off, len,
				  buf);
		if (ret != -EBUSY)
			break;
		(*ebusy)++;
	}
	igt_assert_eq(ret, 0);
}

static uint32_t reg_count_busy(int fd, void *p, uint64_t len,
			       unsigned int *ebusy)
{
	uint32_t key = 0;
	int i, ret = 0;

	for (i = 0; i < EBUSY_RETRIES; i++) {
		ret = edu_reg_err(fd, p, len, RW, EDU_NIC_REG_MR_PREFETCH,
				  &key);
		if (ret != -EBUSY)
			break;
		(*ebusy)++;
	}
	igt_assert_eq(ret, 0);
	return key;
}

/*
 * Alternate DMAs from the two importers on one VRAM object of @size:
 * each turn, one importer writes a 64 KiB chunk and reads back a window
 * that covers it; the CPU checks the whole object at the end.
 */
static void alternate(uint64_t size, unsigned int rounds)
{
	const uint64_t chunk = 64 << 10, window = 1 << 20;
	uint32_t h = vgem_p2p_create(vfd, size, 0), knear, kfar;
	char *p = vgem_p2p_mmap(vfd, h, size, PROT_READ | PROT_WRITE);
	char *ref = malloc(size), *buf = malloc(window);
	struct drm_vgem_p2p_obj_info i0, i1;
	unsigned int ebusy = 0, turn;

	igt_assert(ref && buf);
	p2p_fill(ref, size, 1);
	memcpy(p, ref, size);
	igt_assert_eq(vgem_p2p_info(vfd, h).placement,
		      VGEM_P2P_PLACEMENT_VRAM);

	knear = reg_count_busy(near_fd, p, size, &ebusy);
	igt_assert_eq(vgem_p2p_info(vfd, h).placement,
		      VGEM_P2P_PLACEMENT_VRAM);
	/* The first refused mapping moves it to system memory, once */
	kfar = reg_count_busy(far_fd, p, size, &ebusy);
	i0 = vgem_p2p_info(vfd, h);
	igt_assert_eq(i0.placement, VGEM_P2P_PLACEMENT_SYSTEM);

	for (turn = 0; turn < 2 * rounds; turn++) {
		bool near = !(turn & 1);
		int fd = near ? near_fd : far_fd;
		uint32_t key = near ? knear : kfar;
		uint64_t off = ((uint64_t)turn * 7919 * chunk) %
			       (size - window + chunk);

		off -= off % chunk;
		if (off + window > size)
			off = size - window;
		p2p_fill(ref + off, chunk, 100 + turn);
		dma_count_busy(fd, key, EDU_NIC_DMA_TO_MR, off, chunk,
			       ref + off, &ebusy);
		memset(buf, 0xee, window);
		dma_count_busy(fd, key, EDU_NIC_DMA_FROM_MR, off, window, buf,
			       &ebusy);
		igt_assert_f(!memcmp(buf, ref + off, window),
			     "turn %u (%s): read back of [%#llx, +%#llx) differs\n",
			     turn, near ? "p2p importer" : "refused importer",
			     (unsigned long long)off,
			     (unsigned long long)window);
	}
	i1 = vgem_p2p_info(vfd, h);
	igt_info("%llu MiB, %u alternations: moves %llu up to the first refused mapping, %llu after; EBUSY %u; placement %s, reason %u; maps %llu (fallback %llu)\n",
		 (unsigned long long)(size >> 20), 2 * rounds,
		 (unsigned long long)i0.moves,
		 (unsigned long long)(i1.moves - i0.moves), ebusy,
		 i1.placement == VGEM_P2P_PLACEMENT_VRAM ? "vram" : "system",
		 i1.reason, (unsigned long long)i1.p2p_maps,
		 (unsigned long long)i1.fallback_maps);

	igt_assert(!memcmp(p, ref, size));
	igt_assert_eq(ebusy, 0);
	/* Settled: at most one move after the first refused mapping */
	igt_assert_f(i1.moves - i0.moves <= 1,
		     "%llu moves after the first refused mapping\n",
		     (unsigned long long)(i1.moves - i0.moves));
	igt_assert_eq(i1.placement, VGEM_P2P_PLACEMENT_SYSTEM);
	igt_assert_eq(i1.reason, VGEM_P2P_REASON_NO_P2P_IMPORTER);

	igt_assert_eq(edu_dereg_err(near_fd, knear), 0);
	igt_assert_eq(edu_dereg_err(far_fd, kfar), 0);
	igt_assert_eq(vgem_p2p_info(vfd, h).mappings, 0);
	munmap(p, size);
	gem_close(vfd, h);
	free(ref);
	free(buf);
}

/* Wait (for the exporter's free worker) until at most @used bytes of VRAM are in use */
static bool wait_vram_used(uint64_t used)
{
	int i;

	for (i = 0; i < 100; i++) {
		if (vgem_p2p_stats(vfd).vram_used <= used)
			return true;
		msleep(50);
	}
	return false;
}

/*
 * One importer streaming from an object of its own: register, read it
 * all by DMA and check it, deregister; again until told to stop. Errors
 * are kept for the main thread, which alone may fail the test.
 */
struct other_stream {
	int fd;
	char *p;
	const char *ref;
	uint64_t size;
	bool stop;		/* __atomic */
	unsigned int rounds;	/* __atomic */
	unsigned int mismatches;
	int err;
};

static void *other_stream_thread(void *arg)
{
	struct other_stream *s = arg;
	char *buf = malloc(s->size);

	if (!buf) {
		s->err = -ENOMEM;
		return NULL;
	}
	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		uint32_t key;
		int ret;

		ret = edu_reg_err(s->fd, s->p, s->size, EDU_NIC_ACCESS_READ,
				  EDU_NIC_REG_MR_PREFETCH, &key);
		if (ret) {
			s->err = ret;
			break;
		}
		ret = edu_dma_err(s->fd, key, EDU_NIC_DMA_FROM_MR,
				  EDU_NIC_MODE_BULK, 0, s->size, buf);
		if (!ret && memcmp(buf, s->ref, s->size))
			s->mismatches++;
		if (!ret)
			ret = edu_dereg_err(s->fd, key);
		else
			edu_dereg_err(s->fd, key);
		if (ret) {
			s->err = ret;
			break;
		}
		__atomic_add_fetch(&s->rounds, 1, __ATOMIC_RELEASE);
	}
	free(buf);
	return NULL;
}

/*
 * In the vgem_p2p trace @text: how many mappings of objects other than
 * the one of @big_size were both made and released (vgem_p2p_map, then
 * vgem_p2p_unmap) while that object was being copied, between its
 * vgem_p2p_move_begin and the vgem_p2p_move or vgem_p2p_evict that ends
 * the move. *@windows is the number of such moves.
 */
static unsigned int maps_during_moves(char *text, uint64_t big_size,
				      unsigned int *windows)
{
	unsigned int done = 0, open = 0;
	char big[32] = "", bo[32];
	bool copying = false;
	char *line, *save;

	*windows = 0;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long size;
		const char *sz;

		if (!trace_field(line, "bo=", bo, sizeof(bo)))
			continue;
		if (strstr(line, "vgem_p2p_move_begin:")) {
			sz = strstr(line, "size=");
			if (!sz || sscanf(sz, "size=%llu", &size) != 1 ||
			    size != big_size)
				continue;
			strcpy(big, bo);
			copying = true;
			open = 0;
			(*windows)++;
		} else if (copying && !strcmp(bo, big) &&
			   (strstr(line, "vgem_p2p_move:") ||
			    strstr(line, "vgem_p2p_evict:"))) {
			copying = false;
		} else if (copying && strcmp(bo, big)) {
			if (strstr(line, "vgem_p2p_map:"))
				open++;
			else if (strstr(line, "vgem_p2p_unmap:") && open) {
				open--;
				done++;
			}
		}
	}
	return done;
}

static void test_return_after_refused_unregisters(void)
{
	uint64_t size = 1 << 20;
	uint32_t h = vgem_p2p_create(vfd, size, 0), knear, kfar;
	char *p = vgem_p2p_mmap(vfd, h, size, PROT_READ | PROT_WRITE);
	char *ref = malloc(size), *buf = malloc(size);
	struct drm_vgem_p2p_obj_info i;
	unsigned int ebusy = 0;
	uint64_t moves, fallbacks;

	igt_assert(ref && buf);
	p2p_fill(ref, size, 7);
	memcpy(p, ref, size);
	igt_assert_eq(vgem_p2p_info(vfd, h).reason,
		      VGEM_P2P_REASON_CREATE);

	kfar = reg_count_busy(far_fd, p, size, &ebusy);
	i = vgem_p2p_info(vfd, h);
	igt_assert_eq(i.placement, VGEM_P2P_PLACEMENT_SYSTEM);
	igt_assert_eq(i.reason, VGEM_P2P_REASON_NO_P2P_IMPORTER);
	moves = i.moves;
	fallbacks = i.fallback_maps;

	/* A new p2p mapping while the refused one lives: no move */
	knear = reg_count_busy(near_fd, p, size, &ebusy);
	i = vgem_p2p_info(vfd, h);
	igt_assert_eq(i.placement, VGEM_P2P_PLACEMENT_SYSTEM);
	igt_assert_eq(i.reason, VGEM_P2P_REASON_NO_P2P_IMPORTER);
	igt_assert_eq_u64(i.moves, moves);
	/* served from system memory, which edu_nic maps itself */
	igt_assert_eq_u64(i.fallback_maps, fallbacks + 1);
	fallbacks = i.fallback_maps;

	/*
	 * The refused importer goes: nothing moves by itself (the
	 * p2p importer's mirror of system pages stays valid), and
	 * the reason says why it is still there.
	 */
	igt_assert_eq(edu_dereg_err(far_fd, kfar), 0);
	i = vgem_p2p_info(vfd, h);
	igt_assert_eq(i.placement, VGEM_P2P_PLACEMENT_SYSTEM);
	igt_assert_eq(i.reason, VGEM_P2P_REASON_NO_P2P_IMPORTER);
	igt_assert_eq_u64(i.moves, moves);
	dma_count_busy(near_fd, knear, EDU_NIC_DMA_FROM_MR, 0, size,
		       buf, &ebusy);
	igt_assert(!memcmp(buf, ref, size));
	igt_assert_eq_u64(vgem_p2p_info(vfd, h).moves, moves);

	/* The next p2p mapping brings it back, with one move */
	igt_assert_eq(edu_dereg_err(near_fd, knear), 0);
	knear = reg_count_busy(near_fd, p, size, &ebusy);
	i = vgem_p2p_info(vfd, h);
	igt_assert_eq(i.placement, VGEM_P2P_PLACEMENT_VRAM);
	igt_assert_eq(i.reason, VGEM_P2P_REASON_RETURNED);
	igt_assert_eq_u64(i.moves, moves + 1);
	/* and p2p this time: no new fallback mapping */
	igt_assert_eq_u64(i.fallback_maps, fallbacks);
	memset(buf, 0xee, size);
	dma_count_busy(near_fd, knear, EDU_NIC_DMA_FROM_MR, 0, size,
		       buf, &ebusy);
	igt_assert(!memcmp(buf, ref, size));
	igt_assert(!memcmp(p, ref, size));
	igt_assert_eq(ebusy, 0);

	igt_assert_eq(edu_dereg_err(near_fd, knear), 0);
	munmap(p, size);
	gem_close(vfd, h);
	free(ref);
	free(buf);
}

static void test_compaction_invalidates_only_movers(void)
{
	const uint64_t chunk = 4 << 20;
	struct drm_vgem_p2p_stats st, s1;
	unsigned int n, i, stayed = 0, moved = 0, ebusy = 0;
	uint32_t *h, *key, big;
	uint64_t *off, *inv, *moves;
	char **p;

	/* the subtests before freed their objects: any left leaked */
	igt_assert_f(wait_vram_used(0), "%llu bytes of VRAM in use\n",
		     (unsigned long long)vgem_p2p_stats(vfd).vram_used);
	st = vgem_p2p_stats(vfd);
	n = st.vram_size / chunk;
	igt_assert(n >= 6);
	h = calloc(n, sizeof(*h));
	key = calloc(n, sizeof(*key));
	off = calloc(n, sizeof(*off));
	inv = calloc(n, sizeof(*inv));
	moves = calloc(n, sizeof(*moves));
	p = calloc(n, sizeof(*p));
	igt_assert(h && key && off && inv && moves && p);

	/* fill VRAM, each object mirrored p2p by the near importer */
	for (i = 0; i < n; i++) {
		struct drm_vgem_p2p_obj_info info;

		h[i] = vgem_p2p_create(vfd, chunk, 0);
		p[i] = vgem_p2p_mmap(vfd, h[i], chunk,
				     PROT_READ | PROT_WRITE);
		fill_sparse(p[i], chunk, 300 + i);
		key[i] = reg_count_busy(near_fd, p[i], chunk, &ebusy);
		info = vgem_p2p_info(vfd, h[i]);
		igt_assert_eq(info.placement, VGEM_P2P_PLACEMENT_VRAM);
		off[i] = info.vram_offset;
	}
	/*
	 * Holes of one chunk above objects 0 and 1, which have none
	 * below them: compaction leaves those two where they are.
	 */
	for (i = 2; i < n; i += 2) {
		igt_assert_eq(edu_dereg_err(near_fd, key[i]), 0);
		munmap(p[i], chunk);
		gem_close(vfd, h[i]);
		h[i] = 0;
	}
	igt_assert(wait_vram_used(st.vram_size - (n - 1) / 2 * chunk));
	for (i = 0; i < n; i++) {
		if (!h[i])
			continue;
		inv[i] = edu_mr_stats(near_fd, key[i]).stats.invalidations;
		moves[i] = vgem_p2p_info(vfd, h[i]).moves;
	}

	/* two chunks fit in no hole: VRAM must be compacted */
	st = vgem_p2p_stats(vfd);
	big = vgem_p2p_create(vfd, 2 * chunk, 0);
	s1 = vgem_p2p_stats(vfd);
	igt_assert(s1.compactions > st.compactions);
	igt_assert_eq_u64(s1.evictions, st.evictions);

	for (i = 0; i < n; i++) {
		struct drm_vgem_p2p_obj_info info;
		uint64_t inv1;

		if (!h[i])
			continue;
		info = vgem_p2p_info(vfd, h[i]);
		inv1 = edu_mr_stats(near_fd, key[i]).stats.invalidations;
		igt_assert_eq(info.placement, VGEM_P2P_PLACEMENT_VRAM);
		if (info.vram_offset == off[i]) {
			stayed++;
			igt_assert_eq_u64(info.moves, moves[i]);
			igt_assert_f(inv1 == inv[i],
				     "object %u stayed at %#llx but its importer was invalidated %llu times\n",
				     i, (unsigned long long)off[i],
				     (unsigned long long)(inv1 - inv[i]));
		} else {
			moved++;
			igt_assert(info.moves > moves[i]);
			igt_assert(inv1 > inv[i]);
		}
		igt_assert(check_sparse(p[i], chunk, 300 + i));
	}
	igt_info("compaction: %u objects stayed, %u moved; %llu invalidations in all\n",
		 stayed, moved,
		 (unsigned long long)(s1.invalidations - st.invalidations));
	igt_assert_lte(2, stayed);
	igt_assert_lte(1, moved);
	igt_assert_eq(ebusy, 0);

	gem_close(vfd, big);
	for (i = 0; i < n; i++) {
		if (!h[i])
			continue;
		igt_assert_eq(edu_dereg_err(near_fd, key[i]), 0);
		munmap(p[i], chunk);
		gem_close(vfd, h[i]);
	}
	free(h);
	free(key);
	free(off);
	free(inv);
	free(moves);
	free(p);
}

static void test_move_stalls_only_its_object(void)
{
	const uint64_t big_size = 64 << 20, size = 256 << 10;
	struct other_stream s = { .fd = near_fd, .size = size };
	unsigned int windows, during, i;
	struct drm_vgem_p2p_obj_info info;
	uint32_t big, h;
	char *pbig, *ref, *text;
	pthread_t thread;
	uint64_t moves;

	/* vgem_p2p's own events, with CONFIG_FTRACE: qemu/kernel.config */
	igt_assert_f(access(TRACING "/events/vgem_p2p/enable", W_OK) == 0,
		     TRACING "/events/vgem_p2p/enable: %s\n", strerror(errno));
	igt_assert(wait_vram_used(0));
	big = vgem_p2p_create(vfd, big_size, 0);
	pbig = vgem_p2p_mmap(vfd, big, big_size, PROT_READ | PROT_WRITE);
	fill_sparse(pbig, big_size, 41);
	h = vgem_p2p_create(vfd, size, 0);
	s.p = vgem_p2p_mmap(vfd, h, size, PROT_READ | PROT_WRITE);
	ref = malloc(size);
	igt_assert(ref);
	p2p_fill(ref, size, 42);
	memcpy(s.p, ref, size);
	s.ref = ref;
	info = vgem_p2p_info(vfd, h);
	igt_assert_eq(info.placement, VGEM_P2P_PLACEMENT_VRAM);
	moves = info.moves;

	write_file(TRACING "/tracing_on", "0");
	write_file(TRACING "/trace", "");
	write_file(TRACING "/events/vgem_p2p/enable", "1");
	write_file(TRACING "/tracing_on", "1");

	igt_assert_eq(pthread_create(&thread, NULL, other_stream_thread,
				     &s), 0);
	/* the other importer is streaming before the first move */
	for (i = 0; i < 6000 && !__atomic_load_n(&s.rounds,
						 __ATOMIC_ACQUIRE); i++)
		msleep(10);
	vgem_p2p_move(vfd, big, VGEM_P2P_MOVE_SYSTEM, 0);
	vgem_p2p_move(vfd, big, VGEM_P2P_MOVE_VRAM, 0);
	__atomic_store_n(&s.stop, true, __ATOMIC_RELEASE);
	pthread_join(thread, NULL);

	write_file(TRACING "/tracing_on", "0");
	write_file(TRACING "/events/vgem_p2p/enable", "0");
	text = slurp(TRACING "/trace");
	during = maps_during_moves(text, big_size, &windows);
	free(text);
	write_file(TRACING "/trace", "");
	write_file(TRACING "/tracing_on", "1");

	igt_info("%u rounds of the other importer; %u made and released while the %llu MiB object was copying, over %u moves\n",
		 s.rounds, during,
		 (unsigned long long)(big_size >> 20), windows);
	igt_assert_eq(s.err, 0);
	igt_assert_eq(s.mismatches, 0);
	igt_assert_lt(0, s.rounds);
	igt_assert_eq(windows, 2);
	igt_assert_f(during > 0,
		     "the other object was never mapped while the large one was copying\n");
	igt_assert(check_sparse(pbig, big_size, 41));
	info = vgem_p2p_info(vfd, h);
	igt_assert_eq(info.placement, VGEM_P2P_PLACEMENT_VRAM);
	igt_assert_eq_u64(info.moves, moves);

	munmap(s.p, size);
	munmap(pbig, big_size);
	gem_close(vfd, h);
	gem_close(vfd, big);
	free(ref);
}

/*
 * Every edu device on the bus must have its edu_nic node, and the
 * kernel (PEER) says which reach the exporter; each mapping must get
 * what it says. Skip only where it says the mix is not there, and
 * never on multi, whose topology promises it (edu0 and edu1 behind
 * the exporter's switch, edu2 on a root port of its own).
 */
static void open_near_and_far(void)
{
	const char *topo = getenv("VP2P_TOPOLOGY");
	int n, fd, edus = edu_pci_count();

	vfd = vgem_p2p_open();
	for (n = 0; n < MAX_EDU && n < edus; n++) {
		struct drm_vgem_p2p_peer q;
		int *slot;
		bool p2p;

		fd = edu_open_promised(n);
		q = edu_peer_nth(vfd, n);
		p2p = p2p_reachable(vfd, fd);
		igt_assert_f(p2p == (q.path != VGEM_P2P_PEER_NONE),
			     "edu_nic%d: the kernel says path %u, a mapping went %s\n",
			     n, q.path, p2p ? "p2p" : "to system memory");
		slot = p2p ? &near_fd : &far_fd;
		if (*slot < 0)
			*slot = fd;
		else
			close(fd);
	}
	if (topo && !strcmp(topo, "multi"))
		igt_assert_f(near_fd >= 0 && far_fd >= 0,
			     "multi: no edu %s the exporter p2p\n",
			     near_fd < 0 ? "reaches" : "is refused by");
	igt_require_f(near_fd >= 0 && far_fd >= 0,
		      "needs one edu that reaches the exporter p2p and one that does not (multi)\n");
}

igt_main
{
	igt_fixture
		open_near_and_far();

	igt_describe("Alternating DMA from a p2p and a refused importer on a 4 MiB object: data intact, at most one move after the first refused mapping, no EBUSY.");
	igt_subtest("alternate-4M")
		alternate(4 << 20, 8);

	igt_describe("The same on a 64 MiB object, whose moves are slow under TCG.");
	igt_subtest("alternate-64M")
		alternate(64 << 20, 3);

	igt_describe("The object stays in system memory while the refused importer maps it, and returns to VRAM at the next p2p mapping after it unregisters.");
	igt_subtest("return-after-refused-unregisters")
		test_return_after_refused_unregisters();

	igt_describe("Compaction invalidates only the objects it moves: the importer mappings of objects that stay where they are survive it.");
	igt_subtest("compaction-invalidates-only-movers")
		test_compaction_invalidates_only_movers();

	igt_describe("A move copies without the device lock: while a 64 MiB object is copied out of VRAM and back, another importer's mappings of another object are made, DMAed from and released (vgem_p2p tracepoints), its data intact.");
	igt_subtest("move-stalls-only-its-object")
		test_move_stalls_only_its_object();

	igt_fixture {
		close(near_fd);
		close(far_fd);
		close(vfd);
	}
}
