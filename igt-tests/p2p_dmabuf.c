// SPDX-License-Identifier: MIT
/*
 * The upstream path beside ours: edu_nic imports vgem-p2p objects as
 * dma-bufs (dynamic attachment, peer2peer allowed) instead of through
 * their vma. VRAM p2p where the topology allows it, system memory where
 * it does not, IOVAs behind the vIOMMU, moves followed through
 * move_notify, the same object through both paths, argument checking and
 * teardown in every order.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <xf86drm.h>

#include "p2p_common.h"
#include "p2p_e2e_helpers.h"

IGT_TEST_DESCRIPTION("edu_nic importing vgem-p2p objects through dynamic dma-buf attachments.");

#define RW (EDU_NIC_ACCESS_READ | EDU_NIC_ACCESS_WRITE)

static int bo_export(int vfd, uint32_t handle)
{
	int fd = -1;

	igt_assert_eq(drmPrimeHandleToFD(vfd, handle, DRM_CLOEXEC | DRM_RDWR,
					 &fd), 0);
	igt_assert_fd(fd);
	return fd;
}

static int reg_dmabuf_err(int fd, int dfd, uint64_t off, uint64_t len,
			  uint32_t access, uint32_t *key)
{
	struct edu_nic_reg_dmabuf r = {
		.fd = dfd, .offset = off, .length = len, .access = access,
	};
	int ret = edu_ioctl(fd, EDU_NIC_IOCTL_REG_DMABUF, &r);

	if (!ret && key)
		*key = r.key;
	return ret;
}

static uint32_t reg_dmabuf(int fd, int dfd, uint64_t off, uint64_t len,
			   uint32_t access)
{
	uint32_t key = 0;

	igt_assert_eq(reg_dmabuf_err(fd, dfd, off, len, access, &key), 0);
	igt_assert_neq(key, 0);
	return key;
}

/* Device DMA of [off, off + len) must read exactly @want */
static void check_read(int fd, uint32_t key, uint32_t mode, const char *want,
		       uint64_t off, uint64_t len)
{
	char *buf = malloc(len);

	igt_assert(buf);
	memset(buf, 0xee, len);
	edu_dma(fd, key, EDU_NIC_DMA_FROM_MR, mode, off, len, buf);
	igt_assert_f(edu_csum(buf, len) == edu_csum(want, len),
		     "mode %u: DMA read of [%#lx, +%#lx) differs (first byte %#x want %#x)\n",
		     mode, (unsigned long)off, (unsigned long)len,
		     (uint8_t)buf[0], (uint8_t)want[0]);
	free(buf);
}

/* The exporter's dma-buf mappings not yet unmapped */
static uint64_t dmabuf_live_maps(const struct drm_vgem_p2p_stats *v)
{
	return v->dmabuf_maps_p2p + v->dmabuf_maps_system - v->dmabuf_unmaps;
}

/* An object of @size filled by the CPU with pattern @seed, exported */
struct obj {
	uint32_t handle;
	uint64_t size;
	char *map;
	char *ref;
	int dfd;
};

static struct obj obj_new(int vfd, uint64_t size, uint32_t flags,
			  uint32_t seed)
{
	struct obj o = { .size = size };

	o.handle = vgem_p2p_create(vfd, size, flags);
	o.ref = malloc(size);
	igt_assert(o.ref);
	p2p_fill(o.ref, size, seed);
	if (!(flags & VGEM_P2P_CREATE_DEVICE_ONLY)) {
		o.map = vgem_p2p_mmap(vfd, o.handle, size,
				      PROT_READ | PROT_WRITE);
		memcpy(o.map, o.ref, size);
	}
	o.dfd = bo_export(vfd, o.handle);
	return o;
}

static void obj_free(int vfd, struct obj *o)
{
	if (o->map)
		munmap(o->map, o->size);
	if (o->dfd >= 0)
		close(o->dfd);
	gem_close(vfd, o->handle);
	free(o->ref);
}

static void test_read_write(const struct edu_nic_dev_stats *caps, int vfd,
			    int fd, bool p2p)
{
	struct drm_vgem_p2p_stats v0, v1;
	struct obj o;
	struct edu_nic_mr_stats s;
	char buf[2 * EDU_PAGE];
	uint32_t key;

	v0 = vgem_p2p_stats(vfd);
	o = obj_new(vfd, 4 * EDU_PAGE, 0, 1);
	key = reg_dmabuf(fd, o.dfd, 0, o.size, RW);
	check_read(fd, key, EDU_NIC_MODE_DEVICE, o.ref, 0, o.size);

	p2p_fill(buf, sizeof(buf), 2);
	edu_dma(fd, key, EDU_NIC_DMA_TO_MR, EDU_NIC_MODE_DEVICE,
		EDU_PAGE + 100, sizeof(buf), buf);
	memcpy(o.ref + EDU_PAGE + 100, buf, sizeof(buf));
	igt_assert_eq_u64(edu_csum(o.map, o.size),
			  edu_csum(o.ref, o.size));

	s = edu_mr_stats(fd, key);
	v1 = vgem_p2p_stats(vfd);
	igt_info("importer: p2p pages %llu, system %llu; exporter: dma-buf maps p2p +%llu system +%llu, bus +%llu iova +%llu\n",
		 (unsigned long long)s.stats.pages_p2p,
		 (unsigned long long)s.stats.pages_system,
		 (unsigned long long)(v1.dmabuf_maps_p2p - v0.dmabuf_maps_p2p),
		 (unsigned long long)(v1.dmabuf_maps_system - v0.dmabuf_maps_system),
		 (unsigned long long)(v1.p2p_pages_bus - v0.p2p_pages_bus),
		 (unsigned long long)(v1.p2p_pages_iova - v0.p2p_pages_iova));
	igt_assert(s.state & EDU_NIC_MR_DMABUF);
	igt_assert(s.state & EDU_NIC_MR_MIRRORED);
	igt_assert_eq_u64(s.stats.faults, 1);
	igt_assert_eq(vgem_p2p_info(vfd, o.handle).dmabuf_attachments, 1);
	if (p2p) {
		igt_assert_eq_u64(s.stats.pages_p2p, 4);
		igt_assert_eq_u64(s.stats.pages_system, 0);
		igt_assert_eq_u64(v1.dmabuf_maps_p2p,
				  v0.dmabuf_maps_p2p + 1);
		igt_assert_eq_u64(v1.dmabuf_maps_system,
				  v0.dmabuf_maps_system);
		igt_assert_eq(vgem_p2p_info(vfd, o.handle).placement,
			      VGEM_P2P_PLACEMENT_VRAM);
		if (caps->caps & EDU_NIC_CAP_IOMMU)
			igt_assert_eq_u64(v1.p2p_pages_iova,
					  v0.p2p_pages_iova + 4);
		else
			igt_assert_eq_u64(v1.p2p_pages_bus,
					  v0.p2p_pages_bus + 4);
	} else {
		igt_assert_eq_u64(s.stats.pages_p2p, 0);
		igt_assert_eq_u64(s.stats.pages_system, 4);
		igt_assert_eq_u64(v1.dmabuf_maps_system,
				  v0.dmabuf_maps_system + 1);
		igt_assert_eq_u64(v1.dmabuf_maps_p2p,
				  v0.dmabuf_maps_p2p);
		igt_assert_eq(vgem_p2p_info(vfd, o.handle).placement,
			      VGEM_P2P_PLACEMENT_SYSTEM);
	}
	igt_assert_eq(edu_dereg_err(fd, key), 0);
	igt_assert_eq(vgem_p2p_info(vfd, o.handle).dmabuf_attachments, 0);
	obj_free(vfd, &o);
}

