/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/**
 * DOC: vgem-p2p uAPI
 *
 * vgem-p2p is a vgem-derived DRM driver (DRIVER_GEM | DRIVER_RENDER, no
 * modesetting) bound to QEMU's ivshmem-plain (1af4:1110). BAR 2 is its
 * memory: the first three quarters are VRAM for GEM objects, the last
 * quarter device-private memory (HMM) for %DRM_IOCTL_VGEM_P2P_MIGRATE. It
 * exports that memory to peer devices through vm_operations_struct.p2p_lookup
 * and dev_pagemap_ops.p2p_allow. One DRM device per bound PCI device:
 * /dev/dri/cardN and /dev/dri/renderD(128+N); find it by the name
 * DRM_IOCTL_VERSION gives, "vgem_p2p".
 *
 * The uAPI is vgem's (dumb buffers, PRIME, %DRM_IOCTL_VGEM_FENCE_ATTACH and
 * %DRM_IOCTL_VGEM_FENCE_SIGNAL with the same numbers, structs and errors:
 * vgem_p2p_fence.c is vgem_fence.c renamed) plus the ioctls below. mmap
 * offsets come from DRM_IOCTL_MODE_MAP_DUMB on the card node, or from
 * %DRM_IOCTL_VGEM_P2P_MMAP_OFFSET, which render nodes may call.
 *
 * Rules common to every ioctl: fields named pad must be zero, and any
 * flag or enum value not defined here gets -EINVAL. A handle that does
 * not name a GEM object of the caller's DRM file gets -ENOENT. A bad
 * pointer to the ioctl's struct gets -EFAULT, and any ioctl that
 * allocates may get -ENOMEM. Once the device is unplugged every ioctl,
 * and mmap, gets -ENODEV. The DRM core copies the struct back for every
 * DRM_IOWR ioctl even when the handler fails; where an output field means
 * something after a failure, its description says so. docs/uapi.md has
 * the errors of the DRM core and the VFS, which every ioctl may return.
 */

/**
 * DOC: vgem-p2p ioctls
 *
 * Driver ioctls, DRM_COMMAND_BASE + the DRM_VGEM_* number. All are
 * allowed on the render node and need no authentication.
 *
 * - %DRM_IOCTL_VGEM_FENCE_ATTACH (%DRM_VGEM_FENCE_ATTACH, 0x1):
 *   &struct drm_vgem_fence_attach, vgem's.
 * - %DRM_IOCTL_VGEM_FENCE_SIGNAL (%DRM_VGEM_FENCE_SIGNAL, 0x2):
 *   &struct drm_vgem_fence_signal, vgem's.
 * - %DRM_IOCTL_VGEM_P2P_CREATE (%DRM_VGEM_P2P_CREATE, 0x3):
 *   &struct drm_vgem_p2p_create, a new object in VRAM or system memory.
 * - %DRM_IOCTL_VGEM_P2P_MOVE (%DRM_VGEM_P2P_MOVE, 0x4):
 *   &struct drm_vgem_p2p_move, a forced move.
 * - %DRM_IOCTL_VGEM_P2P_OBJ_INFO (%DRM_VGEM_P2P_OBJ_INFO, 0x5):
 *   &struct drm_vgem_p2p_obj_info, where an object is and why.
 * - %DRM_IOCTL_VGEM_P2P_MIGRATE (%DRM_VGEM_P2P_MIGRATE, 0x6):
 *   &struct drm_vgem_p2p_migrate, anonymous memory to and from
 *   device-private memory.
 * - %DRM_IOCTL_VGEM_P2P_STATS (%DRM_VGEM_P2P_STATS, 0x7):
 *   &struct drm_vgem_p2p_stats, the device's counters.
 * - %DRM_IOCTL_VGEM_P2P_MMAP_OFFSET (%DRM_VGEM_P2P_MMAP_OFFSET, 0x8):
 *   &struct drm_vgem_p2p_mmap_offset, DRM_IOCTL_MODE_MAP_DUMB for render
 *   nodes.
 * - %DRM_IOCTL_VGEM_P2P_PEER (%DRM_VGEM_P2P_PEER, 0x9):
 *   &struct drm_vgem_p2p_peer, the kernel's verdict on a peer device.
 *
 * DRM_COMMAND_BASE + 0x0, and + 0xa and up, have no handler: -EINVAL.
 */

