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
	edu_fill(ref, size, 1);
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
		edu_fill(ref + off, chunk, 100 + turn);
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

igt_main
{
	igt_fixture {
		int n, fd;

		vfd = vgem_p2p_open();
		for (n = 0; n < MAX_EDU; n++) {
			int *slot;

			fd = edu_open_nth(n);
			if (fd < 0)
				continue;
			slot = p2p_reachable(vfd, fd) ? &near_fd : &far_fd;
			if (*slot < 0)
				*slot = fd;
			else
				close(fd);
		}
		igt_require_f(near_fd >= 0 && far_fd >= 0,
			      "needs one edu that reaches the exporter p2p and one that does not (multi)\n");
	}

	igt_describe("Alternating DMA from a p2p and a refused importer on a 4 MiB object: data intact, at most one move after the first refused mapping, no EBUSY.");
	igt_subtest("alternate-4M")
		alternate(4 << 20, 8);

	igt_describe("The same on a 64 MiB object, whose moves are slow under TCG.");
	igt_subtest("alternate-64M")
		alternate(64 << 20, 3);

	igt_describe("The object stays in system memory while the refused importer maps it, and returns to VRAM at the next p2p mapping after it unregisters.");
	igt_subtest("return-after-refused-unregisters") {
		uint64_t size = 1 << 20;
		uint32_t h = vgem_p2p_create(vfd, size, 0), knear, kfar;
		char *p = vgem_p2p_mmap(vfd, h, size, PROT_READ | PROT_WRITE);
		char *ref = malloc(size), *buf = malloc(size);
		struct drm_vgem_p2p_obj_info i;
		unsigned int ebusy = 0;
		uint64_t moves, fallbacks;

		igt_assert(ref && buf);
		edu_fill(ref, size, 7);
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
		/* served from system memory (edu_nic cannot tell) */
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

	igt_fixture {
		close(near_fd);
		close(far_fd);
		close(vfd);
	}
}
