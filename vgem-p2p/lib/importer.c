// SPDX-License-Identifier: MIT
/*
 * The importer: edu_nic character devices, memory registrations and DMA.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vgem_p2p.h"
#include "vp2p_internal.h"

/*
 * As drmIoctl() does for DRM: a signal that interrupts a DMA must not fail
 * it. edu_nic returns -EINTR only for fatal signals, and then the process
 * is going away anyway.
 */
static int edu_ioctl(int fd, unsigned long request, void *arg)
{
	int ret;

	if (fd < 0)
		return -EBADF;
	do {
		ret = ioctl(fd, request, arg);
	} while (ret == -1 && (errno == EINTR || errno == EAGAIN));
	return ret == -1 ? -errno : 0;
}

static void importer_node(int index, char *buf, size_t len)
{
	snprintf(buf, len, "/dev/" VP2P_IMPORTER_NAME "%d", index);
}

int vp2p_importer_count(void)
{
	struct stat st;
	char path[32];
	int n;

	for (n = 0; n < VP2P_MAX_DEVICES; n++) {
		importer_node(n, path, sizeof(path));
		if (stat(path, &st) || !S_ISCHR(st.st_mode))
			break;
	}
	return n;
}

int vp2p_importer_open(int index)
{
	char path[32];
	int fd;

	if (index < 0 || index >= VP2P_MAX_DEVICES)
		return -EINVAL;
	importer_node(index, path, sizeof(path));
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ENODEV : -errno;
	return fd;
}

int vp2p_importer_pci(int index, char *buf, size_t len)
{
	char link[64];

	if (index < 0 || index >= VP2P_MAX_DEVICES || !buf ||
	    len < VP2P_PCI_NAME_LEN)
		return -EINVAL;
	/* misc devices are class devices whose "device" is the edu function */
	snprintf(link, sizeof(link), "/sys/class/misc/" VP2P_IMPORTER_NAME
		 "%d/device", index);
	return vp2p_read_link_pci(link, buf, len);
}

int vp2p_mr_register(int fd, void *addr, uint64_t length, uint32_t access,
		     uint32_t flags, uint32_t *key)
{
	struct edu_nic_reg_mr r = { 0 };
	long page = sysconf(_SC_PAGESIZE);
	int ret;

	if (!addr || !key || !length || length > EDU_NIC_MR_MAX_LENGTH ||
	    ((uintptr_t)addr & (page - 1)) || (length & (page - 1)) ||
	    (uintptr_t)addr + length < (uintptr_t)addr ||
	    !access || (access & ~EDU_NIC_ACCESS_MASK) ||
	    (flags & ~EDU_NIC_REG_MR_FLAGS))
		return -EINVAL;
	r.addr = (uintptr_t)addr;
	r.length = length;
	r.access = access;
	r.flags = flags;
	ret = edu_ioctl(fd, EDU_NIC_IOCTL_REG_MR, &r);
	if (ret)
		return ret;
	*key = r.key;
	return 0;
}

int vp2p_mr_register_dmabuf(int fd, int dmabuf_fd, uint64_t offset,
			    uint64_t length, uint32_t access, uint32_t flags,
			    uint32_t *key)
{
	struct edu_nic_reg_dmabuf r = { 0 };
	long page = sysconf(_SC_PAGESIZE);
	int ret;

	if (!key || !length || length > EDU_NIC_MR_MAX_LENGTH ||
	    (offset & (page - 1)) || (length & (page - 1)) ||
	    offset + length < offset || !access ||
	    (access & ~EDU_NIC_ACCESS_MASK) || flags)
		return -EINVAL;
	if (dmabuf_fd < 0)
		return -EBADF;
	r.fd = dmabuf_fd;
	r.offset = offset;
	r.length = length;
	r.access = access;
	ret = edu_ioctl(fd, EDU_NIC_IOCTL_REG_DMABUF, &r);
	if (ret)
		return ret;
	*key = r.key;
	return 0;
}

int vp2p_mr_deregister(int fd, uint32_t key)
{
	struct edu_nic_dereg_mr d = { .key = key };

	/* keys are never 0: a 0 is an uninitialised variable, say so */
	if (!key)
		return -EINVAL;
	return edu_ioctl(fd, EDU_NIC_IOCTL_DEREG_MR, &d);
}

int vp2p_dma(int fd, uint32_t key, uint32_t direction, uint32_t mode,
	     uint64_t offset, void *buf, uint64_t length)
{
	struct edu_nic_dma d = { 0 };

	if (!key || !buf || !length || direction > EDU_NIC_DMA_TO_MR ||
	    mode > EDU_NIC_MODE_BULK || offset + length < offset ||
	    (uintptr_t)buf + length < (uintptr_t)buf)
		return -EINVAL;
	d.key = key;
	d.direction = direction;
	d.mode = mode;
	d.offset = offset;
	d.length = length;
	d.user_ptr = (uintptr_t)buf;
	return edu_ioctl(fd, EDU_NIC_IOCTL_DMA, &d);
}

int vp2p_mr_stats(int fd, uint32_t key, struct edu_nic_mr_stats *stats)
{
	struct edu_nic_mr_stats s = { .key = key };
	int ret;

	if (!key || !stats)
		return -EINVAL;
	ret = edu_ioctl(fd, EDU_NIC_IOCTL_MR_STATS, &s);
	if (ret)
		return ret;
	*stats = s;
	return 0;
}

int vp2p_importer_stats(int fd, struct edu_nic_dev_stats *stats)
{
	struct edu_nic_dev_stats s = { 0 };
	int ret;

	if (!stats)
		return -EINVAL;
	ret = edu_ioctl(fd, EDU_NIC_IOCTL_DEV_STATS, &s);
	if (ret)
		return ret;
	*stats = s;
	return 0;
}
