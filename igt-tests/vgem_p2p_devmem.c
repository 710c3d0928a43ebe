// SPDX-License-Identifier: MIT
/*
 * Device-private memory: migrate anonymous memory into vgem_p2p's
 * MEMORY_DEVICE_PRIVATE VRAM and back, explicitly and by CPU fault.
 */
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>

#include "p2p_common.h"
#include "vgem_p2p_bar.h"
#include "vgem_p2p_common.h"

IGT_TEST_DESCRIPTION("vgem_p2p device-private memory (HMM migration)");

/* MIGRATE: 0 or -errno; *@npages as the kernel wrote it back, on failure too */
static int migrate_progress(int fd, void *addr, size_t size, uint32_t dir,
			    uint64_t *npages)
{
	struct drm_vgem_p2p_migrate m = {
		.addr = (uintptr_t)addr, .size = size, .direction = dir,
	};
	int ret = drmIoctl(fd, DRM_IOCTL_VGEM_P2P_MIGRATE, &m) ? -errno : 0;

	*npages = m.npages;
	return ret;
}

/* The same, for callers that look at *@npages only on success */
static int migrate(int fd, void *addr, size_t size, uint32_t dir,
		   uint64_t *npages)
{
	return migrate_progress(fd, addr, size, dir, npages);
}

/* A migration that must end with @ret, having moved @npages pages */
static void migrate_expect(int fd, void *addr, size_t size, uint32_t dir,
			   int ret, uint64_t npages)
{
	uint64_t n;

	igt_assert_eq(migrate_progress(fd, addr, size, dir, &n), ret);
	igt_assert_eq_u64(n, npages);
}

#define QUOTA_PARAM "/sys/module/vgem_p2p/parameters/devmem_quota_pages"

static unsigned long get_quota(void)
{
	unsigned long q;
	FILE *f = fopen(QUOTA_PARAM, "r");

	igt_assert(f);
	igt_assert_eq(fscanf(f, "%lu", &q), 1);
	fclose(f);
	return q;
}

/* Write @q to the parameter; false on failure. No stdio: exit handlers call it. */
static bool write_quota(unsigned long q)
{
	char buf[24];
	int fd, len = snprintf(buf, sizeof(buf), "%lu\n", q);
	bool ok;

	fd = open(QUOTA_PARAM, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ok = write(fd, buf, len) == len;
	return close(fd) == 0 && ok;
}

/*
 * The quota subtests lower devmem_quota_pages. The value it had before
 * the first change, and the process that changed it (a plain fork()
 * child inherits the exit handler and must not restore it).
 */
static unsigned long quota_saved;
static pid_t quota_saved_by;

static void set_quota(unsigned long q)
{
	if (!quota_saved_by) {
		quota_saved = get_quota();
		quota_saved_by = getpid();
	}
	igt_assert(write_quota(q));
}

/* Put back the quota set_quota() found; nothing if it changed nothing. */
static bool restore_quota(void)
{
	if (!quota_saved_by || quota_saved_by != getpid())
		return true;
	if (!write_quota(quota_saved))
		return false;
	quota_saved_by = 0;
	return true;
}

/*
 * A subtest that fails halfway leaves the quota it set: the fixture after
 * each quota subtest puts it back, so that later subtests run on the
 * module's own, and this handler does when the binary exits or dies.
 */
static void restore_quota_at_exit(int sig)
{
	(void)sig;
	restore_quota();
}

/*
 * A precondition checked while a child of plain fork() holds device pages:
 * on failure, kill and reap the child first, so that its pages do not
 * outlive the subtest (as edu_child_assert() does for the DMA tests).
 */
static void child_check(pid_t pid, bool ok, const char *what)
{
	if (!ok) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	igt_assert_f(ok, "with the child running: %s\n", what);
}

#define child_assert(pid, expr) child_check(pid, (expr), #expr)

static void *anon(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	igt_assert(p != MAP_FAILED);
	return p;
}

/* Page @i of @p's /proc/self/pagemap entry, read from @fd */
static uint64_t pagemap_entry(int fd, const void *p, size_t i)
{
	uint64_t e;

	igt_assert_eq(p2p_pagemap_entry(fd, (const char *)p + i * 4096, &e),
		      0);
	return e;
}

/*
 * The device pfn behind each page of [p, p + npages pages), from
 * /proc/self/pagemap: a device-private page is a swap entry (bit 62) whose
 * offset (bits 5-54) is its pfn; root sees the offset.
 */
static void device_pfns(void *p, size_t npages, uint64_t *pfn)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	size_t i;

	igt_assert(fd >= 0);
	for (i = 0; i < npages; i++) {
		uint64_t e = pagemap_entry(fd, p, i);

		igt_assert_f(e >> 62 & 1, "page %zu not a swap entry\n", i);
		pfn[i] = (e & ((1ull << 55) - 1)) >> 5;
		igt_assert(pfn[i]);
	}
	close(fd);
}

