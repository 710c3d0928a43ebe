// SPDX-License-Identifier: MIT
/*
 * Fault injection into vgem_p2p's and edu_nic's allocation paths with the
 * kernel's fail-nth (/proc/thread-self/fail-nth, as syzkaller does it):
 * for n = 1, 2, ... the n-th slab or page allocation (or other fault
 * injection site) of one operation fails, until the operation succeeds
 * without reaching the n-th site. Each time the operation must either
 * succeed or fail with an errno from its acceptable set; afterwards the
 * objects must be where the ioctls say, their data intact (checksums),
 * and once released the drivers' object, mapping and registration counts
 * (debugfs) back at their start values. The last subtest asks kmemleak.
 *
 * Every operation is a single syscall (or a single CPU touch) set up
 * beforehand without injection, so that what fails is the driver path
 * under test: object creation, forced moves and evictions, CPU faults,
 * PRIME export and import, registration with PREFETCH (p2p_map), DMA,
 * and migration to and from device-private memory.
 */
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <xf86drm.h>

#include "edu_nic_helpers.h"
#include "p2p_counts.h"
#include "vgem_p2p_common.h"

IGT_TEST_DESCRIPTION("fail-nth fault injection into vgem_p2p and edu_nic: clean errors, consistent state, no leaks.");

#define PAGE		4096ul
#define NPAGES		4
#define MAX_NTH		2000
#define RW		(EDU_NIC_ACCESS_READ | EDU_NIC_ACCESS_WRITE)
#define DEBUGFS		"/sys/kernel/debug"

#define ERRS(...) ((const int []){ __VA_ARGS__, 0 })

static int vfd = -1, efd = -1, nth_fd = -1;
/* What must be back where it started once everything is released */
static struct p2p_counts_src counts_src;
static struct p2p_counts start_counts;

/* Fault injection knobs, restored at exit */
static const struct {
	const char *path;
	const char *value;
} knobs[] = {
	{ DEBUGFS "/failslab/ignore-gfp-wait", "N" },
	{ DEBUGFS "/failslab/verbose", "0" },
	{ DEBUGFS "/fail_page_alloc/ignore-gfp-wait", "N" },
	{ DEBUGFS "/fail_page_alloc/ignore-gfp-highmem", "N" },
	{ DEBUGFS "/fail_page_alloc/min-order", "0" },
	{ DEBUGFS "/fail_page_alloc/verbose", "0" },
};
static char saved[ARRAY_SIZE(knobs)][32];

static bool read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return false;
	buf[n] = '\0';
	return true;
}

static void knobs_set(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(knobs); i++) {
		igt_require_f(read_file(knobs[i].path, saved[i], sizeof(saved[i])),
			      "%s: no fault injection debugfs\n", knobs[i].path);
		igt_assert(edu_write_str(knobs[i].path, knobs[i].value));
	}
}

static void knobs_restore(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(knobs); i++)
		if (saved[i][0])
			edu_write_str(knobs[i].path, saved[i]);
}

/* fail-nth: the n-th injection site this thread reaches fails */
static void nth_set(unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	igt_assert_eq(pwrite(nth_fd, buf, len, 0), len);
}

/* Clears it; true if the fault was injected */
static bool nth_consumed(void)
{
	char buf[16] = "";
	bool consumed;

	igt_assert(pread(nth_fd, buf, sizeof(buf) - 1, 0) > 0);
	consumed = atoi(buf) == 0;
	nth_set(0);
	return consumed;
}

static void counts_check(const char *what, unsigned int n)
{
	char buf[384];

	igt_assert_f(!*p2p_counts_check(&counts_src, &start_counts, buf,
					 sizeof(buf)),
		     "%s, n=%u: %s\n", what, n, buf);
}

/* Helpers, all without injection */

static int vioctl(unsigned long req, void *arg)
{
	return ioctl(vfd, req, arg) ? -errno : 0;
}

/*
 * One case: @setup builds the state without injection, @op is the single
 * syscall run with the n-th fault, @check verifies the state against its
 * result, @teardown releases everything.
 */
struct fi_ctx {
	uint32_t handle, handle2, key;
	uint64_t size;
	char *map, *anon, *buf;
	int dmabuf;
	uint32_t seed;
	uint64_t csum;
	uint32_t placement;
	uint64_t vram_offset;
	uint64_t npages;
};