static void test_bulk(int vfd, int fd)
{
	struct obj o = obj_new(vfd, 16 * EDU_PAGE, 0, 3);
	uint32_t key = reg_dmabuf(fd, o.dfd, 4 * EDU_PAGE,
				  8 * EDU_PAGE, RW);
	char *buf = malloc(8 * EDU_PAGE);

	check_read(fd, key, EDU_NIC_MODE_BULK, o.ref + 4 * EDU_PAGE,
		   0, 8 * EDU_PAGE);
	p2p_fill(buf, 8 * EDU_PAGE, 4);
	edu_dma(fd, key, EDU_NIC_DMA_TO_MR, EDU_NIC_MODE_BULK, 0,
		8 * EDU_PAGE, buf);
	memcpy(o.ref + 4 * EDU_PAGE, buf, 8 * EDU_PAGE);
	igt_assert_eq_u64(edu_csum(o.map, o.size),
			  edu_csum(o.ref, o.size));
	igt_assert_eq_u64(edu_mr_stats(fd, key).stats.bulk_bytes,
			  16 * EDU_PAGE);
	igt_assert_eq(edu_dereg_err(fd, key), 0);
	free(buf);
	obj_free(vfd, &o);
}

/*
 * One pair's dma-buf registration, held to the kernel's verdict on the
 * pair (PEER): the importer counts bus addresses only where the exporter
 * marked them (sg_dma_mark_bus_address()), and reads and writes through
 * them as the bus resolves them, not as IOVAs. Device DMA only where
 * QEMU does what hardware would: its vIOMMU translates what a real
 * switch routes, so a translated edu gets bus addresses only the bulk
 * mode (CPU copies) can use, as in ttm_p2p/bus-address-bulk.
 */
static void check_pair_addresses(int vfd, int nic, int path, bool iommu)
{
	struct drm_vgem_p2p_stats v0 = vgem_p2p_stats(vfd), v1;
	struct obj o = obj_new(vfd, 8 * EDU_PAGE, 0, getpid() ^ path);
	uint32_t key = reg_dmabuf(nic, o.dfd, 0, o.size, RW);
	char buf[4 * EDU_PAGE];
	struct edu_nic_stats s;
	uint32_t mode;

	check_read(nic, key, EDU_NIC_MODE_BULK, o.ref, 0, o.size);
	s = edu_mr_stats(nic, key).stats;
	v1 = vgem_p2p_stats(vfd);
	igt_info("verdict %d, iommu %d: pages p2p %llu (bus %llu, iova %llu), system %llu\n",
		 path, iommu, (unsigned long long)s.pages_p2p,
		 (unsigned long long)s.pages_bus,
		 (unsigned long long)s.pages_iova,
		 (unsigned long long)s.pages_system);
	igt_assert_eq_u64(s.pages_p2p, 8);
	igt_assert_eq_u64(s.pages_system, 0);
	if (path == VGEM_P2P_PEER_BUS) {
		igt_assert_eq_u64(v1.p2p_pages_bus - v0.p2p_pages_bus, 8);
		igt_assert_eq_u64(s.pages_bus, 8);
		igt_assert_eq_u64(s.pages_iova, 0);
	} else {
		igt_assert_eq_u64(v1.p2p_pages_iova - v0.p2p_pages_iova, 8);
		igt_assert_eq_u64(s.pages_bus, 0);
		igt_assert_eq_u64(s.pages_iova, 8);
	}

	mode = path == VGEM_P2P_PEER_BUS && iommu ? EDU_NIC_MODE_BULK :
						   EDU_NIC_MODE_DEVICE;
	check_read(nic, key, mode, o.ref, 0, o.size);
	p2p_fill(buf, sizeof(buf), getpid() + path);
	edu_dma(nic, key, EDU_NIC_DMA_TO_MR, mode, 2 * EDU_PAGE, sizeof(buf),
		buf);
	memcpy(o.ref + 2 * EDU_PAGE, buf, sizeof(buf));
	igt_assert_eq_u64(edu_csum(o.map, o.size), edu_csum(o.ref, o.size));
	igt_assert_eq_u32(vgem_p2p_info(vfd, o.handle).placement,
			  VGEM_P2P_PLACEMENT_VRAM);
	igt_assert_eq(edu_dereg_err(nic, key), 0);
	obj_free(vfd, &o);
}

/*
 * Issue 48 item 8: every exporter and importer pair the kernel lets meet
 * peer-to-peer gets the addresses its verdict says, marked as such. On
 * iommu, vgem_p2p1 shares a switch with the translated edu1: bus
 * addresses an importer behind an IOMMU must not translate.
 */
static void test_bus_address_marked(void)
{
	int e, n, vfd, nic, pairs = 0, translated_bus = 0;
	const char *topo = getenv("VP2P_TOPOLOGY");

	for (e = 0; (vfd = vgem_p2p_open_nth(e)) >= 0; e++) {
		for (n = 0; (nic = edu_open_nth(n)) >= 0; n++) {
			int path = edu_peer_nth(vfd, n).path;
			bool iommu = edu_dev_stats(nic).caps &
				     EDU_NIC_CAP_IOMMU;

			if (path != VGEM_P2P_PEER_NONE) {
				igt_info("vgem_p2p%d, edu_nic%d:\n", e, n);
				check_pair_addresses(vfd, nic, path, iommu);
				pairs++;
				translated_bus += iommu &&
						  path == VGEM_P2P_PEER_BUS;
			}
			close(nic);
		}
		close(vfd);
	}
	igt_info("%d pairs p2p, %d of them bus addresses for a translated importer\n",
		 pairs, translated_bus);
	/* the topology promises it (qemu/lib/topologies.sh) */
	if (topo && !strcmp(topo, "iommu"))
		igt_assert_f(translated_bus,
			     "iommu: no translated edu gets bus addresses of a vgem_p2p device\n");
	igt_require_f(pairs, "no exporter and importer meet peer-to-peer\n");
}

