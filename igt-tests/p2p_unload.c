// SPDX-License-Identifier: MIT
/*
 * Module and device lifetime: unloading each exporter (vgem_p2p, and
 * bochs, the in-tree TTM driver) and edu_nic in every order after
 * importers mapped exporter memory, unloading the exporter while its
 * device-private pages are still mapped by an importer, and unbinding the
 * exporter's PCI device under live importer mappings.
 *
 * The modules are loaded from $VP2P_MODULES, and bochs from $VP2P_KOBJ,
 * as the suite runner does; every subtest leaves them loaded.
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <xf86drm.h>

#include "p2p_common.h"
#include "p2p_modules.h"
#include "ttm_p2p_common.h"

IGT_TEST_DESCRIPTION("Unloading and unbinding the exporter and importer under live mappings.");

#define RW	(EDU_NIC_ACCESS_READ | EDU_NIC_ACCESS_WRITE)
#define SIZE	(4 * EDU_PAGE)

/* A read of @key's first @len bytes, by @mode, gets what @want holds */
static void check_head(int efd, uint32_t key, uint32_t mode, const char *want,
		       size_t len)
{
	char buf[256];

	igt_assert(len <= sizeof(buf));
	edu_dma(efd, key, EDU_NIC_DMA_FROM_MR, mode, 0, len, buf);
	igt_assert(!memcmp(buf, want, len));
}

/* In load order: edu_nic needs ib_uverbs, which needs ib_core */
static const int pair_mods[] = { IB_CORE, IB_UVERBS, EXPORTER, IMPORTER };

static void ensure_loaded(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(pair_mods); i++)
		if (!mod_loaded(pair_mods[i]))
			igt_assert_eq(mod_load(pair_mods[i]), 0);
}

/* The PCI address of the device behind a class device, e.g. edu_nic0 */
static void pci_addr(const char *sysfs_dev, char *bdf, size_t len)
{
	char link[256];
	ssize_t n = readlink(sysfs_dev, link, sizeof(link) - 1);

	igt_assert(n > 0);
	link[n] = 0;
	snprintf(bdf, len, "%s", strrchr(link, '/') + 1);
}

static void sysfs_write(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);

	igt_assert_fd(fd);
	igt_assert_eq(write(fd, s, strlen(s)), (ssize_t)strlen(s));
	close(fd);
}

/*
 * Everything an importer can hold of an exporter: a VRAM object mapped
 * and mirrored, and device-private pages mirrored. Checked by device DMA.
 */
struct everything {
	uint32_t key;
	char *vram;
	char *anon;
};

static struct everything map_everything(int vfd, int efd)
{
	uint32_t h = vgem_p2p_create(vfd, SIZE, 0);
	char *vram = vgem_p2p_mmap(vfd, h, SIZE, PROT_READ | PROT_WRITE);
	char *anon = edu_anon(SIZE);
	struct drm_vgem_p2p_migrate m = {
		.addr = (uintptr_t)anon, .size = SIZE,
		.direction = VGEM_P2P_MIGRATE_TO_DEVICE,
	};
	uint32_t key;

	p2p_fill(vram, SIZE, 1);
	p2p_fill(anon, SIZE, 2);
	do_ioctl(vfd, DRM_IOCTL_VGEM_P2P_MIGRATE, &m);
	igt_assert_eq_u64(m.npages, SIZE / EDU_PAGE);
	edu_reg(efd, anon, SIZE, RW, EDU_NIC_REG_MR_PREFETCH);
	key = edu_reg(efd, vram, SIZE, RW, EDU_NIC_REG_MR_PREFETCH);
	check_head(efd, key, EDU_NIC_MODE_BULK, vram, 64);
	igt_assert(vgem_p2p_info(vfd, h).mappings >= 1);
	return (struct everything){ .key = key, .vram = vram, .anon = anon };
}

/* edu_nic0's DMA mask, as its debugfs stats show it */
static uint64_t edu_dma_mask(void)
{
	char bdf[32], path[128], text[4096], *line;
	unsigned long long mask;
	ssize_t n;
	int fd;

	pci_addr("/sys/class/misc/edu_nic0/device", bdf, sizeof(bdf));
	snprintf(path, sizeof(path), "/sys/kernel/debug/edu_nic/%s/stats",
		 bdf);
	fd = open(path, O_RDONLY);
	igt_assert_fd(fd);
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	igt_assert(n > 0);
	text[n] = 0;
	line = strstr(text, "dma_mask ");
	igt_assert_f(line, "no dma_mask in %s\n", path);
	igt_assert_eq(sscanf(line, "dma_mask %llx", &mask), 1);
	return mask;
}

static unsigned int edu_dma_bits_param(void)
{
	char text[16] = "";
	int fd = open("/sys/module/edu_nic/parameters/dma_bits", O_RDONLY);

	igt_assert_fd(fd);
	igt_assert(read(fd, text, sizeof(text) - 1) > 0);
	close(fd);
	return strtoul(text, NULL, 10);
}

/*
 * Register a VRAM object through its vma and its dma-buf; return how many
 * of its pages each registration got as p2p (0: the system fallback):
 * for the vma, as the exporter counts BAR pages it handed out (the
 * importer counts every page the exporter maps as p2p); for the dma-buf,
 * as the importer counts addresses outside system RAM. Device DMA
 * through both reads what the CPU wrote.
 */
