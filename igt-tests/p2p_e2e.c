// SPDX-License-Identifier: MIT
/*
 * End to end: the edu_nic importer DMAs into and out of vgem-p2p memory
 * through the patched hmm_range_fault(): VRAM objects (a special vma
 * offering p2p_map), device-private pages, forced moves while the device
 * streams, read-only and device-only objects, wrong addresses through the
 * vIOMMU, and two importers on one object.
 */
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <xf86drm.h>

#include "p2p_e2e_helpers.h"

IGT_TEST_DESCRIPTION("edu_nic importing vgem-p2p memory: p2p, fallback, IOVAs, moves, device-private pages.");

#define RW (EDU_NIC_ACCESS_READ | EDU_NIC_ACCESS_WRITE)

static void test_peer_verdict(int vfd, int fd)
{
	struct edu_nic_stats s;
	struct drm_vgem_p2p_peer q = { 0 };
	unsigned int d, b, dev, f;
	const char *topo = getenv("VP2P_TOPOLOGY");
	uint32_t want = VGEM_P2P_PEER_BUS;
	char bdf[32];

	edu_bdf(bdf, sizeof(bdf));
	igt_assert_eq(sscanf(bdf, "%x:%x:%x.%x", &d, &b, &dev, &f), 4);
	q.domain = d;
	q.bus = b;
	q.devfn = dev << 3 | f;
	igt_assert_eq(__vgem_p2p_peer(vfd, &q), 0);
	igt_info("%s: reachable %u, path %u\n", bdf, q.reachable, q.path);
	if (topo && !strcmp(topo, "split"))
		want = VGEM_P2P_PEER_NONE;
	else if (topo && !strcmp(topo, "iommu"))
		want = VGEM_P2P_PEER_MAPPED;
	if (topo)
		igt_assert_eq_u32(q.path, want);
	igt_assert_eq_u32(q.reachable, q.path != VGEM_P2P_PEER_NONE);

	/* and the importer's mapping gets what the kernel said */
	igt_assert_eq(p2p_reachable_stats(vfd, fd, &s),
		      q.path != VGEM_P2P_PEER_NONE);
	igt_assert_eq(s.pages_bus, q.path == VGEM_P2P_PEER_BUS);
	igt_assert_eq(s.pages_iova, q.path == VGEM_P2P_PEER_MAPPED);
}

static void test_vram_read_write(int vfd, int fd,
				 const struct edu_nic_dev_stats *caps)
{
	uint64_t size = 2 * EDU_PAGE;
	struct drm_vgem_p2p_stats v0, v1;
	struct drm_vgem_p2p_peer q;
	struct edu_nic_mr_stats s;
	uint32_t h = vgem_p2p_create(vfd, size, 0), key;
	char *p = vgem_p2p_mmap(vfd, h, size, PROT_READ | PROT_WRITE);
	char ref[2 * EDU_PAGE], buf[300];
	int p2p;

	p2p_fill(ref, size, 31);
	memcpy(p, ref, size);
	v0 = vgem_p2p_stats(vfd);
	key = edu_reg(fd, p, size, RW, 0);
	check_dma_read(fd, key, EDU_NIC_MODE_DEVICE, ref, 0, size);

	p2p_fill(buf, sizeof(buf), 32);
	edu_dma(fd, key, EDU_NIC_DMA_TO_MR, EDU_NIC_MODE_DEVICE,
		EDU_PAGE - 100, sizeof(buf), buf);
	memcpy(ref + EDU_PAGE - 100, buf, sizeof(buf));
	igt_assert(!memcmp(p, ref, size));

	s = edu_mr_stats(fd, key);
	v1 = vgem_p2p_stats(vfd);
	igt_info("importer: p2p pages %llu (bus %llu, iova %llu), system %llu; exporter: fallbacks %llu\n",
		 (unsigned long long)s.stats.pages_p2p,
		 (unsigned long long)s.stats.pages_bus,
		 (unsigned long long)s.stats.pages_iova,
		 (unsigned long long)s.stats.pages_system,
		 (unsigned long long)(v1.fallbacks - v0.fallbacks));
	/*
	 * The importer maps what the exporter says, so it knows a fallback
	 * (system pages it maps itself) from p2p (BAR pfns), and so does
	 * the exporter: exactly one of them served the object.
	 */
	igt_assert(v1.p2p_maps > v0.p2p_maps);
	p2p = s.stats.pages_p2p > 0;
	igt_assert_neq(p2p, v1.fallbacks > v0.fallbacks);
	if (p2p) {
		igt_assert_eq_u64(s.stats.pages_system, 0);
		igt_assert(s.stats.pages_p2p >= 2);
		igt_assert_eq_u64(s.stats.pages_bus + s.stats.pages_iova,
				  s.stats.pages_p2p);
	} else {
		igt_assert(s.stats.pages_system >= 2);
	}
	if (p2p && caps->caps & EDU_NIC_CAP_IOMMU)
		igt_assert_eq_u64(s.stats.pages_bus, 0);
	else if (p2p)
		igt_assert_eq_u64(s.stats.pages_iova, 0);
	/* what the kernel said it would get (PEER), and no other way */
	q = edu_peer_nth(vfd, 0);
	igt_assert_eq(p2p, q.path != VGEM_P2P_PEER_NONE);
	igt_assert_eq(s.stats.pages_bus > 0, q.path == VGEM_P2P_PEER_BUS);
	igt_assert_eq(s.stats.pages_iova > 0, q.path == VGEM_P2P_PEER_MAPPED);

	igt_assert_eq(edu_dereg_err(fd, key), 0);
	igt_assert_eq(vgem_p2p_info(vfd, h).mappings, 0);
	munmap(p, size);
	gem_close(vfd, h);
}

/*
 * Against the reference, not the mapping: a checksum of the buffer
 * against one of the CPU's view passed if both saw the same wrong bytes.
 * And through the path the kernel promises for the pair (PEER), as
 * vram-read-write checks it: a bulk copy that silently went through
 * system memory moves the right bytes too.
 */
static void test_vram_bulk(int vfd, int fd)
{
	uint64_t size = 32 * EDU_PAGE;
	uint32_t h = vgem_p2p_create(vfd, size, 0), key;
	char *p = vgem_p2p_mmap(vfd, h, size, PROT_READ | PROT_WRITE);
	char *buf = malloc(size), *ref = malloc(size);
	struct drm_vgem_p2p_peer q = edu_peer_nth(vfd, 0);
	struct edu_nic_mr_stats s;

	igt_assert(buf && ref);
	p2p_fill(ref, size, 33);
	memcpy(p, ref, size);
	key = edu_reg(fd, p, size, RW, 0);
	memset(buf, 0, size);
	edu_dma(fd, key, EDU_NIC_DMA_FROM_MR, EDU_NIC_MODE_BULK, 0,
		size, buf);
	igt_assert_f(!memcmp(buf, ref, size),
		     "bulk read of a VRAM object differs from what the CPU wrote\n");
	p2p_fill(ref, size, 34);
	memcpy(buf, ref, size);
	edu_dma(fd, key, EDU_NIC_DMA_TO_MR, EDU_NIC_MODE_BULK, 0,
		size, buf);
	igt_assert_f(!memcmp(p, ref, size),
		     "the CPU reads other bytes than a bulk write put in a VRAM object\n");
	s = edu_mr_stats(fd, key);
	igt_assert_eq_u64(s.stats.bulk_bytes, 2 * size);
	igt_assert_f((s.stats.pages_p2p > 0) == (q.path != VGEM_P2P_PEER_NONE) &&
		     (s.stats.pages_bus > 0) == (q.path == VGEM_P2P_PEER_BUS) &&
		     (s.stats.pages_iova > 0) == (q.path == VGEM_P2P_PEER_MAPPED) &&
		     (q.path == VGEM_P2P_PEER_NONE || !s.stats.pages_system),
		     "the kernel promised path %u, the bulk copy went through %llu bus, %llu IOVA, %llu system pages\n",
		     q.path, (unsigned long long)s.stats.pages_bus,
		     (unsigned long long)s.stats.pages_iova,
		     (unsigned long long)s.stats.pages_system);
	igt_assert_eq(edu_dereg_err(fd, key), 0);
	munmap(p, size);
	gem_close(vfd, h);
	free(ref);
	free(buf);
}

static void test_vram_bulk_odd_destinations(int vfd, int fd)
{
	uint64_t size = 32 * EDU_PAGE, off = 7, len = size - 12;
	uint32_t h = vgem_p2p_create(vfd, size, 0), h2, key;
	char *p = vgem_p2p_mmap(vfd, h, size, PROT_READ | PROT_WRITE);
	char *buf = malloc(size + 16), *q;

	p2p_fill(p, size, 35);
	key = edu_reg(fd, p, size, RW, 0);

	memset(buf, 0xee, size + 16);
	edu_dma(fd, key, EDU_NIC_DMA_FROM_MR, EDU_NIC_MODE_BULK, off,
		len, buf + 3);
	igt_assert(!memcmp(buf + 3, p + off, len));
	igt_assert(buf[2] == (char)0xee && buf[3 + len] == (char)0xee);

	h2 = vgem_p2p_create(vfd, size, 0);
	q = vgem_p2p_mmap(vfd, h2, size, PROT_READ | PROT_WRITE);
	memset(q, 0xee, size);
	edu_dma(fd, key, EDU_NIC_DMA_FROM_MR, EDU_NIC_MODE_BULK, off,
		len, q + 5);
	igt_assert(!memcmp(q + 5, p + off, len));
	igt_assert(q[4] == (char)0xee && q[5 + len] == (char)0xee);

	igt_assert_eq(edu_dereg_err(fd, key), 0);
	munmap(q, size);
	munmap(p, size);
	gem_close(vfd, h);
	gem_close(vfd, h2);
	free(buf);
}

