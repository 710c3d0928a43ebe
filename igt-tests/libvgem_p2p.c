// SPDX-License-Identifier: MIT
/*
 * libvgem-p2p: its unit of work, and every path on which it returns
 * -errno. Argument checks need no device and run anywhere; the rest needs
 * vgem_p2p.ko and edu_nic.ko and skips without them.
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "igt.h"
#include "p2p_fill.h"
#include "vgem_p2p.h"
#include "vgem_p2p_bar.h"

IGT_TEST_DESCRIPTION("libvgem-p2p: API, argument checks and -errno paths.");

#define PAGE 4096ul
#define RW (EDU_NIC_ACCESS_READ | EDU_NIC_ACCESS_WRITE)

/* A descriptor number that is certainly closed. */
/* Derived from the mask so that a newly defined flag cannot make it valid. */
static uint32_t lowest_unknown_bit(uint32_t mask)
{
	return ~mask & (mask + 1);
}

static int closed_fd(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	igt_assert_fd(fd);
	close(fd);
	return fd;
}

static void *anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	igt_assert(p != MAP_FAILED);
	return p;
}

static void exporter_args(void)
{
	struct drm_vgem_p2p_obj_info info;
	struct drm_vgem_p2p_stats st;
	struct vp2p_bo bo = { .handle = 1, .size = PAGE }, nobo = { 0 };
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	/* after null's open: a closed number must not be reused under us */
	int cfd = closed_fd();
	uint64_t off = 1, np;
	char pci[16];
	void *p;

	igt_assert_fd(null);

	igt_assert_eq(vp2p_exporter_open(-1), -EINVAL);
	igt_assert_eq(vp2p_exporter_check(-1), -EBADF);
	igt_assert_eq(vp2p_exporter_check(cfd), -EBADF);
	igt_assert_eq(vp2p_exporter_check(null), -ENODEV);
	igt_assert_eq(vp2p_exporter_pci(null, pci, 4), -EINVAL);
	igt_assert_eq(vp2p_exporter_pci(null, NULL, sizeof(pci)), -EINVAL);
	igt_assert_eq(vp2p_exporter_pci(null, pci, sizeof(pci)), -ENODEV);
	igt_assert_eq(vp2p_exporter_pci(cfd, pci, sizeof(pci)), -EBADF);

	igt_assert_eq(vp2p_bo_create(null, 0, 0, &bo), -EINVAL);
	igt_assert_eq(vp2p_bo_create(null, PAGE, 0x100, &bo), -EINVAL);
	igt_assert_eq(vp2p_bo_create(null, PAGE, 0, NULL), -EINVAL);
	igt_assert_eq(vp2p_bo_create(-1, PAGE, 0, &bo), -EBADF);
	igt_assert_eq(vp2p_bo_create(cfd, PAGE, 0, &bo), -EBADF);
	/* not a DRM file: the kernel says so, the library passes it on */
	igt_assert_eq(vp2p_bo_create(null, PAGE, 0, &bo), -ENOTTY);

	igt_assert_eq(vp2p_bo_close(null, NULL), -EINVAL);
	igt_assert_eq(vp2p_bo_close(null, &nobo), -EINVAL);
	igt_assert_eq(vp2p_bo_close(cfd, &bo), -EBADF);

	igt_assert_eq(vp2p_bo_mmap(null, NULL, PROT_READ, &p), -EINVAL);
	igt_assert_eq(vp2p_bo_mmap(null, &nobo, PROT_READ, &p), -EINVAL);
	igt_assert_eq(vp2p_bo_mmap(null, &bo, PROT_EXEC, &p), -EINVAL);
	igt_assert_eq(vp2p_bo_mmap(null, &bo, PROT_READ, NULL), -EINVAL);
	igt_assert_eq(vp2p_bo_mmap(cfd, &bo, PROT_READ, &p), -EBADF);
	igt_assert_eq(vp2p_bo_munmap(NULL, &bo), -EINVAL);
	igt_assert_eq(vp2p_bo_munmap(&bo, NULL), -EINVAL);

	igt_assert_eq(vp2p_bo_export(null, &bo, NULL), -EINVAL);
	igt_assert_eq(vp2p_bo_export(null, &nobo, &cfd), -EINVAL);
	igt_assert_eq(vp2p_bo_export(-1, &bo, &cfd), -EBADF);
	igt_assert_eq(vp2p_bo_import(null, -1, &bo), -EINVAL);
	igt_assert_eq(vp2p_bo_import(null, 0, NULL), -EINVAL);
	igt_assert_eq(vp2p_bo_import(-1, 0, &bo), -EBADF);

	igt_assert_eq(vp2p_bo_info(null, &bo, NULL), -EINVAL);
	igt_assert_eq(vp2p_bo_info(null, &nobo, &info), -EINVAL);
	igt_assert_eq(vp2p_bo_info(cfd, &bo, &info), -EBADF);

	igt_assert_eq(vp2p_bo_move(null, &bo, 3, NULL), -EINVAL);
	igt_assert_eq(vp2p_bo_move(null, &nobo, VGEM_P2P_MOVE_VRAM, NULL),
		      -EINVAL);
	igt_assert_eq(vp2p_bo_move(null, &bo, VGEM_P2P_MOVE_VRAM_AT, NULL),
		      -EINVAL);
	igt_assert_eq(vp2p_bo_move(null, &bo, VGEM_P2P_MOVE_VRAM_AT, &off),
		      -EINVAL);
	igt_assert_eq(vp2p_bo_move(cfd, &bo, VGEM_P2P_MOVE_VRAM, NULL),
		      -EBADF);
	igt_assert_eq(vp2p_bo_evict(null, NULL), -EINVAL);
	igt_assert_eq(vp2p_bo_evict(cfd, &bo), -EBADF);

	p = anon(2 * PAGE);
	igt_assert_eq(vp2p_migrate(null, NULL, PAGE, 0, &np), -EINVAL);
	igt_assert_eq(vp2p_migrate(null, (char *)p + 1, PAGE, 0, &np), -EINVAL);
	igt_assert_eq(vp2p_migrate(null, p, 0, 0, &np), -EINVAL);
	igt_assert_eq(vp2p_migrate(null, p, PAGE + 1, 0, &np), -EINVAL);
	igt_assert_eq(vp2p_migrate(null, p, PAGE, 2, &np), -EINVAL);
	igt_assert_eq(vp2p_migrate(null, (void *)-PAGE, 2 * PAGE, 0, &np),
		      -EINVAL);
	igt_assert_eq(vp2p_migrate(cfd, p, PAGE, 0, &np), -EBADF);
	munmap(p, 2 * PAGE);

	igt_assert_eq(vp2p_exporter_stats(null, NULL), -EINVAL);
	igt_assert_eq(vp2p_exporter_stats(cfd, &st), -EBADF);
	close(null);
}