static void vram_p2p_pages(int vfd, int efd, uint64_t *vma_p2p,
			   uint64_t *dmabuf_p2p)
{
	uint32_t h = vgem_p2p_create(vfd, SIZE, 0);
	char *vram = vgem_p2p_mmap(vfd, h, SIZE, PROT_READ | PROT_WRITE);
	struct edu_nic_reg_dmabuf r = {
		.length = SIZE, .access = EDU_NIC_ACCESS_READ,
	};
	int dfd = -1;
	uint32_t key;

	p2p_fill(vram, SIZE, 4);
	key = edu_reg(efd, vram, SIZE, RW, EDU_NIC_REG_MR_PREFETCH);
	check_head(efd, key, EDU_NIC_MODE_DEVICE, vram, 256);
	*vma_p2p = edu_mr_stats(efd, key).stats.pages_p2p;
	igt_assert_eq(edu_dereg_err(efd, key), 0);

	igt_assert_eq(drmPrimeHandleToFD(vfd, h, DRM_CLOEXEC | DRM_RDWR, &dfd),
		      0);
	r.fd = dfd;
	igt_assert_eq(edu_ioctl(efd, EDU_NIC_IOCTL_REG_DMABUF, &r), 0);
	check_head(efd, r.key, EDU_NIC_MODE_DEVICE, vram, 256);
	*dmabuf_p2p = edu_mr_stats(efd, r.key).stats.pages_p2p;
	igt_assert_eq(edu_dereg_err(efd, r.key), 0);

	close(dfd);
	munmap(vram, SIZE);
	gem_close(vfd, h);
}

static void test_rmmod_busy(void)
{
	int vfd = vgem_p2p_open(), efd = edu_open();

	igt_assert_eq(mod_unload(EXPORTER), -EWOULDBLOCK);
	igt_assert_eq(mod_unload(IMPORTER), -EWOULDBLOCK);
	vgem_p2p_stats(vfd);
	edu_dev_stats(efd);
	close(efd);
	close(vfd);
}

/* Does a loaded module other than @m need @m? */
static bool mod_needed(int m)
{
	switch (m) {
	case IB_CORE:
		return mod_loaded(IB_UVERBS) || mod_loaded(IMPORTER);
	case IB_UVERBS:
		return mod_loaded(IMPORTER);
	default:
		return false;
	}
}

/*
 * Unload the four in the order of permutation @perm (of 24), again and
 * again until none is left: each refuses (-EWOULDBLOCK) exactly while a
 * module loaded after it needs it.
 */
static void unload_permutation(int perm)
{
	int order[4], pass, left, i, j, ret;
	bool taken[4] = { };

	/* the factorial number system: digit i picks among those left */
	for (i = 0, j = perm; i < 4; i++) {
		int pick = j % (4 - i), k;

		j /= 4 - i;
		for (k = 0; taken[k] || pick--; k++)
			;
		taken[k] = true;
		order[i] = pair_mods[k];
	}
	for (pass = 0, left = 4; left && pass < 4; pass++) {
		for (i = 0; i < 4; i++) {
			int m = order[i];
			bool needed;

			if (!mod_loaded(m))
				continue;
			needed = mod_needed(m);
			ret = mod_unload(m);
			igt_assert_f(ret == (needed ? -EWOULDBLOCK : 0),
				     "rmmod %s: %d, %s needed\n", mod_name[m],
				     ret, needed ? "still" : "not");
			left -= !ret;
		}
	}
	igt_assert_eq(left, 0);
}

/*
 * The RDMA core beside the pair: with live registrations (a VRAM range
 * mirrored peer-to-peer where the topology allows, a dma-buf mapped),
 * neither ib_uverbs, whose umems they are, nor ib_core unloads, and
 * neither does edu_nic (its file is open) or vgem_p2p (its objects are
 * mapped). Once they are gone, the four unload in every order (those a
 * loaded module still needs refusing) and load again, and the pair moves
 * the same bytes as before.
 */
static void test_unload_rdma_core(void)
{
	int vfd = vgem_p2p_open(), efd = edu_open(), dfd = -1, perm;
	uint32_t h = vgem_p2p_create(vfd, SIZE, 0);
	char *vram = vgem_p2p_mmap(vfd, h, SIZE, PROT_READ | PROT_WRITE);
	struct edu_nic_reg_dmabuf r = {
		.length = SIZE, .access = EDU_NIC_ACCESS_READ,
	};
	uint32_t key;
	unsigned int i;

	igt_require_f(getenv("VP2P_KOBJ"),
		      "VP2P_KOBJ names the kernel's objects (ib_core.ko)\n");
	p2p_fill(vram, SIZE, 9);
	key = edu_reg(efd, vram, SIZE, RW, EDU_NIC_REG_MR_PREFETCH);
	igt_assert_eq(drmPrimeHandleToFD(vfd, h, DRM_CLOEXEC | DRM_RDWR, &dfd),
		      0);
	r.fd = dfd;
	igt_assert_eq(edu_ioctl(efd, EDU_NIC_IOCTL_REG_DMABUF, &r), 0);
	for (i = 0; i < ARRAY_SIZE(pair_mods); i++)
		igt_assert_eq(mod_unload(pair_mods[i]), -EWOULDBLOCK);
	check_head(efd, r.key, EDU_NIC_MODE_DEVICE, vram, 256);
	igt_assert_eq(edu_dereg_err(efd, r.key), 0);
	igt_assert_eq(edu_dereg_err(efd, key), 0);
	close(dfd);
	munmap(vram, SIZE);
	close(efd);
	close(vfd);

	for (perm = 0; perm < 24; perm++) {
		unload_permutation(perm);
		ensure_loaded();
	}

	vfd = vgem_p2p_open();
	efd = edu_open();
	h = vgem_p2p_create(vfd, SIZE, 0);
	vram = vgem_p2p_mmap(vfd, h, SIZE, PROT_READ | PROT_WRITE);
	p2p_fill(vram, SIZE, 10);
	key = edu_reg(efd, vram, SIZE, RW, 0);
	check_head(efd, key, EDU_NIC_MODE_DEVICE, vram, 256);
	igt_assert_eq(edu_dereg_err(efd, key), 0);
	munmap(vram, SIZE);
	gem_close(vfd, h);
	close(efd);
	close(vfd);
}