struct fi_case {
	const char *name;
	const char *desc;
	const int *acceptable;
	void (*setup)(struct fi_ctx *c);
	int (*op)(struct fi_ctx *c);
	void (*check)(struct fi_ctx *c, int ret);
	void (*teardown)(struct fi_ctx *c);
};

/* Data: a pattern per iteration, checked by checksum */
static void fill(char *p, size_t len, uint32_t seed, uint64_t *csum)
{
	p2p_fill(p, len, seed);
	*csum = edu_csum(p, len);
}

static void check_csum(const char *what, const char *p, size_t len,
		       uint64_t csum)
{
	igt_assert_f(edu_csum(p, len) == csum, "%s: data changed\n", what);
}

static void check_zero(const char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		igt_assert_f(!p[i], "byte %zu of a new object is %#x\n", i,
			     (uint8_t)p[i]);
}

/* create: a new object, in VRAM or in system memory */

static uint32_t create_flags;

static void create_setup(struct fi_ctx *c)
{
	c->size = NPAGES * PAGE;
}

static int create_op(struct fi_ctx *c)
{
	struct drm_vgem_p2p_create cr = { .size = c->size, .flags = create_flags };
	int ret = vioctl(DRM_IOCTL_VGEM_P2P_CREATE, &cr);

	c->handle = ret ? 0 : cr.handle;
	return ret;
}

static void create_check(struct fi_ctx *c, int ret)
{
	struct drm_vgem_p2p_obj_info i;

	if (ret)
		return;
	i = vgem_p2p_info(vfd, c->handle);
	igt_assert_eq_u64(i.size, c->size);
	igt_assert_eq_u32(i.placement, create_flags & VGEM_P2P_CREATE_SYSTEM ?
			  VGEM_P2P_PLACEMENT_SYSTEM : VGEM_P2P_PLACEMENT_VRAM);
	c->map = vgem_p2p_mmap(vfd, c->handle, c->size,
			       PROT_READ | PROT_WRITE);
	check_zero(c->map, c->size);
}

static void create_teardown(struct fi_ctx *c)
{
	if (c->map)
		munmap(c->map, c->size);
	if (c->handle)
		gem_close(vfd, c->handle);
}

/*
 * create_check() holds it too: 256 x 16 x 4 bytes are create_setup()'s
 * size, which fits in VRAM, where a dumb buffer that fits must be.
 */
static int dumb_op(struct fi_ctx *c)
{
	struct drm_mode_create_dumb d = { .width = 256, .height = 16, .bpp = 32 };
	int ret = vioctl(DRM_IOCTL_MODE_CREATE_DUMB, &d);

	c->handle = ret ? 0 : d.handle;
	return ret;
}

/* An object with data, in VRAM or evicted, mapped */
static void bo_setup(struct fi_ctx *c, bool evicted)
{
	c->size = NPAGES * PAGE;
	c->handle = vgem_p2p_create(vfd, c->size, 0);
	c->map = vgem_p2p_mmap(vfd, c->handle, c->size,
			       PROT_READ | PROT_WRITE);
	fill(c->map, c->size, ++c->seed, &c->csum);
	if (evicted)
		vgem_p2p_move(vfd, c->handle, VGEM_P2P_MOVE_SYSTEM, 0);
	c->placement = vgem_p2p_info(vfd, c->handle).placement;
	c->vram_offset = vgem_p2p_info(vfd, c->handle).vram_offset;
}

static void bo_vram_setup(struct fi_ctx *c)
{
	bo_setup(c, false);
}

static void bo_teardown(struct fi_ctx *c)
{
	munmap(c->map, c->size);
	gem_close(vfd, c->handle);
}

/* A move: where the object is must match what the ioctl said */

static uint32_t move_target;

static int move_op(struct fi_ctx *c)
{
	struct drm_vgem_p2p_move m = {
		.handle = c->handle, .target = move_target,
	};
	int ret = vioctl(DRM_IOCTL_VGEM_P2P_MOVE, &m);

	if (!ret)
		c->vram_offset = m.offset;
	return ret;
}

static void move_check(struct fi_ctx *c, int ret)
{
	struct drm_vgem_p2p_obj_info i = vgem_p2p_info(vfd, c->handle);

	if (ret) {
		igt_assert_eq_u32(i.placement, c->placement);
	} else if (move_target == VGEM_P2P_MOVE_SYSTEM) {
		igt_assert_eq_u32(i.placement, VGEM_P2P_PLACEMENT_SYSTEM);
	} else {
		igt_assert_eq_u32(i.placement, VGEM_P2P_PLACEMENT_VRAM);
		igt_assert_eq_u64(i.vram_offset, c->vram_offset);
	}
	check_csum("moved object", c->map, c->size, c->csum);
}