static void importer_args(void)
{
	struct edu_nic_mr_stats ms;
	struct edu_nic_dev_stats ds;
	int cfd = closed_fd();
	char pci[16], buf[64];
	uint32_t key = 0;
	void *p = anon(2 * PAGE);

	igt_assert_eq(vp2p_importer_open(-1), -EINVAL);
	igt_assert_eq(vp2p_importer_open(VP2P_MAX_DEVICES), -EINVAL);
	igt_assert_eq(vp2p_importer_pci(-1, pci, sizeof(pci)), -EINVAL);
	igt_assert_eq(vp2p_importer_pci(0, pci, 4), -EINVAL);
	igt_assert_eq(vp2p_importer_pci(0, NULL, sizeof(pci)), -EINVAL);
	igt_assert_eq(vp2p_importer_pci(VP2P_MAX_DEVICES - 1, pci,
					sizeof(pci)), -ENODEV);
	igt_assert_eq(vp2p_importer_open(VP2P_MAX_DEVICES - 1), -ENODEV);

	igt_assert_eq(vp2p_mr_register(cfd, NULL, PAGE, RW, 0, &key), -EINVAL);
	igt_assert_eq(vp2p_mr_register(cfd, p, PAGE, RW, 0, NULL), -EINVAL);
	igt_assert_eq(vp2p_mr_register(cfd, p, 0, RW, 0, &key), -EINVAL);
	igt_assert_eq(vp2p_mr_register(cfd, p, PAGE + 1, RW, 0, &key),
		      -EINVAL);
	igt_assert_eq(vp2p_mr_register(cfd, (char *)p + 8, PAGE, RW, 0, &key),
		      -EINVAL);
	igt_assert_eq(vp2p_mr_register(cfd, p, EDU_NIC_MR_MAX_LENGTH + PAGE,
				       RW, 0, &key), -EINVAL);
	igt_assert_eq(vp2p_mr_register(cfd, (void *)-PAGE, 2 * PAGE, RW, 0,
				       &key), -EINVAL);
	igt_assert_eq(vp2p_mr_register(cfd, p, PAGE, 0, 0, &key), -EINVAL);
	igt_assert_eq(vp2p_mr_register(cfd, p, PAGE, 4, 0, &key), -EINVAL);
	igt_assert_eq(vp2p_mr_register(cfd, p, PAGE, RW,
				       lowest_unknown_bit(EDU_NIC_REG_MR_FLAGS),
				       &key), -EINVAL);
	igt_assert_eq(vp2p_mr_register(cfd, p, PAGE, RW, 0, &key), -EBADF);
	igt_assert_eq(vp2p_mr_register(-1, p, PAGE, RW, 0, &key), -EBADF);
	igt_assert_eq(key, 0);	/* untouched on failure */

	igt_assert_eq(vp2p_mr_register_dmabuf(cfd, 0, 0, PAGE, RW, 0, NULL),
		      -EINVAL);
	igt_assert_eq(vp2p_mr_register_dmabuf(cfd, 0, 0, 0, RW, 0, &key),
		      -EINVAL);
	igt_assert_eq(vp2p_mr_register_dmabuf(cfd, 0, 8, PAGE, RW, 0, &key),
		      -EINVAL);
	igt_assert_eq(vp2p_mr_register_dmabuf(cfd, 0, 0, PAGE + 1, RW, 0,
					      &key), -EINVAL);
	igt_assert_eq(vp2p_mr_register_dmabuf(cfd, 0, -PAGE, 2 * PAGE, RW, 0,
					      &key), -EINVAL);
	igt_assert_eq(vp2p_mr_register_dmabuf(cfd, 0, 0, PAGE, 4, 0, &key),
		      -EINVAL);
	igt_assert_eq(vp2p_mr_register_dmabuf(cfd, 0, 0, PAGE, RW, 1, &key),
		      -EINVAL);
	igt_assert_eq(vp2p_mr_register_dmabuf(cfd, -1, 0, PAGE, RW, 0, &key),
		      -EBADF);
	igt_assert_eq(vp2p_mr_register_dmabuf(cfd, 0, 0, PAGE, RW, 0, &key),
		      -EBADF);
	igt_assert_eq(key, 0);

	igt_assert_eq(vp2p_mr_deregister(cfd, 0), -EINVAL);
	igt_assert_eq(vp2p_mr_deregister(cfd, 1), -EBADF);

	igt_assert_eq(vp2p_dma(cfd, 0, 0, 0, 0, buf, 8), -EINVAL);
	igt_assert_eq(vp2p_dma(cfd, 1, 2, 0, 0, buf, 8), -EINVAL);
	igt_assert_eq(vp2p_dma(cfd, 1, 0, 2, 0, buf, 8), -EINVAL);
	igt_assert_eq(vp2p_dma(cfd, 1, 0, 0, 0, NULL, 8), -EINVAL);
	igt_assert_eq(vp2p_dma(cfd, 1, 0, 0, 0, buf, 0), -EINVAL);
	igt_assert_eq(vp2p_dma(cfd, 1, 0, 0, ~0ull, buf, 8), -EINVAL);
	igt_assert_eq(vp2p_dma(cfd, 1, 0, 0, 0, buf, 8), -EBADF);

	igt_assert_eq(vp2p_mr_stats(cfd, 0, &ms), -EINVAL);
	igt_assert_eq(vp2p_mr_stats(cfd, 1, NULL), -EINVAL);
	igt_assert_eq(vp2p_mr_stats(cfd, 1, &ms), -EBADF);
	igt_assert_eq(vp2p_importer_stats(cfd, NULL), -EINVAL);
	igt_assert_eq(vp2p_importer_stats(cfd, &ds), -EBADF);
	munmap(p, 2 * PAGE);
}