/**
 * DOC: DRM core ioctls on vgem-p2p
 *
 * The core ioctls behave as for any render-capable GEM driver without
 * modesetting: DRM_IOCTL_GET_CAP answers DRM_CAP_PRIME with import and
 * export, and -EOPNOTSUPP for DRM_CAP_DUMB_BUFFER and the other KMS
 * capabilities, although dumb buffers work. The dumb-buffer ioctls are
 * not allowed on the render node (-EACCES).
 *
 * DRM_IOCTL_MODE_CREATE_DUMB makes a VRAM object, as
 * %DRM_IOCTL_VGEM_P2P_CREATE with flags 0 does (pitch is width *
 * DIV_ROUND_UP(bpp, 8), size pitch * height rounded up to a page; flags
 * are ignored). Where vgem would succeed, so does this: a buffer VRAM has
 * no room for (larger than VRAM, or no room after compaction and evicting
 * every unpinned object) starts in system memory, as if evicted at once,
 * and comes back to VRAM on a CPU fault or a p2p map once there is room.
 * -EINVAL: width, height or bpp zero, bpp above U32_MAX - 8, pitch or
 * size overflowing 32 bits or rounding to 0 (the core's limits); or a
 * size at most VRAM's but larger than the system's RAM (it would start in
 * VRAM, and must fit in system memory when evicted).
 *
 * DRM_IOCTL_MODE_MAP_DUMB takes any object of the caller and returns its
 * fake mmap offset, fixed for the object's life. DRM_IOCTL_MODE_DESTROY_DUMB
 * is DRM_IOCTL_GEM_CLOSE; both get -EINVAL for an unknown handle (not
 * -ENOENT). An object lives on while a CPU mapping, a dma-buf, another
 * handle or an importer's lease (struct p2p_lease) references it; its
 * memory is freed, and its VRAM poisoned, from a workqueue when the last
 * goes.
 *
 * DRM_IOCTL_PRIME_HANDLE_TO_FD (flags DRM_CLOEXEC, DRM_RDWR; other flags
 * -EINVAL, no free fd -EMFILE) returns a new fd of the object's one
 * dma-buf, whose file keeps the mode of the export that made it:
 * writable with DRM_RDWR, read-only without, whatever later exports ask.
 * DRM_IOCTL_PRIME_FD_TO_HANDLE imports only dma-bufs of this same DRM
 * device, as the original object, the same handle if the file has one
 * (-EBADF not a file, -EINVAL not a dma-buf or another device's, -ENOSPC
 * no free handle).
 *
 * A dma-buf's importers: a dynamic importer that attaches with
 * allow_peer2peer and reaches the BAR peer-to-peer (as the vma path
 * decides: a p2p route, and addresses it can use) is mapped the object's
 * VRAM (BAR bus addresses, or IOVAs from dma_map_resource() behind an
 * IOMMU) while it is there,
 * and is told of every move (dma_buf_move_notify(), under the object's
 * dma_resv) to map it again; every other importer is mapped system
 * memory, the object moving there first (-ENOMEM if it cannot).
 * Non-dynamic importers also pin it there: a pinned object is skipped by compaction and eviction, and
 * %DRM_IOCTL_VGEM_P2P_MOVE to VRAM gets -EINVAL, until the last pin goes.
 * A %VGEM_P2P_CREATE_NO_P2P object is always mapped from system memory;
 * a %VGEM_P2P_CREATE_READ_ONLY one refuses mappings other than
 * DMA_TO_DEVICE (-EPERM). mmap() of the dma-buf (MAP_SHARED, from offset
 * 0; PROT_WRITE needs a writable fd) maps the object as its DRM mmap
 * does, with the same vm_ops (importers can mirror it too), and moves
 * revoke it: DRM gives an exported dma-buf's file the device's address
 * space, which a move zaps. DMA_BUF_IOCTL_SYNC waits for the object's
 * fences and has nothing to flush (VRAM is mapped write-combined, system
 * pages are coherent).
 */

/**
 * DOC: vgem-p2p mmap
 *
 * mmap(MAP_SHARED) of the DRM file at an object's fake offset maps the
 * object: it must start at the offset and be no longer than the object
 * (-EINVAL), the file must hold a handle to it (-EACCES; a dma-buf import
 * in the same file counts). MAP_PRIVATE gets -EINVAL: pfn mappings cannot
 * be copied on write. The vma is VM_IO | VM_PFNMAP | VM_DONTEXPAND |
 * VM_DONTDUMP: get_user_pages() and what builds on it (O_DIRECT,
 * pinning RDMA registration, process_vm_readv) fail with -EFAULT,
 * mremap() cannot grow it and core dumps skip it. Its vm_ops implement
 * p2p_lookup and p2p_release: it is the range importers mirror.
 *
 * Pages are inserted at fault time: a VRAM object's BAR pages
 * write-combined, a system object's pages cached. A fault on a
 * %VGEM_P2P_CREATE_DEVICE_ONLY object, or after unbind, is SIGBUS; so is
 * one that finds no memory for a page of an object in system memory. A
 * fault on an evicted object (not %VGEM_P2P_CREATE_SYSTEM, not pinned, no
 * fallback importer leases) first moves it back to VRAM when that needs
 * at most a compaction. Moves zap the object's pages in every mapping, in
 * every process; the next access faults the new location in, contents
 * preserved. The vma holds a reference on the object: closing the handle
 * does not invalidate the mapping.
 */