/*
 * unload-every-order, order @order of 4: unload exporter @exp and edu_nic,
 * the exporter first or not (bit 0), then load them again, the exporter
 * first or not (bit 1).
 */
static void unload_in_order(int exp, int order)
{
	int out[2] = { exp, IMPORTER }, in[2] = { exp, IMPORTER };
	int i;

	if (order & 1) {
		out[0] = IMPORTER;
		out[1] = exp;
	}
	if (order & 2) {
		in[0] = IMPORTER;
		in[1] = exp;
	}
	igt_info("order %d: unload %s first, load %s first\n", order,
		 mod_name[out[0]], mod_name[in[0]]);
	for (i = 0; i < 2; i++)
		igt_assert_eq(mod_unload(out[i]), 0);
	for (i = 0; i < 2; i++)
		igt_assert_eq(mod_load(in[i]), 0);
}

/*
 * vgem_p2p: a child maps VRAM and device-private pages to the importer
 * (map_everything()), reads right once by device DMA, says so, and DMAs
 * until it is killed. Before the kill the parent sees its two
 * registrations and their pages, its device pages and its VRAM in use;
 * after it, all of them gone.
 */
static void unload_every_order_vgem_p2p(void)
{
	int order;

	for (order = 0; order < 4; order++) {
		int vfd = vgem_p2p_open(), efd = edu_open();
		struct drm_vgem_p2p_stats v0, v1;
		struct edu_nic_stats e0, e1;
		int ready[2];

		v0 = vgem_p2p_stats(vfd);
		e0 = edu_dev_stats(efd).stats;
		igt_assert_eq(pipe(ready), 0);
		igt_fork(child, 1) {
			int cvfd = vgem_p2p_open_nth(0);
			int cefd = edu_open();
			char buf[EDU_PAGE];
			struct everything e;

			igt_assert_fd(cvfd);
			e = map_everything(cvfd, cefd);
			/* one device DMA done, and it read right */
			igt_assert_eq(edu_dma_err(cefd, e.key,
						  EDU_NIC_DMA_FROM_MR,
						  EDU_NIC_MODE_DEVICE, 0,
						  sizeof(buf), buf), 0);
			igt_assert(!memcmp(buf, e.vram, sizeof(buf)));
			edu_child_report(ready[1]);
			for (;;)
				edu_dma_err(cefd, e.key,
					    EDU_NIC_DMA_FROM_MR,
					    EDU_NIC_MODE_DEVICE, 0,
					    sizeof(buf), buf);
		}
		/* its device DMA read the right bytes */
		edu_child_ready(ready);
		/* the child's mappings exist before the kill */
		v1 = vgem_p2p_stats(vfd);
		e1 = edu_dev_stats(efd).stats;
		igt_assert_eq_u64(e1.nr_mrs, e0.nr_mrs + 2);
		igt_assert_eq_u64(e1.cur_pages_p2p + e1.cur_pages_system,
				  e0.cur_pages_p2p + e0.cur_pages_system +
				  2 * SIZE / EDU_PAGE);
		igt_assert_eq_u64(v1.devmem_used, v0.devmem_used + SIZE);
		igt_assert(v1.vram_used >= v0.vram_used + SIZE);

		edu_child_kill();
		/* and are gone after it */
		v1 = vgem_p2p_stats(vfd);
		e1 = edu_dev_stats(efd).stats;
		igt_assert_eq_u64(e1.nr_mrs, e0.nr_mrs);
		igt_assert_eq_u64(e1.cur_pages_p2p, e0.cur_pages_p2p);
		igt_assert_eq_u64(e1.cur_pages_system,
				  e0.cur_pages_system);
		igt_assert_eq_u64(v1.devmem_used, v0.devmem_used);
		close(efd);
		close(vfd);

		unload_in_order(EXPORTER, order);
	}
	/* And the pair still works */
	{
		int vfd = vgem_p2p_open(), efd = edu_open();

		struct everything e = map_everything(vfd, efd);

		/* The mapping and the vma pin the module until gone */
		munmap(e.vram, SIZE);
		munmap(e.anon, SIZE);
		close(efd);
		close(vfd);
	}
}

/*
 * bochs: a child scans a buffer out (so it is in VRAM), registers it with
 * edu_nic, reads it right once by DMA, says so, and DMAs from it until it
 * is killed. Before the kill the buffer is in VRAM and edu_nic holds its
 * registration, mirrored peer-to-peer; after it, neither. Then bochs and
 * edu_nic unload and load again, and the pair still works.
 */
static void unload_every_order_bochs(void)
{
	const uint64_t pages = 1024 * 768 * 4 / EDU_PAGE;
	int order;

	igt_require_f(getenv("VP2P_KOBJ"),
		      "VP2P_KOBJ names the kernel's objects (bochs.ko)\n");
	igt_require_f(ttm_p2p_find_bochs() >= 0,
		      "no bochs-drm card (no bochs-display here)\n");
	igt_require(ttm_p2p_topology_p2p());
	for (order = 0; order < 4; order++) {
		/* a tag no other subtest leaves in VRAM */
		uint32_t seed = (getpid() << 8) + 0x80 + order;
		int minor, nic, ready[2];
		struct edu_nic_stats e0, e1;

		nic = edu_open();
		e0 = edu_dev_stats(nic).stats;
		igt_assert_eq(pipe(ready), 0);
		igt_fork(child, 1) {
			int fd = ttm_p2p_open(&minor), cnic = edu_open();
			struct ttm_p2p_bo bo = ttm_p2p_dumb(fd, 1024, 768);
			char buf[EDU_PAGE];
			uint32_t key;

			ttm_p2p_fill(bo.map, bo.size, seed);
			ttm_p2p_scan_out(fd, &bo, 1024, 768);
			key = edu_reg(cnic, bo.map, bo.size, RW,
				      EDU_NIC_REG_MR_PREFETCH);
			igt_assert_eq(edu_dma_err(cnic, key,
						  EDU_NIC_DMA_FROM_MR,
						  EDU_NIC_MODE_DEVICE, 0,
						  sizeof(buf), buf), 0);
			igt_assert(!memcmp(buf, bo.map, sizeof(buf)));
			edu_child_report(ready[1]);
			for (;;)
				edu_dma_err(cnic, key, EDU_NIC_DMA_FROM_MR,
					    EDU_NIC_MODE_DEVICE, 0,
					    sizeof(buf), buf);
		}
		/* its device DMA read the right bytes */
		edu_child_ready(ready);
		/* the child's buffer is in VRAM, registered and mirrored */
		minor = ttm_p2p_find_bochs();
		igt_assert(minor >= 0);
		igt_assert(ttm_p2p_in_vram(minor, seed, 0));
		e1 = edu_dev_stats(nic).stats;
		igt_assert_eq_u64(e1.nr_mrs, e0.nr_mrs + 1);
		igt_assert_eq_u64(e1.cur_pages_p2p, e0.cur_pages_p2p + pages);

		edu_child_kill();
		e1 = edu_dev_stats(nic).stats;
		igt_assert_eq_u64(e1.nr_mrs, e0.nr_mrs);
		igt_assert_eq_u64(e1.cur_pages_p2p, e0.cur_pages_p2p);
		close(nic);

		unload_in_order(BOCHS, order);
	}
	/* and the pair still works */
	ttm_p2p_vram_read_write();
}

