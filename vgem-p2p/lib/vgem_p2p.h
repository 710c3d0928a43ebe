/* SPDX-License-Identifier: MIT */
/*
 * libvgem-p2p: the user-space side of vgem-p2p (the exporting DRM driver,
 * VRAM on a PCI BAR) and edu_nic (the importing "NIC"), for compute
 * runtimes that share buffers with NICs and for test authors.
 *
 * Conventions, for every function below:
 *  - A device is an open file descriptor, as with libdrm: the library
 *    keeps no hidden state, so it is thread-safe and fork-safe as far as
 *    the drivers are.
 *  - 0 (or a non-negative count or fd) means success; failure is a
 *    negative errno, never -1 with errno set. Nothing aborts, nothing is
 *    printed; out-parameters are left untouched on failure.
 *  - Arguments the drivers would reject anyway are checked here first
 *    (-EINVAL), so that callers get the same answer with or without the
 *    modules loaded; what only the kernel can know (handles, keys, space)
 *    comes from the kernel.
 *
 * The structures returned for statistics are the drivers' own uAPI
 * structures, documented in <drm/vgem_p2p_drm.h> and <linux/edu_nic.h>:
 * they are append-only ABI already, so wrapping them would only add a copy.
 */
#ifndef VGEM_P2P_H
#define VGEM_P2P_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <drm/vgem_p2p_drm.h>
#include <linux/edu_nic.h>