/*
 * Where device-private page @pfn keeps its bytes: its offset in the BAR,
 * whose last part, after VRAM, the device-private pages are
 * (docs/uapi.md), from the region /proc/iomem shows for them.
 */
static uint64_t devmem_bar_offset(int fd, uint64_t pfn)
{
	uint64_t start, end, phys = pfn << 12;
	char line[256];
	FILE *f = fopen("/proc/iomem", "r");

	igt_assert(f);
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, "vgem_p2p device-private") ||
		    sscanf(line, " %" SCNx64 "-%" SCNx64, &start, &end) != 2 ||
		    phys < start || phys > end)
			continue;
		fclose(f);
		return vgem_p2p_stats(fd).vram_size + phys - start;
	}
	fclose(f);
	igt_assert_f(false, "device pfn %#" PRIx64 " is in no device-private region of /proc/iomem\n",
		     pfn);
	return 0;
}

/*
 * Placement from the device, not from the driver's counters: each page
 * of [p, p + npages pages) is a device-private page whose BAR range holds
 * the bytes @ref says the page had.
 */
static void assert_in_devmem(int fd, void *p, size_t npages, const char *ref)
{
	uint64_t *pfn = calloc(npages, sizeof(*pfn));
	size_t i;

	igt_assert(pfn);
	device_pfns(p, npages, pfn);
	for (i = 0; i < npages; i++)
		igt_assert_f(vgem_p2p_bar_holds(fd, devmem_bar_offset(fd, pfn[i]),
						ref + i * 4096, 4096),
			     "page %zu is not in the BAR where its pfn says\n",
			     i);
	free(pfn);
}

/* Each page of [p, p + npages pages) is present in RAM (pagemap bit 63) */
static void assert_in_ram(void *p, size_t npages)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	size_t i;

	igt_assert(fd >= 0);
	for (i = 0; i < npages; i++) {
		uint64_t e = pagemap_entry(fd, p, i);

		igt_assert_f(e >> 63 & 1 && !(e >> 62 & 1),
			     "page %zu is not in RAM (pagemap %#" PRIx64 ")\n",
			     i, e);
	}
	close(fd);
}

static void test_migrate_roundtrip(int fd)
{
	size_t size = 64 * 4096;
	void *p = anon(size);
	struct drm_vgem_p2p_stats s0, s1;
	char *ref = malloc(size);
	uint64_t n;

	igt_assert(ref);
	fill_pattern(p, size, 300);
	memcpy(ref, p, size);
	s0 = vgem_p2p_stats(fd);
	igt_assert_eq(migrate(fd, p, size, VGEM_P2P_MIGRATE_TO_DEVICE,
			      &n), 0);
	igt_assert_eq_u64(n, 64);
	assert_in_devmem(fd, p, 64, ref);
	s1 = vgem_p2p_stats(fd);
	igt_assert_eq_u64(s1.devmem_to_device, s0.devmem_to_device + 64);
	igt_assert(s1.devmem_used >= s0.devmem_used + size);
	/* already there: nothing to do */
	igt_assert_eq(migrate(fd, p, size, VGEM_P2P_MIGRATE_TO_DEVICE,
			      &n), 0);
	igt_assert_eq_u64(n, 0);
	igt_assert_eq(migrate(fd, p, size, VGEM_P2P_MIGRATE_TO_RAM,
			      &n), 0);
	igt_assert_eq_u64(n, 64);
	/* before any CPU access, which would fault them back itself */
	assert_in_ram(p, 64);
	s1 = vgem_p2p_stats(fd);
	igt_assert_eq_u64(s1.devmem_to_ram, s0.devmem_to_ram + 64);
	igt_assert(check_pattern(p, size, 300));
	munmap(p, size);
	free(ref);
}

