// SPDX-License-Identifier: MIT
/*
 * The exporter: finding vgem_p2p DRM devices, and its buffer objects.
 * Every kernel call goes through libdrm (drmIoctl() restarts on EINTR and
 * EAGAIN), and a failure turns into -errno here and nowhere else.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xf86drm.h>

#include "vgem_p2p.h"
#include "vp2p_internal.h"

const char *vp2p_version(void)
{
	return VP2P_VERSION;
}

/* drmIoctl() returns -1 with errno: the API returns -errno instead. */
static int vp2p_ioctl(int fd, unsigned long request, void *arg)
{
	if (fd < 0)
		return -EBADF;
	if (drmIoctl(fd, request, arg))
		return errno ? -errno : -EIO;
	return 0;
}

/* Is the open DRM file @fd driven by vgem_p2p? */
static bool is_vgem_p2p(int fd)
{
	drmVersionPtr v = drmGetVersion(fd);
	bool ret;

	if (!v)
		return false;
	ret = v->name && !strcmp(v->name, VP2P_DRIVER_NAME);
	drmFreeVersion(v);
	return ret;
}

/*
 * Is the DRM node @node (a /dev/dri path) driven by vgem_p2p? Read from
 * sysfs, so that no other driver's device is opened to find out: the
 * node's device is bound to the PCI driver of the same name.
 */
static bool node_is_vgem_p2p(const char *node)
{
	char link[PATH_MAX], target[PATH_MAX];
	const char *base = strrchr(node, '/');
	ssize_t n;

	snprintf(link, sizeof(link), "/sys/class/drm/%s/device/driver",
		 base ? base + 1 : node);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = '\0';
	base = strrchr(target, '/');
	return !strcmp(base ? base + 1 : target, VP2P_DRIVER_NAME);
}

/*
 * Walks the DRM devices in drmGetDevices2() order and opens the @index-th
 * vgem_p2p one: its render node, which is all the library needs (objects,
 * their mmap offsets, statistics), or its primary node on a kernel
 * without render nodes. Devices of other drivers are never opened. With
 * @index -1, only counts. Returns an fd, a count, or -errno.
 */
static int exporter_walk(int index)
{
	drmDevicePtr devs[VP2P_MAX_DEVICES];
	int i, n, found = 0, ret = -ENODEV;

	n = drmGetDevices2(0, devs, VP2P_MAX_DEVICES);
	if (n < 0)
		/* no /dev/dri at all is "no device", not an error */
		return index < 0 ? 0 : -ENODEV;

	for (i = 0; i < n; i++) {
		int type = DRM_NODE_RENDER, fd;

		if (!(devs[i]->available_nodes & (1 << type)))
			type = DRM_NODE_PRIMARY;
		if (!(devs[i]->available_nodes & (1 << type)) ||
		    !node_is_vgem_p2p(devs[i]->nodes[type]))
			continue;
		if (found++ != index)
			continue;
		fd = open(devs[i]->nodes[type], O_RDWR | O_CLOEXEC);
		ret = fd < 0 ? -errno : fd;
		/* sysfs and the driver agree, or it is not ours after all */
		if (fd >= 0 && !is_vgem_p2p(fd)) {
			close(fd);
			ret = -ENODEV;
		}
		break;
	}
	drmFreeDevices(devs, n);
	return index < 0 ? found : ret;
}

int vp2p_exporter_count(void)
{
	return exporter_walk(-1);
}

int vp2p_exporter_open(int index)
{
	if (index < 0)
		return -EINVAL;
	return exporter_walk(index);
}

int vp2p_exporter_check(int fd)
{
	if (fd < 0 || fcntl(fd, F_GETFD) < 0)
		return -EBADF;
	return is_vgem_p2p(fd) ? 0 : -ENODEV;
}