/* PRIME export and import */

static int export_op(struct fi_ctx *c)
{
	struct drm_prime_handle h = {
		.handle = c->handle, .flags = DRM_CLOEXEC | DRM_RDWR,
	};
	int ret = vioctl(DRM_IOCTL_PRIME_HANDLE_TO_FD, &h);

	c->dmabuf = ret ? -1 : h.fd;
	return ret;
}

static void export_check(struct fi_ctx *c, int ret)
{
	struct drm_prime_handle h = { .fd = c->dmabuf };

	if (!ret) {
		/* our own dma-buf comes back as the same handle */
		do_ioctl(vfd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &h);
		igt_assert_eq_u32(h.handle, c->handle);
	}
	check_csum("exported object", c->map, c->size, c->csum);
}

static void export_teardown(struct fi_ctx *c)
{
	if (c->dmabuf >= 0)
		close(c->dmabuf);
	bo_teardown(c);
}

/* Import of a dma-buf whose exporting handle is gone: a new handle */
static void import_setup(struct fi_ctx *c)
{
	struct drm_prime_handle h = { .flags = DRM_CLOEXEC };

	bo_setup(c, false);
	h.handle = c->handle;
	do_ioctl(vfd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &h);
	c->dmabuf = h.fd;
	gem_close(vfd, c->handle);
	c->handle = 0;
}

static int import_op(struct fi_ctx *c)
{
	struct drm_prime_handle h = { .fd = c->dmabuf };
	int ret = vioctl(DRM_IOCTL_PRIME_FD_TO_HANDLE, &h);

	c->handle = ret ? 0 : h.handle;
	return ret;
}

static void import_check(struct fi_ctx *c, int ret)
{
	if (!ret)
		igt_assert_eq_u64(vgem_p2p_info(vfd, c->handle).size, c->size);
	check_csum("imported object", c->map, c->size, c->csum);
}

static void import_teardown(struct fi_ctx *c)
{
	close(c->dmabuf);
	munmap(c->map, c->size);
	if (c->handle)
		gem_close(vfd, c->handle);
}

/* Fences */

static int fence_op(struct fi_ctx *c)
{
	struct drm_vgem_fence_attach a = {
		.handle = c->handle, .flags = VGEM_FENCE_WRITE,
	};
	int ret = vioctl(DRM_IOCTL_VGEM_FENCE_ATTACH, &a);

	c->key = ret ? 0 : a.out_fence;
	return ret;
}

static void fence_check(struct fi_ctx *c, int ret)
{
	struct drm_vgem_fence_signal s = { .fence = c->key };

	if (!ret)
		do_ioctl(vfd, DRM_IOCTL_VGEM_FENCE_SIGNAL, &s);
	/* nothing of a failed attach left behind: a write fence fits */
	igt_assert_eq(fence_op(c), 0);
	s.fence = c->key;
	do_ioctl(vfd, DRM_IOCTL_VGEM_FENCE_SIGNAL, &s);
}

/* Registration with PREFETCH: hmm_range_fault() and p2p_map() */

static void anon_setup(struct fi_ctx *c)
{
	c->size = NPAGES * PAGE;
	c->anon = edu_anon(c->size);
	fill(c->anon, c->size, ++c->seed, &c->csum);
}

static void anon_teardown(struct fi_ctx *c)
{
	munmap(c->anon, c->size);
}

static char *reg_target(struct fi_ctx *c)
{
	return c->map ?: c->anon;
}

static int reg_op(struct fi_ctx *c)
{
	struct edu_nic_reg_mr r = {
		.addr = (uintptr_t)reg_target(c), .length = c->size,
		.access = RW, .flags = EDU_NIC_REG_MR_PREFETCH,
	};
	int ret = edu_ioctl(efd, EDU_NIC_IOCTL_REG_MR, &r);

	c->key = ret ? 0 : r.key;
	return ret;
}

/*
 * The region reads back the data, by bulk copy, and by the engine when
 * @device (a few hundred ms under TCG: only once per case).
 */