static void test_read_only_object(int vfd, int fd)
{
	uint64_t size = EDU_PAGE;
	uint32_t h = vgem_p2p_create(vfd, size, VGEM_P2P_CREATE_READ_ONLY);
	char *p = vgem_p2p_mmap(vfd, h, size, PROT_READ | PROT_WRITE);
	char ref[EDU_PAGE], other[EDU_PAGE];
	uint32_t key;

	p2p_fill(ref, size, 35);
	p2p_fill(other, size, 36);
	igt_assert(memcmp(ref, other, 64));
	memcpy(p, ref, size);
	key = edu_reg(fd, p, size, RW, 0);
	check_dma_read(fd, key, EDU_NIC_MODE_DEVICE, ref, 0, size);
	igt_assert_eq(edu_dma_err(fd, key, EDU_NIC_DMA_TO_MR,
				  EDU_NIC_MODE_DEVICE, 0, 64, other),
		      -EPERM);
	/* the object still holds what the CPU wrote, every byte */
	check_dma_read(fd, key, EDU_NIC_MODE_DEVICE, ref, 0, size);
	igt_assert_f(!memcmp(p, ref, size),
		     "a refused device write changed the object\n");
	igt_assert_eq(edu_dereg_err(fd, key), 0);
	munmap(p, size);
	gem_close(vfd, h);
}

static void test_device_only_object(int vfd, int fd)
{
	uint64_t size = EDU_PAGE;
	uint32_t h = vgem_p2p_create(vfd, size, VGEM_P2P_CREATE_DEVICE_ONLY);
	char *p = vgem_p2p_mmap(vfd, h, size, PROT_READ | PROT_WRITE);
	char ref[256];
	uint32_t key = edu_reg(fd, p, size, RW, 0);
	struct drm_vgem_p2p_obj_info i0, i1;

	p2p_fill(ref, sizeof(ref), 36);
	edu_dma(fd, key, EDU_NIC_DMA_TO_MR, EDU_NIC_MODE_DEVICE, 1000,
		sizeof(ref), ref);
	/*
	 * Moved between the write and the read: a read that still finds
	 * the bytes went through the exporter's copy, not through a device
	 * mapping or a buffer the write left behind.
	 */
	i0 = vgem_p2p_info(vfd, h);
	igt_assert_eq(vgem_p2p_move_err(vfd, h,
					i0.placement == VGEM_P2P_PLACEMENT_VRAM ?
					VGEM_P2P_MOVE_SYSTEM :
					VGEM_P2P_MOVE_VRAM), 0);
	i1 = vgem_p2p_info(vfd, h);
	igt_assert_neq_u32(i1.placement, i0.placement);
	igt_assert(i1.moves > i0.moves);
	check_dma_read(fd, key, EDU_NIC_MODE_DEVICE, ref, 1000,
		       sizeof(ref));
	igt_assert_eq(edu_dereg_err(fd, key), 0);
	munmap(p, size);
	gem_close(vfd, h);
}

static void test_mprotect_revokes(int vfd, int fd)
{
	uint64_t size = 2 * EDU_PAGE;
	uint32_t h = vgem_p2p_create(vfd, size, VGEM_P2P_CREATE_DEVICE_ONLY);
	char *p = vgem_p2p_mmap(vfd, h, size, PROT_READ | PROT_WRITE);
	uint32_t key = edu_reg(fd, p, size, RW, EDU_NIC_REG_MR_PREFETCH);
	char ref[256], buf[256];
	int ret;

	p2p_fill(ref, sizeof(ref), 37);
	edu_dma(fd, key, EDU_NIC_DMA_TO_MR, EDU_NIC_MODE_DEVICE,
		EDU_PAGE + 8, sizeof(ref), ref);
	igt_assert(vgem_p2p_info(vfd, h).mappings >= 1);

	igt_assert_eq(mprotect(p, size, PROT_READ), 0);
	/* the writable mapping is gone, not kept for the next DMA */
	igt_assert_eq(vgem_p2p_info(vfd, h).mappings, 0);
	p2p_fill(buf, sizeof(buf), 38);
	ret = edu_dma_err(fd, key, EDU_NIC_DMA_TO_MR,
			  EDU_NIC_MODE_DEVICE, EDU_PAGE + 8,
			  sizeof(buf), buf);
	igt_assert_f(ret == -EPERM || ret == -EFAULT,
		     "DMA write after PROT_READ: %d\n", ret);
	check_dma_read(fd, key, EDU_NIC_MODE_DEVICE, ref, EDU_PAGE + 8,
		       sizeof(ref));

	igt_assert_eq(mprotect(p, size, PROT_NONE), 0);
	igt_assert_eq(vgem_p2p_info(vfd, h).mappings, 0);
	ret = edu_dma_err(fd, key, EDU_NIC_DMA_FROM_MR,
			  EDU_NIC_MODE_DEVICE, EDU_PAGE + 8,
			  sizeof(buf), buf);
	igt_assert_f(ret == -EPERM || ret == -EFAULT,
		     "DMA read after PROT_NONE: %d\n", ret);

	igt_assert_eq(edu_dereg_err(fd, key), 0);
	munmap(p, size);
	gem_close(vfd, h);
}

static void test_fallback_overlapping_mrs(int vfd, int fd)
{
	uint64_t size = 2 * EDU_PAGE;
	uint32_t h = vgem_p2p_create(vfd, size, VGEM_P2P_CREATE_NO_P2P);
	char *p = vgem_p2p_mmap(vfd, h, size, PROT_READ | PROT_WRITE);
	char ref[256];
	uint32_t k1, k2;

	memset(p, 0, size);
	k1 = edu_reg(fd, p, size, RW, EDU_NIC_REG_MR_PREFETCH);
	k2 = edu_reg(fd, p, size, RW, EDU_NIC_REG_MR_PREFETCH);
	igt_assert_eq(vgem_p2p_info(vfd, h).placement,
		      VGEM_P2P_PLACEMENT_SYSTEM);
	igt_assert_eq(vgem_p2p_info(vfd, h).mappings, 2);

	p2p_fill(ref, sizeof(ref), 40);
	edu_dma(fd, k1, EDU_NIC_DMA_TO_MR, EDU_NIC_MODE_DEVICE,
		EDU_PAGE + 64, sizeof(ref), ref);
	check_dma_read(fd, k2, EDU_NIC_MODE_DEVICE, ref, EDU_PAGE + 64,
		       sizeof(ref));
	igt_assert(!memcmp(p + EDU_PAGE + 64, ref, sizeof(ref)));

	igt_assert_eq(edu_dereg_err(fd, k1), 0);
	igt_assert_eq(edu_dereg_err(fd, k2), 0);
	igt_assert_eq(vgem_p2p_info(vfd, h).mappings, 0);
	munmap(p, size);
	gem_close(vfd, h);
}

static void test_move_during_stream(int vfd, int fd)
{
	uint64_t size = 2 * EDU_PAGE;
	uint32_t h = vgem_p2p_create(vfd, size, 0);
	char *p = vgem_p2p_mmap(vfd, h, size, PROT_READ | PROT_WRITE);
	char ref[2 * EDU_PAGE];
	struct stream st = { .fd = fd, .len = size, .want = ref };
	struct edu_nic_mr_stats s;
	uint64_t moves0 = vgem_p2p_info(vfd, h).moves, old;
	/* where lookups leave a VRAM object in place, it moves only here */
	bool p2p = edu_peer_p2p(vfd, 0);
	pthread_t t;
	int i, stale = -1;

	p2p_fill(ref, size, 37);
	memcpy(p, ref, size);
	st.key = edu_reg(fd, p, size, EDU_NIC_ACCESS_READ, 0);
	igt_assert_eq(pthread_create(&t, NULL, stream_thread, &st), 0);
	for (i = 0; i < 4; i++) {
		msleep(250);
		old = vgem_p2p_info(vfd, h).vram_offset;
		igt_assert_eq(vgem_p2p_move_err(vfd, h, i == 2 ?
				      VGEM_P2P_MOVE_SYSTEM :
				      VGEM_P2P_MOVE_VRAM), 0);
		/*
		 * Within VRAM, the place it left reads poison; not after
		 * the move to system, where the stream's return to VRAM
		 * may take that place again at once. Asserted once the
		 * stream has stopped: a failure must not leave it running.
		 */
		if (p2p && i != 2 && old != ~0ull && stale < 0 &&
		    !vgem_p2p_vram_poisoned(vfd, old, size))
			stale = i;
	}
	msleep(500);
	st.stop = 1;
	pthread_join(t, NULL);
	s = edu_mr_stats(fd, st.key);
	igt_info("%d DMAs, %d bad, err %d; %llu invalidations, %llu remaps, %llu moves\n",
		 st.iterations, st.bad, st.err,
		 (unsigned long long)s.stats.invalidations,
		 (unsigned long long)s.stats.remaps,
		 (unsigned long long)(vgem_p2p_info(vfd, h).moves - moves0));
	igt_assert_eq(st.err, 0);
	igt_assert_eq(st.bad, 0);
	igt_assert_f(stale < 0, "move %d left a range that is not poison\n",
		     stale);
	igt_assert(st.iterations > 0);
	igt_assert(s.stats.invalidations >= 1);
	igt_assert(s.stats.remaps >= 1);
	check_dma_read(fd, st.key, EDU_NIC_MODE_DEVICE, ref, 0, size);
	/* new bytes, read through the registration of before the moves */
	p2p_fill(ref, size, 38);
	memcpy(p, ref, size);
	check_dma_read(fd, st.key, EDU_NIC_MODE_DEVICE, ref, 0, size);
	igt_assert_eq(edu_dereg_err(fd, st.key), 0);
	munmap(p, size);
	gem_close(vfd, h);
}