static void topology_args(void)
{
	struct vp2p_pair pair;
	char path[256];

	igt_assert_eq(vp2p_pci_path(NULL, path, sizeof(path)), -EINVAL);
	igt_assert_eq(vp2p_pci_path("0000:00:00.0", NULL, 1), -EINVAL);
	igt_assert_eq(vp2p_pci_path("bogus", path, sizeof(path)), -EINVAL);
	igt_assert_eq(vp2p_pci_path("0000:00:00.0x", path, sizeof(path)),
		      -EINVAL);
	igt_assert_eq(vp2p_pci_path("ffff:ff:1f.7", path, sizeof(path)),
		      -ENOENT);
	igt_assert_eq(vp2p_pair_check(NULL, "0000:00:00.0", &pair), -EINVAL);
	igt_assert_eq(vp2p_pair_check("0000:00:00.0", NULL, &pair), -EINVAL);
	igt_assert_eq(vp2p_pair_check("0000:00:00.0", "0000:00:00.0", NULL),
		      -EINVAL);
	igt_assert_eq(vp2p_pair_check("ffff:ff:1f.7", "ffff:ff:1f.6", &pair),
		      -ENOENT);
	igt_assert(!strcmp(vp2p_path_name(VP2P_PATH_SWITCH), "switch"));
	igt_assert(!strcmp(vp2p_path_name(VP2P_PATH_HOST_BRIDGE),
			   "host-bridge"));
	igt_assert(!strcmp(vp2p_path_name(42), "unknown"));
	if (!access("/sys/bus/pci/devices/0000:00:00.0", F_OK)) {
		igt_assert_eq(vp2p_pci_path("0000:00:00.0", path, 8),
			      -ENAMETOOLONG);
		igt_assert_eq(vp2p_pci_path("0000:00:00.0", path,
					    sizeof(path)), 0);
		igt_assert(strstr(path, "/sys/devices/pci"));
	}
}