static void dma_read_check(struct fi_ctx *c, uint32_t key, bool device)
{
	char *buf = malloc(c->size);

	igt_assert(buf);
	edu_dma(efd, key, EDU_NIC_DMA_FROM_MR, EDU_NIC_MODE_BULK, 0, c->size,
		buf);
	check_csum("region (bulk)", buf, c->size, c->csum);
	if (device) {
		memset(buf, 0, 64);
		edu_dma(efd, key, EDU_NIC_DMA_FROM_MR, EDU_NIC_MODE_DEVICE, 0,
			64, buf);
		igt_assert(!memcmp(buf, reg_target(c), 64));
	}
	free(buf);
}

static void reg_check(struct fi_ctx *c, int ret)
{
	struct edu_nic_mr_stats s;

	if (!ret) {
		s = edu_mr_stats(efd, c->key);
		igt_assert(s.state & EDU_NIC_MR_MIRRORED);
		dma_read_check(c, c->key, true);
		igt_assert_eq(edu_dereg_err(efd, c->key), 0);
	} else {
		igt_assert_eq(edu_dev_stats(efd).stats.nr_mrs,
			      (uint64_t)start_counts.nr_mrs);
	}
	if (c->handle)
		igt_assert_eq_u32(vgem_p2p_info(vfd, c->handle).mappings, 0);
	check_csum("registered memory", reg_target(c), c->size, c->csum);
}

/* Device-private pages under the region: p2p_map of the pgmap */
static int migrate(struct fi_ctx *c, uint32_t direction)
{
	struct drm_vgem_p2p_migrate m = {
		.addr = (uintptr_t)c->anon, .size = c->size,
		.direction = direction,
	};
	int ret = vioctl(DRM_IOCTL_VGEM_P2P_MIGRATE, &m);

	c->npages = m.npages;
	return ret;
}

static void devmem_setup(struct fi_ctx *c)
{
	anon_setup(c);
	igt_assert_eq(migrate(c, VGEM_P2P_MIGRATE_TO_DEVICE), 0);
	igt_assert_eq_u64(c->npages, NPAGES);
}

/* DMA on a registered region, bulk and device */

static uint32_t dma_mode;

static void dma_setup(struct fi_ctx *c)
{
	bo_setup(c, false);
	c->key = edu_reg(efd, c->map, c->size, RW, 0);
	c->buf = malloc(c->size);
	igt_assert(c->buf);
	memset(c->buf, 0, c->size);
}

static int dma_op(struct fi_ctx *c)
{
	uint64_t len = dma_mode == EDU_NIC_MODE_DEVICE ? 64 : c->size;

	return edu_dma_err(efd, c->key, EDU_NIC_DMA_FROM_MR, dma_mode, 0, len,
			   c->buf);
}

static void dma_check(struct fi_ctx *c, int ret)
{
	uint64_t len = dma_mode == EDU_NIC_MODE_DEVICE ? 64 : c->size;

	if (!ret)
		igt_assert(!memcmp(c->buf, c->map, len));
	/* the region still works */
	dma_read_check(c, c->key, !ret);
	check_csum("DMA source", c->map, c->size, c->csum);
}

static void dma_teardown(struct fi_ctx *c)
{
	igt_assert_eq(edu_dereg_err(efd, c->key), 0);
	free(c->buf);
	bo_teardown(c);
}

/* Migration to device-private memory and back */

static int migrate_to_ram_op(struct fi_ctx *c)
{
	return migrate(c, VGEM_P2P_MIGRATE_TO_RAM);
}

static void migrate_check(struct fi_ctx *c, int ret)
{
	igt_assert(c->npages <= NPAGES);
	/* a CPU read migrates whatever is still on the device back */
	check_csum("migrated memory", c->anon, c->size, c->csum);
}

static void migrate_teardown(struct fi_ctx *c)
{
	migrate(c, VGEM_P2P_MIGRATE_TO_RAM);
	anon_teardown(c);
}

/* A CPU touch of a device-private page: migrate_to_ram */
static int devmem_touch_op(struct fi_ctx *c)
{
	(void)*(volatile char *)c->anon;
	return 0;
}

static void vram_reg_setup(struct fi_ctx *c)
{
	bo_setup(c, false);
}

static void evicted_reg_setup(struct fi_ctx *c)
{
	bo_setup(c, true);
}

/*
 * One operation on several kinds of memory: a subtest each, with a dynamic
 * subtest per kind, named by what follows the subtest's name and "-".
 */