static void test_unload_after_dmabuf_mmap(void)
{
	int vfd = vgem_p2p_open();
	uint32_t h = vgem_p2p_create(vfd, SIZE, 0);
	int dmabuf;
	char *d;

	igt_assert_eq(drmPrimeHandleToFD(vfd, h, DRM_CLOEXEC | DRM_RDWR,
					 &dmabuf), 0);
	d = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, dmabuf,
		 0);
	igt_assert(d != MAP_FAILED);
	fill_pattern(d, SIZE, 9);
	gem_close(vfd, h);
	close(dmabuf);
	close(vfd);
	/* only the mapping is left, and it holds the module */
	igt_assert_eq(mod_unload(EXPORTER), -EWOULDBLOCK);
	igt_assert(check_pattern(d, SIZE, 9));
	munmap(d, SIZE);
	igt_assert_eq(mod_unload(EXPORTER), 0);
	igt_assert_eq(mod_load(EXPORTER), 0);
}

static void test_unload_exporter_with_devmem_pages(void)
{
	int vfd = vgem_p2p_open(), efd = edu_open();
	char *anon = edu_anon(SIZE), ref[SIZE], buf[SIZE];
	struct drm_vgem_p2p_migrate m = {
		.addr = (uintptr_t)anon, .size = SIZE,
		.direction = VGEM_P2P_MIGRATE_TO_DEVICE,
	};
	struct edu_nic_mr_stats s;
	uint32_t key;

	p2p_fill(ref, SIZE, 3);
	memcpy(anon, ref, SIZE);
	do_ioctl(vfd, DRM_IOCTL_VGEM_P2P_MIGRATE, &m);
	igt_assert_eq_u64(m.npages, SIZE / EDU_PAGE);
	key = edu_reg(efd, anon, SIZE, EDU_NIC_ACCESS_READ,
		      EDU_NIC_REG_MR_PREFETCH);
	igt_assert_eq_u64(edu_mr_stats(efd, key).stats.pages_p2p,
			  SIZE / EDU_PAGE);
	s = edu_mr_stats(efd, key);
	igt_assert(s.state & EDU_NIC_MR_MIRRORED);
	close(vfd);

	/*
	 * The importer holds nothing of the exporter's: unloading it
	 * migrates the pages still on the device back to RAM, which
	 * invalidates the importer's mapping of them first.
	 */
	igt_assert_eq(mod_unload(EXPORTER), 0);
	s = edu_mr_stats(efd, key);
	igt_assert(!(s.state & EDU_NIC_MR_MIRRORED));
	igt_assert_lte(1, s.stats.invalidations);
	igt_assert_eq_u64(s.stats.cur_pages_p2p, 0);

	/* The next DMA reads the data where it went. */
	igt_assert(!memcmp(anon, ref, SIZE));
	memset(buf, 0, SIZE);
	edu_dma(efd, key, EDU_NIC_DMA_FROM_MR, EDU_NIC_MODE_DEVICE, 0,
		SIZE, buf);
	igt_assert(!memcmp(buf, ref, SIZE));
	s = edu_mr_stats(efd, key);
	igt_assert_eq_u64(s.stats.cur_pages_p2p, 0);
	igt_assert_eq_u64(s.stats.cur_pages_system, SIZE / EDU_PAGE);
	igt_assert_eq(edu_dereg_err(efd, key), 0);
	munmap(anon, SIZE);
	close(efd);
	igt_assert_eq(mod_load(EXPORTER), 0);
}