static void test_cpu_fault_migrates_back(int fd)
{
	size_t size = 16 * 4096;
	void *p = anon(size);
	struct drm_vgem_p2p_stats s0, s1;
	char ref[16 * 4096];
	uint64_t n;

	fill_pattern(p, size, 301);
	memcpy(ref, p, size);
	igt_assert_eq(migrate(fd, p, size, VGEM_P2P_MIGRATE_TO_DEVICE,
			      &n), 0);
	igt_assert_eq_u64(n, 16);
	assert_in_devmem(fd, p, 16, ref);
	s0 = vgem_p2p_stats(fd);
	igt_assert(check_pattern(p, size, 301));
	assert_in_ram(p, 16);
	s1 = vgem_p2p_stats(fd);
	igt_assert_eq_u64(s1.devmem_to_ram, s0.devmem_to_ram + 16);
	munmap(p, size);
}

static void test_munmap_while_on_device(int fd)
{
	size_t size = 32 * 4096;
	struct drm_vgem_p2p_stats s0 = vgem_p2p_stats(fd);
	void *p = anon(size);
	uint64_t n;

	fill_pattern(p, size, 302);
	igt_assert_eq(migrate(fd, p, size, VGEM_P2P_MIGRATE_TO_DEVICE,
			      &n), 0);
	munmap(p, size);
	/* the device pages were freed */
	igt_assert_eq_u64(vgem_p2p_stats(fd).devmem_used,
			  s0.devmem_used);
}

static void test_exit_while_on_device(int fd)
{
	size_t size = 8 * 4096;
	struct drm_vgem_p2p_stats s0 = vgem_p2p_stats(fd), s1;
	int ready[2], go[2], status;
	pid_t pid;
	char c;

	igt_assert_eq(pipe(ready), 0);
	igt_assert_eq(pipe(go), 0);
	pid = fork();
	igt_assert(pid >= 0);
	if (pid == 0) {
		void *p = anon(size);
		uint64_t n = 0;

		fill_pattern(p, size, 303);
		c = migrate(fd, p, size, VGEM_P2P_MIGRATE_TO_DEVICE,
			    &n) || n != 8 ? 'x' : 'm';
		if (write(ready[1], &c, 1) != 1 || c != 'm')
			_exit(1);
		/* exit with the pages on the device */
		_exit(read(go[0], &c, 1) == 1 ? 0 : 2);
	}
	close(ready[1]);
	close(go[0]);
	igt_assert_eq(read(ready[0], &c, 1), 1);
	/* the child's 8 pages are on the device */
	child_assert(pid, c == 'm');
	s1 = vgem_p2p_stats(fd);
	child_assert(pid, s1.devmem_to_device ==
			      s0.devmem_to_device + 8);
	child_assert(pid, s1.devmem_used ==
			      s0.devmem_used + size);
	igt_assert_eq(write(go[1], "g", 1), 1);
	igt_assert_eq(waitpid(pid, &status, 0), pid);
	igt_assert(WIFEXITED(status));
	igt_assert_eq(WEXITSTATUS(status), 0);
	close(ready[0]);
	close(go[1]);
	/* the exit freed the device pages, without migrating them */
	s1 = vgem_p2p_stats(fd);
	igt_assert_eq_u64(s1.devmem_used, s0.devmem_used);
	igt_assert_eq_u64(s1.devmem_to_ram, s0.devmem_to_ram);
}

static void test_unpopulated_pages(int fd)
{
	size_t size = 8 * 4096, i;
	struct drm_vgem_p2p_stats s0 = vgem_p2p_stats(fd), s1;
	uint32_t *p = anon(size);
	uint64_t n;

	/* never touched: zero pages migrate as zero */
	igt_assert_eq(migrate(fd, p, size, VGEM_P2P_MIGRATE_TO_DEVICE,
			      &n), 0);
	igt_assert_eq_u64(n, 8);
	s1 = vgem_p2p_stats(fd);
	igt_assert_eq_u64(s1.devmem_to_device, s0.devmem_to_device + 8);
	igt_assert_eq_u64(s1.devmem_used, s0.devmem_used + size);
	for (i = 0; i < size / 4; i++)
		igt_assert_f(!p[i], "word %zu: 0x%08x, expected 0\n",
			     i, p[i]);
	/* the reads faulted every page back */
	s1 = vgem_p2p_stats(fd);
	igt_assert_eq_u64(s1.devmem_to_ram, s0.devmem_to_ram + 8);
	igt_assert_eq_u64(s1.devmem_used, s0.devmem_used);
	munmap(p, size);
}