int vp2p_exporter_pci(int fd, char *buf, size_t len)
{
	drmDevicePtr dev;
	int ret;

	if (!buf || len < VP2P_PCI_NAME_LEN)
		return -EINVAL;
	ret = vp2p_exporter_check(fd);
	if (ret)
		return ret;
	ret = drmGetDevice2(fd, 0, &dev);
	if (ret)
		return ret < 0 ? ret : -ENODEV;
	if (dev->bustype != DRM_BUS_PCI) {
		ret = -ENODEV;
		goto out;
	}
	snprintf(buf, len, "%04x:%02x:%02x.%x", dev->businfo.pci->domain,
		 dev->businfo.pci->bus, dev->businfo.pci->dev,
		 dev->businfo.pci->func);
out:
	drmFreeDevice(&dev);
	return ret;
}

int vp2p_bo_create(int fd, uint64_t size, uint32_t flags, struct vp2p_bo *bo)
{
	struct drm_vgem_p2p_create c = { .size = size, .flags = flags };
	int ret;

	if (!bo || !size || (flags & ~VGEM_P2P_CREATE_FLAGS))
		return -EINVAL;
	ret = vp2p_ioctl(fd, DRM_IOCTL_VGEM_P2P_CREATE, &c);
	if (ret)
		return ret;
	bo->handle = c.handle;
	bo->size = c.size;
	bo->flags = flags;
	return 0;
}

int vp2p_bo_close(int fd, struct vp2p_bo *bo)
{
	struct drm_gem_close c = { 0 };

	if (!bo || !bo->handle)
		return -EINVAL;
	c.handle = bo->handle;
	return vp2p_ioctl(fd, DRM_IOCTL_GEM_CLOSE, &c);
}

int vp2p_bo_mmap(int fd, const struct vp2p_bo *bo, int prot, void **ptr)
{
	struct drm_vgem_p2p_mmap_offset m = { 0 };
	void *p;
	int ret;

	if (!bo || !bo->handle || !bo->size || !ptr ||
	    (prot & ~(PROT_READ | PROT_WRITE)))
		return -EINVAL;
	m.handle = bo->handle;
	/* not MODE_MAP_DUMB, which render nodes may not call */
	ret = vp2p_ioctl(fd, DRM_IOCTL_VGEM_P2P_MMAP_OFFSET, &m);
	if (ret)
		return ret;
	p = mmap(NULL, bo->size, prot, MAP_SHARED, fd, m.offset);
	if (p == MAP_FAILED)
		return -errno;
	*ptr = p;
	return 0;
}

int vp2p_bo_munmap(const struct vp2p_bo *bo, void *ptr)
{
	if (!bo || !bo->size || !ptr)
		return -EINVAL;
	return munmap(ptr, bo->size) ? -errno : 0;
}

int vp2p_bo_export(int fd, const struct vp2p_bo *bo, int *prime_fd)
{
	int ret, out;

	if (!bo || !bo->handle || !prime_fd)
		return -EINVAL;
	if (fd < 0)
		return -EBADF;
	/* drmPrimeHandleToFD() returns the ioctl's -1; errno says why */
	ret = drmPrimeHandleToFD(fd, bo->handle, DRM_CLOEXEC | DRM_RDWR, &out);
	if (ret)
		return errno ? -errno : -EIO;
	*prime_fd = out;
	return 0;
}

int vp2p_bo_import(int fd, int prime_fd, struct vp2p_bo *bo)
{
	struct drm_vgem_p2p_obj_info info = { 0 };
	struct drm_gem_close c = { 0 };
	uint32_t handle;
	int ret;

	if (!bo || prime_fd < 0)
		return -EINVAL;
	if (fd < 0)
		return -EBADF;
	if (drmPrimeFDToHandle(fd, prime_fd, &handle))
		return errno ? -errno : -EIO;

	/* size and flags are the object's, not the caller's guess */
	info.handle = handle;
	ret = vp2p_ioctl(fd, DRM_IOCTL_VGEM_P2P_OBJ_INFO, &info);
	if (ret)
		goto err_close;
	bo->handle = handle;
	bo->size = info.size;
	bo->flags = info.flags;
	return 0;

err_close:
	c.handle = handle;
	drmIoctl(fd, DRM_IOCTL_GEM_CLOSE, &c);
	return ret;
}