static void test_exporter_open(int efd)
{
	int n = vp2p_exporter_count(), fd;
	char pci[16], path[256];

	igt_assert_eq(vp2p_exporter_check(efd), 0);
	igt_assert_eq(vp2p_exporter_open(n), -ENODEV);
	igt_assert_eq(vp2p_exporter_pci(efd, pci, sizeof(pci)), 0);
	igt_assert_eq(vp2p_pci_path(pci, path, sizeof(path)), 0);
	fd = vp2p_exporter_open(n - 1);
	igt_assert_fd(fd);
	close(fd);
}

static void test_exporter_render_node(int efd)
{
	char link[64], target[256];
	struct vp2p_bo bo;
	ssize_t n;
	void *p;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", efd);
	n = readlink(link, target, sizeof(target) - 1);
	igt_assert(n > 0);
	target[n] = 0;
	igt_assert_f(strstr(target, "/dev/dri/renderD"),
		     "opened %s\n", target);
	igt_assert_eq(vp2p_bo_create(efd, PAGE, 0, &bo), 0);
	igt_assert_eq(vp2p_bo_mmap(efd, &bo, PROT_READ | PROT_WRITE,
				   &p), 0);
	memset(p, 0x5a, PAGE);
	igt_assert_eq(((uint8_t *)p)[PAGE - 1], 0x5a);
	igt_assert_eq(vp2p_bo_munmap(&bo, p), 0);
	igt_assert_eq(vp2p_bo_close(efd, &bo), 0);
}

static void test_exporter_peer(int efd)
{
	char epci[16], ipci[16];
	struct vp2p_peer peer;
	struct vp2p_pair pair;

	igt_assert_eq(vp2p_exporter_peer(efd, NULL, &peer), -EINVAL);
	igt_assert_eq(vp2p_exporter_peer(efd, "bogus", &peer),
		      -EINVAL);
	igt_assert_eq(vp2p_exporter_peer(efd, "0000:00:00.0", NULL),
		      -EINVAL);
	igt_assert_eq(vp2p_exporter_peer(efd, "ffff:ff:1f.7", &peer),
		      -ENODEV);
	igt_assert_eq(vp2p_exporter_peer(-1, "0000:00:00.0", &peer),
		      -EBADF);
	igt_require(vp2p_importer_count() > 0);
	igt_assert_eq(vp2p_importer_pci(0, ipci, sizeof(ipci)), 0);
	igt_assert_eq(vp2p_exporter_pci(efd, epci, sizeof(epci)), 0);
	igt_assert_eq(vp2p_exporter_peer(efd, ipci, &peer), 0);
	igt_assert_eq(vp2p_pair_check(epci, ipci, &pair), 0);
	igt_info("%s -> %s: kernel %s/%u, sysfs %s\n", ipci, epci,
		 peer.reachable ? "reachable" : "unreachable",
		 peer.path, pair.p2p ? "p2p" : "no p2p");
	igt_assert_eq(peer.reachable, pair.p2p);
	igt_assert_eq(peer.path != VGEM_P2P_PEER_NONE, pair.p2p);
}

