// SPDX-License-Identifier: MIT
/*
 * VRAM objects: placement, CPU access through the BAR, device-only
 * objects (SIGBUS on CPU access), read-only and no-p2p flags, VRAM
 * accounting and fdinfo.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>

#include "vgem_p2p_common.h"

IGT_TEST_DESCRIPTION("vgem_p2p VRAM objects");

static void test_placement(int fd)
{
	uint32_t v = vgem_p2p_create(fd, 1 << 20, 0);
	uint32_t s = vgem_p2p_create(fd, 1 << 20, VGEM_P2P_CREATE_SYSTEM);
	struct drm_vgem_p2p_obj_info iv = vgem_p2p_info(fd, v);
	struct drm_vgem_p2p_obj_info is = vgem_p2p_info(fd, s);
	struct drm_vgem_p2p_stats st = vgem_p2p_stats(fd);

	igt_assert_eq_u32(iv.placement, VGEM_P2P_PLACEMENT_VRAM);
	igt_assert(iv.vram_offset + iv.size <= st.vram_size);
	igt_assert_eq_u64(iv.vram_offset % 4096, 0);
	igt_assert_eq_u32(iv.mappings, 0);
	igt_assert_eq_u32(is.placement, VGEM_P2P_PLACEMENT_SYSTEM);
	igt_assert_eq_u64(is.vram_offset, ~0ull);
	igt_assert_eq_u32(is.flags, VGEM_P2P_CREATE_SYSTEM);
	igt_assert(st.vram_used >= 1 << 20);
	gem_close(fd, v);
	gem_close(fd, s);
}

static void test_flags_reported(int fd)
{
	uint32_t f = VGEM_P2P_CREATE_NO_P2P | VGEM_P2P_CREATE_READ_ONLY |
		     VGEM_P2P_CREATE_DEVICE_ONLY;
	uint32_t h = vgem_p2p_create(fd, 4096, f);

	igt_assert_eq_u32(vgem_p2p_info(fd, h).flags, f);
	gem_close(fd, h);
}

/* Created over poisoned VRAM (vgem_p2p_poison_vram()), and zeroed */
static void test_cpu_access_vram(int fd)
{
	size_t size = 4 << 20;
	uint64_t poisoned = vgem_p2p_poison_vram(fd, size);
	uint32_t h = vgem_p2p_create(fd, size, 0);
	uint32_t *p;

	vgem_p2p_assert_on_poison(fd, h, poisoned, size);
	p = vgem_p2p_mmap(fd, h, size, PROT_READ | PROT_WRITE);
	vgem_p2p_assert_zeroed(p, size);
	fill_pattern(p, size, 10);
	igt_assert(check_pattern(p, size, 10));
	igt_assert_eq_u32(vgem_p2p_info(fd, h).placement,
			  VGEM_P2P_PLACEMENT_VRAM);
	munmap(p, size);
	gem_close(fd, h);
}

static void test_cpu_access_system(int fd)
{
	size_t size = 1 << 20;
	uint32_t h = vgem_p2p_create(fd, size, VGEM_P2P_CREATE_SYSTEM);
	uint32_t *p = vgem_p2p_mmap(fd, h, size, PROT_READ | PROT_WRITE);

	fill_pattern(p, size, 11);
	igt_assert(check_pattern(p, size, 11));
	/* a system object stays there */
	igt_assert_eq_u32(vgem_p2p_info(fd, h).placement,
			  VGEM_P2P_PLACEMENT_SYSTEM);
	munmap(p, size);
	gem_close(fd, h);
}

static void test_device_only_sigbus(int fd)
{
	uint32_t h = vgem_p2p_create(fd, 8192,
				     VGEM_P2P_CREATE_DEVICE_ONLY);
	uint32_t *p = vgem_p2p_mmap(fd, h, 8192, PROT_READ | PROT_WRITE);

	igt_assert(touch_sigbus(p, false));
	igt_assert(touch_sigbus(p + 1024, true));
	munmap(p, 8192);
	gem_close(fd, h);
}

static void test_read_only_cpu_ok(int fd)
{
	/* read-only restricts importers, not the owner's CPU access */
	uint32_t h = vgem_p2p_create(fd, 4096, VGEM_P2P_CREATE_READ_ONLY);
	uint32_t *p = vgem_p2p_mmap(fd, h, 4096, PROT_READ | PROT_WRITE);

	fill_pattern(p, 4096, 12);
	igt_assert(check_pattern(p, 4096, 12));
	munmap(p, 4096);
	gem_close(fd, h);
}