static void test_read_move_read(int vfd, int fd)
{
	uint64_t size = EDU_PAGE;
	uint32_t h = vgem_p2p_create(vfd, size, 0);
	char *p = vgem_p2p_mmap(vfd, h, size, PROT_READ | PROT_WRITE);
	char ref[EDU_PAGE];
	uint64_t before, after;
	uint32_t key;

	p2p_fill(ref, size, 41);
	memcpy(p, ref, size);
	key = edu_reg(fd, p, size, EDU_NIC_ACCESS_READ, 0);
	check_dma_read(fd, key, EDU_NIC_MODE_DEVICE, ref, 0, size);
	before = vgem_p2p_info(vfd, h).vram_offset;
	igt_assert_eq(vgem_p2p_move_err(vfd, h, VGEM_P2P_MOVE_VRAM), 0);
	after = vgem_p2p_info(vfd, h).vram_offset;
	igt_assert_neq_u64(before, after);
	/* the place it left reads poison (on the fallback it had none) */
	if (before != ~0ull)
		igt_assert(vgem_p2p_vram_poisoned(vfd, before, size));
	check_dma_read(fd, key, EDU_NIC_MODE_DEVICE, ref, 0, size);
	igt_assert(edu_mr_stats(fd, key).stats.remaps >= 1);
	/* new bytes where it went, read through the same registration */
	p2p_fill(ref, size, 42);
	memcpy(p, ref, size);
	check_dma_read(fd, key, EDU_NIC_MODE_DEVICE, ref, 0, size);
	igt_assert_eq(edu_dereg_err(fd, key), 0);
	munmap(p, size);
	gem_close(vfd, h);
}

/*
 * A lookup brings an evicted object back to VRAM where the importer
 * reaches it: an allocation, charged to the process whose registration
 * looked it up (here the object's creator too). Past that process's
 * vram_quota_pages the object stays in system memory and the importer
 * reads it there; once quota is free, a new registration's lookup brings
 * it back. The quota is per process, so this runs in a child of its own
 * (with files of its own: a registration belongs to its opener's mm):
 * what the other subtests left in VRAM (an object freed by a worker not
 * yet run) would count against it.
 */
static void quota_keeps_evicted_process(void)
{
	int vfd = vgem_p2p_open(), fd = edu_open();
	uint64_t size = EDU_PAGE;
	uint32_t h = vgem_p2p_create(vfd, size, 0);
	uint32_t other = vgem_p2p_create(vfd, size, 0);
	char *p = vgem_p2p_mmap(vfd, h, size, PROT_READ | PROT_WRITE);
	struct edu_nic_mr_stats ms;
	char ref[EDU_PAGE];
	uint32_t key;

	p2p_fill(ref, size, 43);
	memcpy(p, ref, size);
	igt_assert_eq(vgem_p2p_move_err(vfd, h, VGEM_P2P_MOVE_SYSTEM), 0);
	/* the process's quota: the page its other object holds */
	vgem_p2p_set_vram_quota(size / 4096);

	key = edu_reg(fd, p, size, EDU_NIC_ACCESS_READ, 0);
	check_dma_read(fd, key, EDU_NIC_MODE_DEVICE, ref, 0, size);
	igt_assert_eq_u32(vgem_p2p_info(vfd, h).placement,
			  VGEM_P2P_PLACEMENT_SYSTEM);
	ms = edu_mr_stats(fd, key);
	igt_assert_eq_u64(ms.stats.cur_pages_system, 1);
	igt_assert_eq_u64(ms.stats.cur_pages_p2p, 0);
	igt_assert_eq(edu_dereg_err(fd, key), 0);

	igt_assert_eq(vgem_p2p_move_err(vfd, other, VGEM_P2P_MOVE_SYSTEM), 0);
	key = edu_reg(fd, p, size, EDU_NIC_ACCESS_READ, 0);
	check_dma_read(fd, key, EDU_NIC_MODE_DEVICE, ref, 0, size);
	igt_assert_eq_u32(vgem_p2p_info(vfd, h).placement,
			  VGEM_P2P_PLACEMENT_VRAM);
	igt_assert_eq_u64(edu_mr_stats(fd, key).stats.cur_pages_p2p, 1);
	igt_assert_eq(edu_dereg_err(fd, key), 0);

	munmap(p, size);
	gem_close(vfd, other);
	gem_close(vfd, h);
	close(fd);
	close(vfd);
}

static void test_quota_keeps_evicted(int fd)
{
	int vfd = vgem_p2p_open();

	igt_require(p2p_checked(vfd, fd, 0));
	close(vfd);
	igt_install_exit_handler(vgem_p2p_restore_vram_quota);
	igt_fork(child, 1)
		quota_keeps_evicted_process();
	igt_waitchildren();
}

static void test_compaction_during_stream(int vfd, int fd)
{
	struct drm_vgem_p2p_stats st, s1;
	uint64_t chunk = MiB, size = 2 * EDU_PAGE, top = 0, before;
	unsigned int n = 0, i, j, itop = 0, max;
	int it0;
	uint32_t h, big, *fill;
	unsigned int *rank;
	uint64_t *off;
	char ref[2 * EDU_PAGE], *p;
	struct stream s = { .fd = fd, .len = size, .want = ref };
	struct drm_vgem_p2p_obj_info bi;
	struct edu_nic_mr_stats ms;
	pthread_t t;

	igt_require(p2p_checked(vfd, fd, 0));
	/* fill VRAM with 1 MiB objects: every hole left is smaller */
	st = vgem_p2p_stats(vfd);
	max = st.vram_size / chunk;
	fill = calloc(max, sizeof(*fill));
	off = calloc(max, sizeof(*off));
	rank = calloc(max, sizeof(*rank));
	igt_assert(fill && off && rank);
	while (st.vram_size - st.vram_used >= chunk) {
		igt_assert(n < max);
		fill[n] = vgem_p2p_create(vfd, chunk, 0);
		off[n] = vgem_p2p_info(vfd, fill[n]).vram_offset;
		if (off[n] >= top) {
			top = off[n];
			itop = n;
		}
		n++;
		st = vgem_p2p_stats(vfd);
	}
	igt_assert(n >= 12);

	/* the streamed object goes above every hole compaction will close */
	gem_close(vfd, fill[itop]);
	fill[itop] = 0;
	h = vgem_p2p_create(vfd, size, 0);
	vgem_p2p_move(vfd, h, VGEM_P2P_MOVE_VRAM_AT, top + chunk - size);
	p = vgem_p2p_mmap(vfd, h, size, PROT_READ | PROT_WRITE);
	p2p_fill(ref, size, 43);
	memcpy(p, ref, size);

	/*
	 * Free every other filler in address order: the 1 MiB objects
	 * left between the holes keep them from merging, so 4 MiB fits
	 * nowhere until compaction.
	 */
	for (i = 0; i < n; i++) {
		unsigned int k;

		for (k = 0; k < n; k++)
			if (fill[k] && off[k] < off[i])
				rank[i]++;
	}
	for (i = 0, j = 0; i < n; i++) {
		if (fill[i] && rank[i] % 2 == 0) {
			gem_close(vfd, fill[i]);
			fill[i] = 0;
			j++;
		}
	}
	igt_assert(j >= 4);

	s.key = edu_reg(fd, p, size, EDU_NIC_ACCESS_READ, 0);
	igt_assert_eq(pthread_create(&t, NULL, stream_thread, &s), 0);
	while (!s.iterations && !s.err)
		msleep(50);

	st = vgem_p2p_stats(vfd);
	before = vgem_p2p_info(vfd, h).vram_offset;
	big = vgem_p2p_create(vfd, 4 * chunk, 0);
	s1 = vgem_p2p_stats(vfd);
	/* the stream goes on at the new place: two more DMAs at least */
	it0 = s.iterations;
	while (s.iterations < it0 + 2 && !s.err)
		msleep(50);
	s.stop = 1;
	pthread_join(t, NULL);
	ms = edu_mr_stats(fd, s.key);
	igt_info("%d DMAs (%d after the compaction), %d bad, err %d; offset %#llx -> %#llx; %llu invalidations, %llu remaps\n",
		 s.iterations, s.iterations - it0, s.bad, s.err,
		 (unsigned long long)before,
		 (unsigned long long)vgem_p2p_info(vfd, h).vram_offset,
		 (unsigned long long)ms.stats.invalidations,
		 (unsigned long long)ms.stats.remaps);

	igt_assert(s1.compactions > st.compactions);
	igt_assert_eq_u64(s1.evictions, st.evictions);
	igt_assert_eq_u32(vgem_p2p_info(vfd, big).placement,
			  VGEM_P2P_PLACEMENT_VRAM);
	igt_assert_eq_u32(vgem_p2p_info(vfd, h).placement,
			  VGEM_P2P_PLACEMENT_VRAM);
	igt_assert(vgem_p2p_info(vfd, h).vram_offset < before);
	igt_assert_eq(s.err, 0);
	igt_assert_eq(s.bad, 0);
	igt_assert(ms.stats.invalidations >= 1);
	igt_assert(ms.stats.remaps >= 1);
	check_dma_read(fd, s.key, EDU_NIC_MODE_DEVICE, ref, 0, size);
	/*
	 * The place it left reads poison, unless the new object took it
	 * (and cleared it); new bytes are read through the registration
	 * of before the compaction.
	 */
	bi = vgem_p2p_info(vfd, big);
	if (before + size <= bi.vram_offset ||
	    bi.vram_offset + 4 * chunk <= before)
		igt_assert(vgem_p2p_vram_poisoned(vfd, before, size));
	else
		igt_info("the new object took the old place\n");
	p2p_fill(ref, size, 44);
	memcpy(p, ref, size);
	check_dma_read(fd, s.key, EDU_NIC_MODE_DEVICE, ref, 0, size);
	igt_assert_eq(edu_dereg_err(fd, s.key), 0);
	munmap(p, size);
	gem_close(vfd, h);
	gem_close(vfd, big);
	for (i = 0; i < n; i++)
		if (fill[i])
			gem_close(vfd, fill[i]);
	free(fill);
	free(off);
	free(rank);
}

