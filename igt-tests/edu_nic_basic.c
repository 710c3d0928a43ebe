// SPDX-License-Identifier: MIT
/*
 * edu_nic uAPI: every ioctl's argument checking and errnos, registration
 * lifetime, mirroring state and counters. No device DMA here (it is slow
 * on edu); the bulk mode stands in where a transfer is needed.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <sys/wait.h>

#include "edu_nic_helpers.h"

IGT_TEST_DESCRIPTION("edu_nic: ioctl argument checking and registration lifetime.");

#define RW (EDU_NIC_ACCESS_READ | EDU_NIC_ACCESS_WRITE)

/*
 * A struct edu_nic_reg_mr for @p whose last 16 bytes (access, flags, key,
 * pad) lie on a read-only page: the kernel reads it whole, but writing
 * the key back fails. @two is a 2-page anonymous mapping, left with its
 * second page read-only.
 */
static struct edu_nic_reg_mr *reg_mr_readonly_tail(char *two, void *p)
{
	struct edu_nic_reg_mr *r = (void *)(two + EDU_PAGE - 16);

	memset(r, 0, sizeof(*r));
	r->addr = (uintptr_t)p;
	r->length = EDU_PAGE;
	r->access = RW;
	igt_assert_eq(mprotect(two + EDU_PAGE, EDU_PAGE, PROT_READ), 0);
	return r;
}

struct copy_out_race {
	int fd;
	void *p;
	struct edu_nic_reg_mr *r;
	int iters;
	atomic_int done;	/* REG_MR calls returned */
	atomic_bool stop;
	int dereg_ok;		/* DEREG_MR successes: must stay 0 */
};

/*
 * Keys are handed out cyclically from 1 on a fresh file, one per REG_MR
 * even when it fails: so the key of the REG_MR now running is done + 1.
 * Try to DEREG it until that call returns.
 */
static void *copy_out_dereg_thread(void *arg)
{
	struct copy_out_race *c = arg;
	int k;

	for (k = 1; k <= c->iters; k++)
		while (atomic_load(&c->done) < k)
			if (edu_dereg_err(c->fd, k) == 0)
				c->dereg_ok++;
	return NULL;
}

/*
 * Hold the mmap lock for writing, over and over, so that the fault
 * copy_to_user() takes on the read-only page waits: it widens the window
 * between the key being allocated and the copy failing.
 */
static void *copy_out_mmap_thread(void *arg)
{
	struct copy_out_race *c = arg;
	size_t len = 16 << 20;
	char *big = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (big == MAP_FAILED)
		return NULL;
	memset(big, 1, len);
	while (!atomic_load(&c->stop)) {
		mprotect(big, len, PROT_READ);
		mprotect(big, len, PROT_READ | PROT_WRITE);
	}
	munmap(big, len);
	return NULL;
}

struct mrs_reader {
	char path[128];
	atomic_bool stop;
	int keyless;		/* "mr 0 " lines seen: must stay 0 */
	int reads;
	atomic_uint key;	/* a registration the reader must see listed */
	atomic_int listed;	/* reads that listed it */
	int errors;		/* failed opens and reads: must stay 0 */
};

/* Read debugfs's mrs over and over, counting registrations without a key. */
static void *mrs_reader_thread(void *arg)
{
	struct mrs_reader *m = arg;
	static char buf[1 << 16];
	ssize_t n;
	int dfd;

	while (!atomic_load(&m->stop)) {
		/* No igt_assert() off the main thread: count, check there. */
		dfd = open(m->path, O_RDONLY);
		n = dfd >= 0 ? read(dfd, buf, sizeof(buf) - 1) : -1;
		if (dfd >= 0)
			close(dfd);
		if (n < 0) {
			m->errors++;
			continue;
		}
		buf[n] = 0;
		if (!strncmp(buf, "mr 0 ", 5) || strstr(buf, "\nmr 0 "))
			m->keyless++;
		if (atomic_load(&m->key)) {
			char line[32], *at;

			snprintf(line, sizeof(line), "mr %u addr ",
				 atomic_load(&m->key));
			at = strstr(buf, line);
			if (at && (at == buf || at[-1] == '\n'))
				atomic_fetch_add(&m->listed, 1);
		}
		m->reads++;
	}
	return NULL;
}

/*
 * Does /proc/lockdep list @to as a direct dependency of @from (a line
 * " -> [key] @to" in @from's block)? -1 without /proc/lockdep.
 */