static void test_bo_lifecycle(int efd)
{
	struct drm_vgem_p2p_obj_info info;
	struct drm_vgem_p2p_stats st;
	struct vp2p_bo bo, bo2;
	uint64_t off = 0, old;
	int prime = -1, i;
	uint8_t *p, ref[2 * PAGE];

	igt_assert_eq(vp2p_bo_create(efd, PAGE + 1, 0, &bo), 0);
	igt_assert_eq_u64(bo.size, 2 * PAGE);
	igt_assert_neq(bo.handle, 0);
	igt_assert_eq(vp2p_bo_mmap(efd, &bo, PROT_READ | PROT_WRITE,
				   (void **)&p), 0);
	p2p_fill(ref, sizeof(ref), 7);
	memcpy(p, ref, sizeof(ref));

	igt_assert_eq(vp2p_bo_info(efd, &bo, &info), 0);
	igt_assert_eq(info.placement, VGEM_P2P_PLACEMENT_VRAM);
	igt_assert_eq_u64(info.size, 2 * PAGE);

	igt_assert_eq(vp2p_bo_export(efd, &bo, &prime), 0);
	igt_assert_fd(prime);
	igt_assert_eq(vp2p_bo_import(efd, prime, &bo2), 0);
	igt_assert_eq(bo2.handle, bo.handle);
	igt_assert_eq_u64(bo2.size, bo.size);
	close(prime);
	igt_assert_eq(vp2p_bo_import(efd, prime, &bo2), -EBADF);

	/* each place the object leaves reads poison, not its bytes */
	igt_assert_eq(vp2p_bo_info(efd, &bo, &info), 0);
	old = info.vram_offset;
	igt_assert_eq(vp2p_bo_move(efd, &bo, VGEM_P2P_MOVE_VRAM,
				   &off), 0);
	igt_assert(vgem_p2p_vram_poisoned(efd, old, 2 * PAGE));
	igt_assert_eq(vp2p_bo_info(efd, &bo, &info), 0);
	igt_assert_eq_u64(info.vram_offset, off);
	igt_assert(!memcmp(p, ref, sizeof(ref)));
	igt_assert_eq(vp2p_bo_evict(efd, &bo), 0);
	igt_assert(vgem_p2p_vram_poisoned(efd, off, 2 * PAGE));
	igt_assert_eq(vp2p_bo_info(efd, &bo, &info), 0);
	igt_assert_eq(info.placement, VGEM_P2P_PLACEMENT_SYSTEM);
	igt_assert(!memcmp(p, ref, sizeof(ref)));
	igt_assert_eq(vp2p_bo_move(efd, &bo, VGEM_P2P_MOVE_VRAM,
				   &off), 0);

	igt_assert_eq(vp2p_bo_munmap(&bo, p), 0);
	igt_assert_eq(vp2p_exporter_stats(efd, &st), 0);
	old = st.vram_used;
	igt_assert_eq(vp2p_bo_close(efd, &bo), 0);
	/* freed from a workqueue: poisoned before vram_used drops */
	for (i = 0; i < 1000; i++) {
		igt_assert_eq(vp2p_exporter_stats(efd, &st), 0);
		if (st.vram_used + 2 * PAGE <= old)
			break;
		usleep(10 * 1000);
	}
	igt_assert_f(i < 1000, "vram_used did not drop in 10 s\n");
	igt_assert(vgem_p2p_vram_poisoned(efd, off, 2 * PAGE));
	/* stale handle */
	igt_assert_eq(vp2p_bo_info(efd, &bo, &info), -ENOENT);
	igt_assert_eq(vp2p_bo_mmap(efd, &bo, PROT_READ,
				   (void **)&p), -ENOENT);
	igt_assert_eq(vp2p_bo_move(efd, &bo, VGEM_P2P_MOVE_VRAM,
				   NULL), -ENOENT);
	igt_assert_eq(vp2p_bo_export(efd, &bo, &prime), -ENOENT);
	igt_assert_eq(vp2p_bo_close(efd, &bo), -EINVAL);
}