#ifndef _UAPI_VGEM_P2P_DRM_H_
#define _UAPI_VGEM_P2P_DRM_H_

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

/* vgem's ioctls, unchanged (see DOC: vgem-p2p ioctls) */
#define DRM_VGEM_FENCE_ATTACH		0x1
#define DRM_VGEM_FENCE_SIGNAL		0x2
/* vgem-p2p's */
#define DRM_VGEM_P2P_CREATE		0x3
#define DRM_VGEM_P2P_MOVE		0x4
#define DRM_VGEM_P2P_OBJ_INFO		0x5
#define DRM_VGEM_P2P_MIGRATE		0x6
#define DRM_VGEM_P2P_STATS		0x7
#define DRM_VGEM_P2P_MMAP_OFFSET	0x8
#define DRM_VGEM_P2P_PEER		0x9

#ifndef DRM_IOCTL_VGEM_FENCE_ATTACH
#define DRM_IOCTL_VGEM_FENCE_ATTACH \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VGEM_FENCE_ATTACH, struct drm_vgem_fence_attach)
#define DRM_IOCTL_VGEM_FENCE_SIGNAL \
	DRM_IOW(DRM_COMMAND_BASE + DRM_VGEM_FENCE_SIGNAL, struct drm_vgem_fence_signal)
#endif
#define DRM_IOCTL_VGEM_P2P_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VGEM_P2P_CREATE, struct drm_vgem_p2p_create)
#define DRM_IOCTL_VGEM_P2P_MOVE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VGEM_P2P_MOVE, struct drm_vgem_p2p_move)
#define DRM_IOCTL_VGEM_P2P_OBJ_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VGEM_P2P_OBJ_INFO, struct drm_vgem_p2p_obj_info)
#define DRM_IOCTL_VGEM_P2P_MIGRATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VGEM_P2P_MIGRATE, struct drm_vgem_p2p_migrate)
#define DRM_IOCTL_VGEM_P2P_STATS \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VGEM_P2P_STATS, struct drm_vgem_p2p_stats)
#define DRM_IOCTL_VGEM_P2P_MMAP_OFFSET \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VGEM_P2P_MMAP_OFFSET, struct drm_vgem_p2p_mmap_offset)
#define DRM_IOCTL_VGEM_P2P_PEER \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VGEM_P2P_PEER, struct drm_vgem_p2p_peer)

#ifndef _UAPI_VGEM_DRM_H_
/**
 * struct drm_vgem_fence_attach - vgem's DRM_IOCTL_VGEM_FENCE_ATTACH
 * @handle: in: the GEM object to attach a new fence to.
 * @flags: in: 0 (a read fence, shared) or %VGEM_FENCE_WRITE (a write
 *	fence, exclusive).
 * @out_fence: out: the fence id, per DRM file and never 0, for
 *	%DRM_IOCTL_VGEM_FENCE_SIGNAL.
 * @pad: in: must be zero.
 *
 * The fence goes on the object's dma_resv, where whoever waits on the
 * object's dma-buf sees it; it does not interact with moves or importer
 * mappings. An unsignalled fence signals by itself 10 s after attachment.
 *
 * Errors: -EINVAL a flag other than %VGEM_FENCE_WRITE, or @pad non-zero;
 * -ENOENT unknown handle; -EBUSY a conflicting fence is unsignalled (a
 * write fence when attaching a read fence, any fence when attaching a
 * write fence); -ENOMEM, -ENOSPC out of memory or fence ids.
 */
struct drm_vgem_fence_attach {
	__u32 handle;
	__u32 flags;
#define VGEM_FENCE_WRITE	0x1
	__u32 out_fence;
	__u32 pad;
};

/**
 * struct drm_vgem_fence_signal - vgem's DRM_IOCTL_VGEM_FENCE_SIGNAL
 * @fence: in: a fence id from %DRM_IOCTL_VGEM_FENCE_ATTACH of the same
 *	file. Signalled, and the id consumed.
 * @flags: in: must be zero.
 *
 * Errors: -EINVAL @flags non-zero; -ENOENT no such fence id in this file,
 * or already signalled by this ioctl; -ETIMEDOUT the fence had already
 * signalled itself (the 10 s timeout); the id is consumed all the same.
 */
