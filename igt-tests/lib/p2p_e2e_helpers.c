// SPDX-License-Identifier: MIT
/*
 * What p2p_e2e's subtests share, declared in p2p_e2e_helpers.h.
 */
#include "p2p_e2e_helpers.h"

uint64_t vram_bar_phys(int card)
{
	uint64_t start, end;
	char dev[64];

	snprintf(dev, sizeof(dev), "/sys/class/drm/card%d/device", card);
	igt_assert(pci_bar_range(dev, 2, &start, &end));
	return start;
}

void check_dma_read(int fd, uint32_t key, uint32_t mode, const char *want,
		    uint64_t off, uint64_t len)
{
	char *buf = malloc(len);

	igt_assert(buf);
	memset(buf, 0xee, len);
	edu_dma(fd, key, EDU_NIC_DMA_FROM_MR, mode, off, len, buf);
	igt_assert_f(!memcmp(buf, want, len),
		     "mode %u: DMA read of [%#lx, +%#lx) differs (first byte %#x want %#x)\n",
		     mode, (unsigned long)off, (unsigned long)len,
		     (uint8_t)buf[0], (uint8_t)want[0]);
	free(buf);
}

void *stream_thread(void *arg)
{
	struct stream *s = arg;
	char *buf = malloc(s->len);

	while (!s->stop) {
		int ret = edu_dma_err(s->fd, s->key, EDU_NIC_DMA_FROM_MR,
				      EDU_NIC_MODE_DEVICE, 0, s->len, buf);

		if (ret) {
			s->err = ret;
			break;
		}
		if (memcmp(buf, s->want, s->len))
			s->bad++;
		s->iterations++;
	}
	free(buf);
	return NULL;
}

int edu_dma_debug_entries(void)
{
	char bdf[32], line[512];
	size_t len;
	FILE *f;
	int n = 0;

	edu_bdf(bdf, sizeof(bdf));
	len = strlen(bdf);
	f = fopen("/sys/kernel/debug/dma-api/dump", "r");
	/* qemu/kernel.config sets CONFIG_DMA_API_DEBUG */
	igt_assert_f(f, "no DMA-API debugging: %s\n", strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, bdf, len) && line[len] == ' ')
			n++;
	fclose(f);
	return n;
}

void *held_read(void *arg)
{
	struct held_read *r = arg;

	r->ret = edu_dma_err(r->fd, r->key, EDU_NIC_DMA_FROM_MR,
			     EDU_NIC_MODE_DEVICE, 0, r->len, r->buf);
	return NULL;
}

long edu_dma_waiting(const void *unused)
{
	char path[256];

	edu_debugfs_path(path, sizeof(path), "stats");
	return edu_read_value(path, "dma_waiting");
}

uint64_t edu_mr_dma_addr0(uint32_t key)
{
	char path[128], line[256], head[32];
	uint64_t addr = 0;
	bool in = false;
	FILE *f;

	edu_debugfs_path(path, sizeof(path), "mrs");
	snprintf(head, sizeof(head), "mr %u ", key);
	f = fopen(path, "r");
	igt_assert(f);
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "mr ", 3))
			in = !strncmp(line, head, strlen(head));
		else if (in && sscanf(line, " dma_addr0 %" SCNx64, &addr) == 1)
			break;
	}
	fclose(f);
	return addr;
}

int kmsg_iommu_faults(uint64_t addr)
{
	char rec[2048], dmar[48], amd[48];
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	ssize_t n;
	int hits = 0;

	igt_assert(fd >= 0);
	snprintf(dmar, sizeof(dmar), "fault addr %#" PRIx64 " ", addr);
	snprintf(amd, sizeof(amd), "address=%#" PRIx64 " ", addr);
	for (;;) {
		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)	/* overwritten: read on */
			continue;
		if (n <= 0)
			break;
		rec[n] = 0;
		if (strstr(rec, dmar) || strstr(rec, amd))
			hits++;
	}
	close(fd);
	return hits;
}

uint64_t edu_iova_pages_into(uint64_t phys, uint64_t len)
{
	uint64_t pages = 0, iova, n, p, lo, hi;
	char path[128];
	FILE *f;

	edu_debugfs_path(path, sizeof(path), "iovas");
	f = fopen(path, "r");
	igt_assert(f);
	while (fscanf(f, "%" SCNx64 " %" SCNx64 " %" SCNx64, &iova, &n,
		      &p) == 3) {
		lo = p > phys ? p : phys;
		hi = p + n < phys + len ? p + n : phys + len;
		if (lo < hi)
			pages += (hi - lo) / EDU_PAGE;
	}
	fclose(f);
	return pages;
}

int raw_read(int fd, uint64_t addr, char *buf, uint64_t len)
{
	struct edu_nic_dma_raw r = {
		.bus_addr = addr, .length = len, .user_ptr = (uintptr_t)buf,
	};

	memset(buf, 0xee, len);
	return edu_ioctl(fd, EDU_NIC_IOCTL_DMA_RAW, &r);
}

bool cmdline_has(const char *word)
{
	char line[4096], *tok, *save;
	FILE *f = fopen("/proc/cmdline", "r");
	bool found = false;

	igt_assert(f);
	if (fgets(line, sizeof(line), f))
		for (tok = strtok_r(line, " \n", &save); tok && !found;
		     tok = strtok_r(NULL, " \n", &save))
			found = !strcmp(tok, word);
	fclose(f);
	return found;
}

long swiotlb_used(const void *unused)
{
	return edu_read_int("/sys/kernel/debug/swiotlb/io_tlb_used");
}

long path_exists(const void *path)
{
	return !access(path, F_OK);
}
