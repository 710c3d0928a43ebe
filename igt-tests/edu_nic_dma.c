// SPDX-License-Identifier: MIT
/*
 * edu_nic DMA: real edu device DMA and the bulk (CPU-emulated) mode on
 * anonymous and file memory, checked byte for byte; invalidation by
 * munmap, mprotect and fork, also while a DMA is running; exit, close
 * and deregistration in the middle of a DMA.
 *
 * Device DMA costs four edu commands of ~100 ms (virtual) per page, so
 * device-mode transfers stay at a few pages.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>

#include "p2p_common.h"

IGT_TEST_DESCRIPTION("edu_nic: device and bulk DMA, invalidation, teardown during DMA.");

#define RW (EDU_NIC_ACCESS_READ | EDU_NIC_ACCESS_WRITE)

/* Read [off, off + len) of a region and compare with what memory holds. */
static void check_read(int fd, uint32_t key, uint32_t mode, const char *mem,
		       uint64_t off, uint64_t len)
{
	char *buf = malloc(len);

	igt_assert(buf);
	memset(buf, 0xee, len);
	edu_dma(fd, key, EDU_NIC_DMA_FROM_MR, mode, off, len, buf);
	igt_assert_f(!memcmp(buf, mem + off, len),
		     "mode %u read of [%#lx, +%#lx) differs\n", mode,
		     (unsigned long)off, (unsigned long)len);
	free(buf);
}

/* Write a fresh pattern and check it landed, and nothing around it. */
static void check_write(int fd, uint32_t key, uint32_t mode, char *mem,
			uint64_t size, uint64_t off, uint64_t len,
			uint32_t seed)
{
	char *buf = malloc(len), *before = malloc(size);

	igt_assert(buf && before);
	memcpy(before, mem, size);
	p2p_fill(buf, len, seed);
	edu_dma(fd, key, EDU_NIC_DMA_TO_MR, mode, off, len, buf);
	igt_assert_f(!memcmp(mem + off, buf, len),
		     "mode %u write of [%#lx, +%#lx) did not land\n", mode,
		     (unsigned long)off, (unsigned long)len);
	igt_assert(!memcmp(mem, before, off));
	igt_assert(!memcmp(mem + off + len, before + off + len,
			   size - off - len));
	free(buf);
	free(before);
}

/*
 * Device DMAs, one after the other, while the main thread changes the
 * region under them in phases (munmap, mprotect, fork). Each DMA is
 * counted under the phase it started in, and the thread stops after the
 * @last_dmas (by default the first) started in phase @last. Every errno a
 * phase's DMAs returned is kept, not only the last, so that one DMA's
 * error cannot hide behind a later one's. The data the DMAs moved is checked
 * here, not only their errors: a read that succeeded must have returned
 * @want; a write that succeeded must be what the CPU then sees in @mem,
 * and a write refused in phase @ro must have left @mem as it was.
 * No igt_assert() off the main thread: count, check there.
 *
 * A phase begins when the main thread stores it, after the change that
 * opens it; race_quiesce() lets the DMAs of a phase finish before the
 * change that closes it, so that a phase can promise something of all
 * its DMAs (every write refused under PROT_READ).
 */
#define RACE_PHASES 5
#define RACE_ERRNOS 134		/* past EHWPOISON */

struct race {
	int fd;
	uint32_t key;
	uint32_t dir;
	uint64_t len;
	const char *want;	/* reads: the region's bytes */
	const char *mem;	/* writes: the region, as the CPU sees it */
	int ro;			/* writes: the phase refusing them all */
	int last;
	atomic_int phase;
	atomic_int started[RACE_PHASES];
	atomic_int done[RACE_PHASES];
	int ok[RACE_PHASES];
	int err[RACE_PHASES];	/* the last -errno, by phase */
	/* failed DMAs by phase and errno, every one (0: errno beyond) */
	int errs[RACE_PHASES][RACE_ERRNOS];
	int last_dmas;		/* DMAs started in phase @last; 0: one */
	int bad;		/* DMAs whose data was wrong */
};

/* DMAs of @phase that failed with an errno other than @err */
static int race_other_errors(const struct race *r, int phase, int err)
{
	int e, n = 0;

	for (e = 0; e < RACE_ERRNOS; e++)
		if (e != err)
			n += r->errs[phase][e];
	return n;
}

/* Every errno a phase's DMAs failed with, and how many times */
static void race_print_errors(const struct race *r, int phase)
{
	char line[256] = "";
	size_t len = 0;
	int e;

	for (e = 0; e < RACE_ERRNOS; e++)
		if (r->errs[phase][e] && len < sizeof(line))
			len += snprintf(line + len, sizeof(line) - len,
					" %s x%d", e ? strerror(e) : "other",
					r->errs[phase][e]);
	igt_info("phase %d: %d done, %d ok, failed:%s\n", phase,
		 atomic_load(&r->done[phase]), r->ok[phase],
		 len ? line : " none");
}