static void test_no_p2p_object(int vfd, int fd)
{
	struct obj o = obj_new(vfd, 2 * EDU_PAGE, VGEM_P2P_CREATE_NO_P2P,
			       5);
	uint32_t key = reg_dmabuf(fd, o.dfd, 0, o.size,
				  EDU_NIC_ACCESS_READ);
	struct edu_nic_mr_stats s;

	check_read(fd, key, EDU_NIC_MODE_DEVICE, o.ref, 0, o.size);
	s = edu_mr_stats(fd, key);
	igt_assert_eq_u64(s.stats.pages_p2p, 0);
	igt_assert_eq_u64(s.stats.pages_system, 2);
	igt_assert_eq(vgem_p2p_info(vfd, o.handle).placement,
		      VGEM_P2P_PLACEMENT_SYSTEM);
	igt_assert_eq(edu_dereg_err(fd, key), 0);
	obj_free(vfd, &o);
}

/*
 * A pinned registration keeps the object where the exporter pinned it:
 * out of VRAM, saying why, refusing a move back until it goes. The DMA
 * reads the object's bytes there, through system memory.
 */
static void test_pinned(int vfd, int fd)
{
	struct obj o = obj_new(vfd, 2 * EDU_PAGE, 0, 6);
	struct edu_nic_reg_dmabuf r = {
		.fd = o.dfd, .flags = EDU_NIC_REG_DMABUF_PINNED,
		.length = o.size, .access = EDU_NIC_ACCESS_READ,
	};
	struct drm_vgem_p2p_obj_info info;
	struct edu_nic_mr_stats s;

	/* a new object goes to VRAM, on every topology: p2p or not */
	igt_assert_eq(vgem_p2p_info(vfd, o.handle).placement,
		      VGEM_P2P_PLACEMENT_VRAM);
	igt_assert_eq(edu_ioctl(fd, EDU_NIC_IOCTL_REG_DMABUF, &r), 0);
	info = vgem_p2p_info(vfd, o.handle);
	igt_assert_eq(info.placement, VGEM_P2P_PLACEMENT_SYSTEM);
	igt_assert_eq(info.reason, VGEM_P2P_REASON_PINNED);
	igt_assert_eq(vgem_p2p_move_err(vfd, o.handle, VGEM_P2P_MOVE_VRAM),
		      -EINVAL);
	check_read(fd, r.key, EDU_NIC_MODE_DEVICE, o.ref, 0, o.size);
	s = edu_mr_stats(fd, r.key);
	igt_assert_eq_u64(s.stats.pages_system, 2);
	igt_assert_eq_u64(s.stats.pages_p2p, 0);
	igt_assert_eq_u64(s.stats.invalidations, 0);
	igt_assert_eq(vgem_p2p_info(vfd, o.handle).placement,
		      VGEM_P2P_PLACEMENT_SYSTEM);

	igt_assert_eq(edu_dereg_err(fd, r.key), 0);
	igt_assert_eq(vgem_p2p_move_err(vfd, o.handle, VGEM_P2P_MOVE_VRAM), 0);
	igt_assert_eq(vgem_p2p_info(vfd, o.handle).placement,
		      VGEM_P2P_PLACEMENT_VRAM);
	obj_free(vfd, &o);
}

static void test_shared_system(int vfd, int fd)
{
	struct obj o = obj_new(vfd, 16 * EDU_PAGE, VGEM_P2P_CREATE_NO_P2P,
			       12);
	uint32_t key[2];
	char buf[EDU_PAGE];
	int k;

	key[0] = reg_dmabuf(fd, o.dfd, 0, o.size, RW);
	key[1] = reg_dmabuf(fd, o.dfd, 0, o.size, EDU_NIC_ACCESS_READ);
	igt_assert_eq(vgem_p2p_info(vfd, o.handle).dmabuf_attachments,
		      2);
	for (k = 0; k < 2; k++) {
		check_read(fd, key[k], EDU_NIC_MODE_DEVICE, o.ref, 0,
			   o.size);
		check_read(fd, key[k], EDU_NIC_MODE_BULK, o.ref, 0,
			   o.size);
	}
	p2p_fill(buf, sizeof(buf), 13);
	edu_dma(fd, key[0], EDU_NIC_DMA_TO_MR, EDU_NIC_MODE_DEVICE,
		7 * EDU_PAGE, EDU_PAGE, buf);
	memcpy(o.ref + 7 * EDU_PAGE, buf, EDU_PAGE);
	check_read(fd, key[1], EDU_NIC_MODE_DEVICE, o.ref, 0, o.size);
	igt_assert_eq_u64(edu_csum(o.map, o.size),
			  edu_csum(o.ref, o.size));
	igt_assert_eq_u64(edu_mr_stats(fd, key[1]).stats.pages_system,
			  16);
	for (k = 0; k < 2; k++)
		igt_assert_eq(edu_dereg_err(fd, key[k]), 0);
	obj_free(vfd, &o);
}

static void test_read_only_object(int vfd, int fd)
{
	struct obj o = obj_new(vfd, EDU_PAGE, VGEM_P2P_CREATE_READ_ONLY,
			       6);
	char other[EDU_PAGE];
	uint32_t key;

	p2p_fill(other, sizeof(other), 106);
	igt_assert(memcmp(other, o.ref, 64));
	igt_assert_eq(reg_dmabuf_err(fd, o.dfd, 0, o.size, RW, &key),
		      -EPERM);
	igt_assert_eq(vgem_p2p_info(vfd, o.handle).dmabuf_attachments, 0);
	key = reg_dmabuf(fd, o.dfd, 0, o.size, EDU_NIC_ACCESS_READ);
	check_read(fd, key, EDU_NIC_MODE_DEVICE, o.ref, 0, o.size);
	igt_assert_eq(edu_dma_err(fd, key, EDU_NIC_DMA_TO_MR,
				  EDU_NIC_MODE_DEVICE, 0, 64, other),
		      -EPERM);
	/* the object still holds what the CPU wrote, every byte */
	check_read(fd, key, EDU_NIC_MODE_DEVICE, o.ref, 0, o.size);
	igt_assert_f(!memcmp(o.map, o.ref, o.size),
		     "a refused device write changed the object\n");
	igt_assert_eq(edu_dereg_err(fd, key), 0);
	obj_free(vfd, &o);
}

static void test_device_only_object(int vfd, int fd)
{
	struct obj o = obj_new(vfd, EDU_PAGE,
			       VGEM_P2P_CREATE_DEVICE_ONLY, 7);
	uint32_t key = reg_dmabuf(fd, o.dfd, 0, o.size, RW);

	edu_dma(fd, key, EDU_NIC_DMA_TO_MR, EDU_NIC_MODE_DEVICE, 1000,
		256, o.ref);
	check_read(fd, key, EDU_NIC_MODE_DEVICE, o.ref, 1000, 256);
	igt_assert_eq(edu_dereg_err(fd, key), 0);
	obj_free(vfd, &o);
}

