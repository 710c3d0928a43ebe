/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * vgem-p2p: a vgem-derived DRM driver whose VRAM is a PCI BAR, exporting
 * its memory to peer devices through vm_operations_struct.p2p_map and
 * dev_pagemap_ops.p2p_map.
 *
 * The uAPI is vgem's (dumb buffers, PRIME, DRM_IOCTL_VGEM_FENCE_ATTACH and
 * DRM_IOCTL_VGEM_FENCE_SIGNAL with the same numbers and structs) plus the
 * ioctls below. mmap offsets come from DRM_IOCTL_MODE_MAP_DUMB.
 *
 * PRIME export (DRM_IOCTL_PRIME_HANDLE_TO_FD) gives a dma-buf for dynamic
 * importers: one that attaches with allow_peer2peer and reaches the BAR
 * peer-to-peer (pci_p2pdma_distance()) is mapped the object's VRAM while
 * it is there, and is told of every move (move_notify) to map it again;
 * every other importer is mapped system memory, the object moving there
 * first (non-dynamic importers also pin it there). A VGEM_P2P_CREATE_NO_P2P
 * object is always mapped from system memory; a VGEM_P2P_CREATE_READ_ONLY
 * one refuses mappings other than DMA_TO_DEVICE (-EPERM).
 *
 * Rules common to every ioctl: fields named pad must be zero, and any
 * flag or enum value not defined here gets -EINVAL. A handle that does
 * not name a GEM object of the caller gets -ENOENT. A bad pointer to the
 * ioctl's struct gets -EFAULT, and any ioctl that allocates may get
 * -ENOMEM. Once the device is unplugged, ioctls that would touch VRAM
 * (MOVE, MIGRATE) get -ENODEV.
 */
#ifndef _UAPI_VGEM_P2P_DRM_H_
#define _UAPI_VGEM_P2P_DRM_H_

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

/* vgem's ioctls, unchanged */
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
 * @handle: GEM object to attach a new fence to.
 * @flags: 0 or VGEM_FENCE_WRITE (an exclusive, write fence).
 * @out_fence: returned fence id, for DRM_IOCTL_VGEM_FENCE_SIGNAL.
 * @pad: must be zero.
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
 * @fence: a fence id from DRM_IOCTL_VGEM_FENCE_ATTACH.
 * @flags: must be zero.
 */
struct drm_vgem_fence_signal {
	__u32 fence;
	__u32 flags;
};
#endif

/*
 * VRAM an object moved away from is filled with this byte, so that a
 * device still using a stale address reads poison rather than old data.
 */
#define VGEM_P2P_POISON_BYTE		0x6b

/* Object flags: drm_vgem_p2p_create.flags, drm_vgem_p2p_obj_info.flags */
/** @VGEM_P2P_CREATE_SYSTEM: place the object in system memory, not VRAM */
#define VGEM_P2P_CREATE_SYSTEM		(1u << 0)
/** @VGEM_P2P_CREATE_NO_P2P: deny p2p; importers are served by the fallback */
#define VGEM_P2P_CREATE_NO_P2P		(1u << 1)
/** @VGEM_P2P_CREATE_READ_ONLY: importers may only read (write: -EPERM) */
#define VGEM_P2P_CREATE_READ_ONLY	(1u << 2)
/** @VGEM_P2P_CREATE_DEVICE_ONLY: never mapped to the CPU: a CPU touch of
 * a mmap of it gets SIGBUS; p2p still works. */
#define VGEM_P2P_CREATE_DEVICE_ONLY	(1u << 3)
#define VGEM_P2P_CREATE_FLAGS		0xfu

/**
 * struct drm_vgem_p2p_create - DRM_IOCTL_VGEM_P2P_CREATE
 * @size: in: size in bytes, non-zero; rounded up to the page size.
 *	out: the rounded size. Larger than VRAM: -ENOSPC for a VRAM object;
 *	zero, overflowing, larger than system RAM for a VRAM object (VRAM
 *	objects must be evictable), or larger than a shmem file may be:
 *	-EINVAL. A VGEM_P2P_CREATE_SYSTEM object is backed lazily, page by
 *	page on use, and is not refused for being larger than RAM.
 * @flags: VGEM_P2P_CREATE_* flags.
 * @handle: out: the new GEM handle.
 *
 * A VRAM object gets its VRAM at creation; if none is free, VRAM is
 * compacted and then other objects evicted to system memory; failing
 * that, -ENOSPC. Contents start zeroed.
 */