static void *race_thread(void *arg)
{
	struct race *r = arg;
	char *buf = malloc(r->len), *before = malloc(r->len);
	int i, ph, ret;

	if (!buf || !before) {
		r->bad++;
		r->last = atomic_load(&r->phase);
	}
	for (i = 0; buf && before; i++) {
		ph = atomic_load(&r->phase);
		atomic_fetch_add(&r->started[ph], 1);
		if (atomic_load(&r->phase) != ph) {
			/* moved on meanwhile: start in the new phase */
			atomic_fetch_sub(&r->started[ph], 1);
			continue;
		}
		if (r->dir == EDU_NIC_DMA_TO_MR) {
			p2p_fill(buf, r->len, 100 + i);
			memcpy(before, r->mem, r->len);
		} else {
			memset(buf, 0xee, r->len);
		}
		ret = edu_dma_err(r->fd, r->key, r->dir, EDU_NIC_MODE_DEVICE,
				  0, r->len, buf);
		if (!ret) {
			r->ok[ph]++;
			if (memcmp(r->dir == EDU_NIC_DMA_TO_MR ? r->mem :
				   r->want, buf, r->len))
				r->bad++;
		} else {
			r->err[ph] = ret;
			r->errs[ph][-ret < RACE_ERRNOS ? -ret : 0]++;
			if (r->dir == EDU_NIC_DMA_TO_MR && ph == r->ro &&
			    memcmp(r->mem, before, r->len))
				r->bad++;
		}
		atomic_fetch_add(&r->done[ph], 1);
		if (ph == r->last &&
		    atomic_load(&r->done[ph]) >= (r->last_dmas ?: 1))
			break;
	}
	free(buf);
	free(before);
	return NULL;
}

/* Wait until a DMA started in @phase has finished */
static void race_wait(struct race *r, int phase)
{
	while (!atomic_load(&r->done[phase]))
		msleep(10);
}

/* Begin @phase, then wait until every DMA of the one before is done */
static void race_quiesce(struct race *r, int phase)
{
	atomic_store(&r->phase, phase);
	while (atomic_load(&r->started[phase - 1]) !=
	       atomic_load(&r->done[phase - 1]))
		msleep(10);
}

#define FAIL_TIMEOUT "/sys/kernel/debug/edu_nic/fail_dma_timeout"
#define FAIL_IRQ_LATE "/sys/kernel/debug/edu_nic/fail_dma_irq_late"

/* Is bus mastering on (PCI_COMMAND_MASTER in the command register)? */
static bool pci_bus_master(const char *bdf)
{
	char path[96];
	uint16_t cmd;
	int f;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/config", bdf);
	f = open(path, O_RDONLY);
	igt_assert_fd(f);
	igt_assert_eq(pread(f, &cmd, sizeof(cmd), 4), (ssize_t)sizeof(cmd));
	close(f);
	return cmd & 0x4;
}

static void test_device_read_anon(int fd)
{
	uint64_t size = 3 * EDU_PAGE;
	char *p = edu_anon(size);
	struct edu_nic_dev_stats d0, d1;
	struct edu_nic_mr_stats s;
	uint32_t key;

	p2p_fill(p, size, 1);
	key = edu_reg(fd, p, size, RW, 0);
	d0 = edu_dev_stats(fd);
	check_read(fd, key, EDU_NIC_MODE_DEVICE, p, 100,
		   2 * EDU_PAGE + 50);
	d1 = edu_dev_stats(fd);
	s = edu_mr_stats(fd, key);
	igt_assert_eq_u64(s.stats.device_dma_bytes, 2 * EDU_PAGE + 50);
	igt_assert_eq_u64(s.stats.bulk_bytes, 0);
	igt_assert_eq_u64(s.stats.faults, 1);
	igt_assert_eq_u64(s.stats.pages_system, 3);
	igt_assert_eq_u64(s.stats.pages_p2p, 0);
	/*
	 * A command moves at most 2 KiB, in then out: 3996 bytes of
	 * page 0 (4 commands), page 1 (4), 50 bytes of page 2 (2).
	 */
	igt_assert_eq_u64(d1.stats.device_dma_cmds -
			  d0.stats.device_dma_cmds, 10);
	igt_assert_eq(edu_dereg_err(fd, key), 0);
	munmap(p, size);
}

static void test_device_write_anon(int fd)
{
	uint64_t size = 3 * EDU_PAGE;
	char *p = edu_anon(size);
	uint32_t key;

	p2p_fill(p, size, 2);
	key = edu_reg(fd, p, size, RW, 0);
	check_write(fd, key, EDU_NIC_MODE_DEVICE, p, size, 4000, 200, 9);
	check_write(fd, key, EDU_NIC_MODE_DEVICE, p, size,
		    2 * EDU_PAGE, EDU_PAGE, 10);
	check_read(fd, key, EDU_NIC_MODE_DEVICE, p, 3900, 300);
	igt_assert_eq_u32(edu_mr_stats(fd, key).state,
			  EDU_NIC_MR_MIRRORED | EDU_NIC_MR_WRITABLE);
	igt_assert_eq(edu_dereg_err(fd, key), 0);
	munmap(p, size);
}