static int lockdep_direct_dep(const char *from, const char *to)
{
	FILE *f = fopen("/proc/lockdep", "r");
	bool in_from = false;
	size_t cap = 0;
	char *line = NULL;
	int found = 0;

	if (!f)
		return -1;
	while (getline(&line, &cap, f) > 0) {
		char *name;

		line[strcspn(line, "\n")] = 0;
		if (strncmp(line, " -> ", 4)) {
			/* "KEY FD: n BD: n USAGE: NAME" starts a class */
			name = strstr(line, ": ");
			name = name ? strrchr(line, ' ') + 1 : NULL;
			in_from = name && !strcmp(name, from);
			continue;
		}
		/* "#N" follows a name several classes have had */
		name = strchr(line, ']');
		if (in_from && name && !strncmp(name + 2, to, strlen(to)) &&
		    (!name[2 + strlen(to)] || name[2 + strlen(to)] == '#')) {
			found = 1;
			break;
		}
	}
	free(line);
	fclose(f);
	return found;
}

static void test_reg_dereg(int fd)
{
	char *p = edu_anon(4 * EDU_PAGE);
	struct edu_nic_mr_stats s;
	uint32_t key = edu_reg(fd, p, 4 * EDU_PAGE, RW, 0);
	uint32_t key2 = edu_reg(fd, p, 4 * EDU_PAGE,
				EDU_NIC_ACCESS_READ, 0);

	igt_assert_neq(key, key2);
	s = edu_mr_stats(fd, key);
	igt_assert_eq_u64(s.addr, (uintptr_t)p);
	igt_assert_eq_u64(s.length, 4 * EDU_PAGE);
	igt_assert_eq_u32(s.access, RW);
	igt_assert_eq_u32(s.state, 0);
	igt_assert_eq_u64(s.stats.faults, 0);

	igt_assert_eq(edu_dereg_err(fd, key), 0);
	igt_assert_eq(edu_dereg_err(fd, key), -ENOENT);
	s.key = key;
	igt_assert_eq(edu_ioctl(fd, EDU_NIC_IOCTL_MR_STATS, &s),
		      -ENOENT);
	igt_assert_eq(edu_dma_err(fd, key, EDU_NIC_DMA_FROM_MR,
				  EDU_NIC_MODE_BULK, 0, 16, p),
		      -ENOENT);
	igt_assert_eq(edu_dereg_err(fd, 0), -ENOENT);
	igt_assert_eq(edu_dereg_err(fd, 0xdeadbeef), -ENOENT);
	igt_assert_eq(edu_dereg_err(fd, key2), 0);
	munmap(p, 4 * EDU_PAGE);
}

static void test_reg_bad_flags(int fd)
{
	char *p = edu_anon(EDU_PAGE);
	struct edu_nic_reg_mr r = {
		.addr = (uintptr_t)p, .length = EDU_PAGE, .access = RW,
	};

	igt_assert_eq(edu_reg_err(fd, p, EDU_PAGE, RW, 1u << 7, NULL),
		      -EINVAL);
	igt_assert_eq(edu_reg_err(fd, p, EDU_PAGE, RW, ~0u, NULL),
		      -EINVAL);
	igt_assert_eq(edu_reg_err(fd, p, EDU_PAGE, RW,
				  EDU_NIC_REG_MR_NO_P2P | 1u << 7,
				  NULL), -EINVAL);
	igt_assert_eq(edu_reg_err(fd, p, EDU_PAGE, 0, 0, NULL),
		      -EINVAL);
	igt_assert_eq(edu_reg_err(fd, p, EDU_PAGE, 4, 0, NULL),
		      -EINVAL);
	igt_assert_eq(edu_reg_err(fd, p, EDU_PAGE, RW | 8, 0, NULL),
		      -EINVAL);
	r.pad = 1;
	igt_assert_eq(edu_ioctl(fd, EDU_NIC_IOCTL_REG_MR, &r), -EINVAL);
	r.pad = 0;
	r.key = 5;
	igt_assert_eq(edu_ioctl(fd, EDU_NIC_IOCTL_REG_MR, &r), -EINVAL);
	r.key = 0;
	igt_assert_eq(edu_ioctl(fd, EDU_NIC_IOCTL_REG_MR, &r), 0);
	igt_assert_eq(edu_dereg_err(fd, r.key), 0);
	igt_assert_eq(edu_ioctl(fd, EDU_NIC_IOCTL_REG_MR, NULL),
		      -EFAULT);
	munmap(p, EDU_PAGE);
}