static void test_unbind_exporter_under_vram_mapping(void)
{
	int vfd = vgem_p2p_open(), efd = edu_open();
	uint32_t h = vgem_p2p_create(vfd, SIZE, 0);
	char *vram = vgem_p2p_mmap(vfd, h, SIZE, PROT_READ | PROT_WRITE);
	char path[96], bdf[32], buf[64], ref[64];
	struct edu_nic_mr_stats s0, s1;
	uint32_t key;
	int ret;

	/*
	 * Bytes of its own in the object, read once through the mapping:
	 * the DMA after the unbind is held to leaving a buffer filled with
	 * other bytes as it was, so that a DMA that wrote zeroes, or what
	 * a gone BAR reads as, cannot pass for one that wrote nothing.
	 */
	p2p_fill(vram, SIZE, 61);
	key = edu_reg(efd, vram, SIZE, EDU_NIC_ACCESS_READ,
		      EDU_NIC_REG_MR_PREFETCH);
	edu_dma(efd, key, EDU_NIC_DMA_FROM_MR, EDU_NIC_MODE_DEVICE, 0,
		sizeof(buf), buf);
	igt_assert(!memcmp(buf, vram, sizeof(buf)));
	s0 = edu_mr_stats(efd, key);
	igt_assert(vgem_p2p_info(vfd, h).mappings >= 1);
	snprintf(path, sizeof(path), "/sys/class/drm/card%d/device",
		 vgem_p2p_card(vfd));
	pci_addr(path, bdf, sizeof(bdf));

	sysfs_write("/sys/bus/pci/drivers/vgem_p2p/unbind", bdf);

	s1 = edu_mr_stats(efd, key);
	igt_assert(s1.stats.invalidations > s0.stats.invalidations);
	igt_assert_eq(s1.state & EDU_NIC_MR_MIRRORED, 0);
	p2p_fill(ref, sizeof(ref), 62);
	memcpy(buf, ref, sizeof(buf));
	ret = edu_dma_err(efd, key, EDU_NIC_DMA_FROM_MR,
			  EDU_NIC_MODE_DEVICE, 0, sizeof(buf), buf);
	igt_info("importer DMA after unbind: %d (%s)\n", ret,
		 strerror(-ret));
	igt_assert_eq(ret, -ENODEV);
	igt_assert_f(!memcmp(buf, ref, sizeof(buf)),
		     "a DMA refused after the unbind wrote into its buffer\n");

	igt_assert_eq(edu_dereg_err(efd, key), 0);
	munmap(vram, SIZE);
	close(vfd);
	close(efd);
	sysfs_write("/sys/bus/pci/drivers/vgem_p2p/bind", bdf);
	vfd = vgem_p2p_open();
	close(vfd);
}

/*
 * Unbinding the exporter evicts its VRAM objects and zaps their CPU
 * mappings; objects in system memory keep theirs. Every CPU fault after
 * it is served from system memory: the evicted object's, through the
 * mapping the unbind zapped, and a system object's, through a second
 * mapping the CPU never touched.
 */
static void test_unbind_exporter_cpu_faults(void)
{
	int vfd = vgem_p2p_open();
	uint32_t v = vgem_p2p_create(vfd, SIZE, 0);
	uint32_t s = vgem_p2p_create(vfd, SIZE, VGEM_P2P_CREATE_SYSTEM);
	char *pv = vgem_p2p_mmap(vfd, v, SIZE, PROT_READ | PROT_WRITE);
	char *ps = vgem_p2p_mmap(vfd, s, SIZE, PROT_READ | PROT_WRITE);
	char *ps2 = vgem_p2p_mmap(vfd, s, SIZE, PROT_READ | PROT_WRITE);
	char path[96], bdf[32];

	fill_pattern(pv, SIZE, 31);
	fill_pattern(ps, SIZE, 32);
	igt_assert_eq_u32(vgem_p2p_info(vfd, v).placement,
			  VGEM_P2P_PLACEMENT_VRAM);
	snprintf(path, sizeof(path), "/sys/class/drm/card%d/device",
		 vgem_p2p_card(vfd));
	pci_addr(path, bdf, sizeof(bdf));

	sysfs_write("/sys/bus/pci/drivers/vgem_p2p/unbind", bdf);

	igt_assert(check_pattern(pv, SIZE, 31));
	igt_assert(check_pattern(ps2, SIZE, 32));
	fill_pattern(pv, SIZE, 33);
	igt_assert(check_pattern(pv, SIZE, 33));
	fill_pattern(ps2, SIZE, 34);
	igt_assert(check_pattern(ps, SIZE, 34));

	munmap(ps2, SIZE);
	munmap(ps, SIZE);
	munmap(pv, SIZE);
	close(vfd);
	sysfs_write("/sys/bus/pci/drivers/vgem_p2p/bind", bdf);
	vfd = vgem_p2p_open();
	close(vfd);
}

/* The exporter's PCI address, for its driver's bind and unbind files */
static void exporter_bdf(int vfd, char *bdf, size_t len)
{
	char path[96];

	snprintf(path, sizeof(path), "/sys/class/drm/card%d/device",
		 vgem_p2p_card(vfd));
	pci_addr(path, bdf, len);
}

/*
 * fail_page_alloc for this thread only (make-it-fail), every time: the
 * knobs set, and what they were, to restore.
 */
#define FAIL_PAGE_ALLOC	"/sys/kernel/debug/fail_page_alloc/"

static const struct {
	const char *knob;
	const char *value;
} fail_pages_knobs[] = {
	{ "task-filter", "Y" },
	{ "probability", "100" },
	{ "interval", "1" },
	{ "times", "-1" },
	{ "space", "0" },
	{ "ignore-gfp-wait", "N" },
	{ "ignore-gfp-highmem", "N" },
	{ "min-order", "0" },
	{ "verbose", "0" },
};
static char fail_pages_saved[ARRAY_SIZE(fail_pages_knobs)][32];

/*
 * In the reverse order of fail_pages_arm(): task-filter comes back last.
 * Restored first, with probability still 100, it would fail every task's
 * page allocations, this one's too, whose next open() then fails: the
 * knobs stayed that way, and the guest looped in its page faults.
 */
static void fail_pages_restore(int sig)
{
	char path[128];
	unsigned int i;

	for (i = ARRAY_SIZE(fail_pages_knobs); i-- > 0;) {
		if (!fail_pages_saved[i][0])
			continue;
		snprintf(path, sizeof(path), FAIL_PAGE_ALLOC "%s",
			 fail_pages_knobs[i].knob);
		edu_write_str(path, fail_pages_saved[i]);
		fail_pages_saved[i][0] = 0;
	}
}