static void test_move_during_dma(int vfd, int fd)
{
	struct obj o = obj_new(vfd, 2 * EDU_PAGE, 0, 8);
	struct stream st = { .fd = fd, .len = o.size, .want = o.ref };
	struct drm_vgem_p2p_obj_info i0, i1;
	struct drm_vgem_p2p_stats v0, v1;
	struct edu_nic_mr_stats s;
	/* where re-maps leave a VRAM object in place, it moves only here */
	bool p2p = edu_peer_p2p(vfd, 0);
	uint64_t old;
	pthread_t t;
	int i, stale = -1;

	st.key = reg_dmabuf(fd, o.dfd, 0, o.size, EDU_NIC_ACCESS_READ);
	i0 = vgem_p2p_info(vfd, o.handle);
	v0 = vgem_p2p_stats(vfd);
	igt_assert_eq(pthread_create(&t, NULL, stream_thread, &st), 0);
	for (i = 0; i < 4; i++) {
		msleep(250);
		old = vgem_p2p_info(vfd, o.handle).vram_offset;
		igt_assert_eq(vgem_p2p_move_err(vfd, o.handle, i == 2 ?
				      VGEM_P2P_MOVE_SYSTEM :
				      VGEM_P2P_MOVE_VRAM), 0);
		/*
		 * Within VRAM, the place it left reads poison; not after
		 * the move to system, where the stream's re-map may take
		 * that place again at once. Asserted once the stream has
		 * stopped: a failure must not leave it running.
		 */
		if (p2p && i != 2 && old != ~0ull && stale < 0 &&
		    !vgem_p2p_vram_poisoned(vfd, old, o.size))
			stale = i;
	}
	msleep(500);
	st.stop = 1;
	pthread_join(t, NULL);
	i1 = vgem_p2p_info(vfd, o.handle);
	v1 = vgem_p2p_stats(vfd);
	s = edu_mr_stats(fd, st.key);
	igt_info("%d DMAs, %d bad, err %d; %llu invalidations, %llu remaps; move_notify +%llu\n",
		 st.iterations, st.bad, st.err,
		 (unsigned long long)s.stats.invalidations,
		 (unsigned long long)s.stats.remaps,
		 (unsigned long long)(i1.move_notifies - i0.move_notifies));
	igt_assert_eq(st.err, 0);
	igt_assert_eq(st.bad, 0);
	igt_assert_f(stale < 0, "move %d left a range that is not poison\n",
		     stale);
	igt_assert(st.iterations > 0);
	/* every forced move is notified; re-maps may move it too */
	igt_assert(i1.move_notifies >= i0.move_notifies + 4);
	igt_assert(v1.move_notifies >= v0.move_notifies + 4);
	igt_assert(s.stats.invalidations >= 1);
	igt_assert(s.stats.remaps >= 1);
	check_read(fd, st.key, EDU_NIC_MODE_DEVICE, o.ref, 0, o.size);
	/* new bytes, read through the attachment of before the moves */
	p2p_fill(o.ref, o.size, 108);
	memcpy(o.map, o.ref, o.size);
	check_read(fd, st.key, EDU_NIC_MODE_DEVICE, o.ref, 0, o.size);
	igt_assert_eq(edu_dereg_err(fd, st.key), 0);
	obj_free(vfd, &o);
}

/* A call made by a thread of its own: its result, and whether it returned */
struct bg_call {
	int fd;
	uint32_t handle;	/* bg_move() */
	uint32_t target;
	uint32_t key;		/* bg_read() */
	uint64_t len;
	char *buf;
	int ret;
	int done;
};