static void test_bo_kernel_errors(int efd)
{
	struct drm_vgem_p2p_obj_info ia, ib;
	struct drm_vgem_p2p_stats st;
	struct vp2p_bo a, b;
	uint64_t off;

	igt_assert_eq(vp2p_exporter_stats(efd, &st), 0);
	igt_assert_eq(vp2p_bo_create(efd, st.vram_size + PAGE, 0,
				     &a), -ENOSPC);
	igt_assert_eq(vp2p_bo_create(efd, PAGE, 0, &a), 0);
	igt_assert_eq(vp2p_bo_create(efd, PAGE, 0, &b), 0);
	igt_assert_eq(vp2p_bo_info(efd, &a, &ia), 0);
	igt_assert_eq(vp2p_bo_info(efd, &b, &ib), 0);
	off = ib.vram_offset;
	igt_assert_eq(vp2p_bo_move(efd, &a, VGEM_P2P_MOVE_VRAM_AT,
				   &off), -EBUSY);
	off = st.vram_size;
	igt_assert_eq(vp2p_bo_move(efd, &a, VGEM_P2P_MOVE_VRAM_AT,
				   &off), -EINVAL);
	vp2p_bo_close(efd, &a);
	vp2p_bo_close(efd, &b);
}

static void test_exporter_closed_fd(void)
{
	struct drm_vgem_p2p_stats st;
	struct vp2p_bo bo;
	int fd = vp2p_exporter_open(0);

	igt_assert_fd(fd);
	igt_assert_eq(vp2p_bo_create(fd, PAGE, 0, &bo), 0);
	close(fd);
	igt_assert_eq(vp2p_bo_create(fd, PAGE, 0, &bo), -EBADF);
	igt_assert_eq(vp2p_bo_evict(fd, &bo), -EBADF);
	igt_assert_eq(vp2p_exporter_stats(fd, &st), -EBADF);
	igt_assert_eq(vp2p_exporter_check(fd), -EBADF);
}

static void test_migrate(int efd)
{
	uint8_t *p = anon(4 * PAGE), ref[4 * PAGE];
	struct vp2p_bo bo;
	uint64_t n = 0;
	void *q;
	int ret;

	p2p_fill(ref, sizeof(ref), 9);
	memcpy(p, ref, sizeof(ref));
	igt_assert_eq(vp2p_migrate(efd, p, 4 * PAGE,
				   VGEM_P2P_MIGRATE_TO_DEVICE, &n), 0);
	igt_assert_eq_u64(n, 4);
	igt_assert_eq(vp2p_migrate(efd, p, 4 * PAGE,
				   VGEM_P2P_MIGRATE_TO_RAM, &n), 0);
	igt_assert_eq_u64(n, 4);
	igt_assert(!memcmp(p, ref, sizeof(ref)));
	munmap(p, 4 * PAGE);

	igt_assert_eq(vp2p_bo_create(efd, PAGE, 0, &bo), 0);
	igt_assert_eq(vp2p_bo_mmap(efd, &bo, PROT_READ | PROT_WRITE,
				   &q), 0);
	/* only private anonymous memory migrates */
	n = 77;
	ret = vp2p_migrate(efd, q, PAGE,
			   VGEM_P2P_MIGRATE_TO_DEVICE, &n);
	igt_assert_eq(ret, -EINVAL);
	igt_assert_eq_u64(n, 77);
	vp2p_bo_munmap(&bo, q);
	vp2p_bo_close(efd, &bo);
}