static void fail_pages_arm(void)
{
	char path[128];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fail_pages_knobs); i++) {
		char *v = fail_pages_saved[i];
		ssize_t n;
		int fd;

		snprintf(path, sizeof(path), FAIL_PAGE_ALLOC "%s",
			 fail_pages_knobs[i].knob);
		fd = open(path, O_RDONLY);
		igt_require_f(fd >= 0, "%s: no fail_page_alloc\n", path);
		n = read(fd, v, sizeof(fail_pages_saved[i]) - 1);
		close(fd);
		igt_assert(n > 0);
		v[n] = 0;
		igt_assert(edu_write_str(path, fail_pages_knobs[i].value));
	}
	igt_install_exit_handler(fail_pages_restore);
}

/*
 * Unbind the exporter with every page allocation of the unbinding task
 * failing: its eviction to system memory cannot get pages for any
 * object. A vfork() child unbinds, so that make-it-fail, which is the
 * task's, ends with it whatever happens: left set in this process, any
 * later allocation of ours fails, and a user fault needing a page gets
 * VM_FAULT_OOM, which pagefault_out_of_memory() retries for ever. The
 * child shares our pages (no copy-on-write fault needs a page) on a stack
 * our calls have already touched, opens its file before it arms, and
 * leaves by syscall(), bound here first.
 */
static void unbind_without_pages(const char *bdf)
{
	int unbind = open("/sys/bus/pci/drivers/vgem_p2p/unbind", O_WRONLY);
	size_t len = strlen(bdf);
	int status;
	pid_t pid;

	igt_assert_fd(unbind);
	igt_assert(syscall(SYS_getpid) > 0);
	fail_pages_arm();
	pid = vfork();
	if (pid == 0) {
		int fail = open("/proc/thread-self/make-it-fail", O_WRONLY);
		long code = 2;

		if (fail >= 0 && write(fail, "1", 1) == 1)
			code = write(unbind, bdf, len) == (ssize_t)len ? 0 : 1;
		syscall(SYS_exit, code);
	}
	fail_pages_restore(0);
	close(unbind);
	igt_assert(pid > 0);
	igt_assert_eq(waitpid(pid, &status, 0), pid);
	igt_assert_f(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		     "the unbinding child: status %#x (exit 1: the unbind failed, 2: make-it-fail)\n",
		     status);
}

/*
 * Issue 48 item 5. An object the unbind could not evict (no system pages)
 * stays in VRAM, charged to its process's VRAM quota, and VRAM closes:
 * its data is lost, and the CPU gets SIGBUS. An importer's next map of
 * its dma-buf moves it to system memory with nothing to copy: zeroed
 * pages. That move leaves VRAM like any other: the object is no longer
 * counted in VRAM (fdinfo), and its charge goes with it, else the
 * device's release WARNs about the VRAM charge left.
 */
static void test_unbind_exporter_eviction_fails(void)
{
	int vfd = vgem_p2p_open(), efd = edu_open(), dfd = -1;
	uint32_t h = vgem_p2p_create(vfd, SIZE, 0);
	char *p = vgem_p2p_mmap(vfd, h, SIZE, PROT_READ | PROT_WRITE);
	struct edu_nic_reg_dmabuf r = {
		.length = SIZE, .access = EDU_NIC_ACCESS_READ,
	};
	uint64_t vram_unbound, vram_mapped, system_mapped;
	static const char zero[SIZE];
	char bdf[32], buf[SIZE];
	bool lost_sigbus;
	int ret;

	fill_pattern(p, SIZE, 41);
	igt_assert_eq_u32(vgem_p2p_info(vfd, h).placement,
			  VGEM_P2P_PLACEMENT_VRAM);
	igt_assert_eq(drmPrimeHandleToFD(vfd, h, DRM_CLOEXEC | DRM_RDWR, &dfd),
		      0);
	r.fd = dfd;
	igt_assert_eq(edu_ioctl(efd, EDU_NIC_IOCTL_REG_DMABUF, &r), 0);
	check_head(efd, r.key, EDU_NIC_MODE_DEVICE, p, 256);
	exporter_bdf(vfd, bdf, sizeof(bdf));

	unbind_without_pages(bdf);

	/* still in VRAM, which is gone: lost */
	vram_unbound = vgem_p2p_fdinfo_kib(vfd, "drm-memory-vram");
	lost_sigbus = touch_sigbus((volatile uint32_t *)p, false);
	/* the importer maps the dma-buf again: system pages, zeroed */
	ret = edu_dma_err(efd, r.key, EDU_NIC_DMA_FROM_MR, EDU_NIC_MODE_DEVICE,
			  0, SIZE, buf);
	vram_mapped = vgem_p2p_fdinfo_kib(vfd, "drm-memory-vram");
	system_mapped = vgem_p2p_fdinfo_kib(vfd, "drm-memory-system");

	/* the last reference releases the client, charged or not */
	igt_assert_eq(edu_dereg_err(efd, r.key), 0);
	close(dfd);
	munmap(p, SIZE);
	close(vfd);
	close(efd);
	sysfs_write("/sys/bus/pci/drivers/vgem_p2p/bind", bdf);
	vfd = vgem_p2p_open();
	close(vfd);

	igt_assert_eq_u64(vram_unbound, SIZE >> 10);
	igt_assert(lost_sigbus);
	igt_assert_eq(ret, 0);
	igt_assert(!memcmp(buf, zero, SIZE));
	igt_assert_eq_u64(vram_mapped, 0);
	igt_assert_eq_u64(system_mapped, SIZE >> 10);
}

/* A thread reading one word per page of a mapping until told to stop */
struct toucher {
	const volatile uint32_t *p;
	uint32_t seed;
	volatile bool stop;
	volatile unsigned long passes;
	volatile bool sigbus;
	volatile bool wrong;
};

static __thread sigjmp_buf toucher_jmp;

static void toucher_sigbus(int sig)
{
	siglongjmp(toucher_jmp, 1);
}