static void *bg_move(void *arg)
{
	struct bg_call *c = arg;

	c->ret = vgem_p2p_move_err(c->fd, c->handle, c->target);
	__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *bg_read(void *arg)
{
	struct bg_call *c = arg;

	c->ret = edu_dma_err(c->fd, c->key, EDU_NIC_DMA_FROM_MR,
			     EDU_NIC_MODE_DEVICE, 0, c->len, c->buf);
	__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static bool bg_done(struct bg_call *c)
{
	return __atomic_load_n(&c->done, __ATOMIC_ACQUIRE);
}

/* A registration's invalidations, for wait_for_value() */
struct mr_ref {
	int fd;
	uint32_t key;
};

static long mr_invalidations(const void *arg)
{
	const struct mr_ref *r = arg;

	return edu_mr_stats(r->fd, r->key).stats.invalidations;
}

/*
 * A move holds its object's reservation from its move_notify, across its
 * wait for the object's fences (a vgem fence: up to its 10 s expiry), to
 * the end of its copy. A DMA on a dma-buf registration of that object
 * must wait for it without holding edu_nic's one engine, or every other
 * user of the device waits for that one object.
 *
 * The read on the dma-buf takes the engine first (hold_dma keeps it
 * there, its mapping checked), then the move starts on the fenced object
 * and reaches its fence wait (the registration is invalidated), then the
 * read goes on to its command. A read of an anonymous registration must
 * then complete while the fence is still pending and the move has not
 * returned; nothing but this test signals the fence, so that is a state,
 * not a time. Then the fence is signalled, the move completes and the
 * dma-buf read, having waited, reads the object's bytes where it went.
 */
static void test_fenced_move_frees_engine(int vfd, int fd, bool p2p)
{
	struct obj o = obj_new(vfd, EDU_PAGE, 0, 11);
	char *anon = edu_anon(o.size), *ref_anon = malloc(o.size);
	char *got_anon = calloc(1, o.size);
	struct bg_call move = {
		.fd = vfd, .handle = o.handle,
		.target = p2p ? VGEM_P2P_MOVE_SYSTEM : VGEM_P2P_MOVE_VRAM,
	};
	struct bg_call fenced = { .fd = fd, .len = o.size };
	struct drm_vgem_p2p_obj_info i0, i1;
	struct edu_nic_mr_stats s0, s1;
	int anon_ret, fence_ret, move_done, fenced_done;
	long held, invalidated;
	uint32_t anon_key, fence = 0;
	struct mr_ref mr;
	pthread_t tm, tr;

	/* edu_nic's own knob: always there */
	igt_assert_f(access(EDU_HOLD_DMA, W_OK) == 0, "%s: %s\n",
		     EDU_HOLD_DMA, strerror(errno));
	igt_assert(ref_anon && got_anon);
	fenced.buf = calloc(1, o.size);
	igt_assert(fenced.buf);
	p2p_fill(ref_anon, o.size, 12);
	memcpy(anon, ref_anon, o.size);
	anon_key = edu_reg(fd, anon, o.size, EDU_NIC_ACCESS_READ,
			   EDU_NIC_REG_MR_PREFETCH);
	fenced.key = reg_dmabuf(fd, o.dfd, 0, o.size, EDU_NIC_ACCESS_READ);
	mr = (struct mr_ref){ .fd = fd, .key = fenced.key };
	i0 = vgem_p2p_info(vfd, o.handle);
	s0 = edu_mr_stats(fd, mr.key);

	/* the dma-buf read holds the engine, past its own lock_mirror */
	igt_install_exit_handler(edu_release_dma);
	igt_assert(edu_write_str(EDU_HOLD_DMA, "1"));
	igt_assert_eq(pthread_create(&tr, NULL, bg_read, &fenced), 0);
	held = wait_for_value(edu_read_int_at, EDU_HELD_DMA, 1);

	/* the move takes the reservation and waits for the fence */
	igt_assert_eq(vgem_p2p_fence_attach(vfd, o.handle, VGEM_FENCE_WRITE,
					    &fence), 0);
	igt_assert_eq(pthread_create(&tm, NULL, bg_move, &move), 0);
	invalidated = wait_for_value(mr_invalidations, &mr,
				     s0.stats.invalidations + 1);

	/* the dma-buf read goes on to its command; then another user's */
	igt_assert(edu_write_str(EDU_HOLD_DMA, "0"));
	anon_ret = edu_dma_err(fd, anon_key, EDU_NIC_DMA_FROM_MR,
			       EDU_NIC_MODE_DEVICE, 0, o.size, got_anon);
	move_done = bg_done(&move);
	fenced_done = bg_done(&fenced);
	/* 0: it was still pending, so the move was still waiting */
	fence_ret = vgem_p2p_fence_signal(vfd, fence);
	igt_assert_eq(pthread_join(tm, NULL), 0);
	igt_assert_eq(pthread_join(tr, NULL), 0);
	i1 = vgem_p2p_info(vfd, o.handle);
	s1 = edu_mr_stats(fd, mr.key);

	igt_info("engine held %ld; invalidations %llu -> %ld; anonymous read %d with the fence %s, the move %s, the dma-buf read %s; move %d, dma-buf read %d; moves %llu -> %llu, remaps %llu -> %llu\n",
		 held, (unsigned long long)s0.stats.invalidations, invalidated,
		 anon_ret, fence_ret ? "expired" : "pending",
		 move_done ? "done" : "waiting",
		 fenced_done ? "done" : "waiting", move.ret, fenced.ret,
		 (unsigned long long)i0.moves, (unsigned long long)i1.moves,
		 (unsigned long long)s0.stats.remaps,
		 (unsigned long long)s1.stats.remaps);
	igt_assert_eq(held, 1);
	igt_assert_eq(invalidated, s0.stats.invalidations + 1);
	igt_assert_eq(anon_ret, 0);
	igt_assert(!memcmp(got_anon, ref_anon, o.size));
	igt_assert_f(fence_ret == 0 && !move_done,
		     "the anonymous read waited for the fenced move (fence signal %d, move %s)\n",
		     fence_ret, move_done ? "done" : "waiting");
	/* the dma-buf read waited for the move, and then read the object */
	igt_assert(!fenced_done);
	igt_assert_eq(move.ret, 0);
	igt_assert_eq(fenced.ret, 0);
	igt_assert(!memcmp(fenced.buf, o.ref, o.size));
	igt_assert(i1.moves > i0.moves);
	igt_assert(s1.stats.remaps > s0.stats.remaps);

	igt_assert_eq(edu_dereg_err(fd, anon_key), 0);
	igt_assert_eq(edu_dereg_err(fd, mr.key), 0);
	munmap(anon, o.size);
	free(ref_anon);
	free(got_anon);
	free(fenced.buf);
	obj_free(vfd, &o);
}

static void test_evict_and_return(int vfd, int fd, bool p2p)
{
	struct obj o = obj_new(vfd, EDU_PAGE, 0, 9);
	uint32_t key = reg_dmabuf(fd, o.dfd, 0, o.size,
				  EDU_NIC_ACCESS_READ);
	struct edu_nic_mr_stats s;

	igt_assert_eq(vgem_p2p_move_err(vfd, o.handle, p2p ?
			      VGEM_P2P_MOVE_SYSTEM :
			      VGEM_P2P_MOVE_VRAM), 0);
	s = edu_mr_stats(fd, key);
	igt_assert(!(s.state & EDU_NIC_MR_MIRRORED));
	igt_assert_eq_u64(s.stats.invalidations, 1);
	igt_assert_eq_u64(s.stats.cur_pages_p2p +
			  s.stats.cur_pages_system, 0);
	check_read(fd, key, EDU_NIC_MODE_DEVICE, o.ref, 0, 256);
	s = edu_mr_stats(fd, key);
	igt_assert_eq_u64(s.stats.remaps, 1);
	if (p2p) {
		igt_assert_eq(vgem_p2p_info(vfd, o.handle).placement,
			      VGEM_P2P_PLACEMENT_VRAM);
		igt_assert_eq_u64(s.stats.cur_pages_p2p, 1);
	} else {
		igt_assert_eq(vgem_p2p_info(vfd, o.handle).placement,
			      VGEM_P2P_PLACEMENT_SYSTEM);
		igt_assert_eq_u64(s.stats.cur_pages_system, 1);
	}
	igt_assert_eq(edu_dereg_err(fd, key), 0);
	obj_free(vfd, &o);
}

static void test_vma_and_dmabuf(int vfd, int fd)
{
	struct obj o = obj_new(vfd, EDU_PAGE, 0, 10);
	uint32_t kv, kd;
	struct edu_nic_mr_stats sv, sd;
	uint64_t old;

	/* read-only: two writable mappings of one page are not ours */
	kv = edu_reg(fd, o.map, o.size, EDU_NIC_ACCESS_READ, 0);
	kd = reg_dmabuf(fd, o.dfd, 0, o.size, EDU_NIC_ACCESS_READ);
	check_read(fd, kv, EDU_NIC_MODE_DEVICE, o.ref, 0, 128);
	check_read(fd, kd, EDU_NIC_MODE_DEVICE, o.ref, 0, 128);
	igt_assert(edu_mr_stats(fd, kv).state & EDU_NIC_MR_MIRRORED);
	igt_assert(edu_mr_stats(fd, kd).state & EDU_NIC_MR_MIRRORED);

	old = vgem_p2p_info(vfd, o.handle).vram_offset;
	igt_assert_eq(vgem_p2p_move_err(vfd, o.handle, VGEM_P2P_MOVE_VRAM), 0);
	/* the place both mapped reads poison (if it was in VRAM at all) */
	if (old != ~0ull)
		igt_assert(vgem_p2p_vram_poisoned(vfd, old, o.size));
	sv = edu_mr_stats(fd, kv);
	sd = edu_mr_stats(fd, kd);
	igt_assert(!(sv.state & EDU_NIC_MR_MIRRORED));
	igt_assert(!(sd.state & EDU_NIC_MR_MIRRORED));
	igt_assert_eq_u64(sv.stats.invalidations, 1);
	igt_assert_eq_u64(sd.stats.invalidations, 1);

	check_read(fd, kv, EDU_NIC_MODE_DEVICE, o.ref + 128, 128, 128);
	check_read(fd, kd, EDU_NIC_MODE_DEVICE, o.ref + 128, 128, 128);
	igt_assert_eq_u64(edu_mr_stats(fd, kv).stats.remaps, 1);
	igt_assert_eq_u64(edu_mr_stats(fd, kd).stats.remaps, 1);
	/* new bytes where it went: both registrations read them */
	p2p_fill(o.ref, o.size, 110);
	memcpy(o.map, o.ref, o.size);
	check_read(fd, kv, EDU_NIC_MODE_DEVICE, o.ref, 0, o.size);
	check_read(fd, kd, EDU_NIC_MODE_DEVICE, o.ref, 0, o.size);
	igt_assert_eq(edu_dereg_err(fd, kv), 0);
	igt_assert_eq(edu_dereg_err(fd, kd), 0);
	igt_assert_eq(vgem_p2p_info(vfd, o.handle).mappings, 0);
	igt_assert_eq(vgem_p2p_info(vfd, o.handle).dmabuf_attachments, 0);
	obj_free(vfd, &o);
}

static void test_error_ebadf(int fd)
{
	int dead = dup(fd);

	close(dead);
	igt_assert_eq(reg_dmabuf_err(fd, dead, 0, EDU_PAGE,
				     EDU_NIC_ACCESS_READ, NULL),
		      -EBADF);
	igt_assert_eq(reg_dmabuf_err(fd, -1, 0, EDU_PAGE,
				     EDU_NIC_ACCESS_READ, NULL),
		      -EBADF);
}

static void test_error_einval(int vfd, int fd)
{
	struct obj o = obj_new(vfd, 2 * EDU_PAGE, 0, 11);
	struct edu_nic_reg_dmabuf r = {
		.fd = o.dfd, .length = EDU_PAGE,
		.access = EDU_NIC_ACCESS_READ,
	};
	const uint32_t R = EDU_NIC_ACCESS_READ;
	struct edu_nic_reg_dmabuf bad;

	igt_assert_eq(reg_dmabuf_err(fd, fd, 0, EDU_PAGE, R, NULL),
		      -EINVAL);
	igt_assert_eq(reg_dmabuf_err(fd, vfd, 0, EDU_PAGE, R, NULL),
		      -EINVAL);
	bad = r;
	bad.flags = ~EDU_NIC_REG_DMABUF_FLAGS;
	igt_assert_eq(edu_ioctl(fd, EDU_NIC_IOCTL_REG_DMABUF, &bad),
		      -EINVAL);
	bad = r;
	bad.key = 1;
	igt_assert_eq(edu_ioctl(fd, EDU_NIC_IOCTL_REG_DMABUF, &bad),
		      -EINVAL);
	igt_assert_eq(reg_dmabuf_err(fd, o.dfd, 0, EDU_PAGE, 0, NULL),
		      -EINVAL);
	igt_assert_eq(reg_dmabuf_err(fd, o.dfd, 0, EDU_PAGE, 4, NULL),
		      -EINVAL);
	igt_assert_eq(reg_dmabuf_err(fd, o.dfd, 100, EDU_PAGE, R,
				     NULL), -EINVAL);
	igt_assert_eq(reg_dmabuf_err(fd, o.dfd, 0, 100, R, NULL),
		      -EINVAL);
	igt_assert_eq(reg_dmabuf_err(fd, o.dfd, 0, 0, R, NULL),
		      -EINVAL);
	igt_assert_eq(reg_dmabuf_err(fd, o.dfd, EDU_PAGE,
				     2 * EDU_PAGE, R, NULL), -EINVAL);
	igt_assert_eq(reg_dmabuf_err(fd, o.dfd, 2 * EDU_PAGE,
				     EDU_PAGE, R, NULL), -EINVAL);
	igt_assert_eq(reg_dmabuf_err(fd, o.dfd, -EDU_PAGE,
				     2 * EDU_PAGE, R, NULL), -EINVAL);
	igt_assert_eq(reg_dmabuf_err(fd, o.dfd, 0,
				     EDU_NIC_MR_MAX_LENGTH + EDU_PAGE,
				     R, NULL), -EINVAL);
	igt_assert_eq(vgem_p2p_info(vfd, o.handle).dmabuf_attachments, 0);
	obj_free(vfd, &o);
}

static void test_error_key_and_access(int vfd, int fd)
{
	struct obj o = obj_new(vfd, EDU_PAGE, 0, 12);
	uint32_t key = reg_dmabuf(fd, o.dfd, 0, o.size,
				  EDU_NIC_ACCESS_READ);
	char buf[64];
	pid_t pid;
	int status;

	igt_assert_eq(edu_dma_err(fd, key, EDU_NIC_DMA_TO_MR,
				  EDU_NIC_MODE_DEVICE, 0, 64, buf),
		      -EPERM);
	pid = fork();
	igt_assert(pid >= 0);
	if (pid == 0)
		_exit(reg_dmabuf_err(fd, o.dfd, 0, EDU_PAGE,
				     EDU_NIC_ACCESS_READ, NULL) ==
		      -EACCES ? 0 : 1);
	igt_assert_eq(waitpid(pid, &status, 0), pid);
	igt_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	igt_assert_eq(edu_dereg_err(fd, key), 0);
	igt_assert_eq(edu_dereg_err(fd, key), -ENOENT);
	igt_assert_eq(edu_dma_err(fd, key, EDU_NIC_DMA_FROM_MR,
				  EDU_NIC_MODE_DEVICE, 0, 64, buf),
		      -ENOENT);
	obj_free(vfd, &o);
}

static void test_read_only_fd(int vfd, int fd)
{
	struct obj rw = obj_new(vfd, EDU_PAGE, 0, 16);
	uint32_t h = vgem_p2p_create(vfd, EDU_PAGE, 0);
	char *map = vgem_p2p_mmap(vfd, h, EDU_PAGE,
				  PROT_READ | PROT_WRITE);
	int rofd = -1;
	uint32_t key;

	/*
	 * DRM keeps one dma-buf per object, made by its first export:
	 * so a fresh object for the read-only one.
	 */
	p2p_fill(map, EDU_PAGE, 17);
	igt_assert_eq(drmPrimeHandleToFD(vfd, h, DRM_CLOEXEC, &rofd), 0);
	igt_assert_eq(fcntl(rofd, F_GETFL) & O_ACCMODE, O_RDONLY);
	igt_assert_eq(reg_dmabuf_err(fd, rofd, 0, EDU_PAGE, RW, &key),
		      -EACCES);
	igt_assert_eq(reg_dmabuf_err(fd, rofd, 0, EDU_PAGE,
				     EDU_NIC_ACCESS_WRITE, &key),
		      -EACCES);
	igt_assert_eq(vgem_p2p_info(vfd, h).dmabuf_attachments, 0);
	key = reg_dmabuf(fd, rofd, 0, EDU_PAGE, EDU_NIC_ACCESS_READ);
	check_read(fd, key, EDU_NIC_MODE_DEVICE, map, 0, 256);
	igt_assert_eq(edu_dereg_err(fd, key), 0);
	close(rofd);
	munmap(map, EDU_PAGE);
	gem_close(vfd, h);

	/* rw.dfd is the DRM_RDWR export */
	igt_assert_eq(fcntl(rw.dfd, F_GETFL) & O_ACCMODE, O_RDWR);
	key = reg_dmabuf(fd, rw.dfd, 0, rw.size, RW);
	p2p_fill(rw.ref, 256, 18);
	edu_dma(fd, key, EDU_NIC_DMA_TO_MR, EDU_NIC_MODE_DEVICE, 0, 256,
		rw.ref);
	check_read(fd, key, EDU_NIC_MODE_DEVICE, rw.ref, 0, 256);
	igt_assert_eq(edu_dereg_err(fd, key), 0);
	obj_free(vfd, &rw);
}

static void test_reg_copy_out_fault(int vfd, int fd)
{
	struct obj o = obj_new(vfd, EDU_PAGE, 0, 18);
	uint64_t before = edu_dev_stats(fd).stats.nr_mrs;
	char *two = edu_anon(2 * EDU_PAGE);
	/* access and key on the read-only second page */
	struct edu_nic_reg_dmabuf *r = (void *)(two + EDU_PAGE - 24);
	uint32_t key;

	memset(r, 0, sizeof(*r));
	r->fd = o.dfd;
	r->length = o.size;
	r->access = RW;
	igt_assert_eq(mprotect(two + EDU_PAGE, EDU_PAGE, PROT_READ), 0);
	igt_assert_eq(edu_ioctl(fd, EDU_NIC_IOCTL_REG_DMABUF, r),
		      -EFAULT);
	igt_assert_eq(vgem_p2p_info(vfd, o.handle).dmabuf_attachments, 0);
	igt_assert_eq_u64(edu_dev_stats(fd).stats.nr_mrs, before);
	key = reg_dmabuf(fd, o.dfd, 0, o.size, RW);
	igt_assert_eq(edu_dereg_err(fd, key - 1), -ENOENT);
	igt_assert_eq(edu_dereg_err(fd, key), 0);
	munmap(two, 2 * EDU_PAGE);
	obj_free(vfd, &o);
}

static void test_teardown_close_first(int vfd, int fd)
{
	struct drm_vgem_p2p_stats v0 = vgem_p2p_stats(vfd);
	struct obj o = obj_new(vfd, EDU_PAGE, 0, 13);
	uint32_t key = reg_dmabuf(fd, o.dfd, 0, o.size, RW);

	close(o.dfd);
	o.dfd = -1;
	munmap(o.map, o.size);
	o.map = NULL;
	gem_close(vfd, o.handle);
	igt_assert_eq_u64(vgem_p2p_stats(vfd).dmabuf_attachments,
			  v0.dmabuf_attachments + 1);
	check_read(fd, key, EDU_NIC_MODE_DEVICE, o.ref, 0, 256);
	igt_assert_eq(edu_dereg_err(fd, key), 0);
	igt_assert_eq_u64(vgem_p2p_stats(vfd).dmabuf_attachments,
			  v0.dmabuf_attachments);
	free(o.ref);
}

static void test_teardown_close_importer(int vfd)
{
	struct obj o = obj_new(vfd, EDU_PAGE, 0, 14);
	int fd2 = edu_open();

	reg_dmabuf(fd2, o.dfd, 0, o.size, EDU_NIC_ACCESS_READ);
	reg_dmabuf(fd2, o.dfd, 0, o.size, RW);
	igt_assert_eq(vgem_p2p_info(vfd, o.handle).dmabuf_attachments, 2);
	close(fd2);
	igt_assert_eq(vgem_p2p_info(vfd, o.handle).dmabuf_attachments, 0);
	obj_free(vfd, &o);
}

/* Maps made of any attachment, p2p or not */
static uint64_t dmabuf_maps(const struct drm_vgem_p2p_stats *v)
{
	return v->dmabuf_maps_p2p + v->dmabuf_maps_system;
}

static int teardown_vfd = -1;

/* For wait_for_value(): were maps made since there were *@arg? */
static long maps_since(const void *arg)
{
	struct drm_vgem_p2p_stats v = vgem_p2p_stats(teardown_vfd);

	return dmabuf_maps(&v) > *(const uint64_t *)arg;
}

static void test_teardown_exit(int vfd)
{
	struct obj o = obj_new(vfd, 2 * EDU_PAGE, 0, 15);
	struct drm_vgem_p2p_stats v0 = vgem_p2p_stats(vfd), v1;
	uint64_t maps0;
	int ready[2];

	teardown_vfd = vfd;
	igt_assert_eq(pipe(ready), 0);
	igt_fork(child, 1) {
		int cfd = edu_open_nth(0);
		char buf[2 * EDU_PAGE];
		uint32_t k;

		igt_assert_fd(cfd);
		k = reg_dmabuf(cfd, o.dfd, 0, o.size, RW);
		/* the first DMA maps it, and reads it right */
		igt_assert_eq(edu_dma_err(cfd, k, EDU_NIC_DMA_FROM_MR,
					  EDU_NIC_MODE_DEVICE, 0, o.size,
					  buf), 0);
		igt_assert(!memcmp(buf, o.ref, o.size));
		edu_child_report(ready[1]);
		for (;;)
			edu_dma_err(cfd, k, EDU_NIC_DMA_FROM_MR,
				    EDU_NIC_MODE_DEVICE, 0, o.size,
				    buf);
	}
	edu_child_ready(ready);
	/* attached and mapped before the move and the kill */
	igt_assert_eq(vgem_p2p_info(vfd, o.handle).dmabuf_attachments, 1);
	v1 = vgem_p2p_stats(vfd);
	igt_assert_eq_u64(v1.dmabuf_attachments, v0.dmabuf_attachments + 1);
	igt_assert(dmabuf_live_maps(&v1) > dmabuf_live_maps(&v0));
	/*
	 * The move unmaps the child's attachment (move_notify); the child's
	 * stream maps it again, where the object went, before the kill: the
	 * exit then tears down a mapping made after a move, not only the
	 * first one.
	 */
	maps0 = dmabuf_maps(&v1);
	igt_assert(vgem_p2p_move_err(vfd, o.handle, VGEM_P2P_MOVE_VRAM) == 0);
	igt_assert_eq(wait_for_value(maps_since, &maps0, 1), 1);
	edu_child_kill();
	igt_assert_eq(vgem_p2p_info(vfd, o.handle).dmabuf_attachments, 0);
	v1 = vgem_p2p_stats(vfd);
	igt_assert_eq_u64(v1.dmabuf_attachments,
			  v0.dmabuf_attachments);
	igt_assert_eq_u64(dmabuf_live_maps(&v1),
			  dmabuf_live_maps(&v0));
	obj_free(vfd, &o);
}

igt_main
{
	struct edu_nic_dev_stats caps;
	int vfd = -1, fd = -1;
	bool p2p = false;

	igt_fixture {
		vfd = vgem_p2p_open_nth(0);
		igt_require_f(vfd >= 0, "no vgem_p2p device\n");
		fd = edu_open();
		caps = edu_dev_stats(fd);
		p2p = p2p_checked(vfd, fd, 0);
		igt_info("topology: %s%s\n", p2p ? "p2p" : "no p2p",
			 caps.caps & EDU_NIC_CAP_IOMMU ? ", IOMMU" : "");
	}

	igt_describe("Device DMA reads what the CPU wrote and the CPU reads what the device wrote, through the dma-buf: VRAM p2p (bus addresses or IOVAs) where reachable, system memory where not.");
	igt_subtest("read-write")
		test_read_write(&caps, vfd, fd, p2p);

	igt_describe("Bulk (emulated) DMA through the dma-buf mapping, both ways, checksummed.");
	igt_subtest("bulk")
		test_bulk(vfd, fd);

	igt_describe("Every vgem_p2p and edu_nic pair the kernel lets meet peer-to-peer gets, through a dma-buf, the addresses its verdict says: bus addresses marked as such by the exporter, which the importer counts as bus addresses and reads and writes as the bus resolves them, behind an IOMMU too (iommu's vgem_p2p1 and edu1 share a switch; bulk mode there, as QEMU's vIOMMU translates what a real switch routes), IOVAs otherwise; data checked both ways.");
	igt_subtest("bus-address-marked")
		test_bus_address_marked();

	igt_describe("An object that denies p2p is served from system memory through the dma-buf too.");
	igt_subtest("no-p2p-object")
		test_no_p2p_object(vfd, fd);

	igt_describe("A registration with EDU_NIC_REG_DMABUF_PINNED pins the buffer (the RDMA core's pinned dma-buf umem): vgem_p2p keeps the object in system memory, OBJ_INFO says pinned, a MOVE into VRAM fails with EINVAL while it lives, the device reads the object's bytes, and once it is gone the object moves back.");
	igt_subtest("pinned")
		test_pinned(vfd, fd);

	igt_describe("Two registrations of one dma-buf in system memory, each with its own attachment: DMA in both modes through each.");
	igt_subtest("shared-system")
		test_shared_system(vfd, fd);

	igt_describe("A read-only object: registering it for writing gets EPERM from the exporter; reading works; a device write of bytes other than the object's gets EPERM and changes nothing, seen by device DMA and by the CPU.");
	igt_subtest("read-only-object")
		test_read_only_object(vfd, fd);

	igt_describe("A device-only object round-trips through device DMA on its dma-buf.");
	igt_subtest("device-only-object")
		test_device_only_object(vfd, fd);

	igt_describe("Forced moves during a stream of device DMAs: move_notify, re-map, no stale data; where p2p is allowed each range a move within VRAM left reads poison (0x6b) through the BAR, and new bytes the CPU writes after the moves are what the attachment of before them reads.");
	igt_subtest("move-during-dma")
		test_move_during_dma(vfd, fd);

	igt_describe("A move waiting for its object's fence holds the object's reservation; a DMA on a dma-buf registration of it that already holds edu_nic's engine (hold_dma) lets the engine go and waits outside it: a DMA on an anonymous registration completes while the fence is still pending and the move has not returned, and once the fence is signalled the move completes and the dma-buf DMA returns 0 with the object's bytes.");
	igt_subtest("fenced-move-frees-engine")
		test_fenced_move_frees_engine(vfd, fd, p2p);

	igt_describe("Moving the object away from where the importer wants it (evicting it under p2p, into VRAM without) invalidates the mapping; the re-map moves it back.");
	igt_subtest("evict-and-return")
		test_evict_and_return(vfd, fd, p2p);

	igt_describe("One object registered through its vma and through its dma-buf: one move invalidates both, both re-map; the range they mapped reads poison (0x6b) through the BAR, and both read the new bytes the CPU writes after the move.");
	igt_subtest("vma-and-dmabuf")
		test_vma_and_dmabuf(vfd, fd);

	igt_describe("EBADF: a closed or negative file descriptor.");
	igt_subtest("error-ebadf")
		test_error_ebadf(fd);

	igt_describe("EINVAL: not a dma-buf, flags, key, access, alignment, range outside the dma-buf, wrap.");
	igt_subtest("error-einval")
		test_error_einval(vfd, fd);

	igt_describe("ENOENT after dereg; EACCES from another address space; EPERM for a DMA the access forbids.");
	igt_subtest("error-key-and-access")
		test_error_key_and_access(vfd, fd);

	igt_describe("A PRIME export without DRM_RDWR is a read-only fd: registering it for writing gets EACCES, for reading works; with DRM_RDWR both work.");
	igt_subtest("read-only-fd")
		test_read_only_fd(vfd, fd);

	igt_describe("REG_DMABUF whose key cannot be written back: EFAULT, nothing registered, nothing attached.");
	igt_subtest("reg-copy-out-fault")
		test_reg_copy_out_fault(vfd, fd);

	igt_describe("The registration keeps the dma-buf: closing the PRIME fd and the GEM handle first leaves it working; dereg then lets everything go.");
	igt_subtest("teardown-close-first")
		test_teardown_close_first(vfd, fd);

	igt_describe("Closing the importer's file releases its dma-buf registrations.");
	igt_subtest("teardown-close-importer")
		test_teardown_close_importer(vfd);

	igt_describe("A process killed while streaming DMA from a dma-buf leaves nothing attached: the child reads the object right once, the parent sees its attachment and mapping, moves the object under the stream, sees the stream map it again, and kills it, and the attachment is gone.");
	igt_subtest("teardown-exit")
		test_teardown_exit(vfd);

	igt_fixture {
		close(fd);
		close(vfd);
	}
}