static void test_mmap_beyond_object_refused(int fd)
{
	/* a mapping larger than the object: no tail to fault on */
	struct drm_mode_map_dumb m;
	uint32_t h = vgem_p2p_create(fd, 4096, 0);
	uint32_t *p;

	m = (struct drm_mode_map_dumb){ .handle = h };
	do_ioctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &m);
	p = mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd, m.offset);
	/* drm_gem_mmap() refuses mappings larger than the object */
	igt_assert(p == MAP_FAILED);
	igt_assert_eq(errno, EINVAL);
	gem_close(fd, h);
}

static void test_vram_full_enospc(int fd)
{
	struct drm_vgem_p2p_stats st = vgem_p2p_stats(fd);
	uint32_t h;

	igt_assert_eq(__vgem_p2p_create(fd, st.vram_size + 4096, 0, &h),
		      -ENOSPC);
	/* exactly all of VRAM works (evicting whatever is there) */
	h = vgem_p2p_create(fd, st.vram_size, 0);
	igt_assert_eq_u64(vgem_p2p_info(fd, h).vram_offset, 0);
	gem_close(fd, h);
}

/* The debugfs hold_in_clear knob, and its count held_in_clear */
static char clear_hold[128], clear_held[128];

static int read_held(void)
{
	char buf[32] = "";
	int fd = open(clear_held, O_RDONLY);

	igt_assert(fd >= 0);
	igt_assert(read(fd, buf, sizeof(buf) - 1) > 0);
	close(fd);
	return atoi(buf);
}

static void release_hold(int sig)
{
	vgem_p2p_knob_off(clear_hold);
}

struct held_create {
	int fd;
	uint64_t size;
	uint32_t handle;
	int ret;
};

static void *held_create(void *data)
{
	struct held_create *c = data;

	c->ret = __vgem_p2p_create(c->fd, c->size, 0, &c->handle);
	return NULL;
}

/*
 * Releases the hold a minute after it started, unless told the test is
 * done: a thread, since a signal would wait for a thread that sleeps on
 * the device lock, uninterruptibly, to return to user space.
 */
struct watchdog {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;
};

static void *watchdog(void *data)
{
	struct watchdog *w = data;
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 60;
	pthread_mutex_lock(&w->lock);
	while (!w->done &&
	       pthread_cond_timedwait(&w->cond, &w->lock, &ts) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&w->lock);
	release_hold(0);
	return NULL;
}

/*
 * A creation in VRAM holds its VRAM from before the clear to after it
 * (hold_in_clear keeps it there): meanwhile other clients' calls that
 * take the device lock (OBJ_INFO, a creation, moves in and out of VRAM)
 * must not wait for it. Each is checked to return while the creation is
 * still held; a watchdog releases the hold after a minute, so that a
 * kernel that clears under the device lock fails the test, not hangs.
 */
static void test_clear_unlocked(int fd)
{
	/* static: the threads outlive a failed assertion's jump out */
	static struct held_create c;
	static struct watchdog w = {
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.cond = PTHREAD_COND_INITIALIZER,
	};
	uint64_t poisoned;
	uint32_t other, sys;
	pthread_t t, wt;
	uint32_t *p;
	uint64_t i;

	/* both creations land on poison: other first, the held one after */
	poisoned = vgem_p2p_poison_vram(fd, 9 * MiB);
	other = vgem_p2p_create(fd, MiB, 0);
	vgem_p2p_debugfs_path(fd, "hold_in_clear", clear_hold,
			      sizeof(clear_hold));
	vgem_p2p_debugfs_path(fd, "held_in_clear", clear_held,
			      sizeof(clear_held));
	c = (struct held_create){ .fd = fd, .size = 8 * MiB };
	igt_install_exit_handler(release_hold);
	write_file(clear_hold, "1");
	igt_assert_eq(pthread_create(&t, NULL, held_create, &c), 0);
	for (i = 0; read_held() != 1; i++) {
		igt_assert_f(i < 3000, "the creation never reached its clear\n");
		usleep(10000);
	}

	igt_assert_eq(pthread_create(&wt, NULL, watchdog, &w), 0);
	igt_assert_eq_u32(vgem_p2p_info(fd, other).placement,
			  VGEM_P2P_PLACEMENT_VRAM);
	igt_assert_eq(read_held(), 1);
	sys = vgem_p2p_create(fd, MiB, VGEM_P2P_CREATE_SYSTEM);
	igt_assert_eq(read_held(), 1);
	vgem_p2p_move(fd, other, VGEM_P2P_MOVE_SYSTEM, 0);
	vgem_p2p_move(fd, other, VGEM_P2P_MOVE_VRAM, 0);
	igt_assert_eq(read_held(), 1);
	pthread_mutex_lock(&w.lock);
	w.done = true;
	pthread_cond_signal(&w.cond);
	pthread_mutex_unlock(&w.lock);
	igt_assert_eq(pthread_join(wt, NULL), 0);

	write_file(clear_hold, "0");
	igt_assert_eq(pthread_join(t, NULL), 0);
	igt_assert_eq(c.ret, 0);
	vgem_p2p_assert_on_poison(fd, c.handle, poisoned, 9 * MiB);
	p = vgem_p2p_mmap(fd, c.handle, c.size, PROT_READ);
	vgem_p2p_assert_zeroed(p, c.size);
	munmap(p, c.size);
	gem_close(fd, c.handle);
	gem_close(fd, sys);
	gem_close(fd, other);
}