static void test_device_write_untouched(int fd)
{
	char *p = edu_anon(EDU_PAGE);
	char buf[256];
	uint32_t key = edu_reg(fd, p, EDU_PAGE, RW, 0);

	/* A read first mirrors the zero page, read-only. */
	check_read(fd, key, EDU_NIC_MODE_DEVICE, p, 0, 64);
	p2p_fill(buf, sizeof(buf), 4);
	edu_dma(fd, key, EDU_NIC_DMA_TO_MR, EDU_NIC_MODE_DEVICE, 512,
		sizeof(buf), buf);
	igt_assert(!memcmp(p + 512, buf, sizeof(buf)));
	igt_assert_eq(p[0], 0);
	igt_assert_eq(edu_dereg_err(fd, key), 0);
	munmap(p, EDU_PAGE);
}

static void test_bulk_anon(int fd)
{
	uint64_t size = 64 * EDU_PAGE;
	char *p = edu_anon(size), *buf = malloc(size);
	struct edu_nic_mr_stats s;
	uint32_t key;

	p2p_fill(p, size, 5);
	key = edu_reg(fd, p, size, RW, 0);
	edu_dma(fd, key, EDU_NIC_DMA_FROM_MR, EDU_NIC_MODE_BULK, 0,
		size, buf);
	igt_assert_eq_u64(edu_csum(buf, size), edu_csum(p, size));
	p2p_fill(buf, size, 6);
	edu_dma(fd, key, EDU_NIC_DMA_TO_MR, EDU_NIC_MODE_BULK, 0,
		size, buf);
	igt_assert_eq_u64(edu_csum(buf, size), edu_csum(p, size));
	check_write(fd, key, EDU_NIC_MODE_BULK, p, size, 12345, 54321,
		    7);
	s = edu_mr_stats(fd, key);
	igt_assert_eq_u64(s.stats.bulk_bytes, 2 * size + 54321);
	igt_assert_eq_u64(s.stats.device_dma_bytes, 0);
	igt_assert_eq(edu_dereg_err(fd, key), 0);
	free(buf);
	munmap(p, size);
}

static void test_bulk_into_self(int fd)
{
	uint64_t half = 32 * EDU_PAGE, size = 2 * half;
	char *p = edu_anon(size);
	struct edu_nic_mr_stats s;
	uint32_t key;

	/* Only the first half is written; the second reads as zero */
	p2p_fill(p, half, 13);
	key = edu_reg(fd, p, size, RW, 0);
	/* A read mirrors it read-only: the second half is the zero page */
	check_read(fd, key, EDU_NIC_MODE_BULK, p, 0, size);
	edu_dma(fd, key, EDU_NIC_DMA_FROM_MR, EDU_NIC_MODE_BULK, 0,
		half, p + half);
	igt_assert(!memcmp(p, p + half, half));
	s = edu_mr_stats(fd, key);
	igt_assert_lte(1, s.stats.invalidations);
	igt_assert_eq(edu_dereg_err(fd, key), 0);
	munmap(p, size);
}

static void test_file_memory(int fd)
{
	uint64_t size = 4 * EDU_PAGE;
	int mfd = memfd_create("edu_nic", MFD_CLOEXEC);
	char *p, *data = malloc(size), *back = malloc(size);
	uint32_t key;

	igt_assert_fd(mfd);
	p2p_fill(data, size, 8);
	igt_assert_eq(pwrite(mfd, data, size, 0), (ssize_t)size);
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	igt_assert(p != MAP_FAILED);
	key = edu_reg(fd, p, size, RW, 0);
	check_read(fd, key, EDU_NIC_MODE_DEVICE, p, EDU_PAGE - 8, 16);
	check_read(fd, key, EDU_NIC_MODE_BULK, p, 0, size);
	check_write(fd, key, EDU_NIC_MODE_DEVICE, p, size, 3 * EDU_PAGE,
		    100, 11);
	check_write(fd, key, EDU_NIC_MODE_BULK, p, size, 0, EDU_PAGE,
		    12);
	/* The file sees it too, not just this mapping. */
	igt_assert_eq(pread(mfd, back, size, 0), (ssize_t)size);
	igt_assert(!memcmp(back, p, size));
	igt_assert_eq(edu_dereg_err(fd, key), 0);
	munmap(p, size);
	close(mfd);
	free(data);
	free(back);
}