static void test_devmem_no_migration(int vfd, int fd)
{
	uint64_t size = 2 * EDU_PAGE;
	char *p = edu_anon(size), ref[2 * EDU_PAGE];
	struct drm_vgem_p2p_migrate m = {
		.addr = (uintptr_t)p, .size = size,
		.direction = VGEM_P2P_MIGRATE_TO_DEVICE,
	};
	struct drm_vgem_p2p_stats v0, v1;
	struct edu_nic_mr_stats s;
	uint32_t key;

	p2p_fill(ref, size, 38);
	memcpy(p, ref, size);
	do_ioctl(vfd, DRM_IOCTL_VGEM_P2P_MIGRATE, &m);
	igt_assert_eq_u64(m.npages, 2);
	v0 = vgem_p2p_stats(vfd);
	key = edu_reg(fd, p, size, EDU_NIC_ACCESS_READ, 0);
	check_dma_read(fd, key, EDU_NIC_MODE_DEVICE, ref + 10, 10,
		       size - 20);
	v1 = vgem_p2p_stats(vfd);
	s = edu_mr_stats(fd, key);
	igt_info("devmem p2p maps +%llu, to ram +%llu; importer p2p pages %llu\n",
		 (unsigned long long)(v1.devmem_p2p_maps - v0.devmem_p2p_maps),
		 (unsigned long long)(v1.devmem_to_ram - v0.devmem_to_ram),
		 (unsigned long long)s.stats.pages_p2p);
	if (p2p_checked(vfd, fd, 0)) {
		/* Mapped where they are: no migration. */
		igt_assert_eq_u64(v1.devmem_to_ram, v0.devmem_to_ram);
		igt_assert(v1.devmem_p2p_maps >=
			   v0.devmem_p2p_maps + 2);
		igt_assert_eq_u64(s.stats.pages_p2p, 2);
	} else {
		/* The owner refused: migrated to RAM, as before. */
		igt_assert_eq_u64(v1.devmem_to_ram,
				  v0.devmem_to_ram + 2);
		igt_assert_eq_u64(s.stats.pages_system, 2);
	}
	igt_assert_eq(edu_dereg_err(fd, key), 0);
	/* The CPU touch migrates them back, with the same data. */
	igt_assert(!memcmp(p, ref, size));
	munmap(p, size);
}

static void test_devmem_no_p2p_migrates(int vfd, int fd)
{
	uint64_t size = 4 * EDU_PAGE;
	char *p = edu_anon(size), ref[4 * EDU_PAGE], buf[4 * EDU_PAGE];
	struct drm_vgem_p2p_migrate m = {
		.addr = (uintptr_t)p, .size = size,
		.direction = VGEM_P2P_MIGRATE_TO_DEVICE,
	};
	uint32_t h = vgem_p2p_create(vfd, EDU_PAGE, 0);
	char *q = vgem_p2p_mmap(vfd, h, EDU_PAGE, PROT_READ | PROT_WRITE);
	struct drm_vgem_p2p_stats v0, v1;
	struct edu_nic_mr_stats s;
	uint32_t key;

	p2p_fill(ref, size, 41);
	memcpy(p, ref, size);
	do_ioctl(vfd, DRM_IOCTL_VGEM_P2P_MIGRATE, &m);
	igt_assert_eq_u64(m.npages, 4);
	v0 = vgem_p2p_stats(vfd);
	key = edu_reg(fd, p, size, EDU_NIC_ACCESS_READ,
		      EDU_NIC_REG_MR_NO_P2P | EDU_NIC_REG_MR_PREFETCH);
	v1 = vgem_p2p_stats(vfd);
	s = edu_mr_stats(fd, key);
	/* Every page came back to RAM; none was mapped where it was. */
	igt_assert_eq_u64(v1.devmem_to_ram, v0.devmem_to_ram + 4);
	igt_assert_eq_u64(v1.devmem_p2p_maps, v0.devmem_p2p_maps);
	igt_assert_eq_u64(s.stats.pages_system, 4);
	igt_assert_eq_u64(s.stats.pages_p2p, 0);
	igt_assert_eq_u64(s.stats.p2p_maps, 0);
	edu_dma(fd, key, EDU_NIC_DMA_FROM_MR, EDU_NIC_MODE_BULK, 0,
		size, buf);
	igt_assert(!memcmp(buf, ref, size));
	igt_assert_eq(edu_dereg_err(fd, key), 0);

	/* Without p2p a special device vma has nothing to offer. */
	igt_assert_eq(edu_reg_err(fd, q, EDU_PAGE, EDU_NIC_ACCESS_READ,
				  EDU_NIC_REG_MR_NO_P2P |
				  EDU_NIC_REG_MR_PREFETCH, NULL),
		      -EFAULT);
	igt_assert_eq(vgem_p2p_info(vfd, h).mappings, 0);
	munmap(q, EDU_PAGE);
	munmap(p, size);
	gem_close(vfd, h);
}

static void test_raw_wrong_address(int vfd, int fd,
				   const struct edu_nic_dev_stats *caps)
{
	uint64_t size = EDU_PAGE;
	uint32_t h = vgem_p2p_create(vfd, size, 0);
	char *p = vgem_p2p_mmap(vfd, h, size, PROT_READ | PROT_WRITE);
	struct drm_vgem_p2p_obj_info info;
	char ref[256], buf[256];
	struct edu_nic_dma_raw r = {
		.length = sizeof(buf), .user_ptr = (uintptr_t)buf,
	};
	int ret;

	p2p_fill(ref, sizeof(ref), 39);
	memcpy(p, ref, sizeof(ref));
	info = vgem_p2p_info(vfd, h);
	/* a fresh object is created in VRAM on every topology */
	igt_assert_eq_u32(info.placement, VGEM_P2P_PLACEMENT_VRAM);
	r.bus_addr = vram_bar_phys(vgem_p2p_card(vfd)) +
		     info.vram_offset;
	ret = edu_ioctl(fd, EDU_NIC_IOCTL_DMA_RAW, &r);
	igt_info("raw DMA at %#llx: %d\n",
		 (unsigned long long)r.bus_addr, ret);
	if (caps->caps & EDU_NIC_CAP_IOMMU) {
		/* A physical address is not an IOVA: DMAR fault. */
		igt_assert_eq(ret, -EIO);
	} else {
		igt_assert_eq(ret, 0);
		igt_assert(!memcmp(buf, ref, sizeof(buf)));
	}
	/*
	 * Low IOVAs are never handed out (the allocator works down
	 * from the top of the 32-bit space): another DMAR fault.
	 */
	r.bus_addr = 0x10000ull;
	ret = edu_ioctl(fd, EDU_NIC_IOCTL_DMA_RAW, &r);
	igt_info("raw DMA at %#llx: %d\n",
		 (unsigned long long)r.bus_addr, ret);
	if (caps->caps & EDU_NIC_CAP_IOMMU)
		igt_assert_eq(ret, -EIO);
	munmap(p, size);
	gem_close(vfd, h);
}