struct drm_vgem_fence_signal {
	__u32 fence;
	__u32 flags;
};
#endif

/**
 * DOC: poison
 *
 * %VGEM_P2P_POISON_BYTE (0x6b) fills VRAM an object moved away from, or
 * that a freed object held, so that a device still using a stale address
 * reads poison rather than old data.
 */
#define VGEM_P2P_POISON_BYTE		0x6b

/**
 * DOC: object flags
 *
 * &drm_vgem_p2p_create.flags and &drm_vgem_p2p_obj_info.flags, in any
 * combination; %VGEM_P2P_CREATE_FLAGS is the mask of them all.
 *
 * - %VGEM_P2P_CREATE_SYSTEM: placed in system memory, not VRAM; it never
 *   returns to VRAM by itself (only %DRM_IOCTL_VGEM_P2P_MOVE puts it
 *   there).
 * - %VGEM_P2P_CREATE_NO_P2P: importers never get VRAM addresses: each
 *   p2p_lookup evicts the object to system memory and reports its pages
 *   (the fallback), and its dma-buf is always mapped from system memory.
 * - %VGEM_P2P_CREATE_READ_ONLY: importers, through the vma or the
 *   dma-buf, may map it for reading only (a write mapping gets -EPERM);
 *   the owner's CPU mapping stays writable.
 * - %VGEM_P2P_CREATE_DEVICE_ONLY: never mapped to the CPU: any CPU access
 *   through an mmap of it, or of its dma-buf, gets SIGBUS, and its
 *   dma-buf has no vmap; importers still map it.
 */
#define VGEM_P2P_CREATE_SYSTEM		(1u << 0)
#define VGEM_P2P_CREATE_NO_P2P		(1u << 1)
#define VGEM_P2P_CREATE_READ_ONLY	(1u << 2)
#define VGEM_P2P_CREATE_DEVICE_ONLY	(1u << 3)
#define VGEM_P2P_CREATE_FLAGS		0xfu

/**
 * struct drm_vgem_p2p_create - DRM_IOCTL_VGEM_P2P_CREATE
 * @size: in: size in bytes, non-zero; rounded up to the page size.
 *	out, written back even on failure: the rounded size.
 * @flags: in: object flags, VGEM_P2P_CREATE_* (DOC: object flags).
 * @handle: out: the new GEM handle.
 *
 * Objects are TTM buffer objects. A VRAM object takes its VRAM at
 * creation: if no free range fits, VRAM is compacted (objects move down
 * into holes below them that hold them, invalidated and copied), then the
 * unpinned, idle objects placed in VRAM longest ago are evicted to system
 * memory one by one until it fits (TTM's eviction). Contents start
 * zeroed.
 *
 * System memory is the object's ttm_tt: no page at creation, and all of
 * them, zeroed, on first use (a CPU fault, a fallback p2p_lookup, a
 * dma-buf map or pin, an eviction, %VGEM_P2P_MOVE_SYSTEM), as every TTM
 * driver's BO gets them, held until the object moves to VRAM or is freed,
 * or TTM swaps them out under memory pressure. No object gets more than
 * half of RAM, and TTM caps all of its BOs' pages together at half of
 * RAM too: so an object in system memory may be created larger than RAM,
 * as vgem's dumb buffers may, but a CPU touch then gets SIGBUS (as
 * drm_gem_shmem_fault() gives when it has no page), and an importer's
 * mapping, a dma-buf map or pin and %VGEM_P2P_MOVE_SYSTEM fail with
 * -ENOMEM. A move to VRAM frees the pages.
 *
 * Errors: -EINVAL an unknown flag, @size zero or above U64_MAX -
 * PAGE_SIZE, larger than a file may be (MAX_LFS_FILESIZE, for its mmap
 * offset and dma-buf), or a VRAM object at most VRAM's size but larger
 * than half of the system's RAM (VRAM objects must be evictable); -ENOSPC a VRAM
 * object larger than VRAM, or no room even after compaction and evicting
 * every other unpinned, idle VRAM object; -EDQUOT
 * a VRAM object that would take the objects this file created past
 * vram_quota_pages of VRAM (module parameter, writable in
 * /sys/module/vgem_p2p/parameters/; 0, the default: no limit); -ENOMEM out of
 * memory for the object, its page array, its mmap offset (also when the
 * device's 1 TiB of offset space has no range that large) or its handle;
 * -ENODEV the device is unplugged.
 */