static void test_reg_bad_range(int fd)
{
	char *p = edu_anon(2 * EDU_PAGE);

	igt_assert_eq(edu_reg_err(fd, p, 0, RW, 0, NULL), -EINVAL);
	igt_assert_eq(edu_reg_err(fd, p + 1, EDU_PAGE, RW, 0, NULL),
		      -EINVAL);
	igt_assert_eq(edu_reg_err(fd, p, EDU_PAGE + 1, RW, 0, NULL),
		      -EINVAL);
	igt_assert_eq(edu_reg_err(fd, p, EDU_PAGE - 1, RW, 0, NULL),
		      -EINVAL);
	igt_assert_eq(edu_reg_err(fd, p, EDU_NIC_MR_MAX_LENGTH +
				  EDU_PAGE, RW, 0, NULL), -EINVAL);
	igt_assert_eq(edu_reg_err(fd, (void *)(uintptr_t)-EDU_PAGE,
				  2 * EDU_PAGE, RW, 0, NULL), -EINVAL);
	igt_assert_eq(edu_reg_err(fd, (void *)(1ul << 62), EDU_PAGE,
				  RW, 0, NULL), -EINVAL);
	munmap(p, 2 * EDU_PAGE);
}

static void test_reg_hole(int fd)
{
	char *p = edu_anon(3 * EDU_PAGE);

	igt_assert_eq(munmap(p + EDU_PAGE, EDU_PAGE), 0);
	igt_assert_eq(edu_reg_err(fd, p, 3 * EDU_PAGE, RW, 0, NULL),
		      -EFAULT);
	igt_assert_eq(edu_reg_err(fd, p + EDU_PAGE, EDU_PAGE,
				  EDU_NIC_ACCESS_READ, 0, NULL),
		      -EFAULT);
	/* The pieces on either side are fine. */
	igt_assert_eq(edu_dereg_err(fd, edu_reg(fd, p, EDU_PAGE, RW,
						0)), 0);
	munmap(p, 3 * EDU_PAGE);
}

static void test_reg_cross_vmas(int fd)
{
	char *p = edu_anon(3 * EDU_PAGE);
	char buf[64];
	uint32_t key;

	/* Three vmas: rw, r, rw; bytes of their own in each page */
	p2p_fill(p, 3 * EDU_PAGE, 0xc055);
	igt_assert_eq(mprotect(p + EDU_PAGE, EDU_PAGE, PROT_READ), 0);
	key = edu_reg(fd, p, 3 * EDU_PAGE, EDU_NIC_ACCESS_READ,
		      EDU_NIC_REG_MR_PREFETCH);
	igt_assert_eq(edu_mr_stats(fd, key).stats.pages_system, 3);
	/* a read across the first boundary gets both vmas' bytes */
	memset(buf, 0, sizeof(buf));
	edu_dma(fd, key, EDU_NIC_DMA_FROM_MR, EDU_NIC_MODE_BULK,
		EDU_PAGE - 32, sizeof(buf), buf);
	igt_assert_f(!memcmp(buf, p + EDU_PAGE - 32, sizeof(buf)),
		     "a DMA across two vmas read other bytes than theirs\n");
	igt_assert_eq(edu_dereg_err(fd, key), 0);
	igt_assert_eq(edu_reg_err(fd, p, 3 * EDU_PAGE, RW, 0, NULL),
		      -EPERM);
	munmap(p, 3 * EDU_PAGE);
}