static void test_munmap_remap(int fd)
{
	uint64_t size = 2 * EDU_PAGE;
	char *p = edu_anon(size), *q;
	struct edu_nic_mr_stats s;
	uint32_t key;

	p2p_fill(p, size, 13);
	key = edu_reg(fd, p, size, RW, EDU_NIC_REG_MR_PREFETCH);
	check_read(fd, key, EDU_NIC_MODE_BULK, p, 0, size);
	igt_assert_eq(munmap(p, size), 0);
	s = edu_mr_stats(fd, key);
	igt_assert_eq_u32(s.state, 0);
	igt_assert_eq_u64(s.stats.invalidations, 1);

	q = mmap(p, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	igt_assert(q == p);
	p2p_fill(p, size, 14);
	check_read(fd, key, EDU_NIC_MODE_DEVICE, p, EDU_PAGE, 64);
	s = edu_mr_stats(fd, key);
	igt_assert_eq_u64(s.stats.remaps, 1);
	igt_assert_eq_u64(s.stats.faults, 2);
	igt_assert_eq(edu_dereg_err(fd, key), 0);
	munmap(p, size);
}

static void test_mprotect(int fd)
{
	uint64_t size = 2 * EDU_PAGE;
	char *p = edu_anon(size);
	char buf[64];
	uint32_t key;

	p2p_fill(p, size, 15);
	key = edu_reg(fd, p, size, RW, 0);
	check_write(fd, key, EDU_NIC_MODE_BULK, p, size, 0, 64, 16);
	igt_assert_eq(mprotect(p, size, PROT_READ), 0);
	igt_assert_eq_u64(edu_mr_stats(fd, key).stats.invalidations, 1);
	igt_assert_eq(edu_dma_err(fd, key, EDU_NIC_DMA_TO_MR,
				  EDU_NIC_MODE_DEVICE, 0, 64, buf),
		      -EPERM);
	check_read(fd, key, EDU_NIC_MODE_DEVICE, p, 8, 64);
	igt_assert_eq(mprotect(p, size, PROT_READ | PROT_WRITE), 0);
	check_write(fd, key, EDU_NIC_MODE_DEVICE, p, size, EDU_PAGE,
		    64, 17);
	igt_assert_eq(edu_dereg_err(fd, key), 0);
	munmap(p, size);
}

static void test_fork_cow(int fd)
{
	uint64_t size = 2 * EDU_PAGE;
	char *p = edu_anon(size);
	int to_child[2], to_parent[2];
	char c, buf[128];
	uint32_t key;
	pid_t pid;
	int status;

	p2p_fill(p, size, 18);
	key = edu_reg(fd, p, size, RW, EDU_NIC_REG_MR_PREFETCH);
	igt_assert_eq(pipe(to_child), 0);
	igt_assert_eq(pipe(to_parent), 0);
	pid = fork();
	igt_assert(pid >= 0);
	if (pid == 0) {
		char ref[128];

		p2p_fill(ref, sizeof(ref), 18);
		if (read(to_child[0], &c, 1) != 1)
			_exit(2);
		/* The parent's DMA must not show through. */
		_exit(memcmp(p, ref, sizeof(ref)) ? 1 : 0);
	}
	igt_assert(edu_mr_stats(fd, key).stats.invalidations >= 1);
	p2p_fill(buf, sizeof(buf), 19);
	edu_dma(fd, key, EDU_NIC_DMA_TO_MR, EDU_NIC_MODE_DEVICE, 0,
		sizeof(buf), buf);
	igt_assert(!memcmp(p, buf, sizeof(buf)));
	igt_assert_eq(write(to_child[1], "x", 1), 1);
	igt_assert_eq(waitpid(pid, &status, 0), pid);
	igt_assert(WIFEXITED(status));
	igt_assert_eq(WEXITSTATUS(status), 0);
	igt_assert_eq(edu_dereg_err(fd, key), 0);
	munmap(p, size);
}

/*
 * The reads before the munmap come back right, but the one racing it,
 * which may also fail with EFAULT; every read after it fails with
 * EFAULT. Every DMA's return counts, per phase: any other errno, even
 * followed by an EFAULT, fails.
 */
static void test_munmap_during_dma(int fd)
{
	uint64_t size = 4 * EDU_PAGE;
	char *p = edu_anon(size), ref[4 * EDU_PAGE];
	struct race r = { .fd = fd, .dir = EDU_NIC_DMA_FROM_MR,
			  .len = size, .want = ref, .ro = -1,
			  .last = 1, .last_dmas = 3 };
	pthread_t t;

	p2p_fill(p, size, 20);
	memcpy(ref, p, size);
	r.key = edu_reg(fd, p, size, RW, 0);
	igt_assert_eq(pthread_create(&t, NULL, race_thread, &r), 0);
	race_wait(&r, 0);
	igt_assert_eq(munmap(p, size), 0);
	atomic_store(&r.phase, 1);
	pthread_join(t, NULL);
	race_print_errors(&r, 0);
	race_print_errors(&r, 1);
	igt_assert_eq(r.bad, 0);
	/* before the munmap: read right, or EFAULT racing it */
	igt_assert(r.ok[0] >= 1);
	igt_assert_eq(race_other_errors(&r, 0, EFAULT), 0);
	/* after it: EFAULT, every one */
	igt_assert_eq(r.ok[1], 0);
	igt_assert_eq(race_other_errors(&r, 1, EFAULT), 0);
	igt_assert_eq(r.errs[1][EFAULT], 3);
	igt_assert(edu_mr_stats(fd, r.key).stats.invalidations >= 1);
	igt_assert_eq(edu_dereg_err(fd, r.key), 0);
}

static void test_mprotect_fork_during_dma(int fd)
{
	uint64_t size = 2 * EDU_PAGE;
	char *p = edu_anon(size), ref[2 * EDU_PAGE];
	/*
	 * Phases: 0 writable, racing mprotect(PROT_READ); 1 read-only;
	 * 2 racing mprotect(PROT_READ | PROT_WRITE); 3 writable,
	 * racing a fork; 4 after the fork.
	 */
	struct race r = { .fd = fd, .dir = EDU_NIC_DMA_TO_MR,
			  .len = size, .mem = p, .ro = 1, .last = 4 };
	pthread_t t;
	pid_t pid;
	int ph;

	p2p_fill(ref, size, 22);
	r.key = edu_reg(fd, p, size, RW, 0);
	igt_assert_eq(pthread_create(&t, NULL, race_thread, &r), 0);
	race_wait(&r, 0);
	igt_assert_eq(mprotect(p, size, PROT_READ), 0);
	atomic_store(&r.phase, 1);
	race_wait(&r, 1);
	race_quiesce(&r, 2);
	igt_assert_eq(mprotect(p, size, PROT_READ | PROT_WRITE), 0);
	atomic_store(&r.phase, 3);
	race_wait(&r, 3);
	pid = fork();
	igt_assert(pid >= 0);
	if (pid == 0)
		_exit(0);
	igt_assert_eq(waitpid(pid, NULL, 0), pid);
	atomic_store(&r.phase, 4);
	pthread_join(t, NULL);
	for (ph = 0; ph < RACE_PHASES; ph++)
		igt_info("phase %d: %d done, %d landed, last error %d\n",
			 ph, atomic_load(&r.done[ph]), r.ok[ph],
			 r.err[ph]);
	igt_assert_eq(r.bad, 0);
	/* before mprotect: landed; the one racing it may be refused */
	igt_assert(r.ok[0] >= 1);
	igt_assert(r.err[0] == 0 || r.err[0] == -EPERM);
	/* under PROT_READ: every one refused */
	igt_assert_eq(r.ok[1], 0);
	igt_assert_eq(r.err[1], -EPERM);
	/* racing the way back: refused or landed */
	igt_assert(r.err[2] == 0 || r.err[2] == -EPERM);
	/* writable again, and across the fork: all land */
	igt_assert(r.ok[3] >= 1);
	igt_assert_eq(r.err[3], 0);
	igt_assert_eq(r.ok[4], 1);
	/* One more, undisturbed, must land completely. */
	edu_dma(fd, r.key, EDU_NIC_DMA_TO_MR, EDU_NIC_MODE_DEVICE, 0,
		size, ref);
	igt_assert(!memcmp(p, ref, size));
	/* mprotect and fork each tore a mirror down */
	igt_assert(edu_mr_stats(fd, r.key).stats.invalidations >= 2);
	igt_assert_eq(edu_dereg_err(fd, r.key), 0);
	munmap(p, size);
}

/*
 * A teardown (DEREG_MR, close) during a DMA: two device reads of the
 * region, one after the other, in a thread of its own. The first takes
 * edu_nic's engine and waits there, before its first command, while
 * hold_dma is set: the teardown happens while it is certainly in flight.
 * The second starts after the teardown. What each returned is kept.
 */
struct teardown_dma {
	int fd;
	uint32_t key;
	uint64_t len;
	char *buf[2];
	int ret[2];
};

static void *teardown_dma_thread(void *arg)
{
	struct teardown_dma *d = arg;
	int i;

	for (i = 0; i < 2; i++)
		d->ret[i] = edu_dma_err(d->fd, d->key, EDU_NIC_DMA_FROM_MR,
					EDU_NIC_MODE_DEVICE, 0, d->len,
					d->buf[i]);
	return NULL;
}

/*
 * Set hold_dma and start @d's thread; return the knob, open, once its
 * first DMA is held (*@held: held_dma then, 1). The knob is let go
 * through that file: close-during-dma opens no file between its close()
 * and the second DMA, which would otherwise get the closed fd's number.
 */
static int start_held_dmas(struct teardown_dma *d, pthread_t *t, int *held)
{
	int hold = open(EDU_HOLD_DMA, O_WRONLY | O_CLOEXEC);

	igt_assert_f(hold >= 0, "%s: %s\n", EDU_HOLD_DMA, strerror(errno));
	igt_install_exit_handler(edu_release_dma);
	d->buf[0] = calloc(1, d->len);
	d->buf[1] = calloc(1, d->len);
	igt_assert(d->buf[0] && d->buf[1]);
	igt_assert_eq(write(hold, "1", 1), 1);
	igt_assert_eq(pthread_create(t, NULL, teardown_dma_thread, d), 0);
	*held = wait_for_value(edu_read_int_at, EDU_HELD_DMA, 1);
	return hold;
}

/* Let the held DMA go and wait for both; nothing asserted before */
static void end_held_dmas(struct teardown_dma *d, pthread_t t, int hold)
{
	igt_assert_eq(write(hold, "0", 1), 1);
	close(hold);
	igt_assert_eq(pthread_join(t, NULL), 0);
	igt_info("held DMA: %d; the one after the teardown: %d\n",
		 d->ret[0], d->ret[1]);
}

/*
 * The held DMA completed, with the region's bytes; the one after the
 * teardown failed with @err; there were these two and no other.
 */
static void check_held_dmas(struct teardown_dma *d, const char *want, int err)
{
	igt_assert_eq(d->ret[0], 0);
	igt_assert_f(!memcmp(d->buf[0], want, d->len),
		     "the held DMA read other bytes than the region's\n");
	igt_assert_eq(d->ret[1], err);
	free(d->buf[0]);
	free(d->buf[1]);
}

/*
 * DEREG_MR while a DMA of the region is held in flight: the
 * deregistration returns at once, the registration (nr_mrs) lives on
 * until that DMA is done, which reads the region right; the next DMA
 * finds the key gone.
 */
static void test_dereg_during_dma(int fd)
{
	uint64_t size = 2 * EDU_PAGE;
	char *p = edu_anon(size);
	struct teardown_dma d = { .fd = fd, .len = size };
	uint64_t before = edu_dev_stats(fd).stats.nr_mrs, during;
	int hold, held, dereg, still_held;
	pthread_t t;

	p2p_fill(p, size, 21);
	d.key = edu_reg(fd, p, size, RW, 0);
	hold = start_held_dmas(&d, &t, &held);
	dereg = edu_dereg_err(fd, d.key);
	during = edu_dev_stats(fd).stats.nr_mrs;
	still_held = edu_read_int(EDU_HELD_DMA);
	end_held_dmas(&d, t, hold);

	igt_assert_eq(held, 1);
	igt_assert_eq(dereg, 0);
	/* the deregistration did not wait for the DMA, nor free under it */
	igt_assert_eq(still_held, 1);
	igt_assert_eq_u64(during, before + 1);
	check_held_dmas(&d, p, -ENOENT);
	igt_assert_eq_u64(edu_dev_stats(fd).stats.nr_mrs, before);
	munmap(p, size);
}

/*
 * close() of the fd while a DMA on it is held in flight: close returns
 * at once, the registration lives on until that DMA is done, which reads
 * the region right; the next DMA gets EBADF, and then the file's release
 * has freed the registration.
 */
static void test_close_during_dma(int fd)
{
	uint64_t size = 2 * EDU_PAGE;
	char *p = edu_anon(size);
	int fd2 = edu_open();
	struct teardown_dma d = { .fd = fd2, .len = size };
	uint64_t before = edu_dev_stats(fd).stats.nr_mrs, during;
	int hold, held, closed;
	pthread_t t;

	p2p_fill(p, size, 24);
	d.key = edu_reg(fd2, p, size, RW, 0);
	hold = start_held_dmas(&d, &t, &held);
	closed = close(fd2);
	/* no file opened from here until the second DMA is done */
	during = edu_dev_stats(fd).stats.nr_mrs;
	end_held_dmas(&d, t, hold);

	igt_assert_eq(held, 1);
	igt_assert_eq(closed, 0);
	/* the close did not release the file under the DMA */
	igt_assert_eq_u64(during, before + 1);
	check_held_dmas(&d, p, -EBADF);
	igt_assert_eq_u64(edu_dev_stats(fd).stats.nr_mrs, before);
	munmap(p, size);
}

static void test_exit_during_dma(int fd)
{
	struct edu_nic_stats e0 = edu_dev_stats(fd).stats, e1;
	int ready[2];

	igt_assert_eq(pipe(ready), 0);
	igt_fork(child, 1) {
		int cfd = edu_open_nth(0);
		char *p = edu_anon(4 * EDU_PAGE);
		char buf[4 * EDU_PAGE];
		uint32_t key;

		igt_assert_fd(cfd);
		p2p_fill(p, 4 * EDU_PAGE, 23);
		key = edu_reg(cfd, p, 4 * EDU_PAGE, RW, 0);
		igt_assert_eq(edu_dma_err(cfd, key, EDU_NIC_DMA_FROM_MR,
					  EDU_NIC_MODE_DEVICE, 0, sizeof(buf),
					  buf), 0);
		igt_assert(!memcmp(buf, p, sizeof(buf)));
		edu_child_report(ready[1]);
		for (;;)
			edu_dma_err(cfd, key, EDU_NIC_DMA_FROM_MR,
				    EDU_NIC_MODE_DEVICE, 0,
				    sizeof(buf), buf);
	}
	/* its first DMA read the right bytes */
	edu_child_ready(ready);
	/* registered, mirrored and DMAing before the kill */
	e1 = edu_dev_stats(fd).stats;
	igt_assert_eq_u64(e1.nr_mrs, e0.nr_mrs + 1);
	igt_assert_eq_u64(e1.cur_pages_system, e0.cur_pages_system + 4);
	igt_assert(e1.device_dma_bytes >= e0.device_dma_bytes + 4 * EDU_PAGE);
	edu_child_kill();
	e1 = edu_dev_stats(fd).stats;
	igt_assert_eq_u64(e1.nr_mrs, e0.nr_mrs);
	igt_assert_eq_u64(e1.cur_pages_system, e0.cur_pages_system);
	igt_assert_eq_u64(e1.cur_pages_p2p, e0.cur_pages_p2p);
}

/*
 * A command's interrupt arrives only after the next command started: the
 * wait gave up (fault injection, the wait a timeout would end) and found
 * the engine idle. That late interrupt must not complete the next
 * command's wait, or the driver copies the bounce page before the engine
 * filled it, and runs one command behind the device from then on. Every
 * transfer after it, reads and writes, must carry its own bytes.
 */
static void test_late_interrupt(int fd)
{
	uint64_t size = 2 * EDU_PAGE;
	char *p = edu_anon(size);
	struct edu_nic_dev_stats d0, d1;
	uint32_t key;
	int i;

	/* edu_nic makes it with CONFIG_FAULT_INJECTION: qemu/kernel.config */
	igt_assert_f(access(FAIL_IRQ_LATE, F_OK) == 0, "%s: %s\n",
		     FAIL_IRQ_LATE, strerror(errno));
	p2p_fill(p, size, 22);
	key = edu_reg(fd, p, size, RW, EDU_NIC_REG_MR_PREFETCH);
	d0 = edu_dev_stats(fd);

	/* The next command, once: the first of this read's four */
	igt_assert(edu_write_str(FAIL_IRQ_LATE "/verbose", "0"));
	igt_assert(edu_write_str(FAIL_IRQ_LATE "/interval", "1"));
	igt_assert(edu_write_str(FAIL_IRQ_LATE "/times", "1"));
	igt_assert(edu_write_str(FAIL_IRQ_LATE "/probability", "100"));
	check_read(fd, key, EDU_NIC_MODE_DEVICE, p, 0, EDU_PAGE);
	igt_assert(edu_write_str(FAIL_IRQ_LATE "/probability", "0"));
	d1 = edu_dev_stats(fd);
	/* it was injected: the read made its commands, none failed */
	igt_assert_eq_u64(d1.stats.device_dma_cmds -
			  d0.stats.device_dma_cmds, 4);
	igt_assert_eq_u64(d1.stats.errors, d0.stats.errors);
	/* fault_attr counts its injections down: it fired once */
	igt_assert_eq(edu_read_int(FAIL_IRQ_LATE "/times"), 0);

	/* and nothing runs a command behind the device afterwards */
	for (i = 0; i < 4; i++) {
		check_write(fd, key, EDU_NIC_MODE_DEVICE, p, size,
			    i * 1000, 3000, 30 + i);
		check_read(fd, key, EDU_NIC_MODE_DEVICE, p, 500 * i,
			   EDU_PAGE);
	}
	igt_assert_eq(edu_dereg_err(fd, key), 0);
	munmap(p, size);
}

/* Closes *fdp, whose device it unbinds, and opens it anew */
static void test_timeout_clears_master(int *fdp)
{
	int fd = *fdp;
	char *p = edu_anon(EDU_PAGE), buf[64], bdf[32];
	uint32_t key;

	/* edu_nic makes it with CONFIG_FAULT_INJECTION: qemu/kernel.config */
	igt_assert_f(access(FAIL_TIMEOUT, F_OK) == 0, "%s: %s\n",
		     FAIL_TIMEOUT, strerror(errno));
	edu_bdf(bdf, sizeof(bdf));
	igt_assert(pci_bus_master(bdf));
	key = edu_reg(fd, p, EDU_PAGE, RW, 0);

	/* The next command, once */
	igt_assert(edu_write_str(FAIL_TIMEOUT "/verbose", "0"));
	igt_assert(edu_write_str(FAIL_TIMEOUT "/interval", "1"));
	igt_assert(edu_write_str(FAIL_TIMEOUT "/times", "1"));
	igt_assert(edu_write_str(FAIL_TIMEOUT "/probability", "100"));
	igt_assert_eq(edu_dma_err(fd, key, EDU_NIC_DMA_FROM_MR,
				  EDU_NIC_MODE_DEVICE, 0, sizeof(buf),
				  buf), -EIO);
	igt_assert(edu_write_str(FAIL_TIMEOUT "/probability", "0"));
	igt_assert(!pci_bus_master(bdf));
	/* Wedged: no command again, injection or not */
	igt_assert_eq(edu_dma_err(fd, key, EDU_NIC_DMA_TO_MR,
				  EDU_NIC_MODE_DEVICE, 0, sizeof(buf),
				  buf), -EIO);
	igt_assert_eq(edu_dereg_err(fd, key), 0);
	close(fd);

	igt_assert(edu_write_str("/sys/bus/pci/drivers/edu_nic/unbind", bdf));
	igt_assert(edu_write_str("/sys/bus/pci/drivers/edu_nic/bind", bdf));
	fd = edu_open();
	*fdp = fd;
	igt_assert(pci_bus_master(bdf));
	p2p_fill(p, EDU_PAGE, 21);
	key = edu_reg(fd, p, EDU_PAGE, RW, 0);
	edu_dma(fd, key, EDU_NIC_DMA_FROM_MR, EDU_NIC_MODE_DEVICE, 0,
		sizeof(buf), buf);
	igt_assert(!memcmp(buf, p, sizeof(buf)));
	igt_assert_eq(edu_dereg_err(fd, key), 0);
	munmap(p, EDU_PAGE);
}

igt_main
{
	int fd = -1;

	igt_fixture
		fd = edu_open();

	igt_describe("Device DMA reads anonymous memory: unaligned, across pages.");
	igt_subtest("device-read-anon")
		test_device_read_anon(fd);

	igt_describe("Device DMA writes anonymous memory, and only where asked.");
	igt_subtest("device-write-anon")
		test_device_write_anon(fd);

	igt_describe("Device DMA into never-touched anonymous memory faults it in.");
	igt_subtest("device-write-untouched")
		test_device_write_untouched(fd);

	igt_describe("Bulk (emulated) DMA on 64 pages of anonymous memory, checksummed.");
	igt_subtest("bulk-anon")
		test_bulk_anon(fd);

	igt_describe("Bulk DMA from a region into itself, where the copy's own write fault (zero page) invalidates the mirror it copies from: the data arrives, nothing deadlocks.");
	igt_subtest("bulk-into-self")
		test_bulk_into_self(fd);

	igt_describe("Device and bulk DMA on shared file memory (memfd).");
	igt_subtest("file-memory")
		test_file_memory(fd);

	igt_describe("munmap invalidates; new memory mapped at the address is re-mirrored.");
	igt_subtest("munmap-remap")
		test_munmap_remap(fd);

	igt_describe("mprotect read-only invalidates; writes then fail with EPERM, reads work.");
	igt_subtest("mprotect")
		test_mprotect(fd);

	igt_describe("fork write-protects (COW): the mirror is invalidated and writes land in the parent only.");
	igt_subtest("fork-cow")
		test_fork_cow(fd);

	igt_describe("munmap while a device DMA runs: once a first read of the region came back right, the region is unmapped under the next; that one either completes with the region's bytes or fails with EFAULT, and the three reads started after the munmap fail with EFAULT. Every read's errno counts, per phase, not only the last: any other fails.");
	igt_subtest("munmap-during-dma")
		test_munmap_during_dma(fd);

	igt_describe("mprotect and fork while device DMAs write, each DMA a fresh pattern checked in the parent's memory: writes land before; under PROT_READ every write is refused with EPERM and changes nothing; after PROT_READ | PROT_WRITE writes land again, also across a fork, and after it.");
	igt_subtest("mprotect-fork-during-dma")
		test_mprotect_fork_during_dma(fd);

	igt_describe("Deregistration while a device read of the region holds edu_nic's engine (hold_dma): DEREG_MR returns at once, the registration lives on until the held read is done, which returns 0 with the region's bytes; the read after it gets ENOENT, and nothing else comes back.");
	igt_subtest("dereg-during-dma")
		test_dereg_during_dma(fd);

	igt_describe("close() of the fd while a device read through it holds edu_nic's engine (hold_dma): close returns at once, the registration lives on until the held read is done, which returns 0 with the region's bytes; the read after it gets EBADF, nothing else comes back, and the registration is then gone.");
	igt_subtest("close-during-dma")
		test_close_during_dma(fd);

	igt_describe("SIGKILL of a process in the middle of device DMA releases everything: the child reads its region right once and says so, the parent sees its registration mirrored, kills it mid-stream, and sees the registration and its mirrored pages gone.");
	igt_subtest("exit-during-dma")
		test_exit_during_dma(fd);

	igt_describe("A command's interrupt that arrives only after the next command started (fault injection) does not complete that command's wait: the read it belongs to and every read and write after it carry their own bytes.");
	igt_subtest("late-interrupt")
		test_late_interrupt(fd);

	igt_describe("A command that times out (fault injection) wedges the engine and takes the device off the bus: DMA gets EIO, bus mastering is off; rebinding brings it back.");
	igt_subtest("timeout-clears-master")
		test_timeout_clears_master(&fd);

	igt_fixture
		close(fd);
}