struct drm_vgem_p2p_create {
	__u64 size;
	__u32 flags;
	__u32 handle;
};

/**
 * struct drm_vgem_p2p_mmap_offset - DRM_IOCTL_VGEM_P2P_MMAP_OFFSET
 * @handle: in: any object of the caller.
 * @flags: in: must be zero (-EINVAL).
 * @offset: out: the fake offset to pass to mmap() on this DRM file (DOC:
 *	vgem-p2p mmap).
 *
 * DRM_IOCTL_MODE_MAP_DUMB for render nodes, which may not call it (as
 * panfrost's MMAP_BO and v3d's MMAP_BO). A bad handle: -ENOENT; an
 * object imported from another driver's dma-buf: -EINVAL (map the
 * dma-buf instead).
 */
struct drm_vgem_p2p_mmap_offset {
	__u32 handle;
	__u32 flags;
	__u64 offset;
};

/**
 * DOC: peer paths
 *
 * &drm_vgem_p2p_peer.path, what a peer's mappings of VRAM get:
 *
 * - %VGEM_P2P_PEER_NONE: not peer-to-peer: its mappings are served from
 *   system memory (the fallback).
 * - %VGEM_P2P_PEER_BUS: PCI bus addresses; a switch routes the traffic.
 * - %VGEM_P2P_PEER_MAPPED: a dma_map_resource() mapping through the host
 *   bridge (an IOVA behind an IOMMU).
 */
#define VGEM_P2P_PEER_NONE		0
#define VGEM_P2P_PEER_BUS		1
#define VGEM_P2P_PEER_MAPPED		2

/**
 * struct drm_vgem_p2p_peer - DRM_IOCTL_VGEM_P2P_PEER, the kernel's verdict
 * on a peer
 * @domain: in: the peer's PCI domain.
 * @bus: in: its bus number, 0 to 255 (else -EINVAL).
 * @devfn: in: its device and function, as PCI_DEVFN(), 0 to 255.
 * @flags: in: must be zero (-EINVAL).
 * @reachable: out: 1 if the PCI core's map type for this device's BAR and
 *	the peer (pci_p2pdma_map_type() on the BAR's p2pdma provider) says
 *	the peer can reach it peer-to-peer, else 0.
 * @path: out: VGEM_P2P_PEER_*: what a peer-to-peer mapping of VRAM for
 *	the peer gets now, found by mapping one page for it
 *	(pci_p2pdma_map_resource()) and unmapping it. VGEM_P2P_PEER_NONE
 *	where the peer cannot reach VRAM (not reachable, or a bus address
 *	beyond its DMA mask): its mappings are served from system memory.
 *
 * So that user space need not re-derive the answer from sysfs, which
 * cannot see ACS redirection or the DMA mask. The mapping of one page is
 * undone at once, and no counter moves. The answer is a snapshot: the
 * peer's DMA mask or IOMMU domain may change when its driver binds.
 *
 * Errors: -EINVAL @flags non-zero, @bus or @devfn above 255; -ENODEV no
 * such PCI device, or this device unplugged; -EIO the one-page IOMMU
 * mapping for the peer failed.
 */
struct drm_vgem_p2p_peer {
	__u32 domain;
	__u32 bus;
	__u32 devfn;
	__u32 flags;
	__u32 reachable;
	__u32 path;
};

/**
 * DOC: move targets
 *
 * &drm_vgem_p2p_move.target:
 *
 * - %VGEM_P2P_MOVE_VRAM: to VRAM, anywhere but where it is now.
 * - %VGEM_P2P_MOVE_VRAM_AT: to VRAM at &drm_vgem_p2p_move.offset.
 * - %VGEM_P2P_MOVE_SYSTEM: to system memory (an eviction).
 */
#define VGEM_P2P_MOVE_VRAM		0
#define VGEM_P2P_MOVE_VRAM_AT		1
#define VGEM_P2P_MOVE_SYSTEM		2