static void test_write_read_only(int fd)
{
	char *p = mmap(NULL, 2 * EDU_PAGE, PROT_READ,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char buf[64] = { 1 };
	uint32_t key;

	igt_assert(p != MAP_FAILED);
	igt_assert_eq(edu_reg_err(fd, p, 2 * EDU_PAGE, RW, 0, NULL),
		      -EPERM);
	igt_assert_eq(edu_reg_err(fd, p, 2 * EDU_PAGE,
				  EDU_NIC_ACCESS_WRITE, 0, NULL),
		      -EPERM);
	key = edu_reg(fd, p, 2 * EDU_PAGE, EDU_NIC_ACCESS_READ, 0);
	igt_assert_eq(edu_dma_err(fd, key, EDU_NIC_DMA_TO_MR,
				  EDU_NIC_MODE_BULK, 0, 64, buf),
		      -EPERM);
	igt_assert_eq(edu_dma_err(fd, key, EDU_NIC_DMA_TO_MR,
				  EDU_NIC_MODE_DEVICE, 0, 64, buf),
		      -EPERM);
	edu_dma(fd, key, EDU_NIC_DMA_FROM_MR, EDU_NIC_MODE_BULK, 0, 64,
		buf);
	igt_assert_eq(buf[0], 0);
	igt_assert_eq(edu_dereg_err(fd, key), 0);

	/* Write-only registrations cannot be read. */
	munmap(p, 2 * EDU_PAGE);
	p = edu_anon(EDU_PAGE);
	key = edu_reg(fd, p, EDU_PAGE, EDU_NIC_ACCESS_WRITE, 0);
	igt_assert_eq(edu_dma_err(fd, key, EDU_NIC_DMA_FROM_MR,
				  EDU_NIC_MODE_BULK, 0, 64, buf),
		      -EPERM);
	igt_assert_eq(edu_dereg_err(fd, key), 0);
	munmap(p, EDU_PAGE);
}

static void test_dma_bad_args(int fd)
{
	char *p = edu_anon(2 * EDU_PAGE);
	char buf[128];
	uint32_t key = edu_reg(fd, p, 2 * EDU_PAGE, RW, 0);
	struct edu_nic_dma d = {
		.key = key, .length = 16, .user_ptr = (uintptr_t)buf,
		.mode = EDU_NIC_MODE_BULK,
	};

	igt_assert_eq(edu_ioctl(fd, EDU_NIC_IOCTL_DMA, &d), 0);
	d.flags = 1;
	igt_assert_eq(edu_ioctl(fd, EDU_NIC_IOCTL_DMA, &d), -EINVAL);
	d.flags = 0;
	d.direction = 2;
	igt_assert_eq(edu_ioctl(fd, EDU_NIC_IOCTL_DMA, &d), -EINVAL);
	d.direction = 0;
	d.mode = 2;
	igt_assert_eq(edu_ioctl(fd, EDU_NIC_IOCTL_DMA, &d), -EINVAL);
	d.mode = EDU_NIC_MODE_BULK;

	igt_assert_eq(edu_dma_err(fd, key, 0, 1, 0, 0, buf), -EINVAL);
	igt_assert_eq(edu_dma_err(fd, key, 0, 1, 2 * EDU_PAGE, 1, buf),
		      -EINVAL);
	igt_assert_eq(edu_dma_err(fd, key, 0, 1, EDU_PAGE,
				  EDU_PAGE + 1, buf), -EINVAL);
	igt_assert_eq(edu_dma_err(fd, key, 0, 1, ~0ull, 2, buf),
		      -EINVAL);
	igt_assert_eq(edu_dma_err(fd, key, 0, 1, 16, ~0ull, buf),
		      -EINVAL);
	igt_assert_eq(edu_dma_err(fd, key + 1000, 0, 1, 0, 16, buf),
		      -ENOENT);
	igt_assert_eq(edu_dma_err(fd, 0, 0, 1, 0, 16, buf), -ENOENT);
	/* Bad user buffers, both ways. */
	igt_assert_eq(edu_dma_err(fd, key, EDU_NIC_DMA_FROM_MR, 1, 0,
				  16, NULL), -EFAULT);
	igt_assert_eq(edu_dma_err(fd, key, EDU_NIC_DMA_TO_MR, 1, 0,
				  16, (void *)8), -EFAULT);
	igt_assert_eq(edu_ioctl(fd, EDU_NIC_IOCTL_DMA, NULL), -EFAULT);
	/* The last byte of the region is fine. */
	edu_dma(fd, key, 0, 1, 2 * EDU_PAGE - 1, 1, buf);
	igt_assert_eq(edu_dereg_err(fd, key), 0);
	munmap(p, 2 * EDU_PAGE);
}

static void test_other_bad_args(int fd)
{
	char *p = edu_anon(EDU_PAGE);
	uint32_t key = edu_reg(fd, p, EDU_PAGE, RW, 0);
	struct edu_nic_dereg_mr d = { .key = key, .pad = 1 };
	struct edu_nic_mr_stats ms = { .key = key, .pad = 1 };
	struct edu_nic_dev_stats ds = { .flags = 1 };

	igt_assert_eq(edu_ioctl(fd, EDU_NIC_IOCTL_DEREG_MR, &d),
		      -EINVAL);
	igt_assert_eq(edu_ioctl(fd, EDU_NIC_IOCTL_MR_STATS, &ms),
		      -EINVAL);
	igt_assert_eq(edu_ioctl(fd, EDU_NIC_IOCTL_DEV_STATS, &ds),
		      -EINVAL);
	igt_assert_eq(edu_ioctl(fd, _IO(EDU_NIC_IOCTL_BASE, 0x7f),
				NULL), -ENOTTY);
	igt_assert_eq(edu_ioctl(fd, EDU_NIC_IOCTL_MR_STATS, NULL),
		      -EFAULT);
	igt_assert_eq(edu_dereg_err(fd, key), 0);
	munmap(p, EDU_PAGE);
}

static void test_dev_stats(int fd)
{
	char *p = edu_anon(EDU_PAGE);
	uint64_t before = edu_dev_stats(fd).stats.nr_mrs;
	uint32_t k1 = edu_reg(fd, p, EDU_PAGE, RW, 0);
	uint32_t k2 = edu_reg(fd, p, EDU_PAGE, RW, 0);

	igt_assert_eq_u64(edu_dev_stats(fd).stats.nr_mrs, before + 2);
	igt_assert_eq(edu_dereg_err(fd, k1), 0);
	igt_assert_eq(edu_dereg_err(fd, k2), 0);
	igt_assert_eq_u64(edu_dev_stats(fd).stats.nr_mrs, before);
	igt_info("caps %#x\n", edu_dev_stats(fd).caps);
	munmap(p, EDU_PAGE);
}

static void test_prefetch_invalidate(int fd)
{
	char *p = edu_anon(4 * EDU_PAGE);
	struct edu_nic_mr_stats s;
	char buf[16];
	uint32_t key;

	memset(p, 0x5a, 4 * EDU_PAGE);
	key = edu_reg(fd, p, 4 * EDU_PAGE, RW, EDU_NIC_REG_MR_PREFETCH);
	s = edu_mr_stats(fd, key);
	igt_assert_eq_u32(s.state, EDU_NIC_MR_MIRRORED |
				   EDU_NIC_MR_WRITABLE);
	igt_assert_eq_u64(s.stats.faults, 1);
	igt_assert_eq_u64(s.stats.pages_system, 4);
	igt_assert_eq_u64(s.stats.cur_pages_system, 4);
	igt_assert_eq_u64(s.stats.pages_p2p, 0);

	igt_assert_eq(munmap(p + EDU_PAGE, EDU_PAGE), 0);
	s = edu_mr_stats(fd, key);
	igt_assert_eq_u32(s.state, 0);
	igt_assert_eq_u64(s.stats.invalidations, 1);
	igt_assert_eq_u64(s.stats.cur_pages_system, 0);
	igt_assert_eq(edu_dma_err(fd, key, EDU_NIC_DMA_FROM_MR,
				  EDU_NIC_MODE_BULK, 0, 16, buf),
		      -EFAULT);
	igt_assert_eq(edu_dereg_err(fd, key), 0);

	/* Prefetch of memory the device cannot read fails at once. */
	igt_assert_eq(mprotect(p, EDU_PAGE, PROT_NONE), 0);
	igt_assert_eq(edu_reg_err(fd, p, EDU_PAGE,
				  EDU_NIC_ACCESS_READ,
				  EDU_NIC_REG_MR_PREFETCH, &key),
		      -EFAULT);
	munmap(p, 4 * EDU_PAGE);
}

static void test_other_mm(int fd)
{
	char *p = edu_anon(EDU_PAGE);
	uint32_t key = edu_reg(fd, p, EDU_PAGE, RW, 0);

	igt_fork(child, 1) {
		char buf[16];

		igt_assert_eq(edu_dma_err(fd, key, EDU_NIC_DMA_FROM_MR,
					  EDU_NIC_MODE_BULK, 0, 16,
					  buf), -EACCES);
		igt_assert_eq(edu_reg_err(fd, p, EDU_PAGE, RW, 0,
					  NULL), -EACCES);
	}
	igt_waitchildren();
	igt_assert_eq(edu_dereg_err(fd, key), 0);
	munmap(p, EDU_PAGE);
}

static void test_close_with_mrs(int fd)
{
	int fd2 = edu_open();
	char *p = edu_anon(8 * EDU_PAGE);
	uint64_t before = edu_dev_stats(fd).stats.nr_mrs;
	int i;

	for (i = 0; i < 8; i++)
		edu_reg(fd2, p + i * EDU_PAGE, EDU_PAGE, RW,
			i & 1 ? EDU_NIC_REG_MR_PREFETCH : 0);
	igt_assert_eq_u64(edu_dev_stats(fd).stats.nr_mrs, before + 8);
	close(fd2);
	igt_assert_eq_u64(edu_dev_stats(fd).stats.nr_mrs, before);
	munmap(p, 8 * EDU_PAGE);
}

static void test_exit_with_mrs(int fd)
{
	uint64_t before = edu_dev_stats(fd).stats.nr_mrs;

	igt_fork(child, 1) {
		int cfd = edu_open();
		char *p = edu_anon(4 * EDU_PAGE);

		edu_reg(cfd, p, 4 * EDU_PAGE, RW,
			EDU_NIC_REG_MR_PREFETCH);
		edu_reg(cfd, p, EDU_PAGE, EDU_NIC_ACCESS_READ, 0);
		exit(0);	/* no munmap, no close */
	}
	igt_waitchildren();
	igt_assert_eq_u64(edu_dev_stats(fd).stats.nr_mrs, before);
}

static void test_dma_raw_args(int fd)
{
	char buf[EDU_NIC_DMA_RAW_MAX];
	struct edu_nic_dma_raw r = {
		.bus_addr = 0, .length = 16,
		.user_ptr = (uintptr_t)buf,
	};

	r.flags = 1;
	igt_assert_eq(edu_ioctl(fd, EDU_NIC_IOCTL_DMA_RAW, &r), -EINVAL);
	r.flags = 0;
	r.pad = 1;
	igt_assert_eq(edu_ioctl(fd, EDU_NIC_IOCTL_DMA_RAW, &r), -EINVAL);
	r.pad = 0;
	r.length = 0;
	igt_assert_eq(edu_ioctl(fd, EDU_NIC_IOCTL_DMA_RAW, &r), -EINVAL);
	r.length = EDU_NIC_DMA_RAW_MAX + 1;
	igt_assert_eq(edu_ioctl(fd, EDU_NIC_IOCTL_DMA_RAW, &r), -EINVAL);
	r.length = 16;
	r.bus_addr = ~0ull - 4;
	igt_assert_eq(edu_ioctl(fd, EDU_NIC_IOCTL_DMA_RAW, &r), -EINVAL);

	igt_fork(child, 1) {
		int cfd = edu_open();

		igt_assert_eq(setgid(65534), 0);
		igt_assert_eq(setuid(65534), 0);
		r.bus_addr = 0;
		igt_assert_eq(edu_ioctl(cfd, EDU_NIC_IOCTL_DMA_RAW, &r),
			      -EPERM);
	}
	igt_waitchildren();
}

static void test_reg_copy_out_fault(int fd)
{
	char *two = edu_anon(2 * EDU_PAGE);
	char *p = edu_anon(EDU_PAGE);
	uint64_t before = edu_dev_stats(fd).stats.nr_mrs;
	struct edu_nic_reg_mr *r = reg_mr_readonly_tail(two, p);
	uint32_t key;

	igt_assert_eq(edu_ioctl(fd, EDU_NIC_IOCTL_REG_MR, r), -EFAULT);
	igt_assert_eq_u64(edu_dev_stats(fd).stats.nr_mrs, before);
	/* The failed call's key is gone; the next one is new. */
	key = edu_reg(fd, p, EDU_PAGE, RW, 0);
	igt_assert_eq(edu_dereg_err(fd, key - 1), -ENOENT);
	igt_assert_eq(edu_dereg_err(fd, key), 0);
	igt_assert_eq_u64(edu_dev_stats(fd).stats.nr_mrs, before);
	munmap(p, EDU_PAGE);
	munmap(two, 2 * EDU_PAGE);
}

static void test_reg_copy_out_race(int fd)
{
	struct copy_out_race c = { .iters = 400 };
	char *two = edu_anon(2 * EDU_PAGE);
	uint64_t before;
	pthread_t dereg, mm;
	int i;

	/* A fresh file, so that its keys start at 1. */
	c.fd = edu_open();
	c.p = edu_anon(EDU_PAGE);
	c.r = reg_mr_readonly_tail(two, c.p);
	before = edu_dev_stats(fd).stats.nr_mrs;
	igt_assert_eq(pthread_create(&mm, NULL, copy_out_mmap_thread,
				     &c), 0);
	igt_assert_eq(pthread_create(&dereg, NULL,
				     copy_out_dereg_thread, &c), 0);
	for (i = 0; i < c.iters; i++) {
		igt_assert_eq(edu_ioctl(c.fd, EDU_NIC_IOCTL_REG_MR, c.r),
			      -EFAULT);
		atomic_fetch_add(&c.done, 1);
	}
	pthread_join(dereg, NULL);
	atomic_store(&c.stop, true);
	pthread_join(mm, NULL);

	igt_assert_eq(c.dereg_ok, 0);
	igt_assert_eq_u64(edu_dev_stats(fd).stats.nr_mrs, before);
	close(c.fd);
	munmap(c.p, EDU_PAGE);
	munmap(two, 2 * EDU_PAGE);
}

static void test_debugfs_mrs_keyed(int fd)
{
	struct mrs_reader m = { };
	char link[256];
	char *p = edu_anon(64 * EDU_PAGE);
	pthread_t t;
	uint32_t key;
	ssize_t n;
	int i, w;

	n = readlink("/sys/class/misc/edu_nic0/device", link,
		     sizeof(link) - 1);
	igt_require(n > 0);
	link[n] = 0;
	snprintf(m.path, sizeof(m.path),
		 "/sys/kernel/debug/edu_nic/%s/mrs",
		 strrchr(link, '/') + 1);
	/* edu_nic's own debugfs file: always there */
	igt_assert_f(access(m.path, R_OK) == 0, "%s: %s\n", m.path,
		     strerror(errno));

	igt_assert_eq(pthread_create(&t, NULL, mrs_reader_thread, &m),
		      0);
	for (i = 0; i < 64; i++) {
		key = edu_reg(fd, p, 64 * EDU_PAGE, RW,
			      EDU_NIC_REG_MR_PREFETCH);
		/*
		 * The reader sees the first one listed, keyed (the
		 * bound only keeps a reader that never does from
		 * hanging the subtest).
		 */
		if (!i)
			atomic_store(&m.key, key);
		for (w = 0; !i && w < 60000 &&
		     !atomic_load(&m.listed); w++)
			usleep(1000);
		igt_assert_eq(edu_dereg_err(fd, key), 0);
	}
	atomic_store(&m.stop, true);
	pthread_join(t, NULL);
	igt_info("%d reads of mrs, %d listing the first registration\n",
		 m.reads, atomic_load(&m.listed));
	igt_assert(m.reads > 0);
	igt_assert(atomic_load(&m.listed) > 0);
	igt_assert_eq(m.errors, 0);
	igt_assert_eq(m.keyless, 0);
	munmap(p, 64 * EDU_PAGE);
}

/*
 * The mirror lock is the umem's mutex for a range of the address space,
 * primed when a registration is made, and the registration's own for a
 * dma-buf, primed at load.
 */
static void test_lockdep_primed(int fd)
{
	char *p = edu_anon(EDU_PAGE);
	int umem, own;

	igt_assert_eq(edu_dereg_err(fd, edu_reg(fd, p, EDU_PAGE, RW, 0)), 0);
	umem = lockdep_direct_dep("fs_reclaim", "&umem_odp->umem_mutex");
	own = lockdep_direct_dep("fs_reclaim", "&mr->own_lock");
	/* CONFIG_PROVE_LOCKING: qemu/kernel.config */
	igt_assert_f(umem >= 0, "no /proc/lockdep\n");
	igt_assert_eq(umem, 1);
	igt_assert_eq(own, 1);
	munmap(p, EDU_PAGE);
}

/* Closes *fdp, whose device it unbinds, and opens it anew */
static void test_unbind_with_mrs(int *fdp)
{
	int fd = *fdp;
	char link[256], *bdf;
	char *p = edu_anon(2 * EDU_PAGE), ref[2 * EDU_PAGE];
	char buf[64], w[64];
	struct edu_nic_mr_stats st;
	uint32_t key;
	ssize_t n;
	int sfd;

	n = readlink("/sys/class/misc/edu_nic0/device", link,
		     sizeof(link) - 1);
	igt_require(n > 0);
	link[n] = 0;
	bdf = strrchr(link, '/') + 1;

	p2p_fill(p, 2 * EDU_PAGE, 51);
	memcpy(ref, p, sizeof(ref));
	key = edu_reg(fd, p, 2 * EDU_PAGE, RW, EDU_NIC_REG_MR_PREFETCH);
	st = edu_mr_stats(fd, key);
	igt_assert(st.state & EDU_NIC_MR_MIRRORED);
	igt_assert_eq_u64(st.stats.cur_pages_system, 2);
	sfd = open("/sys/bus/pci/drivers/edu_nic/unbind", O_WRONLY);
	igt_assert_fd(sfd);
	igt_assert_eq(write(sfd, bdf, strlen(bdf)), (ssize_t)strlen(bdf));
	close(sfd);

	st = edu_mr_stats(fd, key);
	igt_assert_eq(st.state, 0);
	igt_assert_eq_u64(st.stats.cur_pages_system, 0);
	memset(buf, 0xee, sizeof(buf));
	igt_assert_eq(edu_dma_err(fd, key, EDU_NIC_DMA_FROM_MR,
				  EDU_NIC_MODE_DEVICE, 0, 16, buf),
		      -ENODEV);
	igt_assert_eq(edu_dma_err(fd, key, EDU_NIC_DMA_FROM_MR,
				  EDU_NIC_MODE_BULK, 0, 16, buf),
		      -ENODEV);
	p2p_fill(w, sizeof(w), 52);
	igt_assert_eq(edu_dma_err(fd, key, EDU_NIC_DMA_TO_MR,
				  EDU_NIC_MODE_BULK, 0, sizeof(w), w),
		      -ENODEV);
	/* nothing moved either way */
	for (n = 0; n < (ssize_t)sizeof(buf); n++)
		igt_assert_eq(buf[n], (char)0xee);
	igt_assert(!memcmp(p, ref, sizeof(ref)));
	igt_assert_eq(edu_reg_err(fd, p, EDU_PAGE, RW, 0, NULL),
		      -ENODEV);
	close(fd);

	sfd = open("/sys/bus/pci/drivers/edu_nic/bind", O_WRONLY);
	igt_assert_fd(sfd);
	igt_assert_eq(write(sfd, bdf, strlen(bdf)), (ssize_t)strlen(bdf));
	close(sfd);
	fd = edu_open();
	*fdp = fd;
	/* a new device: the old registration is not counted */
	igt_assert_eq_u64(edu_dev_stats(fd).stats.nr_mrs, 0);
	key = edu_reg(fd, p, 2 * EDU_PAGE, RW, EDU_NIC_REG_MR_PREFETCH);
	igt_assert_eq_u64(edu_dev_stats(fd).stats.nr_mrs, 1);
	edu_dma(fd, key, EDU_NIC_DMA_FROM_MR, EDU_NIC_MODE_DEVICE,
		EDU_PAGE - 8, 16, buf);
	igt_assert(!memcmp(buf, ref + EDU_PAGE - 8, 16));
	edu_dma(fd, key, EDU_NIC_DMA_TO_MR, EDU_NIC_MODE_DEVICE, 100,
		sizeof(w), w);
	memcpy(ref + 100, w, sizeof(w));
	igt_assert(!memcmp(p, ref, sizeof(ref)));
	igt_assert_eq(edu_dereg_err(fd, key), 0);
	igt_assert_eq_u64(edu_dev_stats(fd).stats.nr_mrs, 0);
	munmap(p, 2 * EDU_PAGE);
}

igt_main
{
	int fd = -1;

	igt_fixture
		fd = edu_open();

	igt_describe("Register, look up and deregister; stale keys get ENOENT.");
	igt_subtest("reg-dereg")
		test_reg_dereg(fd);

	igt_describe("Unknown flags and access bits, non-zero pad and key in: EINVAL.");
	igt_subtest("reg-bad-flags")
		test_reg_bad_flags(fd);

	igt_describe("Zero, unaligned, oversized, wrapping and kernel ranges: EINVAL.");
	igt_subtest("reg-bad-range")
		test_reg_bad_range(fd);

	igt_describe("A range with a hole, or not mapped at all: EFAULT.");
	igt_subtest("reg-hole")
		test_reg_hole(fd);

	igt_describe("Ranges crossing vmas: fine if all are mapped, and a DMA across a boundary reads both vmas' bytes; write access needs all writable.");
	igt_subtest("reg-cross-vmas")
		test_reg_cross_vmas(fd);

	igt_describe("Write access to read-only memory, and writes into a read-only registration: EPERM.");
	igt_subtest("write-read-only")
		test_write_read_only(fd);

	igt_describe("DMA argument checking: flags, direction, mode, ranges, user pointer.");
	igt_subtest("dma-bad-args")
		test_dma_bad_args(fd);

	igt_describe("DEREG_MR, MR_STATS, DEV_STATS: pads and flags must be zero.");
	igt_subtest("other-bad-args")
		test_other_bad_args(fd);

	igt_describe("Device counters track live registrations.");
	igt_subtest("dev-stats")
		test_dev_stats(fd);

	igt_describe("Prefetch mirrors at once; munmap invalidates; the next DMA faults and fails.");
	igt_subtest("prefetch-invalidate")
		test_prefetch_invalidate(fd);

	igt_describe("A registration belongs to the opener's mm: a forked child gets EACCES.");
	igt_subtest("other-mm")
		test_other_mm(fd);

	igt_describe("Close with live, mirrored registrations releases them all.");
	igt_subtest("close-with-mrs")
		test_close_with_mrs(fd);

	igt_describe("Exit with live registrations releases them.");
	igt_subtest("exit-with-mrs")
		test_exit_with_mrs(fd);

	igt_describe("The raw DMA debug ioctl: argument checks and CAP_SYS_RAWIO.");
	igt_subtest("dma-raw-args")
		test_dma_raw_args(fd);

	igt_describe("REG_MR whose key cannot be written back: EFAULT and nothing registered.");
	igt_subtest("reg-copy-out-fault")
		test_reg_copy_out_fault(fd);

	igt_describe("DEREG_MR of the key a REG_MR is failing to hand out: ENOENT, never a free of the registration under the failing call (a double free, which KASAN reports).");
	igt_subtest("reg-copy-out-race")
		test_reg_copy_out_race(fd);

	igt_describe("debugfs lists a registration only once it has its key: never as mr 0, even during a long prefetch. The reader is seen to read, and to list a keyed registration at least once.");
	igt_subtest("debugfs-mrs-keyed")
		test_debugfs_mrs_keyed(fd);

	igt_describe("edu_nic told lockdep that reclaim takes the mirror lock (the invalidate callback does): a registration's umem mutex once one is made, the dma-buf registrations' lock at load; so an allocation under either is reported at once.");
	igt_subtest("lockdep-primed")
		test_lockdep_primed(fd);

	igt_describe("Unbinding the device with a live, mirrored registration: ioctls fail with ENODEV and move no data, close cleans up, and after rebinding a new registration reads the region's bytes and writes land, counted by the new device.");
	igt_subtest("unbind-with-mrs")
		test_unbind_with_mrs(&fd);

	igt_fixture
		close(fd);
}