static void test_two_importers(int vfd, int fd)
{
	uint64_t size = EDU_PAGE;
	int fd1 = edu_open_promised(1);
	uint32_t h, k0, k1;
	char *p, ref[EDU_PAGE];
	struct edu_nic_mr_stats s0, s1;
	uint64_t old;

	h = vgem_p2p_create(vfd, size, 0);
	p = vgem_p2p_mmap(vfd, h, size, PROT_READ | PROT_WRITE);
	p2p_fill(ref, size, 40);
	memcpy(p, ref, size);
	k0 = edu_reg(fd, p, size, RW, 0);
	k1 = edu_reg(fd1, p, size, RW, 0);
	check_dma_read(fd, k0, EDU_NIC_MODE_DEVICE, ref, 0, 64);
	check_dma_read(fd1, k1, EDU_NIC_MODE_DEVICE, ref, 0, 64);
	igt_assert_eq(vgem_p2p_info(vfd, h).mappings, 2);
	old = vgem_p2p_info(vfd, h).vram_offset;
	igt_assert_eq(vgem_p2p_move_err(vfd, h, VGEM_P2P_MOVE_VRAM), 0);
	/* the place both mapped reads poison (if it was in VRAM at all) */
	if (old != ~0ull)
		igt_assert(vgem_p2p_vram_poisoned(vfd, old, size));
	s0 = edu_mr_stats(fd, k0);
	s1 = edu_mr_stats(fd1, k1);
	igt_assert_eq_u64(s0.stats.invalidations, 1);
	igt_assert_eq_u64(s1.stats.invalidations, 1);
	igt_assert_eq(vgem_p2p_info(vfd, h).mappings, 0);
	check_dma_read(fd, k0, EDU_NIC_MODE_DEVICE, ref + 64, 64, 64);
	check_dma_read(fd1, k1, EDU_NIC_MODE_DEVICE, ref + 64, 64, 64);
	igt_assert_eq_u64(edu_mr_stats(fd, k0).stats.remaps, 1);
	igt_assert_eq_u64(edu_mr_stats(fd1, k1).stats.remaps, 1);
	/* new bytes where it went: both registrations read them */
	p2p_fill(ref, size, 45);
	memcpy(p, ref, size);
	check_dma_read(fd, k0, EDU_NIC_MODE_DEVICE, ref, 0, size);
	check_dma_read(fd1, k1, EDU_NIC_MODE_DEVICE, ref, 0, size);
	close(fd1);
	igt_assert_eq(edu_dereg_err(fd, k0), 0);
	igt_assert_eq(vgem_p2p_info(vfd, h).mappings, 0);
	munmap(p, size);
	gem_close(vfd, h);
}

/*
 * The window between an importer's walk and its sequence check is inside
 * the RDMA core's ib_umem_odp_map_dma_and_lock(): the exporter holds it,
 * by holding its p2p_lookup() after it answered (vgem_p2p's debugfs
 * hold_after_lookup, with its count held_after_lookup).
 */
static char hold_path[128], held_path[128];

static void edu_release_held(int sig)
{
	edu_write_str(hold_path, "0");
}

/*
 * Start @r in a thread of its own with hold_after_lookup set, and wait
 * until its walk has its answer and waits before the check. Return:
 * held_after_lookup then.
 */
static int start_held_read(struct held_read *r, pthread_t *t)
{
	igt_install_exit_handler(edu_release_held);
	igt_assert(edu_write_str(hold_path, "1"));
	igt_assert_eq(pthread_create(t, NULL, held_read, r), 0);
	return wait_for_value(edu_read_int_at, held_path, 1);
}

/*
 * The exporter moves the object between the importer's walk and its
 * sequence check (vgem_p2p's hold_after_lookup): the walk's answer is
 * stale before anyone used it. Nothing may have been mapped for it: in
 * the window, edu_nic0 has no more DMA-API mappings than before the
 * walk, whether the answer was the BAR (bus address or IOVA) or the
 * fallback's pages, and the object holds the walk's lease and nothing
 * else. Then the check fails, the walk is retried, and the DMA reads the
 * object's data from where it went.
 *
 * The DMA-API count needs controls of its own, or "no more than before"
 * holds of a count that sees nothing: edu_nic's bounce page (coherent,
 * allocated at probe) is one entry of edu_nic0's before the walk, on
 * every topology. Where the kernel's verdict for edu_nic0 is not a bus
 * address (a dma_map_resource() mapping under the IOMMU, or the
 * fallback's pages), the retry's mapping adds entries, and the
 * deregistration takes them back; bus addresses add none.
 */
static void test_move_before_check(int vfd, int fd)
{
	uint64_t size = 4 * EDU_PAGE;
	uint32_t h = vgem_p2p_create(vfd, size, 0);
	char *p = vgem_p2p_mmap(vfd, h, size, PROT_READ | PROT_WRITE);
	struct held_read r = { .fd = fd, .len = size };
	struct drm_vgem_p2p_obj_info before, in_window, after;
	int entries0, entries_walk, entries_move, entries_retry, entries_dereg;
	uint32_t path = edu_peer_nth(vfd, 0).path;
	struct edu_nic_mr_stats s0, s1;
	char ref[4 * EDU_PAGE];
	int held, moved;
	pthread_t t;

	/* the exporter's own knob: its absence is a failure */
	igt_assert_f(access(hold_path, W_OK) == 0, "%s: %s\n", hold_path,
		     strerror(errno));
	p2p_fill(ref, size, 47);
	memcpy(p, ref, size);
	r.buf = calloc(1, size);
	igt_assert(r.buf);
	r.key = edu_reg(fd, p, size, EDU_NIC_ACCESS_READ, 0);
	s0 = edu_mr_stats(fd, r.key);
	entries0 = edu_dma_debug_entries();
	before = vgem_p2p_info(vfd, h);

	held = start_held_read(&r, &t);
	entries_walk = edu_dma_debug_entries();
	in_window = vgem_p2p_info(vfd, h);
	moved = vgem_p2p_move_err(vfd, h, VGEM_P2P_MOVE_VRAM);
	entries_move = edu_dma_debug_entries();
	after = vgem_p2p_info(vfd, h);
	igt_assert(edu_write_str(hold_path, "0"));
	igt_assert_eq(pthread_join(t, NULL), 0);
	s1 = edu_mr_stats(fd, r.key);
	entries_retry = edu_dma_debug_entries();

	igt_info("held %d; edu DMA-API entries %d before, %d after the walk, %d after the move, %d after the retry (peer path %u); leases %llu; placement %u -> %u, offset %#llx -> %#llx; retries +%llu\n",
		 held, entries0, entries_walk, entries_move, entries_retry,
		 path,
		 (unsigned long long)in_window.mappings, in_window.placement,
		 after.placement, (unsigned long long)in_window.vram_offset,
		 (unsigned long long)after.vram_offset,
		 (unsigned long long)(s1.stats.fault_retries -
				      s0.stats.fault_retries));
	igt_assert_eq(held, 1);
	/* the count sees edu_nic0's entries: its bounce page at least */
	igt_assert_f(entries0 >= 1,
		     "no DMA-API entry of edu_nic0 before the walk\n");
	/* the walk mapped nothing, and left only its lease */
	igt_assert_eq(entries_walk, entries0);
	igt_assert_eq_u64(before.mappings, 0);
	igt_assert_eq_u64(in_window.mappings, 1);
	/* the move happened, in the window */
	igt_assert_eq(moved, 0);
	igt_assert_eq(entries_move, entries0);
	igt_assert(after.moves > in_window.moves);
	/* the check failed, the retry found the data where it went */
	igt_assert_eq(r.ret, 0);
	igt_assert(!memcmp(r.buf, ref, size));
	igt_assert(s1.stats.fault_retries > s0.stats.fault_retries);
	igt_assert_eq_u64(s1.stats.faults, s0.stats.faults + 1);
	/* the retry's mapping is one the count sees, but bus addresses */
	if (path == VGEM_P2P_PEER_BUS)
		igt_assert_eq(entries_retry, entries0);
	else
		igt_assert_f(entries_retry > entries0,
			     "the retry mapped no DMA-API entry of edu_nic0 (%d, %d before)\n",
			     entries_retry, entries0);

	igt_assert_eq(edu_dereg_err(fd, r.key), 0);
	entries_dereg = edu_dma_debug_entries();
	igt_info("edu DMA-API entries %d after the deregistration\n",
		 entries_dereg);
	/* and the deregistration unmapped what the retry mapped */
	igt_assert_eq(entries_dereg, entries0);
	igt_assert_eq_u64(vgem_p2p_info(vfd, h).mappings, 0);
	munmap(p, size);
	gem_close(vfd, h);
	free(r.buf);
}

struct bg_move {
	int vfd;
	uint32_t h;
	int ret;
	int done;
};