static void test_mr_lifecycle(int ifd)
{
	struct edu_nic_mr_stats ms;
	struct edu_nic_dev_stats ds;
	uint8_t *p = anon(2 * PAGE), buf[2 * PAGE];
	uint8_t ref[2 * PAGE];
	char pci[16];
	uint32_t key = 0;

	igt_assert_eq(vp2p_importer_pci(0, pci, sizeof(pci)), 0);
	igt_assert_eq(vp2p_importer_stats(ifd, &ds), 0);
	p2p_fill(ref, sizeof(ref), 11);
	igt_assert_eq(vp2p_mr_register(ifd, p, 2 * PAGE, RW,
				       0, &key), 0);
	igt_assert_neq(key, 0);
	igt_assert_eq(vp2p_dma(ifd, key, EDU_NIC_DMA_TO_MR,
			       EDU_NIC_MODE_BULK, 0, ref,
			       sizeof(ref)), 0);
	igt_assert(!memcmp(p, ref, sizeof(ref)));
	igt_assert_eq(vp2p_dma(ifd, key, EDU_NIC_DMA_FROM_MR,
			       EDU_NIC_MODE_DEVICE, 100,
			       buf, 300), 0);
	igt_assert(!memcmp(buf, ref + 100, 300));
	igt_assert_eq(vp2p_mr_stats(ifd, key, &ms), 0);
	igt_assert_eq_u64(ms.length, 2 * PAGE);
	igt_assert_eq_u64(ms.stats.bulk_bytes, sizeof(ref));
	igt_assert_eq_u64(ms.stats.device_dma_bytes, 300);
	igt_assert_eq(vp2p_mr_deregister(ifd, key), 0);

	igt_assert_eq(vp2p_mr_deregister(ifd, key), -ENOENT);
	igt_assert_eq(vp2p_mr_stats(ifd, key, &ms), -ENOENT);
	igt_assert_eq(vp2p_dma(ifd, key, EDU_NIC_DMA_FROM_MR,
			       EDU_NIC_MODE_BULK, 0, buf,
			       8), -ENOENT);
	munmap(p, 2 * PAGE);
}

static void test_mr_kernel_errors(int ifd)
{
	uint8_t *p = anon(3 * PAGE), buf[64];
	uint32_t key = 0, ro;
	int fd;

	/* a hole in the middle */
	munmap(p + PAGE, PAGE);
	igt_assert_eq(vp2p_mr_register(ifd, p, 3 * PAGE, RW,
				       0, &key), -EFAULT);
	/* write access to a read-only mapping */
	igt_assert_eq(mprotect(p, PAGE, PROT_READ), 0);
	igt_assert_eq(vp2p_mr_register(ifd, p, PAGE, RW, 0,
				       &key), -EPERM);
	igt_assert_eq(vp2p_mr_register(ifd, p, PAGE,
				       EDU_NIC_ACCESS_READ,
				       0, &ro), 0);
	igt_assert_eq(vp2p_dma(ifd, ro, EDU_NIC_DMA_TO_MR,
			       EDU_NIC_MODE_BULK, 0, buf,
			       8), -EPERM);
	igt_assert_eq(vp2p_dma(ifd, ro, EDU_NIC_DMA_FROM_MR,
			       EDU_NIC_MODE_BULK, PAGE - 4,
			       buf, 8), -EINVAL);
	igt_assert_eq(vp2p_dma(ifd, ro, EDU_NIC_DMA_FROM_MR,
			       EDU_NIC_MODE_BULK, 0,
			       (void *)8, 8), -EFAULT);
	/* the range goes away under the registration */
	munmap(p, PAGE);
	igt_assert_eq(vp2p_dma(ifd, ro, EDU_NIC_DMA_FROM_MR,
			       EDU_NIC_MODE_BULK, 0, buf,
			       8), -EFAULT);
	igt_assert_eq(vp2p_mr_deregister(ifd, ro), 0);

	fd = vp2p_importer_open(0);
	igt_assert_fd(fd);
	igt_assert_eq(vp2p_mr_register(fd, p + 2 * PAGE, PAGE,
				       RW, 0, &key), 0);
	close(fd);
	igt_assert_eq(vp2p_dma(fd, key, EDU_NIC_DMA_FROM_MR,
			       EDU_NIC_MODE_BULK, 0, buf,
			       8), -EBADF);
	igt_assert_eq(vp2p_mr_deregister(fd, key), -EBADF);
	munmap(p + 2 * PAGE, PAGE);
}