struct drm_vgem_p2p_create {
	__u64 size;
	__u32 flags;
	__u32 handle;
};

/**
 * struct drm_vgem_p2p_mmap_offset - DRM_IOCTL_VGEM_P2P_MMAP_OFFSET
 * @handle: in: the object.
 * @flags: in: must be zero (-EINVAL).
 * @offset: out: the fake offset to pass to mmap() on this file.
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

/* drm_vgem_p2p_peer.path */
/** @VGEM_P2P_PEER_NONE: not peer-to-peer: importers get system memory */
#define VGEM_P2P_PEER_NONE		0
/** @VGEM_P2P_PEER_BUS: PCI bus addresses, routed by a switch */
#define VGEM_P2P_PEER_BUS		1
/** @VGEM_P2P_PEER_MAPPED: dma_map_resource(), through the host bridge
 * (an IOVA behind an IOMMU) */
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
 * No such PCI device: -ENODEV; the one-page IOMMU mapping failed: -EIO.
 * The answer is a snapshot: the device's
 * DMA mask or IOMMU domain may change when its driver binds.
 */
struct drm_vgem_p2p_peer {
	__u32 domain;
	__u32 bus;
	__u32 devfn;
	__u32 flags;
	__u32 reachable;
	__u32 path;
};

/* drm_vgem_p2p_move.target */
/** @VGEM_P2P_MOVE_VRAM: to VRAM, anywhere but where it is now */
#define VGEM_P2P_MOVE_VRAM		0
/** @VGEM_P2P_MOVE_VRAM_AT: to VRAM at drm_vgem_p2p_move.offset */
#define VGEM_P2P_MOVE_VRAM_AT		1
/** @VGEM_P2P_MOVE_SYSTEM: to system memory (an eviction) */
#define VGEM_P2P_MOVE_SYSTEM		2

/**
 * struct drm_vgem_p2p_move - DRM_IOCTL_VGEM_P2P_MOVE, a forced move
 * @handle: the object.
 * @target: VGEM_P2P_MOVE_*.
 * @offset: in: for VGEM_P2P_MOVE_VRAM_AT, the page-aligned VRAM offset
 *	(range busy, even by the object itself: -EBUSY; misaligned or out of
 *	VRAM: -EINVAL); otherwise must be zero. out, also on failure: the
 *	object's VRAM offset after the call, or ~0 for system.
 * @flags: must be zero.
 * @pad: must be zero.
 *
 * Invalidates every CPU and importer mapping of the object, copies its
 * contents, and poisons the old VRAM location. Moving an object already
 * in system memory to system is a no-op; to VRAM, no space: -ENOSPC (a
 * move within VRAM needs room for a second copy). An object pinned by a
 * dma-buf attachment stays in system memory: to VRAM, -EINVAL. Out of
 * memory: -ENOMEM; device unbound: -ENODEV.
 *
 * Permissions: VGEM_P2P_MOVE_VRAM_AT needs CAP_SYS_ADMIN (-EPERM). Without
 * it, VGEM_P2P_MOVE_VRAM only compacts VRAM to make room, never evicts
 * other objects (-ENOSPC instead); with it, it evicts as CREATE does.
 * VGEM_P2P_MOVE_SYSTEM moves only the caller's object: anyone may.
 */
struct drm_vgem_p2p_move {
	__u32 handle;
	__u32 target;
	__u64 offset;
	__u32 flags;
	__u32 pad;
};

/* drm_vgem_p2p_obj_info.placement */
#define VGEM_P2P_PLACEMENT_VRAM		0
#define VGEM_P2P_PLACEMENT_SYSTEM	1

/*
 * drm_vgem_p2p_obj_info.reason: why the object is where it is. The cause
 * of its last placement change, except that the two holds on system
 * memory (PINNED, NO_P2P_IMPORTER) are reported while they last.
 */
/** @VGEM_P2P_REASON_CREATE: where CREATE put it (not moved since) */
#define VGEM_P2P_REASON_CREATE		0
/** @VGEM_P2P_REASON_MOVE: DRM_IOCTL_VGEM_P2P_MOVE put it there */
#define VGEM_P2P_REASON_MOVE		1
/** @VGEM_P2P_REASON_EVICTED: evicted to make room, or its device went away */
#define VGEM_P2P_REASON_EVICTED		2
/** @VGEM_P2P_REASON_RETURNED: brought back to VRAM on use (CPU fault, or
 * a mapping by an importer that reaches the BAR peer-to-peer) */