/**
 * struct drm_vgem_p2p_move - DRM_IOCTL_VGEM_P2P_MOVE, a forced move
 * @handle: in: the object.
 * @target: in: VGEM_P2P_MOVE_* (DOC: move targets).
 * @offset: in: for %VGEM_P2P_MOVE_VRAM_AT, the page-aligned VRAM offset;
 *	otherwise must be zero. out: the object's VRAM offset after the
 *	call, or ~0 for system memory. Written once the object's locks are
 *	held, so also when the move itself fails (pinned, -EBUSY, -ENOSPC,
 *	-EDQUOT, -ENOMEM: then where the object is, which a compaction on the way may
 *	have changed); not on the failures before that (the argument
 *	-EINVALs, -ENOENT, -ENODEV, -EINTR), where the core copies back the
 *	value passed in.
 * @flags: in: must be zero.
 * @pad: in: must be zero.
 *
 * The operation a real driver does on its own for defragmentation,
 * eviction or migration, exposed to test importers against it: a TTM
 * validation, under the object's dma_resv only (taken interruptibly).
 * TTM zaps every CPU mapping of the object (ttm_bo_unmap_virtual(),
 * which fires every importer's mmu notifier: importers release their
 * mappings before it returns); the driver tells dma-buf importers
 * (move_notify), waits for the object's unsignalled fences
 * (%DRM_IOCTL_VGEM_FENCE_ATTACH's, and those dma-buf importers add: DMA
 * that may still use the old place) and copies (other objects are used
 * and moved meanwhile; this one's faults, OBJ_INFO and importer mappings
 * wait); the old VRAM range is filled with %VGEM_P2P_POISON_BYTE as it is
 * freed. Moving an object already in system memory to
 * system does nothing (no invalidation, no count). A move within VRAM
 * needs room for a second copy; others are compacted and evicted to make
 * it, as for %DRM_IOCTL_VGEM_P2P_CREATE.
 *
 * Permissions: %VGEM_P2P_MOVE_VRAM_AT needs CAP_SYS_ADMIN (-EPERM,
 * checked after the arguments, before the handle): choosing the offset
 * is a debugging tool. %VGEM_P2P_MOVE_VRAM is an allocation like CREATE:
 * anyone may, and it compacts and evicts other clients' objects as
 * CREATE does, within the quota of the file that created the object
 * (vram_quota_pages, see %DRM_IOCTL_VGEM_P2P_CREATE).
 * %VGEM_P2P_MOVE_SYSTEM moves only the caller's object: anyone may.
 *
 * Errors: -EINVAL @flags or @pad non-zero, unknown @target, @offset
 * non-zero for VRAM or SYSTEM; for VRAM_AT, @offset not page-aligned or
 * @offset + size beyond VRAM (the alignment and start checked before the
 * handle, the end after it); a move to VRAM of an object pinned by a
 * dma-buf attachment. -ENOENT unknown handle. -EBUSY VRAM_AT onto a range
 * any part of which is allocated, including to this object. -ENOSPC no
 * room after compaction and eviction. -EDQUOT into VRAM from system
 * memory, past the quota of the file that created the object (a move
 * within VRAM changes no quota). -ENOMEM for SYSTEM, no memory for the
 * object's pages, or the caps on them reached (also for an object already
 * in system memory, which this populates: one larger than half of RAM
 * always fails). -ENODEV the device is
 * being unbound. -EINTR a signal arrived while waiting for the object's
 * dma_resv, held by another move, mapping or dma-buf user; nothing was
 * done, and the kernel does not restart it (libdrm's drmIoctl() retries).
 */
struct drm_vgem_p2p_move {
	__u32 handle;
	__u32 target;
	__u64 offset;
	__u32 flags;
	__u32 pad;
};

/**
 * DOC: placements and reasons
 *
 * &drm_vgem_p2p_obj_info.placement: %VGEM_P2P_PLACEMENT_VRAM or
 * %VGEM_P2P_PLACEMENT_SYSTEM.
 *
 * &drm_vgem_p2p_obj_info.reason, why the object is where it is: the cause
 * of its last placement change, except that the two holds on system
 * memory (PINNED, NO_P2P_IMPORTER) are reported while they last.
 *
 * - %VGEM_P2P_REASON_CREATE: where CREATE put it (not moved since).
 * - %VGEM_P2P_REASON_MOVE: %DRM_IOCTL_VGEM_P2P_MOVE put it there.
 * - %VGEM_P2P_REASON_EVICTED: evicted to make room, or its device went
 *   away.
 * - %VGEM_P2P_REASON_RETURNED: brought back to VRAM on use (a CPU fault,
 *   or a mapping by an importer that reaches the BAR peer-to-peer).
 * - %VGEM_P2P_REASON_NO_P2P_IMPORTER: in system memory because an
 *   importer that cannot reach the BAR (or may not: CREATE_NO_P2P) maps
 *   it, or a dma-buf attachment without peer2peer exists; while one does,
 *   nothing but a forced move brings it back to VRAM (docs/design.md,
 *   "Placement with importers of mixed reachability"). Once they are
 *   gone, it stays until its next placement change.
 * - %VGEM_P2P_REASON_PINNED: in system memory, pinned by a non-dynamic
 *   dma-buf attachment (while pinned; after, until it next moves).
 */