static struct fi_case create_cases[] = {
	{ "create-vram", "VGEM_P2P_CREATE in VRAM", ERRS(ENOMEM),
	  create_setup, create_op, create_check, create_teardown },
	{ "create-system", "VGEM_P2P_CREATE in system memory", ERRS(ENOMEM),
	  create_setup, create_op, create_check, create_teardown },
	{ "create-dumb", "MODE_CREATE_DUMB", ERRS(ENOMEM),
	  create_setup, dumb_op, create_check, create_teardown },
};

static struct fi_case cases[] = {
	{ "evict", "forced move VRAM to system memory", ERRS(ENOMEM),
	  bo_vram_setup, move_op, move_check, bo_teardown },
	{ "move-vram", "forced move within VRAM (bounce page)", ERRS(ENOMEM),
	  bo_vram_setup, move_op, move_check, bo_teardown },
	{ "prime-export", "PRIME_HANDLE_TO_FD", ERRS(ENOMEM, EMFILE),
	  bo_vram_setup, export_op, export_check, export_teardown },
	{ "prime-import", "PRIME_FD_TO_HANDLE of an orphaned dma-buf", ERRS(ENOMEM),
	  import_setup, import_op, import_check, import_teardown },
	{ "fence-attach", "VGEM_FENCE_ATTACH", ERRS(ENOMEM),
	  bo_vram_setup, fence_op, fence_check, bo_teardown },
};

static struct fi_case register_cases[] = {
	{ "register-vram", "REG_MR with PREFETCH on a VRAM mmap (p2p_map)", ERRS(ENOMEM, EFAULT),
	  vram_reg_setup, reg_op, reg_check, bo_teardown },
	{ "register-evicted", "REG_MR with PREFETCH on an evicted object (fallback)", ERRS(ENOMEM, EFAULT),
	  evicted_reg_setup, reg_op, reg_check, bo_teardown },
	{ "register-anon", "REG_MR with PREFETCH on anonymous memory", ERRS(ENOMEM, EFAULT),
	  anon_setup, reg_op, reg_check, anon_teardown },
	{ "register-devmem", "REG_MR with PREFETCH on device-private pages", ERRS(ENOMEM, EFAULT),
	  devmem_setup, reg_op, reg_check, migrate_teardown },
};

static struct fi_case late_cases[] = {
	{ "dma-bulk", "DMA, bulk mode, faulting the mirror", ERRS(ENOMEM, EFAULT),
	  dma_setup, dma_op, dma_check, dma_teardown },
	{ "dma-device", "DMA, device mode, faulting the mirror", ERRS(ENOMEM, EFAULT),
	  dma_setup, dma_op, dma_check, dma_teardown },
	{ "migrate-to-ram", "MIGRATE back to system memory", ERRS(ENOMEM),
	  devmem_setup, migrate_to_ram_op, migrate_check, migrate_teardown },
	{ "devmem-cpu-fault", "CPU fault on a device-private page", ERRS(ENOMEM),
	  devmem_setup, devmem_touch_op, migrate_check, migrate_teardown },
};

/* Per-case parameters that the shared functions read */
static void case_params(const struct fi_case *fc)
{
	create_flags = strcmp(fc->name, "create-system") ? 0 :
		       VGEM_P2P_CREATE_SYSTEM;
	move_target = !strcmp(fc->name, "evict") ? VGEM_P2P_MOVE_SYSTEM :
		      VGEM_P2P_MOVE_VRAM;
	dma_mode = strcmp(fc->name, "dma-device") ? EDU_NIC_MODE_BULK :
		   EDU_NIC_MODE_DEVICE;
}

static bool acceptable(const int *set, int err)
{
	for (; *set; set++)
		if (*set == err)
			return true;
	return false;
}