static void test_not_anonymous(int fd)
{
	uint32_t h = vgem_p2p_create(fd, 8192, 0);
	void *p = vgem_p2p_mmap(fd, h, 8192, PROT_READ | PROT_WRITE);
	uint64_t n;

	igt_assert_eq(migrate(fd, p, 8192, VGEM_P2P_MIGRATE_TO_DEVICE,
			      &n), -EINVAL);
	munmap(p, 8192);
	gem_close(fd, h);
}

static void test_process_quota(int fd)
{
	size_t page = 4096, size = 32 * page;
	int fd1 = vgem_p2p_open(), fd2 = vgem_p2p_open();
	uint64_t used = vgem_p2p_stats(fd).devmem_used;
	char *a = anon(size), *b = anon(16 * page);
	char *c = anon(16 * page);

	fill_pattern(a, size, 310);
	fill_pattern(b, 16 * page, 311);
	fill_pattern(c, 16 * page, 312);
	set_quota(16);
	migrate_expect(fd1, a, size, VGEM_P2P_MIGRATE_TO_DEVICE, -EDQUOT,
		       16);
	igt_assert_eq_u64(vgem_p2p_stats(fd).devmem_used,
			  used + 16 * page);
	/* another file of the same process: the same, spent, quota */
	migrate_expect(fd2, b, 16 * page,
		       VGEM_P2P_MIGRATE_TO_DEVICE, -EDQUOT, 0);
	migrate_expect(fd, b, page, VGEM_P2P_MIGRATE_TO_DEVICE, -EDQUOT, 0);
	/* already on the device */
	migrate_expect(fd2, a, page, VGEM_P2P_MIGRATE_TO_DEVICE, 0, 0);

	/* back to RAM, through either file: the charge goes */
	migrate_expect(fd2, a, 16 * page,
		       VGEM_P2P_MIGRATE_TO_RAM, 0, 16);
	migrate_expect(fd2, b, 16 * page,
		       VGEM_P2P_MIGRATE_TO_DEVICE, 0, 16);
	igt_assert_eq_u64(vgem_p2p_stats(fd).devmem_used,
			  used + 16 * page);
	migrate_expect(fd1, c, 16 * page,
		       VGEM_P2P_MIGRATE_TO_DEVICE, -EDQUOT, 0);
	/* closing the file that migrated b gives nothing back ... */
	close(fd2);
	migrate_expect(fd1, c, 16 * page,
		       VGEM_P2P_MIGRATE_TO_DEVICE, -EDQUOT, 0);
	igt_assert(check_pattern(a, size, 310));
	/* ... munmap of its pages does */
	munmap(b, 16 * page);
	igt_assert_eq_u64(vgem_p2p_stats(fd).devmem_used, used);
	migrate_expect(fd1, c, 16 * page,
		       VGEM_P2P_MIGRATE_TO_DEVICE, 0, 16);
	igt_assert(check_pattern(c, 16 * page, 312));
	igt_assert_eq_u64(vgem_p2p_stats(fd).devmem_used, used);
	munmap(a, size);
	munmap(c, 16 * page);
	igt_assert(restore_quota());
	close(fd1);
}

/*
 * The child's side of test_quota_exit(): migrate 16 pages of its own
 * through the parent's file, report, and wait to be told to exit.
 */
static void quota_exit_child(int fd, int ready, int go)
{
	char *d = anon(16 * 4096);
	uint64_t n = 0;
	char r;

	fill_pattern(d, 16 * 4096, 314);
	r = migrate_progress(fd, d, 16 * 4096, VGEM_P2P_MIGRATE_TO_DEVICE,
			     &n) == 0 && n == 16 ? 'y' : 'n';
	if (write(ready, &r, 1) != 1 || read(go, &r, 1) != 1)
		_exit(2);
	_exit(0);
}