#define VGEM_P2P_PLACEMENT_VRAM		0
#define VGEM_P2P_PLACEMENT_SYSTEM	1

#define VGEM_P2P_REASON_CREATE		0
#define VGEM_P2P_REASON_MOVE		1
#define VGEM_P2P_REASON_EVICTED		2
#define VGEM_P2P_REASON_RETURNED	3
#define VGEM_P2P_REASON_NO_P2P_IMPORTER	4
#define VGEM_P2P_REASON_PINNED		5

/**
 * struct drm_vgem_p2p_obj_info - DRM_IOCTL_VGEM_P2P_OBJ_INFO, a snapshot
 *	of an object: its placement can change right after
 * @handle: in: the object.
 * @pad: in: must be zero.
 * @size: out: size in bytes.
 * @vram_offset: out: offset in VRAM, ~0 when in system memory.
 * @flags: out: the object's VGEM_P2P_CREATE_* flags.
 * @placement: out: VGEM_P2P_PLACEMENT_* (DOC: placements and reasons).
 * @mappings: out: live importer leases (p2p_lookup not yet p2p_release'd).
 * @reason: out: VGEM_P2P_REASON_*, why it is in @placement. Not checked
 *	on input (it was an output pad, pad2, always 0).
 * @moves: out: times the object moved (forced, compaction, eviction or
 *	return to VRAM).
 * @p2p_maps: out: importer mappings ever made of the object.
 * @fallback_maps: out: of those, served from system memory.
 * @dmabuf_attachments: out: live attachments to the object's dma-buf.
 * @pad3: out: zero.
 * @move_notifies: out: times the importers of its dma-buf were told it
 *	moved (dma_buf_move_notify()).
 *
 * The counters of leases (@mappings, @p2p_maps, @fallback_maps) are
 * those of the vma path; the dma-buf path has its own. The placement and
 * its reason are read under the object's dma_resv, so a call waits for a
 * move of the object to end.
 *
 * Errors: -EINVAL @pad non-zero; -ENOENT unknown handle; -EINTR a signal
 * arrived while waiting for the object's dma_resv (libdrm's drmIoctl()
 * retries).
 */
struct drm_vgem_p2p_obj_info {
	__u32 handle;
	__u32 pad;
	__u64 size;
	__u64 vram_offset;
	__u32 flags;
	__u32 placement;
	__u32 mappings;
	__u32 reason;
	__u64 moves;
	__u64 p2p_maps;
	__u64 fallback_maps;
	__u32 dmabuf_attachments;
	__u32 pad3;
	__u64 move_notifies;
};

/**
 * DOC: migrate directions
 *
 * &drm_vgem_p2p_migrate.direction:
 *
 * - %VGEM_P2P_MIGRATE_TO_DEVICE: anonymous memory to device-private VRAM.
 * - %VGEM_P2P_MIGRATE_TO_RAM: device-private pages back to system memory.
 */
#define VGEM_P2P_MIGRATE_TO_DEVICE	0
#define VGEM_P2P_MIGRATE_TO_RAM		1

/**
 * struct drm_vgem_p2p_migrate - DRM_IOCTL_VGEM_P2P_MIGRATE
 * @addr: in: page-aligned start of a range of the caller's private
 *	anonymous memory.
 * @size: in: page-aligned, non-zero length.
 * @direction: in: VGEM_P2P_MIGRATE_* (DOC: migrate directions).
 * @flags: in: must be zero.
 * @npages: out, also on failure: pages actually migrated. Pages never
 *	touched (or mapping the zero page) migrate to the device as zeroed
 *	pages; pages already where asked (this device's or another's
 *	device-private memory) are skipped.
 *
 * Moves pages of the caller's private anonymous memory into the
 * device-private memory (MEMORY_DEVICE_PRIVATE pages backed by the last
 * quarter of the BAR) and back, with migrate_vma_*(). A CPU access to a
 * device page migrates it back (migrate_to_ram), one page at a time.
 * Another device mirroring the range with hmm_range.p2p_importer set gets
 * the page peer-to-peer, without migration, where pci_p2pdma_map_type()
 * allows. %VGEM_P2P_MIGRATE_TO_RAM leaves in place the pages it cannot
 * allocate RAM for (no error: compare @npages).
 *
 * A page of the range outside private anonymous memory (unmapped, shared,
 * file-backed, hugetlb, device or special mappings): -EINVAL, after
 * migrating the pages before it. No device-private memory left: -ENOMEM
 * after migrating what fitted (fewer pages of a chunk migrated than were
 * collected). A device without device-private memory (its set-up failed
 * at probe), or being unbound: -ENODEV. Also -EINVAL: @flags non-zero,
 * @direction above 1, @size zero, @addr or @size not page-aligned, @addr +
 * @size wrapping or above TASK_SIZE.
 *
 * Each process (address space), through all its open files of the device,
 * may hold at most the module parameter devmem_quota_pages of the device's
 * device-private pages (0, the default: half of them; writable in
 * /sys/module/vgem_p2p/parameters/); past it -EDQUOT, after migrating
 * what fitted. The charge is per mm_struct, not per open file: more
 * files give no more pages; a file passed to another process charges
 * that process, a fork() child has its own quota. A page is charged to
 * the process that migrated it until freed (migrated back by anyone,
 * unmapped by every process that maps it, or their exit), even after the
 * file is closed. No memory for the process's first charge record:
 * -ENOMEM, nothing migrated. The range is processed in chunks of 32
 * pages, each under its own mmap_read_lock(), yielding the CPU between
 * them: a fatal signal ends the call with -EINTR, an unbind with -ENODEV.
 */