static void run_case(const struct fi_case *fc)
{
	unsigned int n, failures = 0;
	struct fi_ctx c = { .dmabuf = -1 };
	bool consumed;
	int ret;

	case_params(fc);
	p2p_kmsg("[IGT] p2p_faultinject: %s\n", fc->name);
	for (n = 1; n <= MAX_NTH; n++) {
		uint32_t seed = c.seed;

		memset(&c, 0, sizeof(c));
		c.dmabuf = -1;
		c.seed = seed;
		fc->setup(&c);

		nth_set(n);
		ret = fc->op(&c);
		consumed = nth_consumed();

		igt_assert_f(!ret || acceptable(fc->acceptable, -ret),
			     "%s, n=%u: %s\n", fc->name, n, strerror(-ret));
		if (ret)
			failures++;
		if (fc->check)
			fc->check(&c, ret);
		fc->teardown(&c);
		counts_check(fc->name, n);
		if (!consumed) {
			igt_assert_f(!ret, "%s, n=%u: %s without a fault\n",
				     fc->name, n, strerror(-ret));
			break;
		}
	}
	igt_assert_f(n <= MAX_NTH, "%s: still faulting after %u\n", fc->name,
		     MAX_NTH);
	/*
	 * A path that reaches no injection site tests nothing here; such
	 * paths (moving an evicted object back, CPU faults on it, migration
	 * to device-private pages, which come from the driver's own free
	 * list) are left to the functional tests.
	 */
	igt_assert_f(n > 1, "%s: no injection site reached\n", fc->name);
	igt_info("%s: %u injection sites, %u failed cleanly, %u recovered\n",
		 fc->name, n - 1, failures, n - 1 - failures);
	p2p_kmsg("[IGT] p2p_faultinject: %s: %u sites, %u failed cleanly\n",
	     fc->name, n - 1, failures);
}

/* kmemleak reports only objects older than 5 s: wait, then scan twice */
static void kmemleak_check(void)
{
	const char *kml = DEBUGFS "/kmemleak";
	char report[4096];

	/* CONFIG_DEBUG_KMEMLEAK: qemu/kernel.config */
	igt_assert_f(!access(kml, W_OK), "%s: %s\n", kml, strerror(errno));
	sleep(6);
	igt_assert(edu_write_str(kml, "scan"));
	igt_assert(edu_write_str(kml, "scan"));
	igt_assert(read_file(kml, report, sizeof(report)));
	igt_assert_f(!report[0], "kmemleak:\n%s\n", report);
}

/* @fcs[], each as a dynamic subtest named after "@group-" */
static void run_cases(const char *group, struct fi_case *fcs, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		const char *kind = fcs[i].name + strlen(group) + 1;

		igt_assert(!strncmp(fcs[i].name, group, strlen(group)));
		igt_dynamic(kind)
			run_case(&fcs[i]);
	}
}

igt_main
{
	unsigned int i;

	igt_fixture {
		igt_require_f(!access("/proc/thread-self/fail-nth", W_OK),
			      "no fail-nth (CONFIG_FAULT_INJECTION)\n");
		vfd = vgem_p2p_open_nth(0);
		igt_require_f(vfd >= 0, "no vgem_p2p device\n");
		efd = edu_open();
		igt_require(vgem_p2p_stats(vfd).devmem_size);
		p2p_counts_src_init(&counts_src, vfd);
		igt_assert_f(counts_src.edu_dir[0], "no edu_nic0\n");
		knobs_set();
		nth_fd = open("/proc/thread-self/fail-nth", O_RDWR);
		igt_assert_fd(nth_fd);
		start_counts = p2p_counts_read(&counts_src);
	}

	igt_describe("Fail each allocation of object creation in turn, once per kind of object (dynamic subtests vram: VGEM_P2P_CREATE in VRAM; system: in system memory; dumb: MODE_CREATE_DUMB); ENOMEM or success, state and data intact.");
	igt_subtest_with_dynamic("create")
		run_cases("create", create_cases, ARRAY_SIZE(create_cases));

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		igt_describe(cases[i].desc);
		igt_subtest(cases[i].name)
			run_case(&cases[i]);
	}

	igt_describe("Fail each allocation of REG_MR with PREFETCH in turn, once per memory behind the range (dynamic subtests vram: a VRAM mmap, p2p_map; evicted: an evicted object, the fallback; anon: anonymous memory; devmem: device-private pages); ENOMEM/EFAULT or success, state and data intact.");
	igt_subtest_with_dynamic("register")
		run_cases("register", register_cases,
			  ARRAY_SIZE(register_cases));

	for (i = 0; i < ARRAY_SIZE(late_cases); i++) {
		igt_describe(late_cases[i].desc);
		igt_subtest(late_cases[i].name)
			run_case(&late_cases[i]);
	}

	igt_fixture {
		nth_set(0);
		close(nth_fd);
		knobs_restore();
		close(efd);
		close(vfd);
	}

	igt_describe("Nothing the cases did leaked (kmemleak, two scans).");
	igt_subtest("kmemleak")
		kmemleak_check();
}