#define VGEM_P2P_REASON_RETURNED	3
/** @VGEM_P2P_REASON_NO_P2P_IMPORTER: in system memory because an importer
 * that cannot reach the BAR (or may not: CREATE_NO_P2P) maps it, or a
 * dma-buf attachment without peer2peer exists; while one does, no
 * mapping brings it back to VRAM. Once they are gone, it stays until
 * its next placement change */
#define VGEM_P2P_REASON_NO_P2P_IMPORTER	4
/** @VGEM_P2P_REASON_PINNED: in system memory, pinned by a non-dynamic
 * dma-buf attachment (while pinned; after, until it next moves) */
#define VGEM_P2P_REASON_PINNED		5

/**
 * struct drm_vgem_p2p_obj_info - DRM_IOCTL_VGEM_P2P_OBJ_INFO
 * @handle: in: the object.
 * @pad: in: must be zero.
 * @size: out: size in bytes.
 * @vram_offset: out: offset in VRAM, ~0 when in system memory.
 * @flags: out: the object's VGEM_P2P_CREATE_* flags.
 * @placement: out: VGEM_P2P_PLACEMENT_*.
 * @mappings: out: live importer mappings (p2p_map not yet p2p_unmap'ed).
 * @reason: out: VGEM_P2P_REASON_*, why it is in @placement. Not checked
 *	on input (it was an output pad).
 * @moves: out: times the object moved (forced, compaction, eviction or
 *	return to VRAM).
 * @p2p_maps: out: importer mappings ever made of the object.
 * @fallback_maps: out: of those, served from system memory.
 * @dmabuf_attachments: out: live attachments to the object's dma-buf.
 * @pad3: out: zero.
 * @move_notifies: out: times the importers of its dma-buf were told it
 *	moved (dma_buf_move_notify()).
 *
 * The counters of mappings (@mappings, @p2p_maps, @fallback_maps) are
 * those of the vma path; the dma-buf path has its own.
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

/* drm_vgem_p2p_migrate.direction */
/** @VGEM_P2P_MIGRATE_TO_DEVICE: anonymous memory to device-private VRAM */
#define VGEM_P2P_MIGRATE_TO_DEVICE	0
/** @VGEM_P2P_MIGRATE_TO_RAM: device-private pages back to system memory */
#define VGEM_P2P_MIGRATE_TO_RAM		1

/**
 * struct drm_vgem_p2p_migrate - DRM_IOCTL_VGEM_P2P_MIGRATE
 * @addr: in: page-aligned start of a range of the caller's private
 *	anonymous memory.
 * @size: in: page-aligned, non-zero length.
 * @direction: in: VGEM_P2P_MIGRATE_*.
 * @flags: in: must be zero.
 * @npages: out, also on failure: pages actually migrated. Pages never
 *	touched (or mapping the zero page) migrate to the device as zeroed
 *	pages; pages already where asked are skipped.
 *
 * A page of the range outside private anonymous memory (unmapped, shared,
 * file-backed, hugetlb): -EINVAL, after migrating the pages before it. No
 * device-private memory left: -ENOMEM after migrating what fitted. A
 * device without device-private memory: -ENODEV.
 *
 * Each process (address space), through all its open files of the device,
 * may hold at most the module parameter devmem_quota_pages of the device's
 * device-private pages (0: half of them); past it -EDQUOT, after migrating
 * what fitted. A page is charged to the process that migrated it until
 * freed (migrated back, unmapped by every process that maps it, or their
 * exit), even after the file is closed. The
 * range is processed in chunks, mmap_lock dropped between them: a fatal
 * signal ends the call with -EINTR, an unbind with -ENODEV.
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
 * @p2p_maps: importer mappings made by vm_ops p2p_map (any kind).
 * @p2p_unmaps: importer mappings released.
 * @p2p_pages_bus: pages handed out as BAR bus addresses.
 * @p2p_pages_iova: pages handed out as IOVAs (dma_map_resource()).
 * @fallbacks: mappings served from system memory (p2p impossible/denied).
 * @moves: object moves of any kind.
 * @evictions: moves from VRAM to system memory.
 * @compactions: VRAM compaction runs.
 * @invalidations: object invalidations (CPU and importer mappings zapped).
 * @bytes_copied: bytes copied by moves.
 * @bytes_bounced: bytes handed to importers through system memory.
 * @devmem_p2p_maps: device-private pages whose BAR address an importer was
 *	given instead of migrating them (get_dma_pfn_for_device).
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