#if defined(__cplusplus)
extern "C" {
#endif

#define VP2P_DRIVER_NAME	"vgem_p2p"
#define VP2P_IMPORTER_NAME	"edu_nic"

/* Upper bound on devices the enumeration functions look at. */
#define VP2P_MAX_DEVICES	16

/**
 * vp2p_version() - the library's version string, "MAJOR.MINOR.PATCH"
 */
const char *vp2p_version(void);

/* ---------------------------------------------------------------------
 * Exporter: the vgem_p2p DRM device
 */

/**
 * vp2p_exporter_count() - number of vgem_p2p DRM devices
 *
 * Found with drmGetDevices2() and the driver each node's device is bound
 * to in sysfs, never by a fixed minor (a machine with another GPU numbers
 * its cards differently), and without opening other drivers' nodes.
 *
 * Return: the count (0 when the module is not loaded), or -errno.
 */
int vp2p_exporter_count(void);

/**
 * vp2p_exporter_open() - open the @index-th vgem_p2p device
 * @index: 0 for the first, in drmGetDevices2() order (PCI bus order).
 *
 * Opens the render node (the primary node where there is none), O_RDWR |
 * O_CLOEXEC: every call of this library works on it. The caller closes it.
 *
 * Return: the file descriptor, -EINVAL for a negative @index, -ENODEV
 * when there is no such device, or the -errno of open().
 */
int vp2p_exporter_open(int index);

/**
 * vp2p_exporter_check() - is @fd a vgem_p2p device?
 * @fd: an open file descriptor.
 *
 * Return: 0 if it is, -ENODEV if it is another DRM driver or not DRM at
 * all, -EBADF for a bad descriptor.
 */
int vp2p_exporter_check(int fd);

/**
 * vp2p_exporter_pci() - PCI address of the device behind @fd
 * @fd: a vgem_p2p device.
 * @buf: receives "DDDD:BB:DD.F".
 * @len: size of @buf, at least 13.
 *
 * Return: 0, -EINVAL for a short buffer, -ENODEV if not a PCI device.
 */
int vp2p_exporter_pci(int fd, char *buf, size_t len);

/**
 * struct vp2p_bo - a buffer object of the calling file
 * @handle: GEM handle, valid for the fd that created or imported it.
 * @size: size in bytes, page-rounded by the kernel.
 * @flags: VGEM_P2P_CREATE_* flags it was created with.
 */
struct vp2p_bo {
	uint32_t handle;
	uint64_t size;
	uint32_t flags;
};

/**
 * vp2p_bo_create() - allocate an object
 * @fd: a vgem_p2p device.
 * @size: bytes, non-zero; rounded up to the page size.
 * @flags: VGEM_P2P_CREATE_* (placement and export flags).
 * @bo: receives the object.
 *
 * A VRAM object may compact VRAM or evict others to find room.
 *
 * Return: 0, -EINVAL for a zero size or unknown flags, -ENOSPC when VRAM
 * cannot hold it, or another -errno from the kernel.
 */
int vp2p_bo_create(int fd, uint64_t size, uint32_t flags, struct vp2p_bo *bo);

/**
 * vp2p_bo_close() - release the handle of @bo
 * @fd: the device the handle belongs to.
 * @bo: the object; its handle is stale after this call.
 *
 * The object lives on while mmaps, PRIME fds or importer mappings hold it.
 *
 * Return: 0, -EINVAL for a NULL @bo or handle 0, or -errno (-EINVAL from
 * the kernel for a handle that is not open).
 */
int vp2p_bo_close(int fd, struct vp2p_bo *bo);

/**
 * vp2p_bo_mmap() - map @bo into the caller's address space
 * @fd: the device.
 * @bo: the object.
 * @prot: PROT_READ and/or PROT_WRITE.
 * @ptr: receives the address of a MAP_SHARED mapping of @bo->size bytes.
 *
 * The offset comes from DRM_IOCTL_VGEM_P2P_MMAP_OFFSET, which render nodes
 * may call (DRM_IOCTL_MODE_MAP_DUMB they may not). The mapping is the
 * special vma importers map p2p; unmap it with vp2p_bo_munmap(). For a
 * VGEM_P2P_CREATE_DEVICE_ONLY object the mapping exists but a CPU access
 * gets SIGBUS: register it with an importer instead.
 *
 * Return: 0, -EINVAL for bad arguments, -ENOENT for a stale handle, or
 * the -errno of mmap().
 */
int vp2p_bo_mmap(int fd, const struct vp2p_bo *bo, int prot, void **ptr);

/**
 * vp2p_bo_munmap() - undo vp2p_bo_mmap()
 * @bo: the object that was mapped.
 * @ptr: the address vp2p_bo_mmap() returned.
 *
 * Return: 0, -EINVAL for bad arguments.
 */
int vp2p_bo_munmap(const struct vp2p_bo *bo, void *ptr);

/**
 * vp2p_bo_export() - export @bo as a PRIME (dma-buf) fd
 * @fd: the device.
 * @bo: the object.
 * @prime_fd: receives the dma-buf fd, O_CLOEXEC | O_RDWR.
 *
 * Return: 0, -EINVAL for bad arguments, or -errno from the kernel.
 */
int vp2p_bo_export(int fd, const struct vp2p_bo *bo, int *prime_fd);

/**
 * vp2p_bo_import() - import a PRIME fd as an object of @fd
 * @fd: the device.
 * @prime_fd: a dma-buf fd.
 * @bo: receives the object; @bo->flags reads back from the kernel.
 *
 * Return: 0, -EINVAL for bad arguments, or -errno from the kernel.
 */
int vp2p_bo_import(int fd, int prime_fd, struct vp2p_bo *bo);

/**
 * vp2p_bo_info() - placement, offset and importer mappings of @bo
 * @fd: the device.
 * @bo: the object.
 * @info: receives the kernel's struct drm_vgem_p2p_obj_info.
 *
 * Return: 0, -EINVAL for bad arguments, -ENOENT for a stale handle.
 */
int vp2p_bo_info(int fd, const struct vp2p_bo *bo,
		 struct drm_vgem_p2p_obj_info *info);

/**
 * vp2p_bo_move() - force a move, invalidating every mapping of @bo
 * @fd: the device.
 * @bo: the object.
 * @target: VGEM_P2P_MOVE_VRAM, VGEM_P2P_MOVE_VRAM_AT or VGEM_P2P_MOVE_SYSTEM.
 * @offset: in: the page-aligned VRAM offset for VGEM_P2P_MOVE_VRAM_AT,
 *	ignored otherwise (may be NULL then). out, if not NULL: the offset
 *	after the move, ~0 in system memory.
 *
 * CPU and importer mappings are torn down before the copy; importers
 * re-fault and get the new addresses. The old VRAM is poisoned with
 * VGEM_P2P_POISON_BYTE.
 *
 * Return: 0, -EINVAL for bad arguments or a misaligned offset, -EBUSY
 * when the target range is taken, -ENOSPC when VRAM is full.
 */
int vp2p_bo_move(int fd, const struct vp2p_bo *bo, uint32_t target,
		 uint64_t *offset);

/**
 * vp2p_bo_evict() - move @bo to system memory
 * @fd: the device.
 * @bo: the object.
 *
 * The same as vp2p_bo_move() to VGEM_P2P_MOVE_SYSTEM. The object comes
 * back to VRAM when an importer next maps it p2p, if there is room.
 *
 * Return: 0 or -errno as vp2p_bo_move().
 */
int vp2p_bo_evict(int fd, const struct vp2p_bo *bo);

/**
 * vp2p_migrate() - migrate anonymous memory to or from device memory
 * @fd: the device.
 * @addr: page-aligned start of private anonymous memory of the caller.
 * @size: page-aligned, non-zero length.
 * @direction: VGEM_P2P_MIGRATE_TO_DEVICE or VGEM_P2P_MIGRATE_TO_RAM.
 * @npages: if not NULL, receives the pages actually migrated (pages not
 *	yet faulted in, or already in place, are skipped).
 *
 * Pages in device-private memory are mapped p2p by importers with no
 * migration; a CPU touch migrates them back (migrate_to_ram).
 *
 * Return: 0, -EINVAL for bad arguments, -ENOMEM when device-private
 * memory ran out (what fitted was migrated), or -errno from the kernel.
 */
int vp2p_migrate(int fd, void *addr, uint64_t size, uint32_t direction,
		 uint64_t *npages);

/**
 * vp2p_exporter_stats() - the device's counters
 * @fd: the device.
 * @stats: receives struct drm_vgem_p2p_stats.
 *
 * Return: 0, -EINVAL for a NULL @stats, or -errno from the kernel.
 */
int vp2p_exporter_stats(int fd, struct drm_vgem_p2p_stats *stats);

/* ---------------------------------------------------------------------
 * Importer: the edu_nic character devices, /dev/edu_nicN
 */

/**
 * vp2p_importer_count() - number of edu_nic devices
 *
 * Return: how many of /dev/edu_nic0, 1, ... exist, counting up to the
 * first gap (0 when the module is not loaded).
 */
int vp2p_importer_count(void);

/**
 * vp2p_importer_open() - open /dev/edu_nic@index
 * @index: 0 for the first.
 *
 * Registrations belong to the returned file and to the calling process's
 * address space: a child after fork() gets -EACCES using it.
 *
 * Return: the file descriptor, -EINVAL for a negative @index, -ENODEV when
 * there is no such device, or the -errno of open().
 */
int vp2p_importer_open(int index);

/**
 * vp2p_importer_pci() - PCI address of /dev/edu_nic@index
 * @index: the importer.
 * @buf: receives "DDDD:BB:DD.F".
 * @len: size of @buf, at least 13.
 *
 * Return: 0, -EINVAL for bad arguments, -ENODEV when there is no such device.
 */
int vp2p_importer_pci(int index, char *buf, size_t len);

/**
 * vp2p_mr_register() - register a range of the caller's memory
 * @fd: an importer.
 * @addr: page-aligned start; the range may be a vgem-p2p mmap, anonymous
 *	memory (possibly migrated to device-private memory), or file memory.
 * @length: page-aligned, non-zero, at most EDU_NIC_MR_MAX_LENGTH.
 * @access: non-empty set of EDU_NIC_ACCESS_READ and EDU_NIC_ACCESS_WRITE.
 * @flags: EDU_NIC_REG_MR_PREFETCH (mirror now, so that errors show
 *	here rather than at the first DMA) and/or EDU_NIC_REG_MR_NO_P2P
 *	(mirror as an importer without p2p support would, for comparisons).
 * @key: receives the registration's key, never 0.
 *
 * Return: 0, -EINVAL for bad arguments, -EFAULT for a hole in the range,
 * -EPERM for write access to a read-only mapping, -ENODEV once the device
 * is unbound, or -errno.
 */
int vp2p_mr_register(int fd, void *addr, uint64_t length, uint32_t access,
		     uint32_t flags, uint32_t *key);

/**
 * vp2p_mr_register_dmabuf() - register a range of a dma-buf
 * @fd: an importer.
 * @dmabuf_fd: a dma-buf, e.g. from vp2p_bo_export(); the registration
 *	keeps its own reference, so it may be closed afterwards.
 * @offset: page-aligned offset of the range in the dma-buf.
 * @length: page-aligned, non-zero, at most EDU_NIC_MR_MAX_LENGTH; the
 *	range must lie inside the dma-buf.
 * @access: non-empty set of EDU_NIC_ACCESS_READ and EDU_NIC_ACCESS_WRITE.
 * @flags: must be 0.
 * @key: receives the registration's key, never 0.
 *
 * The importer attaches dynamically with peer-to-peer allowed: the
 * exporter maps its device memory when the importer reaches it, system
 * memory otherwise, and the importer follows the exporter's moves. The
 * key works with vp2p_dma(), vp2p_mr_stats() and vp2p_mr_deregister()
 * as any other.
 *
 * Return: 0, -EINVAL for bad arguments or a range outside the dma-buf,
 * -EBADF for a bad @dmabuf_fd (-EINVAL if it is not a dma-buf), the
 * exporter's error (-EPERM: write access to a read-only object), -ENODEV
 * once the device is unbound, or -errno.
 */
int vp2p_mr_register_dmabuf(int fd, int dmabuf_fd, uint64_t offset,
			    uint64_t length, uint32_t access, uint32_t flags,
			    uint32_t *key);

/**
 * vp2p_mr_deregister() - release a registration
 * @fd: the importer.
 * @key: its key; stale after the call. The device's mappings of the
 *	range are gone when this returns.
 *
 * Return: 0, -EINVAL for key 0, -ENOENT for a key not live on @fd.
 */
int vp2p_mr_deregister(int fd, uint32_t key);

/**
 * vp2p_dma() - copy between a registration and a user buffer, by the NIC
 * @fd: the importer.
 * @key: the registration.
 * @direction: EDU_NIC_DMA_FROM_MR (the device reads the region into @buf)
 *	or EDU_NIC_DMA_TO_MR (it writes @buf into the region).
 * @mode: EDU_NIC_MODE_DEVICE (real edu DMA, about 0.2 s per page) or
 *	EDU_NIC_MODE_BULK (emulated through the same bus addresses).
 * @offset: byte offset into the region.
 * @buf: the user buffer.
 * @length: bytes, non-zero.
 *
 * Invalidated pages are re-faulted first. On failure part of the copy may
 * have happened. Interrupted by a signal the kernel restarts nothing: the
 * call is retried here, as drmIoctl() does, unless the signal is fatal.
 *
 * Return: 0, -EINVAL for bad arguments or a range past the region,
 * -ENOENT for a stale key, -EPERM for a direction the registration or the
 * exporter forbids, -EFAULT when the range is no longer mapped, -EIO for
 * a device error, -ENODEV once the device is unbound (deregistration and
 * statistics keep working until the file is closed).
 */
int vp2p_dma(int fd, uint32_t key, uint32_t direction, uint32_t mode,
	     uint64_t offset, void *buf, uint64_t length);

/**
 * vp2p_mr_stats() - state and counters of one registration
 * @fd: the importer.
 * @key: the registration.
 * @stats: receives struct edu_nic_mr_stats.
 *
 * Return: 0, -EINVAL for bad arguments, -ENOENT for a stale key.
 */
int vp2p_mr_stats(int fd, uint32_t key, struct edu_nic_mr_stats *stats);

/**
 * vp2p_importer_stats() - the device's counters and capabilities
 * @fd: the importer.
 * @stats: receives struct edu_nic_dev_stats (caps: EDU_NIC_CAP_IOMMU).
 *
 * Return: 0, -EINVAL for a NULL @stats, or -errno from the kernel.
 */
int vp2p_importer_stats(int fd, struct edu_nic_dev_stats *stats);

/* ---------------------------------------------------------------------
 * Topology: can an exporter and an importer talk peer-to-peer?
 */

/**
 * enum vp2p_path - how an importer reaches an exporter's BAR
 * @VP2P_PATH_UNKNOWN: a device is not on PCI, or sysfs is unreadable.
 * @VP2P_PATH_SWITCH: both sit below a common PCI bridge (a switch or a
 *	root port): TLPs turn around there, p2p works.
 * @VP2P_PATH_HOST_BRIDGE: the path crosses the host bridge; p2p works only
 *	on hosts the kernel whitelists (pci_p2pdma), and @whitelisted says.
 * @VP2P_PATH_OTHER_ROOT: different PCI domains or root buses: no p2p.
 */
enum vp2p_path {
	VP2P_PATH_UNKNOWN,
	VP2P_PATH_SWITCH,
	VP2P_PATH_HOST_BRIDGE,
	VP2P_PATH_OTHER_ROOT,
};

/**
 * struct vp2p_pair - verdict for one exporter/importer pair
 * @path: enum vp2p_path.
 * @distance: PCI hops from each device up to the common upstream bridge,
 *	summed (the same measure pci_p2pdma_distance() uses); -1 unknown.
 * @bridge: PCI address of the common bridge, "" for the host bridge.
 * @whitelisted: for VP2P_PATH_HOST_BRIDGE, whether the host bridge is one
 *	the kernel allows p2p through (AMD Zen, or a listed Intel root).
 * @iommu: the importer's DMA is translated by an IOMMU: it gets IOVAs.
 * @p2p: the conclusion: the exporter will hand out p2p addresses rather
 *	than fall back to system memory (for objects that allow p2p).
 */
struct vp2p_pair {
	enum vp2p_path path;
	int distance;
	char bridge[16];
	bool whitelisted;
	bool iommu;
	bool p2p;
};

/**
 * vp2p_pci_path() - the sysfs device path of a PCI device
 * @pci: "DDDD:BB:DD.F".
 * @buf: receives e.g. "/sys/devices/pci0000:00/0000:00:02.0/0000:01:00.0".
 * @len: size of @buf.
 *
 * Return: 0, -EINVAL for bad arguments, -ENOENT for an unknown device,
 * -ENAMETOOLONG when @buf is too short.
 */
int vp2p_pci_path(const char *pci, char *buf, size_t len);

/**
 * vp2p_pair_check() - derive p2p reachability from sysfs
 * @exporter_pci: the exporter's PCI address.
 * @importer_pci: the importer's PCI address.
 * @pair: receives the verdict.
 *
 * This reads the same facts the kernel's pci_p2pdma_distance() reads, to
 * explain the verdict (the path, the distance, the bridge) without any
 * device; the verdict itself is the kernel's: vp2p_exporter_peer(). It
 * does not look at ACS redirection.
 *
 * Return: 0, -EINVAL for bad arguments, -ENOENT for an unknown device.
 */
int vp2p_pair_check(const char *exporter_pci, const char *importer_pci,
		    struct vp2p_pair *pair);

/**
 * struct vp2p_peer - the kernel's verdict on one importer, for one exporter
 * @reachable: pci_p2pdma_map_type() on the exporter's BAR: the importer
 *	can reach the exporter's memory peer-to-peer.
 * @path: VGEM_P2P_PEER_*: what a peer-to-peer mapping of VRAM for the
 *	importer gets now: bus addresses, a dma_map_resource() mapping
 *	(IOVAs behind an IOMMU), or none (system memory, the fallback).
 */
struct vp2p_peer {
	bool reachable;
	uint32_t path;
};

/**
 * vp2p_exporter_peer() - ask the exporter's driver about an importer
 * @fd: an exporter, from vp2p_exporter_open().
 * @importer_pci: the importer's PCI address, "DDDD:BB:DD.F".
 * @peer: receives the verdict.
 *
 * The kernel's answer (DRM_IOCTL_VGEM_P2P_PEER), which the exporter acts
 * on; vp2p_pair_check() explains it from sysfs.
 *
 * Return: 0, -EINVAL for bad arguments, -ENODEV for no such PCI device,
 * or another -errno from the ioctl.
 */
int vp2p_exporter_peer(int fd, const char *importer_pci,
		       struct vp2p_peer *peer);

/**
 * vp2p_path_name() - a short name for @path: "switch", "host-bridge", ...
 * @path: enum vp2p_path.
 */
const char *vp2p_path_name(enum vp2p_path path);

#if defined(__cplusplus)
}
#endif

#endif /* VGEM_P2P_H */
