/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the tests that drive both drivers: the exporter
 * (vgem_p2p_common.h) and the importer (edu_nic_helpers.h).
 */
#ifndef P2P_COMMON_H
#define P2P_COMMON_H

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "edu_nic_helpers.h"
#include "vgem_p2p_common.h"

#define TRACING	"/sys/kernel/debug/tracing"

/* The whole of a (small) debugfs or tracefs file, NUL-terminated */
static inline char *slurp(const char *path)
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

/* The value of " KEY=" in a trace line, as printed, copied into @val */
static inline bool trace_field(const char *line, const char *key, char *val,
			       size_t len)
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

static inline void msleep(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* DRM card number of the device behind @vfd, for its sysfs directory */
static inline int vgem_p2p_card(int vfd)
{
	struct stat st;

	igt_assert_eq(fstat(vfd, &st), 0);
	return minor(st.st_rdev);
}

/*
 * Does the exporter behind @vfd let the importer behind @fd reach VRAM
 * peer-to-peer (switch), or does it serve it from system memory (split)?
 * Register a small VRAM object through the vma path and see how the
 * importer mapped it, which *@out (if not NULL) receives: pages_bus or
 * pages_iova for the BAR, pages_system for the fallback.
 */
static inline bool p2p_reachable_stats(int vfd, int fd,
				       struct edu_nic_stats *out)
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

static inline bool p2p_reachable(int vfd, int fd)
{
	return p2p_reachable_stats(vfd, fd, NULL);
}

/* The kernel's verdict (DRM_IOCTL_VGEM_P2P_PEER) on edu_nic@n as a peer */
static inline struct drm_vgem_p2p_peer edu_peer_nth(int vfd, int n)
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

/* The kernel's verdict (PEER): does the exporter reach edu_nic@n p2p? */
static inline bool edu_peer_p2p(int vfd, int n)
{
	return edu_peer_nth(vfd, n).path != VGEM_P2P_PEER_NONE;
}

/*
 * p2p_reachable() for edu_nic@n, opened as @fd, held to the kernel's
 * verdict (DRM_IOCTL_VGEM_P2P_PEER): a mapping that silently fell back
 * where the kernel says p2p (or went p2p where it says no) fails here,
 * not later. p2p_e2e/peer-verdict holds the verdict to the topology.
 */
static inline bool p2p_checked(int vfd, int fd, int n)
{
	bool want = edu_peer_p2p(vfd, n), p2p = p2p_reachable(vfd, fd);

	igt_assert_f(p2p == want,
		     "edu_nic%d: the kernel says %s, a mapping went %s\n", n,
		     want ? "p2p" : "no p2p",
		     p2p ? "p2p" : "to system memory");
	return p2p;
}

/* MOVE without the offset: 0 or -errno */
static inline int vgem_p2p_move_err(int vfd, uint32_t handle, uint32_t target)
{
	uint64_t offset = 0;

	return __vgem_p2p_move(vfd, handle, target, &offset);
}

/*
 * Wait until @f(@arg) returns @want; not a timing bound: up to a minute
 * for a slow guest, by the clock (a poll under TCG takes more than its
 * sleep). Return: the last value.
 */
static inline long wait_for_value(long (*f)(const void *), const void *arg,
				  long want)
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

#endif /* P2P_COMMON_H */