static void test_fdinfo(void)
{
	int fd2 = vgem_p2p_open();
	uint32_t v = vgem_p2p_create(fd2, 3 << 20, 0);
	uint32_t s = vgem_p2p_create(fd2, 1 << 20, VGEM_P2P_CREATE_SYSTEM);
	char path[64], buf[512];
	FILE *f;

	igt_assert_eq_u64(vgem_p2p_fdinfo_kib(fd2, "drm-memory-vram"), 3072);
	igt_assert_eq_u64(vgem_p2p_fdinfo_kib(fd2, "drm-memory-system"), 1024);
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd2);
	f = fopen(path, "r");
	igt_assert(f);
	buf[fread(buf, 1, sizeof(buf) - 1, f)] = 0;
	fclose(f);
	igt_assert(strstr(buf, "drm-driver:\tvgem_p2p\n"));
	igt_assert(strstr(buf, "drm-client-id:\t"));
	vgem_p2p_move(fd2, v, VGEM_P2P_MOVE_SYSTEM, 0);
	igt_assert_eq_u64(vgem_p2p_fdinfo_kib(fd2, "drm-memory-vram"), 0);
	igt_assert_eq_u64(vgem_p2p_fdinfo_kib(fd2, "drm-memory-system"), 4096);
	gem_close(fd2, s);
	close(fd2);
}

static void test_close_with_mapping(int fd)
{
	/* the vma keeps the object alive after its handle is gone */
	uint32_t h = vgem_p2p_create(fd, 8192, 0);
	uint32_t *p = vgem_p2p_mmap(fd, h, 8192, PROT_READ | PROT_WRITE);

	fill_pattern(p, 8192, 13);
	gem_close(fd, h);
	igt_assert(check_pattern(p, 8192, 13));
	munmap(p, 8192);
}

igt_main
{
	int fd = -1;

	igt_fixture
		fd = vgem_p2p_open();

	igt_describe("A VRAM object gets a page-aligned offset inside VRAM and counts in vram_used; a system object has no VRAM offset and reports its flag.");
	igt_subtest("placement")
		test_placement(fd);

	igt_describe("OBJ_INFO reports the creation flags NO_P2P, READ_ONLY and DEVICE_ONLY as given.");
	igt_subtest("flags-reported")
		test_flags_reported(fd);

	igt_describe("A 4 MiB VRAM object created over VRAM a freed object left poisoned (0x6b, checked through the BAR) reads zero, every word; it reads back what the CPU wrote, and stays in VRAM.");
	igt_subtest("cpu-access-vram")
		test_cpu_access_vram(fd);

	igt_describe("A system object reads back what the CPU wrote and stays in system memory.");
	igt_subtest("cpu-access-system")
		test_cpu_access_system(fd);

	igt_describe("A CPU read or write of a device-only object faults SIGBUS.");
	igt_subtest("device-only-sigbus")
		test_device_only_sigbus(fd);

	igt_describe("READ_ONLY restricts importers only: the owner's CPU writes and reads it.");
	igt_subtest("read-only-cpu-ok")
		test_read_only_cpu_ok(fd);

	igt_describe("A mapping larger than the object is refused at mmap, with EINVAL.");
	igt_subtest("mmap-beyond-object-refused")
		test_mmap_beyond_object_refused(fd);

	igt_describe("An object larger than VRAM gets ENOSPC; one of exactly VRAM's size is created at offset 0, evicting what was there.");
	igt_subtest("vram-full-enospc")
		test_vram_full_enospc(fd);

	igt_describe("A creation in VRAM clears its VRAM without the device lock: while one is held before its clear (debugfs hold_in_clear), OBJ_INFO, a creation and moves into and out of VRAM by the same or other clients return; the held object, created over VRAM a freed object left poisoned (0x6b, checked through the BAR), then reads back zeroes, every word.");
	igt_subtest("clear-unlocked")
		test_clear_unlocked(fd);

	igt_describe("A file's fdinfo names the driver and client and counts its objects' memory by placement (drm-memory-vram, drm-memory-system), following a move.");
	igt_subtest("fdinfo")
		test_fdinfo();

	igt_describe("The mapping keeps an object alive after its handle is closed, with its bytes.");
	igt_subtest("close-with-mapping")
		test_close_with_mapping(fd);

	igt_fixture
		close(fd);
}
