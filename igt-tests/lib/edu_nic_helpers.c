// SPDX-License-Identifier: MIT
/*
 * The edu_nic tests' helpers, declared in edu_nic_helpers.h.
 */
#include "edu_nic_helpers.h"

bool edu_bdf_nth(int nic, char *bdf, size_t len)
{
	char path[64], link[256];
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/class/misc/edu_nic%d/device", nic);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = 0;
	snprintf(bdf, len, "%s", strrchr(link, '/') + 1);
	return true;
}

void edu_bdf(char *bdf, size_t len)
{
	igt_assert(edu_bdf_nth(0, bdf, len));
}

void edu_debugfs_path(char *path, size_t len, const char *file)
{
	char bdf[32];

	edu_bdf(bdf, sizeof(bdf));
	snprintf(path, len, "/sys/kernel/debug/edu_nic/%s/%s", bdf, file);
}

int edu_read_int(const char *path)
{
	FILE *f = fopen(path, "r");
	int v = -1;

	igt_assert_f(f, "%s\n", path);
	igt_assert_eq(fscanf(f, "%d", &v), 1);
	fclose(f);
	return v;
}

long edu_read_value(const char *path, const char *key)
{
	size_t klen = strlen(key);
	char line[256];
	long v = -1;
	FILE *f = fopen(path, "r");

	igt_assert_f(f, "%s\n", path);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ' ')
			v = strtol(line + klen, NULL, 10);
	fclose(f);
	igt_assert_f(v >= 0, "%s: no %s\n", path, key);
	return v;
}

bool edu_dma_mask_nth(int nic, uint64_t *mask)
{
	char bdf[32], path[128], line[256];
	bool found = false;
	FILE *f;

	if (!edu_bdf_nth(nic, bdf, sizeof(bdf)))
		return false;
	snprintf(path, sizeof(path), "/sys/kernel/debug/edu_nic/%s/stats",
		 bdf);
	f = fopen(path, "r");
	igt_assert_f(f, "%s: %s\n", path, strerror(errno));
	while (!found && fgets(line, sizeof(line), f))
		if (!strncmp(line, "dma_mask ", 9)) {
			*mask = strtoull(line + 9, NULL, 0);
			found = true;
		}
	fclose(f);
	igt_assert_f(found, "%s: no dma_mask\n", path);
	return true;
}

bool edu_write_str(const char *path, const char *s)
{
	int f = open(path, O_WRONLY);
	bool ok;

	if (f < 0)
		return false;
	ok = write(f, s, strlen(s)) == (ssize_t)strlen(s);
	close(f);
	return ok;
}

int edu_open_nth(int n)
{
	char path[32];

	snprintf(path, sizeof(path), "/dev/edu_nic%d", n);
	return open(path, O_RDWR | O_CLOEXEC);
}

bool pci_bar_range(const char *dev, int bar, uint64_t *start, uint64_t *end)
{
	unsigned long long s = 0, e = 0, flags;
	char path[300];
	bool ok = true;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "%s/resource", dev);
	f = fopen(path, "r");
	if (!f)
		return false;
	for (i = 0; i <= bar && ok; i++)
		ok = fscanf(f, "%llx %llx %llx", &s, &e, &flags) == 3;
	fclose(f);
	*start = s;
	*end = e;
	return ok;
}

int edu_pci_count(void)
{
	DIR *d = opendir("/sys/bus/pci/devices");
	struct dirent *e;
	int n = 0;

	igt_assert(d);
	while ((e = readdir(d))) {
		char path[300], id[16] = "";
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/vendor",
			 e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%15s", id) != 1 || strcmp(id, "0x1234")) {
			fclose(f);
			continue;
		}
		fclose(f);
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/device",
			 e->d_name);
		f = fopen(path, "r");
		if (f && fscanf(f, "%15s", id) == 1 && !strcmp(id, "0x11e8"))
			n++;
		if (f)
			fclose(f);
	}
	closedir(d);
	return n;
}

int edu_open_promised(int n)
{
	int have = edu_pci_count(), fd;

	igt_require_f(have > n, "needs %d edu devices, the machine has %d\n",
		      n + 1, have);
	fd = edu_open_nth(n);
	igt_assert_f(fd >= 0, "/dev/edu_nic%d: %s, though the machine has %d edu devices\n",
		     n, strerror(errno), have);
	return fd;
}

void edu_child_ready(int ready[2])
{
	char c;

	close(ready[1]);
	igt_assert_f(read(ready[0], &c, 1) == 1 && c == 'r',
		     "the child ended before its first DMA read right\n");
	close(ready[0]);
}

void edu_child_kill(void)
{
	igt_kill_children(SIGKILL);
	igt_assert_eq(__igt_waitchildren(), 128 + SIGKILL);
}

int edu_open(void)
{
	int fd = edu_open_nth(0);

	igt_require_f(fd >= 0, "no /dev/edu_nic0 (edu_nic.ko not loaded?)\n");
	return fd;
}

int edu_ioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret == -1 && errno == EINTR);
	return ret == -1 ? -errno : 0;
}

int edu_reg_err(int fd, void *addr, uint64_t len, uint32_t access,
		uint32_t flags, uint32_t *key)
{
	struct edu_nic_reg_mr r = {
		.addr = (uintptr_t)addr,
		.length = len,
		.access = access,
		.flags = flags,
	};
	int ret = edu_ioctl(fd, EDU_NIC_IOCTL_REG_MR, &r);

	if (!ret && key)
		*key = r.key;
	return ret;
}

uint32_t edu_reg(int fd, void *addr, uint64_t len, uint32_t access,
		 uint32_t flags)
{
	uint32_t key = 0;

	igt_assert_eq(edu_reg_err(fd, addr, len, access, flags, &key), 0);
	igt_assert_neq(key, 0);
	return key;
}

int edu_dereg_err(int fd, uint32_t key)
{
	struct edu_nic_dereg_mr d = { .key = key };

	return edu_ioctl(fd, EDU_NIC_IOCTL_DEREG_MR, &d);
}

int edu_dma_err(int fd, uint32_t key, uint32_t dir, uint32_t mode, uint64_t off,
		uint64_t len, void *buf)
{
	struct edu_nic_dma d = {
		.key = key,
		.direction = dir,
		.mode = mode,
		.offset = off,
		.length = len,
		.user_ptr = (uintptr_t)buf,
	};

	return edu_ioctl(fd, EDU_NIC_IOCTL_DMA, &d);
}

struct edu_nic_mr_stats edu_mr_stats(int fd, uint32_t key)
{
	struct edu_nic_mr_stats s = { .key = key };

	igt_assert_eq(edu_ioctl(fd, EDU_NIC_IOCTL_MR_STATS, &s), 0);
	return s;
}

struct edu_nic_dev_stats edu_dev_stats(int fd)
{
	struct edu_nic_dev_stats s = { 0 };

	igt_assert_eq(edu_ioctl(fd, EDU_NIC_IOCTL_DEV_STATS, &s), 0);
	return s;
}

void *edu_anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	igt_assert(p != MAP_FAILED);
	return p;
}

uint64_t edu_csum(const void *buf, size_t len)
{
	const uint8_t *b = buf;
	uint64_t h = 1469598103934665603ull;	/* FNV-1a */
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}
