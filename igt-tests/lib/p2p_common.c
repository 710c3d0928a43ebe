// SPDX-License-Identifier: MIT
/*
 * The helpers of the tests that drive both drivers, declared in
 * p2p_common.h.
 */
#include "p2p_common.h"

char *slurp(const char *path)
{
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap);
	ssize_t n;
	int fd;

	igt_assert(buf);
	fd = open(path, O_RDONLY);
	igt_assert_f(fd >= 0, "%s: %s\n", path, strerror(errno));
	while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += n;
		if (len + 1 == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			igt_assert(buf);
		}
	}
	close(fd);
	buf[len] = 0;
	return buf;
}

bool trace_field(const char *line, const char *key, char *val, size_t len)
{
	const char *f = strstr(line, key);
	size_t n;

	if (!f)
		return false;
	f += strlen(key);
	n = strcspn(f, " \n");
	if (n >= len)
		return false;
	memcpy(val, f, n);
	val[n] = 0;
	return true;
}

void msleep(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

int vgem_p2p_card(int vfd)
{
	struct stat st;

	igt_assert_eq(fstat(vfd, &st), 0);
	return minor(st.st_rdev);
}

bool p2p_reachable_stats(int vfd, int fd, struct edu_nic_stats *out)
{
	uint32_t h = vgem_p2p_create(vfd, EDU_PAGE, 0), key;
	char *p = vgem_p2p_mmap(vfd, h, EDU_PAGE, PROT_READ | PROT_WRITE);
	struct edu_nic_stats s;

	key = edu_reg(fd, p, EDU_PAGE, EDU_NIC_ACCESS_READ,
		      EDU_NIC_REG_MR_PREFETCH);
	s = edu_mr_stats(fd, key).stats;
	igt_assert_eq(edu_dereg_err(fd, key), 0);
	munmap(p, EDU_PAGE);
	gem_close(vfd, h);
	/* one page, either way */
	igt_assert_eq_u64(s.pages_p2p + s.pages_system, 1);
	igt_assert_eq_u64(s.pages_bus + s.pages_iova, s.pages_p2p);
	if (out)
		*out = s;
	return s.pages_p2p;
}

struct drm_vgem_p2p_peer edu_peer_nth(int vfd, int n)
{
	struct drm_vgem_p2p_peer q = { 0 };
	unsigned int d, b, dev, f;
	char path[64], link[256];
	ssize_t len;

	snprintf(path, sizeof(path), "/sys/class/misc/edu_nic%d/device", n);
	len = readlink(path, link, sizeof(link) - 1);
	igt_assert_f(len > 0, "%s: %s\n", path, strerror(errno));
	link[len] = 0;
	igt_assert_eq(sscanf(strrchr(link, '/') + 1, "%x:%x:%x.%x", &d, &b,
			     &dev, &f), 4);
	q.domain = d;
	q.bus = b;
	q.devfn = dev << 3 | f;
	igt_assert_eq(__vgem_p2p_peer(vfd, &q), 0);
	return q;
}

bool p2p_checked(int vfd, int fd, int n)
{
	bool want = edu_peer_p2p(vfd, n), p2p = p2p_reachable(vfd, fd);

	igt_assert_f(p2p == want,
		     "edu_nic%d: the kernel says %s, a mapping went %s\n", n,
		     want ? "p2p" : "no p2p",
		     p2p ? "p2p" : "to system memory");
	return p2p;
}

int vgem_p2p_move_err(int vfd, uint32_t handle, uint32_t target)
{
	uint64_t offset = 0;

	return __vgem_p2p_move(vfd, handle, target, &offset);
}

long wait_for_value(long (*f)(const void *), const void *arg, long want)
{
	struct timespec t0, t;
	long v = f(arg);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (v != want) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 60)
			break;
		usleep(1000);
		v = f(arg);
	}
	return v;
}

void p2p_kmsg(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int fd, n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fd = open("/dev/kmsg", O_WRONLY);
	if (fd < 0)
		return;
	if (write(fd, buf, n) != n)
		igt_debug("short write to /dev/kmsg\n");
	close(fd);
}

int p2p_pagemap_entry(int fd, const void *addr, uint64_t *entry)
{
	off_t off = (uintptr_t)addr / 4096 * sizeof(*entry);

	return pread(fd, entry, sizeof(*entry), off) == sizeof(*entry) ? 0 : -1;
}