static void test_quota_exit(int fd)
{
	size_t size = 16 * 4096;
	uint64_t used = vgem_p2p_stats(fd).devmem_used;
	int fd1 = vgem_p2p_open(), ready[2], go[2], status;
	char *c = anon(size), *e = anon(size);
	uint64_t n = 0;
	pid_t pid;
	char r;

	fill_pattern(c, size, 312);
	fill_pattern(e, size, 313);
	set_quota(16);
	migrate_expect(fd1, c, size, VGEM_P2P_MIGRATE_TO_DEVICE, 0, 16);
	igt_assert_eq(pipe(ready), 0);
	igt_assert_eq(pipe(go), 0);
	pid = fork();
	igt_assert(pid >= 0);
	if (pid == 0)
		quota_exit_child(fd1, ready[1], go[0]);
	close(ready[1]);
	close(go[0]);
	child_assert(pid, read(ready[0], &r, 1) == 1);
	/* another process, the same file: a quota of its own */
	child_assert(pid, r == 'y');
	/* c's device pages are the child's too (fork shares them) */
	munmap(c, size);
	child_assert(pid, vgem_p2p_stats(fd).devmem_used == used + 2 * size);
	/* and still charged to this process, which is at its quota */
	child_assert(pid, migrate(fd1, e, size, VGEM_P2P_MIGRATE_TO_DEVICE,
				  &n) == -EDQUOT);
	/* the child exits: its pages and c's are freed, and their charges */
	igt_assert_eq(write(go[1], "x", 1), 1);
	igt_assert_eq(waitpid(pid, &status, 0), pid);
	igt_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(ready[0]);
	close(go[1]);
	igt_assert_eq_u64(vgem_p2p_stats(fd).devmem_used, used);
	migrate_expect(fd1, e, size, VGEM_P2P_MIGRATE_TO_DEVICE, 0, 16);
	igt_assert(check_pattern(e, size, 313));
	munmap(e, size);
	igt_assert_eq_u64(vgem_p2p_stats(fd).devmem_used, used);
	igt_assert(restore_quota());
	close(fd1);
}

static void test_migrate_killable(int fd)
{
	size_t size = 1ull << 45;	/* 32 TiB, 2^28 chunks */
	int ready[2], status;
	bool inside;
	uint64_t n;
	pid_t pid;
	char c;

	igt_assert_eq(pipe(ready), 0);
	pid = fork();
	igt_assert(pid >= 0);
	if (pid == 0) {
		void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS |
			       MAP_NORESERVE, -1, 0);

		if (p == MAP_FAILED)
			_exit(2);
		if (write(ready[1], "r", 1) != 1)
			_exit(2);
		migrate_progress(fd, p, size, VGEM_P2P_MIGRATE_TO_RAM,
				 &n);
		_exit(3);
	}
	close(ready[1]);
	igt_assert_eq(read(ready[0], &c, 1), 1);
	close(ready[0]);
	/* killed inside the ioctl (10 ticks of system time), not before it */
	inside = wait_in_kernel(pid, proc_stime(pid), 10, 60 * 1000);
	igt_assert_eq(kill(pid, SIGKILL), 0);
	/* the walk of 2^28 chunks takes far longer than this bound */
	status = reap_within(pid, 60 * 1000);
	igt_assert_f(inside, "the child was not seen inside MIGRATE\n");
	igt_assert_f(status != -1, "MIGRATE did not end within 60 s of SIGKILL\n");
	igt_assert(WIFSIGNALED(status));
	igt_assert_eq(WTERMSIG(status), SIGKILL);

	{
		void *p = anon(8 * 4096);

		igt_assert_eq(migrate(fd, p, 8 * 4096,
				      VGEM_P2P_MIGRATE_TO_DEVICE, &n),
			      0);
		igt_assert_eq_u64(n, 8);
		munmap(p, 8 * 4096);
	}
}