static void *toucher(void *arg)
{
	struct toucher *t = arg;
	size_t i;

	if (sigsetjmp(toucher_jmp, 1)) {
		t->sigbus = true;
		return NULL;
	}
	while (!t->stop) {
		for (i = 0; i < SIZE / 4; i += EDU_PAGE / 4)
			if (t->p[i] != (t->seed ^ (uint32_t)(i * 2654435761u)))
				t->wrong = true;
		t->passes++;
	}
	return NULL;
}

/*
 * Issue 48 item 6. Unbind zaps every mapping (drm_dev_unplug()) before
 * its eviction saves VRAM, oldest object first (TTM's LRU). An older
 * object with an unsignalled write fence holds the eviction until the
 * fence expires (vgem's 10 s), so a thread reading the younger object's
 * mapping all through the unbind faults while that object is still in
 * VRAM, not yet reserved by the eviction, and VRAM still up. The fault
 * saves it to system memory and is served: no SIGBUS, the bytes written
 * before the unbind.
 */
static void test_unbind_exporter_fault_while_evicting(void)
{
	int vfd = vgem_p2p_open();
	uint32_t older = vgem_p2p_create(vfd, SIZE, 0), fence;
	uint32_t h = vgem_p2p_create(vfd, SIZE, 0);
	char *p = vgem_p2p_mmap(vfd, h, SIZE, PROT_READ | PROT_WRITE);
	struct toucher t = { .p = (const volatile uint32_t *)p, .seed = 61 };
	struct sigaction sa = { .sa_handler = toucher_sigbus }, old;
	unsigned long passes;
	pthread_t thread;
	char bdf[32];
	bool data;

	fill_pattern(p, SIZE, t.seed);
	igt_assert_eq_u32(vgem_p2p_info(vfd, older).placement,
			  VGEM_P2P_PLACEMENT_VRAM);
	igt_assert_eq_u32(vgem_p2p_info(vfd, h).placement,
			  VGEM_P2P_PLACEMENT_VRAM);
	exporter_bdf(vfd, bdf, sizeof(bdf));
	igt_assert_eq(vgem_p2p_fence_attach(vfd, older, VGEM_FENCE_WRITE,
					    &fence), 0);

	igt_assert_eq(sigaction(SIGBUS, &sa, &old), 0);
	igt_assert_eq(pthread_create(&thread, NULL, toucher, &t), 0);
	while (!t.passes)
		sched_yield();
	sysfs_write("/sys/bus/pci/drivers/vgem_p2p/unbind", bdf);
	/* and a whole pass after it, unless it got SIGBUS */
	passes = t.passes;
	while (t.passes < passes + 2 && !t.sigbus)
		sched_yield();
	t.stop = true;
	pthread_join(thread, NULL);
	sigaction(SIGBUS, &old, NULL);
	data = check_pattern(p, SIZE, t.seed);

	munmap(p, SIZE);
	close(vfd);
	sysfs_write("/sys/bus/pci/drivers/vgem_p2p/bind", bdf);
	vfd = vgem_p2p_open();
	close(vfd);

	igt_assert_f(!t.sigbus, "SIGBUS during the unbind\n");
	igt_assert(!t.wrong);
	igt_assert(data);
}

static void test_importer_dma_bits(void)
{
	struct drm_vgem_p2p_peer q;
	uint64_t vma_p2p, dmabuf_p2p;
	int vfd, efd;

	/*
	 * The default: 28 bits. Without an IOMMU, dma-direct accepts
	 * that mask only where all memory is below 256 MiB or a
	 * ZONE_DMA backs it; this guest has neither (2 GiB, no
	 * ZONE_DMA), so the device stays unbound: refused, not
	 * corrupted.
	 */
	reload_importer("");
	igt_assert_eq(edu_dma_bits_param(), 28);
	if (access("/sys/class/misc/edu_nic0", F_OK) == 0)
		igt_assert_eq_u64(edu_dma_mask(), 0xfffffffull);
	else
		igt_info("28-bit mask refused by the DMA API: unbound\n");

	igt_assert_eq(mod_unload(IMPORTER), 0);
	igt_assert_eq(mod_load_params(IMPORTER, "dma_bits=27"),
		      -EINVAL);
	igt_assert_eq(mod_load_params(IMPORTER, "dma_bits=65"),
		      -EINVAL);

	/*
	 * 31 bits: all of the guest's 2 GiB of RAM, none of the BAR
	 * (the PCI hole starts at or above 2 GiB).
	 */
	igt_assert_eq(mod_load_params(IMPORTER, "dma_bits=31"), 0);
	igt_assert_eq(edu_dma_bits_param(), 31);
	igt_assert_eq_u64(edu_dma_mask(), 0x7fffffffull);
	vfd = vgem_p2p_open();
	/*
	 * The kernel says edu could reach the BAR (else there is no p2p
	 * to refuse here), and that a mapping for it gets no p2p: its bus
	 * addresses are beyond the mask.
	 */
	q = edu_peer_nth(vfd, 0);
	if (!q.reachable) {
		/* the subtests after this one want edu_nic as it was */
		close(vfd);
		reload_importer(mod_params[IMPORTER]);
		igt_skip("edu_nic0 cannot reach the exporter p2p\n");
	}
	igt_assert_eq_u32(q.path, VGEM_P2P_PEER_NONE);
	efd = edu_open();
	vram_p2p_pages(vfd, efd, &vma_p2p, &dmabuf_p2p);
	igt_assert_eq_u64(vma_p2p, 0);
	igt_assert_eq_u64(dmabuf_p2p, 0);
	close(efd);

	reload_importer(mod_params[IMPORTER]);
	igt_assert_eq_u64(edu_dma_mask(), ~0ull);
	efd = edu_open();
	vram_p2p_pages(vfd, efd, &vma_p2p, &dmabuf_p2p);
	igt_assert_eq_u64(vma_p2p, SIZE / EDU_PAGE);
	igt_assert_eq_u64(dmabuf_p2p, SIZE / EDU_PAGE);
	close(efd);
	close(vfd);
}