int vp2p_bo_info(int fd, const struct vp2p_bo *bo,
		 struct drm_vgem_p2p_obj_info *info)
{
	struct drm_vgem_p2p_obj_info i = { 0 };
	int ret;

	if (!bo || !bo->handle || !info)
		return -EINVAL;
	i.handle = bo->handle;
	ret = vp2p_ioctl(fd, DRM_IOCTL_VGEM_P2P_OBJ_INFO, &i);
	if (ret)
		return ret;
	*info = i;
	return 0;
}

int vp2p_bo_move(int fd, const struct vp2p_bo *bo, uint32_t target,
		 uint64_t *offset)
{
	struct drm_vgem_p2p_move m = { 0 };
	long page = sysconf(_SC_PAGESIZE);
	int ret;

	if (!bo || !bo->handle || target > VGEM_P2P_MOVE_SYSTEM)
		return -EINVAL;
	if (target == VGEM_P2P_MOVE_VRAM_AT) {
		if (!offset || (*offset & (page - 1)))
			return -EINVAL;
		m.offset = *offset;
	}
	m.handle = bo->handle;
	m.target = target;
	ret = vp2p_ioctl(fd, DRM_IOCTL_VGEM_P2P_MOVE, &m);
	if (ret)
		return ret;
	if (offset)
		*offset = m.offset;
	return 0;
}

int vp2p_bo_evict(int fd, const struct vp2p_bo *bo)
{
	return vp2p_bo_move(fd, bo, VGEM_P2P_MOVE_SYSTEM, NULL);
}

int vp2p_migrate(int fd, void *addr, uint64_t size, uint32_t direction,
		 uint64_t *npages)
{
	struct drm_vgem_p2p_migrate m = { 0 };
	long page = sysconf(_SC_PAGESIZE);
	int ret;

	if (!addr || !size || ((uintptr_t)addr & (page - 1)) ||
	    (size & (page - 1)) || direction > VGEM_P2P_MIGRATE_TO_RAM ||
	    (uintptr_t)addr + size < (uintptr_t)addr)
		return -EINVAL;
	m.addr = (uintptr_t)addr;
	m.size = size;
	m.direction = direction;
	ret = vp2p_ioctl(fd, DRM_IOCTL_VGEM_P2P_MIGRATE, &m);
	/*
	 * drm_ioctl() copies the arguments back even on failure, so on
	 * -ENOMEM npages says how much fitted: worth passing on.
	 */
	if (npages && (!ret || ret == -ENOMEM))
		*npages = m.npages;
	return ret;
}

int vp2p_exporter_stats(int fd, struct drm_vgem_p2p_stats *stats)
{
	struct drm_vgem_p2p_stats s = { 0 };
	int ret;

	if (!stats)
		return -EINVAL;
	ret = vp2p_ioctl(fd, DRM_IOCTL_VGEM_P2P_STATS, &s);
	if (ret)
		return ret;
	*stats = s;
	return 0;
}

int vp2p_exporter_peer(int fd, const char *importer_pci,
		       struct vp2p_peer *peer)
{
	struct drm_vgem_p2p_peer q = { 0 };
	unsigned int domain, bus, dev, fn;
	char end;
	int ret;

	if (!importer_pci || !peer ||
	    sscanf(importer_pci, "%4x:%2x:%2x.%1x%c", &domain, &bus, &dev,
		   &fn, &end) != 4 || dev > 31 || fn > 7)
		return -EINVAL;
	q.domain = domain;
	q.bus = bus;
	q.devfn = dev << 3 | fn;
	ret = vp2p_ioctl(fd, DRM_IOCTL_VGEM_P2P_PEER, &q);
	if (ret)
		return ret;
	peer->reachable = q.reachable;
	peer->path = q.path;
	return 0;
}