static void test_vram_to_nic(int efd, int ifd)
{
	struct drm_vgem_p2p_stats s0, s1;
	struct edu_nic_mr_stats ms;
	uint8_t ref[PAGE], buf[PAGE];
	struct vp2p_bo bo;
	uint32_t key;
	void *p;

	igt_assert_eq(vp2p_bo_create(efd, PAGE, 0, &bo), 0);
	igt_assert_eq(vp2p_bo_mmap(efd, &bo,
				   PROT_READ | PROT_WRITE,
				   &p), 0);
	p2p_fill(ref, sizeof(ref), 13);
	memcpy(p, ref, sizeof(ref));
	igt_assert_eq(vp2p_exporter_stats(efd, &s0), 0);
	igt_assert_eq(vp2p_mr_register(ifd, p, PAGE, RW,
				       0, &key), 0);
	igt_assert_eq(vp2p_dma(ifd, key, EDU_NIC_DMA_FROM_MR,
			       EDU_NIC_MODE_DEVICE, 0, buf,
			       PAGE), 0);
	igt_assert(!memcmp(buf, ref, PAGE));
	igt_assert_eq(vp2p_exporter_stats(efd, &s1), 0);
	igt_assert_eq(vp2p_mr_stats(ifd, key, &ms), 0);
	igt_assert(s1.p2p_maps > s0.p2p_maps);
	igt_assert_eq_u64(ms.stats.device_dma_bytes, PAGE);
	igt_assert_eq(vp2p_mr_deregister(ifd, key), 0);
	vp2p_bo_munmap(&bo, p);
	vp2p_bo_close(efd, &bo);
}

igt_main
{
	int efd = -1, ifd = -1;

	igt_describe("The version string is the build's.");
	igt_subtest("version")
		igt_assert(!strcmp(vp2p_version(), "0.1.0"));

	igt_describe("Every exporter call rejects bad arguments and bad fds with -errno.");
	igt_subtest("exporter-args")
		exporter_args();

	igt_describe("Every importer call rejects bad arguments and bad fds with -errno.");
	igt_subtest("importer-args")
		importer_args();

	igt_describe("Topology helpers: bad names, unknown devices, short buffers.");
	igt_subtest("topology-args")
		topology_args();

	igt_subtest_group {
		igt_fixture {
			igt_require_f(vp2p_exporter_count() > 0,
				      "no vgem_p2p device\n");
			efd = vp2p_exporter_open(0);
			igt_assert_fd(efd);
		}

		igt_describe("Devices are found by driver name; a missing index is -ENODEV.");
		igt_subtest("exporter-open")
			test_exporter_open(efd);

		igt_describe("The library opens the render node, without opening any other driver's node, and maps objects through it.");
		igt_subtest("exporter-render-node")
			test_exporter_render_node(efd);

		igt_describe("vp2p_exporter_peer() gives the kernel's verdict on edu_nic0, and agrees with the sysfs explanation; bad names are -EINVAL, unknown devices -ENODEV.");
		igt_subtest("exporter-peer")
			test_exporter_peer(efd);

		igt_describe("An object's whole life: create, mmap, PRIME, info, move, evict, close, each VRAM range it leaves or frees reading poison (0x6b) through the BAR (a freed one once vram_used drops); then its stale handle.");
		igt_subtest("bo-lifecycle")
			test_bo_lifecycle(efd);

		igt_describe("Kernel-side errors come back as -errno: no space, busy and bad offsets.");
		igt_subtest("bo-kernel-errors")
			test_bo_kernel_errors(efd);

		igt_describe("Calls on a closed exporter fd get -EBADF.");
		igt_subtest("exporter-closed-fd")
			test_exporter_closed_fd();

		igt_describe("Migration to device memory and back; non-anonymous memory is refused.");
		igt_subtest("migrate")
			test_migrate(efd);

		igt_subtest_group {
			igt_fixture {
				igt_require_f(vp2p_importer_count() > 0,
					      "no edu_nic device\n");
				ifd = vp2p_importer_open(0);
				igt_assert_fd(ifd);
			}

			igt_describe("Register, DMA both ways, statistics, deregister; then the stale key.");
			igt_subtest("mr-lifecycle")
				test_mr_lifecycle(ifd);

			igt_describe("Kernel-side importer errors: holes, access, ranges, unmapped memory, closed fds.");
			igt_subtest("mr-kernel-errors")
				test_mr_kernel_errors(ifd);

			igt_describe("The library's unit of work: a VRAM object the CPU filled, read by the NIC's device DMA.");
			igt_subtest("vram-to-nic")
				test_vram_to_nic(efd, ifd);

			igt_fixture
				close(ifd);
		}

		igt_fixture
			close(efd);
	}
}