static void *bg_move(void *arg)
{
	struct bg_move *m = arg;

	m->ret = vgem_p2p_move_err(m->vfd, m->h, VGEM_P2P_MOVE_VRAM);
	__atomic_store_n(&m->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static long bg_move_done(const void *arg)
{
	const struct bg_move *m = arg;

	return __atomic_load_n(&m->done, __ATOMIC_ACQUIRE);
}

/*
 * Two registrations share edu_nic0's one engine. One's transfer holds it
 * (hold_dma); the other's, over a VRAM object, queues for it. The
 * exporter then moves that object: its invalidation must not wait for
 * the engine, only for a command of that registration in flight, and
 * there is none. So the move completes while the engine is still held,
 * and the queued read, once it runs, reads the object where it went.
 */
static void test_move_while_queued(int vfd, int fd)
{
	uint64_t size = EDU_PAGE;
	uint32_t h = vgem_p2p_create(vfd, size, 0);
	char *p = vgem_p2p_mmap(vfd, h, size, PROT_READ | PROT_WRITE);
	char *anon = edu_anon(size);
	struct held_read holder = { .fd = fd, .len = size };
	struct held_read queued = { .fd = fd, .len = size };
	struct bg_move move = { .vfd = vfd, .h = h };
	struct drm_vgem_p2p_obj_info before, after;
	struct edu_nic_mr_stats s0, s1;
	char ref[EDU_PAGE], ref_anon[EDU_PAGE];
	long held, waiting, moved_held, held_then;
	pthread_t th, tq, tm;

	/* edu_nic's own knob: always there */
	igt_assert_f(access(EDU_HOLD_DMA, W_OK) == 0, "%s: %s\n",
		     EDU_HOLD_DMA, strerror(errno));
	p2p_fill(ref, size, 49);
	memcpy(p, ref, size);
	p2p_fill(ref_anon, size, 50);
	memcpy(anon, ref_anon, size);
	holder.buf = calloc(1, size);
	queued.buf = calloc(1, size);
	igt_assert(holder.buf && queued.buf);
	holder.key = edu_reg(fd, anon, size, EDU_NIC_ACCESS_READ,
			     EDU_NIC_REG_MR_PREFETCH);
	queued.key = edu_reg(fd, p, size, EDU_NIC_ACCESS_READ,
			     EDU_NIC_REG_MR_PREFETCH);
	s0 = edu_mr_stats(fd, queued.key);
	before = vgem_p2p_info(vfd, h);

	igt_install_exit_handler(edu_release_dma);
	igt_assert(edu_write_str(EDU_HOLD_DMA, "1"));
	igt_assert_eq(pthread_create(&th, NULL, held_read, &holder), 0);
	held = wait_for_value(edu_read_int_at, EDU_HELD_DMA, 1);
	igt_assert_eq(pthread_create(&tq, NULL, held_read, &queued), 0);
	waiting = wait_for_value(edu_dma_waiting, NULL, 1);
	igt_assert_eq(pthread_create(&tm, NULL, bg_move, &move), 0);
	moved_held = wait_for_value(bg_move_done, &move, 1);
	/* the move did not get through by the engine's release */
	held_then = edu_read_int(EDU_HELD_DMA);
	igt_assert(edu_write_str(EDU_HOLD_DMA, "0"));
	igt_assert_eq(pthread_join(th, NULL), 0);
	igt_assert_eq(pthread_join(tq, NULL), 0);
	igt_assert_eq(pthread_join(tm, NULL), 0);
	after = vgem_p2p_info(vfd, h);
	s1 = edu_mr_stats(fd, queued.key);

	igt_info("engine held %ld (%ld after the move), queued %ld; move done while held %ld (ret %d); offset %#llx -> %#llx; invalidations +%llu\n",
		 held, held_then, waiting, moved_held, move.ret,
		 (unsigned long long)before.vram_offset,
		 (unsigned long long)after.vram_offset,
		 (unsigned long long)(s1.stats.invalidations -
				      s0.stats.invalidations));
	igt_assert_eq(held, 1);
	igt_assert_eq(held_then, 1);
	igt_assert_eq(waiting, 1);
	/* the exporter's invalidation did not wait for the engine */
	igt_assert_eq(moved_held, 1);
	igt_assert_eq(move.ret, 0);
	igt_assert(after.moves > before.moves);
	igt_assert(s1.stats.invalidations > s0.stats.invalidations);
	/* both reads ran once the engine was free, with their own bytes */
	igt_assert_eq(holder.ret, 0);
	igt_assert(!memcmp(holder.buf, ref_anon, size));
	igt_assert_eq(queued.ret, 0);
	igt_assert(!memcmp(queued.buf, ref, size));

	igt_assert_eq(edu_dereg_err(fd, holder.key), 0);
	igt_assert_eq(edu_dereg_err(fd, queued.key), 0);
	munmap(anon, size);
	munmap(p, size);
	gem_close(vfd, h);
	free(holder.buf);
	free(queued.buf);
}

/*
 * Invariant 1 seen through the IOMMU: between the importer's walk and its
 * sequence check, no IOVA of the importer translates into the object's
 * VRAM, before the move that makes the walk's answer stale and after it,
 * and a raw DMA at the IOVA the region had faults. An exporter that
 * mapped inside the walk, as v2's did, leaves a live IOVA there that
 * reaches the object's old VRAM after the move.
 */
static void test_stale_iova_faults(int vfd, int fd,
				   const struct edu_nic_dev_stats *caps)
{
	uint64_t size = 4 * EDU_PAGE, iova, iova2, bar, off0, off1;
	uint64_t mapped, in_window, after_move;
	uint32_t h;
	char *p, ref[4 * EDU_PAGE], buf[256];
	struct held_read r = { .fd = fd, .len = size };
	int ret_window, ret_moved, faults0, faults1, held;
	const char *topo = getenv("VP2P_TOPOLOGY");
	pthread_t t;

	/*
	 * iommu puts edu0 behind the vIOMMU; the other topologies have
	 * none, and list the skip (igt-tests/skips).
	 */
	if (topo && !strcmp(topo, "iommu"))
		igt_assert_f(caps->caps & EDU_NIC_CAP_IOMMU,
			     "iommu: edu_nic0 maps through no IOMMU\n");
	igt_require_f(caps->caps & EDU_NIC_CAP_IOMMU, "no IOMMU\n");
	/* vgem_p2p's own knob: always there */
	igt_assert_f(access(hold_path, W_OK) == 0, "%s: %s\n", hold_path,
		     strerror(errno));
	h = vgem_p2p_create(vfd, size, 0);
	p = vgem_p2p_mmap(vfd, h, size, PROT_READ | PROT_WRITE);
	p2p_fill(ref, size, 48);
	memcpy(p, ref, size);
	r.buf = calloc(1, size);
	igt_assert(r.buf);
	r.key = edu_reg(fd, p, size, EDU_NIC_ACCESS_READ, 0);

	/* mapped: the IOVA reaches the object, and the scan sees it */
	bar = vram_bar_phys(vgem_p2p_card(vfd));
	check_dma_read(fd, r.key, EDU_NIC_MODE_DEVICE, ref, 0, size);
	iova = edu_mr_dma_addr0(r.key);
	igt_assert(iova);
	igt_assert_eq(raw_read(fd, iova, buf, sizeof(buf)), 0);
	igt_assert(!memcmp(buf, ref, sizeof(buf)));
	off0 = vgem_p2p_info(vfd, h).vram_offset;
	mapped = edu_iova_pages_into(bar + off0, size);
	igt_assert_eq_u64(mapped, size / EDU_PAGE);

	/* a move invalidates, and the importer unmaps */
	igt_assert_eq(vgem_p2p_move_err(vfd, h, VGEM_P2P_MOVE_VRAM), 0);
	igt_assert_eq_u64(edu_mr_dma_addr0(r.key), 0);

	faults0 = kmsg_iommu_faults(iova);
	held = start_held_read(&r, &t);
	off1 = vgem_p2p_info(vfd, h).vram_offset;
	in_window = edu_iova_pages_into(bar + off1, size);
	ret_window = raw_read(fd, iova, buf, sizeof(buf));
	igt_assert_eq(vgem_p2p_move_err(vfd, h, VGEM_P2P_MOVE_VRAM), 0);
	after_move = edu_iova_pages_into(bar + off1, size);
	ret_moved = raw_read(fd, iova, buf, sizeof(buf));
	faults1 = kmsg_iommu_faults(iova);
	igt_assert(edu_write_str(hold_path, "0"));
	igt_assert_eq(pthread_join(t, NULL), 0);
	iova2 = edu_mr_dma_addr0(r.key);

	igt_info("held %d; IOVA %#" PRIx64 " before, %#" PRIx64 " after the retry; IOVA pages into the object's VRAM: %" PRIu64 " mapped, %" PRIu64 " in the window, %" PRIu64 " after the move there; raw DMA in the window %d, after the move %d; IOMMU faults logged at it %d\n",
		 held, iova, iova2, mapped, in_window, after_move, ret_window,
		 ret_moved, faults1 - faults0);
	igt_assert_eq(held, 1);
	/* nothing mapped between walk and check: no IOVA reaches VRAM */
	igt_assert_eq_u64(in_window, 0);
	igt_assert_eq_u64(after_move, 0);
	/* and the device faults at the old one */
	igt_assert_eq(ret_window, -EIO);
	igt_assert_eq(ret_moved, -EIO);
	/*
	 * The IOMMU reported it. At least once: for the second fault at
	 * one address QEMU's vIOMMU raised the fault interrupt, but the
	 * kernel found no fault record to print ("handling fault status
	 * reg 2" alone); the device's -EIO above is from the IOMMU's tables.
	 */
	igt_assert(faults1 - faults0 >= 1);
	/* the retry mapped the object where it went */
	igt_assert_eq(r.ret, 0);
	igt_assert(!memcmp(r.buf, ref, size));
	igt_assert(iova2);
	igt_assert_eq(raw_read(fd, iova2, buf, sizeof(buf)), 0);
	igt_assert(!memcmp(buf, ref, sizeof(buf)));

	igt_assert_eq(edu_dereg_err(fd, r.key), 0);
	munmap(p, size);
	gem_close(vfd, h);
	free(r.buf);
}

static char hold_fault_path[128], held_fault_path[128];

static void edu_release_failed_fault(int sig)
{
	edu_write_str(hold_fault_path, "0");
}

/*
 * A fault whose map step fails part of the way (swiotlb=force, a region
 * larger than the bounce pool) has mapped pages it has not unmapped yet
 * when the RDMA core drops umem_mutex; edu_nic_odp_fault() unmaps them
 * once it has the lock again. An invalidation in between must unmap them
 * itself, as mlx5's does: it used to skip a region that was not
 * installed, and the mapping outlived the invalidation that ended it.
 * edu_nic's hold_failed_fault holds the fault in that window; swiotlb's
 * slots in use show what is mapped.
 */
static void test_failed_fault_invalidated(int fd)
{
	struct held_read r = { .fd = fd, .len = 4096 };
	long nslabs, base, held, after;
	uint64_t size;
	pthread_t t;
	char *p;

	igt_require_f(access("/sys/kernel/debug/swiotlb/io_tlb_used", R_OK) == 0,
		      "no swiotlb debugfs\n");
	igt_require_f(cmdline_has("swiotlb=force"),
		      "DMA is not bounced: a map step cannot fail part of the way\n");
	nslabs = edu_read_int("/sys/kernel/debug/swiotlb/io_tlb_nslabs");
	/* a third more pages than the pool has room for */
	size = ((uint64_t)nslabs * 2048 / 3 * 4 + (2 << 20) - 1) &
	       ~((2ull << 20) - 1);
	igt_require_f(size <= EDU_NIC_MR_MAX_LENGTH,
		      "a %" PRIu64 " MiB swiotlb pool: no region outgrows it\n",
		      (uint64_t)nslabs * 2048 >> 20);

	p = edu_anon(size);
	memset(p, 0x5a, size);
	r.buf = malloc(r.len);
	igt_assert(r.buf);
	r.key = edu_reg(fd, p, size, RW, 0);
	base = swiotlb_used(NULL);

	igt_install_exit_handler(edu_release_failed_fault);
	igt_assert(edu_write_str(hold_fault_path, "1"));
	igt_assert_eq(pthread_create(&t, NULL, held_read, &r), 0);
	igt_assert_f(wait_for_value(edu_read_int_at, held_fault_path, 1) == 1,
		     "the fault of a %" PRIu64 " MiB region did not fail in its map step\n",
		     size >> 20);
	held = swiotlb_used(NULL);
	/* the positive control: the failed step left most of the pool mapped */
	igt_assert_f(held - base > nslabs / 2,
		     "the failed map step holds %ld of %ld slots\n",
		     held - base, nslabs);

	/* the invalidation, while the fault waits to take the lock again */
	igt_assert_eq(munmap(p, size), 0);
	after = swiotlb_used(NULL);
	igt_info("swiotlb slots: %ld in the pool, %ld in use before, %ld held by the failed map step, %ld after the invalidation\n",
		 nslabs, base, held - base, after - base);
	igt_assert_f(after - base < 64,
		     "%ld slots still mapped after the invalidation (%ld before)\n",
		     after - base, held - base);

	igt_assert(edu_write_str(hold_fault_path, "0"));
	igt_assert_eq(pthread_join(t, NULL), 0);
	igt_assert_eq(r.ret, -EFAULT);
	igt_assert_eq(edu_dereg_err(fd, r.key), 0);
	igt_assert_f(wait_for_value(swiotlb_used, NULL, base) - base < 64,
		     "the region's bounce slots were not all given back\n");
	free(r.buf);
}

struct held_reg {
	int fd;
	void *p;
	uint64_t size;
	int ret;
};

static void *held_reg(void *arg)
{
	struct held_reg *r = arg;
	uint32_t key = 0;

	r->ret = edu_reg_err(r->fd, r->p, r->size, RW,
			     EDU_NIC_REG_MR_PREFETCH, &key);
	if (!r->ret)
		r->ret = edu_dereg_err(r->fd, key);
	return NULL;
}

struct unbinder {
	int go[2];		/* a byte on go[1] starts it */
	const char *bdf;
	volatile bool done;
	bool ok;
};

static void *unbinder(void *arg)
{
	struct unbinder *u = arg;
	char c;

	if (read(u->go[0], &c, 1) == 1)
		u->ok = edu_write_str("/sys/bus/pci/drivers/edu_nic/unbind",
				      u->bdf);
	u->done = true;
	return NULL;
}

/*
 * edu_nic's unbind tore the mirrors down without waiting for a fault in
 * flight, so a fault between its walk and its map step mapped after
 * remove() had returned. A PREFETCH of a VRAM range is held there by
 * vgem_p2p's hold_after_lookup while edu_nic0 is unbound: the unbind
 * must wait for it (edu_nic.fault_rwsem), the registration then fails
 * with ENODEV, and nothing stays mapped. Nothing here may take the
 * mmap_lock for writing while the fault holds it for reading: the
 * unbinding thread is started before the hold.
 */
static void test_unbind_during_fault(int vfd, int *fdp)
{
	uint64_t size = 2 * EDU_PAGE;
	uint32_t h = vgem_p2p_create(vfd, size, 0);
	char *p = vgem_p2p_mmap(vfd, h, size, PROT_READ | PROT_WRITE);
	struct held_reg r = { .fd = *fdp, .p = p, .size = size };
	struct drm_vgem_p2p_stats s0, s1;
	struct unbinder u = {};
	char bdf[32], ref[2 * EDU_PAGE], buf[2 * EDU_PAGE];
	bool returned_while_held = false;
	pthread_t tr, tu;
	uint32_t key;
	int i, held;

	edu_bdf(bdf, sizeof(bdf));
	u.bdf = bdf;
	p2p_fill(ref, size, 43);
	memcpy(p, ref, size);
	s0 = vgem_p2p_stats(vfd);
	igt_assert_eq(pipe(u.go), 0);
	igt_assert_eq(pthread_create(&tu, NULL, unbinder, &u), 0);

	igt_install_exit_handler(edu_release_held);
	igt_assert(edu_write_str(hold_path, "1"));
	igt_assert_eq(pthread_create(&tr, NULL, held_reg, &r), 0);
	held = wait_for_value(edu_read_int_at, held_path, 1);
	igt_assert_eq(write(u.go[1], "u", 1), 1);
	/* the unbind is in remove() once the device node is gone */
	wait_for_value(path_exists, "/sys/class/misc/edu_nic0", 0);
	/* and must stay there while the fault is held: not a timing bound */
	for (i = 0; i < 5000 && !returned_while_held; i++) {
		usleep(1000);
		returned_while_held = u.done;
	}
	igt_assert(edu_write_str(hold_path, "0"));
	igt_assert_eq(pthread_join(tr, NULL), 0);
	igt_assert_eq(pthread_join(tu, NULL), 0);
	close(u.go[0]);
	close(u.go[1]);
	s1 = vgem_p2p_stats(vfd);
	igt_info("held %d; unbind returned while the fault was held: %s; registration %d; p2p maps %" PRIu64 ", unmaps %" PRIu64 "\n",
		 held, returned_while_held ? "yes" : "no", r.ret,
		 (uint64_t)(s1.p2p_maps - s0.p2p_maps),
		 (uint64_t)(s1.p2p_unmaps - s0.p2p_unmaps));
	igt_assert_eq(held, 1);
	igt_assert(u.ok);
	igt_assert_f(!returned_while_held,
		     "edu_nic's unbind returned while a fault of it was between walk and map\n");
	igt_assert_eq(r.ret, -ENODEV);
	/* whatever the fault mapped, it unmapped */
	igt_assert_eq_u64(s1.p2p_maps - s0.p2p_maps, s1.p2p_unmaps - s0.p2p_unmaps);
	igt_assert_eq(vgem_p2p_info(vfd, h).mappings, 0);

	/* bound again, the device mirrors the object with its bytes */
	close(*fdp);
	igt_assert(edu_write_str("/sys/bus/pci/drivers/edu_nic/bind", bdf));
	*fdp = edu_open();
	key = edu_reg(*fdp, p, size, RW, 0);
	memset(buf, 0, size);
	edu_dma(*fdp, key, EDU_NIC_DMA_FROM_MR, EDU_NIC_MODE_DEVICE, 0, size,
		buf);
	igt_assert(!memcmp(buf, ref, size));
	igt_assert_eq(edu_dereg_err(*fdp, key), 0);
	munmap(p, size);
	gem_close(vfd, h);
}

static void test_teardown_vram(int vfd, int fd)
{
	uint64_t size = 2 * EDU_PAGE;
	uint32_t h = vgem_p2p_create(vfd, size, 0);
	char *p = vgem_p2p_mmap(vfd, h, size, PROT_READ | PROT_WRITE);
	uint32_t key = edu_reg(fd, p, size, RW,
			       EDU_NIC_REG_MR_PREFETCH);
	char ref[2 * EDU_PAGE];
	int ready[2];

	p2p_fill(ref, size, 41);
	memcpy(p, ref, size);
	igt_assert(vgem_p2p_info(vfd, h).mappings >= 1);
	igt_assert_eq(munmap(p, size), 0);
	igt_assert_eq(vgem_p2p_info(vfd, h).mappings, 0);
	igt_assert_eq(edu_dereg_err(fd, key), 0);

	igt_assert_eq(pipe(ready), 0);
	igt_fork(child, 1) {
		int cfd = edu_open_nth(0);
		char *q = vgem_p2p_mmap(vfd, h, size, PROT_READ | PROT_WRITE);
		char buf[2 * EDU_PAGE];
		uint32_t k;

		igt_assert_fd(cfd);
		k = edu_reg(cfd, q, size, RW, 0);
		/* the first DMA maps the object, and reads it right */
		igt_assert_eq(edu_dma_err(cfd, k, EDU_NIC_DMA_FROM_MR,
					  EDU_NIC_MODE_DEVICE, 0, size, buf), 0);
		igt_assert(!memcmp(buf, ref, size));
		edu_child_report(ready[1]);
		for (;;)
			edu_dma_err(cfd, k, EDU_NIC_DMA_FROM_MR,
				    EDU_NIC_MODE_DEVICE, 0, size, buf);
	}
	edu_child_ready(ready);
	/* the child's importer mapping exists before the kill */
	igt_assert(vgem_p2p_info(vfd, h).mappings >= 1);
	edu_child_kill();
	igt_assert_eq(vgem_p2p_info(vfd, h).mappings, 0);
	gem_close(vfd, h);
}

igt_main
{
	int vfd = -1, fd = -1;
	struct edu_nic_dev_stats caps;

	igt_fixture {
		vfd = vgem_p2p_open_nth(0);
		igt_require_f(vfd >= 0, "no vgem_p2p device\n");
		fd = edu_open();
		caps = edu_dev_stats(fd);
		vgem_p2p_debugfs_path(vfd, "hold_after_lookup", hold_path,
				      sizeof(hold_path));
		vgem_p2p_debugfs_path(vfd, "held_after_lookup", held_path,
				      sizeof(held_path));
		snprintf(hold_fault_path, sizeof(hold_fault_path),
			 "/sys/kernel/debug/edu_nic/hold_failed_fault");
		snprintf(held_fault_path, sizeof(held_fault_path),
			 "/sys/kernel/debug/edu_nic/held_failed_fault");
	}

	igt_describe("DRM_IOCTL_VGEM_P2P_PEER says what the topology promises for edu (bus addresses behind a switch, a dma_map_resource() mapping through the host bridge under the vIOMMU, none on split), and a registration gets exactly that.");
	igt_subtest("peer-verdict")
		test_peer_verdict(vfd, fd);

	igt_describe("edu DMA reads what the CPU wrote into a VRAM object, and its writes land in VRAM.");
	igt_subtest("vram-read-write")
		test_vram_read_write(vfd, fd, &caps);

	igt_describe("Bulk (emulated) DMA on a 32-page VRAM object, both ways compared with the reference, through the path the kernel promises (PEER).");
	igt_subtest("vram-bulk")
		test_vram_bulk(vfd, fd);

	igt_describe("Bulk reads of a VRAM object into destinations the importer handles differently: an unaligned buffer (pinned, an extra page, an unaligned copy) and another VRAM object's mapping (VM_PFNMAP: not pinnable, copied to with faults disabled). Every byte arrives, and nothing around it changes.");
	igt_subtest("vram-bulk-odd-destinations")
		test_vram_bulk_odd_destinations(vfd, fd);

	igt_describe("A read-only export: device reads work; a device write of bytes other than the object's gets EPERM and changes nothing, seen by device DMA and by the CPU.");
	igt_subtest("read-only-object")
		test_read_only_object(vfd, fd);

	igt_describe("A device-only object (never CPU mapped) round-trips through device DMA, moved (VRAM and system memory) between the write and the read.");
	igt_subtest("device-only-object")
		test_device_only_object(vfd, fd);

	igt_describe("mprotect() revokes device access the CPU never had page tables for: after PROT_READ a device-only object's importer can read but not write, after PROT_NONE neither.");
	igt_subtest("mprotect-revokes")
		test_mprotect_revokes(vfd, fd);

	igt_describe("Two writable registrations over an object the exporter serves from system memory: both map the same pages, and a device write through one is read through the other.");
	igt_subtest("fallback-overlapping-mrs")
		test_fallback_overlapping_mrs(vfd, fd);

	igt_describe("A forced move during a stream of device DMAs: invalidated, re-mapped, no stale data; where p2p is allowed each range a move within VRAM left reads poison (0x6b) through the BAR, and new bytes the CPU writes after the moves are what the registration of before them reads.");
	igt_subtest("move-during-stream")
		test_move_during_stream(vfd, fd);

	igt_describe("A lookup's return of an evicted object to VRAM is charged to the process whose registration looked it up: past that process's vram_quota_pages the object stays in system memory and edu reads it through the fallback; with quota free, a new registration brings it back and reads it peer-to-peer.");
	igt_subtest_group {
		igt_subtest("quota-keeps-evicted")
			test_quota_keeps_evicted(fd);

		/* failed or not, the subtests after it run with no quota */
		igt_fixture
			vgem_p2p_set_vram_quota(0);
	}

	igt_describe("One device read, one forced move within VRAM, one more read: the old range (where the object was in VRAM) reads poison (0x6b) through the BAR, the second read sees the data at its new home, and new bytes the CPU writes there are what the same registration reads next.");
	igt_subtest("read-move-read")
		test_read_move_read(vfd, fd);

	igt_describe("An allocation that fits only after compaction slides the object an importer streams from: it is invalidated, re-maps at its new VRAM offset, and every DMA reads the right bytes; its old range reads poison (0x6b) through the BAR unless the new object took it, and new bytes the CPU writes are what the registration of before the compaction reads.");
	igt_subtest("compaction-during-stream")
		test_compaction_during_stream(vfd, fd);

	igt_describe("Device-private pages are read by device DMA with no migration.");
	igt_subtest("devmem-no-migration")
		test_devmem_no_migration(vfd, fd);

	igt_describe("With EDU_NIC_REG_MR_NO_P2P, device-private pages migrate to RAM as upstream does, and a VRAM vma cannot be mirrored.");
	igt_subtest("devmem-no-p2p-migrates")
		test_devmem_no_p2p_migrates(vfd, fd);

	igt_describe("Raw DMA at the BAR's physical address: data without an IOMMU, an error (DMAR fault) with one.");
	igt_subtest("raw-wrong-address")
		test_raw_wrong_address(vfd, fd, &caps);

	igt_describe("Two importers on one object are both invalidated by one move and both re-map; the range they mapped reads poison (0x6b) through the BAR, and both read the new bytes the CPU writes after the move. Skips only where the machine has one edu device; where it has two, a missing edu_nic1 fails.");
	igt_subtest("two-importers")
		test_two_importers(vfd, fd);

	igt_describe("The exporter moves an object between edu_nic's walk and its sequence check (the RDMA core's, held by vgem_p2p's hold_after_lookup, which must be there): in that window edu_nic0 has no more DMA-API mappings than before the walk (at least one, its bounce page: the count sees it) and the object holds only the walk's lease; the check then fails, and the DMA reads the data from where it went. Where the kernel's verdict is no bus address (IOMMU, fallback), the retry's mapping adds DMA-API entries and the deregistration takes them back.");
	igt_subtest("move-before-check")
		test_move_before_check(vfd, fd);

	igt_describe("One registration's transfer holds edu_nic0's engine (hold_dma) while another's, over a VRAM object, queues for it: the exporter's move of that object completes while the engine is still held (its invalidation waits for no other registration's commands), and the queued read then reads the object where it went.");
	igt_subtest("move-while-queued")
		test_move_while_queued(vfd, fd);

	igt_describe("Under an IOMMU, between edu_nic's walk and its sequence check (the RDMA core's, held by vgem_p2p's hold_after_lookup) no IOVA of edu_nic0 translates into the object's VRAM (a scan of its IOVA window), before and after a move in that window, and a raw DMA at the IOVA the region had faults (IOMMU fault logged); the retry maps the object where it went.");
	igt_subtest("stale-iova-faults")
		test_stale_iova_faults(vfd, fd, &caps);

	igt_describe("On swiotlb=force, a fault of a region larger than the bounce pool fails in its map step with part of the region mapped; an invalidation (munmap) while the fault waits to take umem_mutex again (edu_nic's hold_failed_fault) unmaps that part itself (swiotlb's slots in use go back), and the DMA then fails with EFAULT and gives every slot back.");
	igt_subtest("failed-fault-invalidated")
		test_failed_fault_invalidated(fd);

	igt_describe("munmap and exit while importing VRAM leave no exporter mapping behind: a child that read the object by DMA and holds its mapping (checked through OBJ_INFO) is killed mid-DMA, and the mapping is gone.");
	igt_subtest("teardown-vram")
		test_teardown_vram(vfd, fd);

	igt_describe("edu_nic's unbind waits for a fault in flight: a PREFETCH of a VRAM range held between its walk and its map step (vgem_p2p's hold_after_lookup) keeps the unbind in remove() until it is let go; the registration then fails with ENODEV, the exporter's p2p maps and unmaps balance, and the device bound again mirrors the object with its bytes.");
	igt_subtest("unbind-during-fault")
		test_unbind_during_fault(vfd, &fd);

	igt_fixture {
		close(fd);
		close(vfd);
	}
}