struct drm_vgem_p2p_migrate {
	__u64 addr;
	__u64 size;
	__u32 direction;
	__u32 flags;
	__u64 npages;
};

/**
 * struct drm_vgem_p2p_stats - DRM_IOCTL_VGEM_P2P_STATS, device counters
 * @flags: in: must be zero.
 * @pad: in: must be zero.
 * @p2p_maps: importer leases given by vm_ops p2p_lookup (any kind;
 *	device-private pages not included).
 * @p2p_unmaps: importer leases released (p2p_release).
 * @p2p_pages_bus: pages of dma-buf mappings handed out as BAR bus
 *	addresses. Importers map what p2p_lookup reports themselves, and
 *	count it (edu_nic's pages_bus).
 * @p2p_pages_iova: pages of dma-buf mappings handed out as IOVAs
 *	(dma_map_resource()).
 * @fallbacks: lookups served from system memory (p2p impossible/denied).
 * @moves: object moves of any kind.
 * @evictions: moves from VRAM to system memory.
 * @compactions: VRAM compaction runs.
 * @invalidations: object invalidations (CPU and importer mappings zapped).
 * @bytes_copied: bytes copied by moves.
 * @bytes_bounced: bytes importers were told to reach in system memory.
 * @devmem_p2p_maps: device-private pages whose BAR address an importer was
 *	given instead of migrating them (get_dma_pfn_for_device), counted
 *	at every mirroring.
 * @devmem_to_device: pages migrated into device-private memory.
 * @devmem_to_ram: pages migrated out of it (ioctl or migrate_to_ram).
 * @vram_size: bytes of VRAM for objects.
 * @vram_used: bytes of it in use.
 * @devmem_size: bytes of VRAM used as device-private memory.
 * @devmem_used: bytes of it in use.
 * @dmabuf_attachments: live attachments to dma-bufs of the device's
 *	objects, dynamic or not.
 * @dmabuf_maps_p2p: dma-buf mappings handed out as VRAM (BAR bus
 *	addresses or IOVAs; also counted in @p2p_pages_bus/@p2p_pages_iova).
 * @dmabuf_maps_system: dma-buf mappings of system pages (importer not
 *	peer-to-peer capable or not reachable, p2p denied, object evicted).
 * @dmabuf_unmaps: dma-buf mappings released.
 * @move_notifies: dma_buf_move_notify() calls: moves of exported objects.
 *
 * Every counter is monotonic since probe; the sizes are now. Errors:
 * -EINVAL @flags or @pad non-zero.
 */
struct drm_vgem_p2p_stats {
	__u32 flags;
	__u32 pad;
	__u64 p2p_maps;
	__u64 p2p_unmaps;
	__u64 p2p_pages_bus;
	__u64 p2p_pages_iova;
	__u64 fallbacks;
	__u64 moves;
	__u64 evictions;
	__u64 compactions;
	__u64 invalidations;
	__u64 bytes_copied;
	__u64 bytes_bounced;
	__u64 devmem_p2p_maps;
	__u64 devmem_to_device;
	__u64 devmem_to_ram;
	__u64 vram_size;
	__u64 vram_used;
	__u64 devmem_size;
	__u64 devmem_used;
	__u64 dmabuf_attachments;
	__u64 dmabuf_maps_p2p;
	__u64 dmabuf_maps_system;
	__u64 dmabuf_unmaps;
	__u64 move_notifies;
};

#if defined(__cplusplus)
}
#endif

#endif /* _UAPI_VGEM_P2P_DRM_H_ */