/*
 * Without a p2pdma provider (pcim_p2pdma_init() failed, or p2pdma=0),
 * every importer gets system memory: through the vma and through the
 * dma-buf, whose attachment must not promise peer2peer it cannot map.
 */
static void test_exporter_without_p2pdma(void)
{
	uint64_t vma_p2p, dmabuf_p2p;
	struct drm_vgem_p2p_peer q;
	int vfd, efd;

	igt_assert_eq(mod_unload(IMPORTER), 0);
	igt_assert_eq(mod_unload(EXPORTER), 0);
	igt_assert_eq(mod_load_params(EXPORTER, "p2pdma=0"), 0);
	igt_assert_eq(mod_load(IMPORTER), 0);

	vfd = vgem_p2p_open();
	q = edu_peer_nth(vfd, 0);
	igt_assert(!q.reachable);
	igt_assert_eq_u32(q.path, VGEM_P2P_PEER_NONE);
	efd = edu_open();
	vram_p2p_pages(vfd, efd, &vma_p2p, &dmabuf_p2p);
	igt_assert_eq_u64(vma_p2p, 0);
	igt_assert_eq_u64(dmabuf_p2p, 0);
	igt_assert_eq_u64(vgem_p2p_stats(vfd).dmabuf_maps_p2p, 0);
	close(efd);
	close(vfd);

	igt_assert_eq(mod_unload(IMPORTER), 0);
	igt_assert_eq(mod_unload(EXPORTER), 0);
	ensure_loaded();
}

igt_main
{
	igt_fixture {
		igt_require_f(getenv("VP2P_MODULES"),
			      "VP2P_MODULES names the modules' build tree\n");
		ensure_loaded();
	}

	igt_describe("Neither module unloads while a file of its device is open.");
	igt_subtest("rmmod-busy")
		test_rmmod_busy();

	igt_describe("Per exporter, a dynamic subtest: vgem_p2p (VRAM and device-private pages) and bochs (a scanout buffer in VRAM, where the topology gives p2p). A process DMAing from what it registered with the importer is killed mid-DMA; the exporter and edu_nic then unload and reload in every order, and the pair still works. Before each kill the parent sees the child's registrations mirrored and its memory in use (vgem_p2p: two registrations, its device pages and VRAM; bochs: the buffer in VRAM, its registration mirrored peer-to-peer), and after it sees them gone.");
	igt_subtest_with_dynamic("unload-every-order") {
		igt_dynamic("vgem_p2p")
			unload_every_order_vgem_p2p();
		igt_dynamic("bochs")
			unload_every_order_bochs();
	}

	igt_describe("With live registrations (a VRAM range mirrored, a dma-buf mapped) neither ib_uverbs, whose umems they are, nor ib_core unloads, nor edu_nic or vgem_p2p; once they are gone the four unload in all 24 orders, each refusing (-EWOULDBLOCK) exactly while a loaded module needs it, load again, and the pair DMAs the right bytes.");
	igt_subtest("unload-rdma-core")
		test_unload_rdma_core();

	igt_describe("A dma-buf mmap pins the exporter module while it exists, as any mmap of its memory does; once it and the fds are gone, the module unloads and loads again.");
	igt_subtest("unload-after-dmabuf-mmap")
		test_unload_after_dmabuf_mmap();

	igt_describe("An importer's p2p mapping of device-private pages does not pin the exporter module: unloading the exporter migrates the pages back to RAM, which invalidates the mapping first, and the importer's next DMA reads the same data from RAM.");
	igt_subtest("unload-exporter-with-devmem-pages")
		test_unload_exporter_with_devmem_pages();

	igt_describe("Unbinding the exporter's PCI device under an importer's p2p mapping of VRAM, which read the object's bytes before, revokes it: DMA fails with -ENODEV and leaves its buffer as it was, never reads the BAR that went away.");
	igt_subtest("unbind-exporter-under-vram-mapping")
		test_unbind_exporter_under_vram_mapping();

	igt_describe("After the exporter is unbound, CPU faults on its objects are served from system memory: an evicted VRAM object's zapped mapping and a system object's untouched second mapping read back what was written before, and take new writes.");
	igt_subtest("unbind-exporter-cpu-faults")
		test_unbind_exporter_cpu_faults();

	igt_describe("Unbinding the exporter while no page can be allocated for the eviction (fail_page_alloc) leaves a VRAM object lost: its CPU mapping gets SIGBUS and an importer's next map of its dma-buf gets zeroed system pages. That move out of closed VRAM leaves the object counted in system memory (fdinfo), and its VRAM quota charge goes with it: closing everything releases the device without a WARN.");
	igt_subtest("unbind-exporter-eviction-fails")
		test_unbind_exporter_eviction_fails();

	igt_describe("A thread reading a VRAM object's mapping all through the exporter's unbind, which zaps the mapping before its eviction reaches the object (an older object's write fence holds the eviction, oldest first, until it expires, 10 s), never gets SIGBUS: its fault saves the object to system memory while VRAM is still up, and it reads what was written before.");
	igt_subtest("unbind-exporter-fault-while-evicting")
		test_unbind_exporter_fault_while_evicting();

	igt_describe("edu_nic claims QEMU's default 28-bit DMA mask unless dma_bits says more (28 to 64); the exporter hands an importer whose mask does not cover its BAR system memory, not bus addresses.");
	igt_subtest("importer-dma-bits")
		test_importer_dma_bits();

	igt_describe("vgem_p2p loaded with p2pdma=0 (no p2pdma provider) hands every importer system memory, through the vma and the dma-buf, and the PEER ioctl says the BAR is unreachable.");
	igt_subtest("exporter-without-p2pdma")
		test_exporter_without_p2pdma();

	igt_fixture
		ensure_loaded();
}