static void test_contiguous_after_free(int fd)
{
	size_t npages = 256, size = npages * 4096, i, breaks = 0;
	uint64_t pfn[256], n = 0;
	char *p = anon(size), *q = anon(size);

	igt_require(geteuid() == 0);	/* pagemap shows offsets */
	memset(p, 1, size);
	memset(q, 2, size);
	igt_assert_eq(migrate(fd, p, size, VGEM_P2P_MIGRATE_TO_DEVICE,
			      &n), 0);
	igt_assert_eq_u64(n, npages);
	/* free them, in ascending order */
	for (i = 0; i < npages; i++)
		igt_assert_eq(migrate(fd, p + i * 4096, 4096,
				      VGEM_P2P_MIGRATE_TO_RAM, &n), 0);
	igt_assert_eq(migrate(fd, q, size, VGEM_P2P_MIGRATE_TO_DEVICE,
			      &n), 0);
	igt_assert_eq_u64(n, npages);
	device_pfns(q, npages, pfn);
	/* ascending; one break at most, where the allocator wraps */
	for (i = 1; i < npages; i++)
		if (pfn[i] != pfn[i - 1] + 1)
			breaks++;
	igt_assert_f(breaks <= 1, "%zu breaks in %zu pages\n", breaks,
		     npages);
	munmap(p, size);
	munmap(q, size);
}

igt_main
{
	int fd = -1;

	igt_fixture {
		fd = vgem_p2p_open();
		igt_require_f(vgem_p2p_stats(fd).devmem_size,
			      "no device-private memory\n");
		igt_install_exit_handler(restore_quota_at_exit);
	}

	igt_describe("64 pages migrate to device-private memory and back by MIGRATE, counted both ways, with nothing to do when already there; on the device, each page's bytes are in the BAR where its pfn says, and back, each page is in RAM (pagemap); every word survives.");
	igt_subtest("migrate-roundtrip")
		test_migrate_roundtrip(fd);

	igt_describe("A CPU access to pages on the device (their bytes in the BAR where their pfns say) migrates them back to RAM by fault (pagemap), all 16 counted, with every word intact.");
	igt_subtest("cpu-fault-migrates-back")
		test_cpu_fault_migrates_back(fd);

	igt_describe("munmap of pages on the device frees them: devmem_used comes back to where it was.");
	igt_subtest("munmap-while-on-device")
		test_munmap_while_on_device(fd);

	igt_describe("A process that exits with pages on the device frees them: the child confirms its 8 pages migrated, the parent sees them in use, and after the exit devmem_used is back where it was.");
	igt_subtest("exit-while-on-device")
		test_exit_while_on_device(fd);

	igt_describe("Pages never touched migrate too, as zeroed device pages: all 8 are counted and take device memory, and every word reads back zero when the CPU faults them home.");
	igt_subtest("unpopulated-pages")
		test_unpopulated_pages(fd);

	igt_describe("MIGRATE of a vgem_p2p object's own mapping (not anonymous memory) gets EINVAL.");
	igt_subtest("not-anonymous")
		test_not_anonymous(fd);

	igt_describe("devmem_quota_pages limits each process, not each file: past it MIGRATE stops with EDQUOT, and a second and a third file of the process find the quota spent; pages migrated back through either file, or unmapped, give their charge back, closing a file gives nothing back while its pages stay, and devmem_used comes back to where it was.");
	igt_subtest("process-quota")
		test_process_quota(fd);
	igt_fixture
		igt_assert(restore_quota());

	igt_describe("Charges follow the pages to the process's exit: a fork() child has a quota of its own (it migrates 16 pages through the parent's file while the parent is at its quota), keeps the parent's device pages after the parent unmaps them, which stay charged to the parent (EDQUOT), and when the child exits every page is freed and the parent may migrate a whole quota again.");
	igt_subtest("quota-exit")
		test_quota_exit(fd);
	igt_fixture
		igt_assert(restore_quota());

	igt_describe("A MIGRATE over a huge, unpopulated range is killable: SIGKILL, sent once the child is seen inside the ioctl, ends it and the child is reaped within 60 s; the device still migrates afterwards.");
	igt_subtest("migrate-killable")
		test_migrate_killable(fd);

	igt_describe("A range migrated after earlier pages were freed gets ascending, contiguous device pages (so an importer maps it in one stretch of BAR, or two where the allocator wraps), whatever order the earlier ones were freed in.");
	igt_subtest("contiguous-after-free")
		test_contiguous_after_free(fd);

	igt_fixture
		close(fd);
}
