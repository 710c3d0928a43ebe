/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/**
 * DOC: edu_nic uAPI
 *
 * edu_nic: a simulated NIC on QEMU's edu device (1234:11e8). It registers
 * ranges of the caller's address space (memory regions, in the style of
 * RDMA on-demand paging), mirrors them with hmm_range_fault() as a p2p
 * importer, and moves data between a region and a user buffer with the
 * edu DMA engine.
 *
 * Memory can also be registered as a range of a dma-buf
 * (EDU_NIC_IOCTL_REG_DMABUF): edu_nic attaches to it dynamically, with
 * peer-to-peer allowed, and the exporter decides what it maps (its device
 * memory, or system pages); on a move the exporter tells edu_nic
 * (move_notify), which drops the mapping and maps again at the next DMA.
 * Every other ioctl treats both kinds of registration alike.
 *
 * One misc character device per bound edu device, /dev/edu_nic0, ...,
 * mode 0600. open() fails with -EINVAL from a task without an address
 * space, -ENOMEM out of memory.
 *
 * Rules common to every ioctl: fields named pad must be zero (-EINVAL),
 * and any flag or enum value not defined here gets -EINVAL. A key that
 * does not name a live registration of this open file gets -ENOENT. A
 * bad pointer to the ioctl's struct gets -EFAULT, an unknown ioctl number
 * -ENOTTY (the size is part of the number: a struct of another size is
 * unknown), and any ioctl that allocates may get -ENOMEM.
 * Registrations belong to the open file and to the address space of the
 * process that opened it; an ioctl from another address space (a child
 * after fork, a process the fd was passed to) gets -EACCES, checked
 * before anything else. A registration is not inherited by fork(); its
 * mirror follows the opener's address space (copy-on-write after fork()
 * invalidates it like any other change). Closing the file, or the exit
 * of the process, releases every registration. Once the PCI device is
 * unbound, the mirrors are torn down (exporter mappings released),
 * /dev/edu_nicN disappears, and on files still open REG_MR, REG_DMABUF,
 * DMA and DMA_RAW get -ENODEV; DEREG_MR, MR_STATS and DEV_STATS keep
 * working until the file is closed.
 */

/**
 * DOC: edu_nic ioctls
 *
 * Type %EDU_NIC_IOCTL_BASE ('E'):
 *
 * - %EDU_NIC_IOCTL_REG_MR (0x00): &struct edu_nic_reg_mr, register a
 *   range of the caller's address space.
 * - %EDU_NIC_IOCTL_DEREG_MR (0x01): &struct edu_nic_dereg_mr.
 * - %EDU_NIC_IOCTL_DMA (0x02): &struct edu_nic_dma, copy between a
 *   registration and a user buffer.
 * - %EDU_NIC_IOCTL_MR_STATS (0x03): &struct edu_nic_mr_stats.
 * - %EDU_NIC_IOCTL_DEV_STATS (0x04): &struct edu_nic_dev_stats.
 * - %EDU_NIC_IOCTL_DMA_RAW (0x05): &struct edu_nic_dma_raw, debug: read a
 *   bus address.
 * - %EDU_NIC_IOCTL_REG_DMABUF (0x06): &struct edu_nic_reg_dmabuf,
 *   register a range of a dma-buf.
 */
#ifndef _UAPI_LINUX_EDU_NIC_H
#define _UAPI_LINUX_EDU_NIC_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define EDU_NIC_IOCTL_BASE	'E'

/**
 * DOC: access rights
 *
 * &edu_nic_reg_mr.access and &edu_nic_reg_dmabuf.access, a non-empty set
 * of (%EDU_NIC_ACCESS_MASK):
 *
 * - %EDU_NIC_ACCESS_READ: the device may read the region
 *   (%EDU_NIC_DMA_FROM_MR).
 * - %EDU_NIC_ACCESS_WRITE: the device may write the region
 *   (%EDU_NIC_DMA_TO_MR).
 */
#define EDU_NIC_ACCESS_READ	(1u << 0)
#define EDU_NIC_ACCESS_WRITE	(1u << 1)
#define EDU_NIC_ACCESS_MASK	(EDU_NIC_ACCESS_READ | EDU_NIC_ACCESS_WRITE)

/**
 * DOC: registration flags
 *
 * &edu_nic_reg_mr.flags, any of %EDU_NIC_REG_MR_FLAGS:
 *
 * - %EDU_NIC_REG_MR_PREFETCH: fault and map the whole region now, so that
 *   failures (-EFAULT, -EPERM from an exporter) show at registration.
 * - %EDU_NIC_REG_MR_NO_P2P: mirror the region the way an importer without
 *   p2p support does (hmm_range.p2p_importer = NULL), for comparisons with
 *   upstream behaviour: device-private pages of other drivers are migrated
 *   back to system memory on fault, and a special device vma (a vgem-p2p
 *   mmap) cannot be mirrored at all, so that mirroring one fails with
 *   -EFAULT. Combines with %EDU_NIC_REG_MR_PREFETCH.
 *
 * %EDU_NIC_MR_MAX_LENGTH (256 MiB) is the largest region one registration
 * covers, of either kind.
 */
#define EDU_NIC_REG_MR_PREFETCH	(1u << 0)
#define EDU_NIC_REG_MR_NO_P2P	(1u << 1)
#define EDU_NIC_REG_MR_FLAGS	(EDU_NIC_REG_MR_PREFETCH | EDU_NIC_REG_MR_NO_P2P)

/**
 * DOC: dma-buf registration flags
 *
 * &edu_nic_reg_dmabuf.flags, any of %EDU_NIC_REG_DMABUF_FLAGS:
 *
 * - %EDU_NIC_REG_DMABUF_PINNED: attach and pin the buffer, as an importer
 *   that cannot follow moves does (the RDMA core's pinned dma-buf umem,
 *   which mlx5 uses for DEVX umems), instead of attaching dynamically.
 *   The exporter keeps the buffer where it can pin it until the
 *   registration goes: a vgem-p2p object moves to system memory,
 *   OBJ_INFO says why (%VGEM_P2P_REASON_PINNED), and a MOVE into VRAM
 *   fails with -EINVAL.
 */
#define EDU_NIC_REG_DMABUF_PINNED	(1u << 0)
#define EDU_NIC_REG_DMABUF_FLAGS	EDU_NIC_REG_DMABUF_PINNED

#define EDU_NIC_MR_MAX_LENGTH	(256ull << 20)

/**
 * struct edu_nic_reg_mr - EDU_NIC_IOCTL_REG_MR, register a memory region
 * @addr: in: page-aligned start address in the caller's address space.
 * @length: in: page-aligned, non-zero length, at most
 *	EDU_NIC_MR_MAX_LENGTH; addr + length must not wrap or exceed the
 *	user address space. Otherwise -EINVAL.
 * @access: in: non-empty set of EDU_NIC_ACCESS_* bits (DOC: access
 *	rights).
 * @flags: in: EDU_NIC_REG_MR_* flags (DOC: registration flags).
 * @key: in: must be zero. out: the key naming the registration in later
 *	ioctls; never 0, allocated cyclically (a stale key is not soon
 *	reused).
 * @pad: must be zero.
 *
 * The range may span several vmas (anonymous, file, shm, a vgem-p2p VRAM
 * mmap, device-private pages, ...) but must be fully mapped: a hole gets
 * -EFAULT. With %EDU_NIC_ACCESS_WRITE, every vma must be writable: -EPERM
 * otherwise. These checks are advisory: the address space can change
 * afterwards, and each mirroring checks again. Nothing is faulted or
 * pinned unless %EDU_NIC_REG_MR_PREFETCH asks: the region is mirrored on
 * first use and re-mirrored after invalidations. A prefetch fails as the
 * first %EDU_NIC_IOCTL_DMA would (see there), a move racing with it being
 * waited for however long it takes; the registration is then not made.
 *
 * Other errors: -ENODEV the device is unbound; -ENOMEM out of memory (the
 * region, its page arrays, the mmu interval notifier); -EBUSY no free key
 * (2^32 - 1 live registrations); -EFAULT the struct cannot be written
 * back, and the registration is undone.
 */
struct edu_nic_reg_mr {
	__u64 addr;
	__u64 length;
	__u32 access;
	__u32 flags;
	__u32 key;
	__u32 pad;
};

/**
 * struct edu_nic_reg_dmabuf - EDU_NIC_IOCTL_REG_DMABUF, register a range
 *	of a dma-buf
 * @fd: in: a dma-buf file descriptor (a PRIME export, say). Not an open
 *	file: -EBADF; not a dma-buf: -EINVAL; not open for writing (a PRIME
 *	export without DRM_RDWR is read-only) while @access has
 *	EDU_NIC_ACCESS_WRITE: -EACCES. The registration keeps its own
 *	reference: @fd may be closed afterwards.
 * @flags: in: any of %EDU_NIC_REG_DMABUF_FLAGS.
 * @offset: in: page-aligned offset of the range in the dma-buf.
 * @length: in: page-aligned, non-zero length, at most
 *	EDU_NIC_MR_MAX_LENGTH; the range must lie inside the dma-buf.
 *	Otherwise -EINVAL.
 * @access: in: non-empty set of EDU_NIC_ACCESS_* bits. The dma-buf is
 *	mapped for reading (DMA_TO_DEVICE) without EDU_NIC_ACCESS_WRITE,
 *	bidirectionally with it; an exporter that refuses that mapping (a
 *	read-only vgem-p2p object refuses writes: -EPERM) fails the
 *	registration with its error.
 * @key: in: must be zero. out: the key naming the registration; never 0.
 *
 * The upstream path, beside %EDU_NIC_IOCTL_REG_MR's vma path. The struct
 * is 32 bytes with no hole, so it has no pad. edu_nic attaches with
 * dma_buf_dynamic_attach() (allow_peer2peer, move_notify), and maps the
 * range at once, so that errors show here. The exporter may
 * move the memory at any time: it then calls edu_nic's move_notify with
 * the dma-buf's reservation lock held, which edu_nic also holds while it
 * DMAs; the mapping is dropped, and the next DMA maps it again (after the
 * exporter's kernel fences, if any, signalled). A DMA waits for a move in
 * progress (its fence wait, its copy) without holding the device's
 * engine, so other registrations' DMA goes on meanwhile. The registration's
 * counters (EDU_NIC_IOCTL_MR_STATS) count pages_p2p (addresses that do
 * not reach system RAM: the exporter's device memory), pages_system,
 * invalidations (move_notify calls that dropped a mapping) and remaps;
 * faults counts mappings and p2p_maps those holding device memory. Its
 * addr is @offset, and its state has %EDU_NIC_MR_DMABUF. DEREG_MR
 * detaches.
 *
 * Other errors: -EINVAL unknown @flags, @key non-zero, @access empty or
 * with unknown bits; -EPERM the exporter refuses the mapping (a read-only
 * vgem-p2p object and write access); -ENODEV the device is unbound;
 * -ENOMEM out of memory; -EBUSY no free key; -EFAULT the struct cannot be
 * read, or written back (the registration is then undone); any other
 * error of the exporter's attach or map, returned as is.
 */
struct edu_nic_reg_dmabuf {
	__u32 fd;
	__u32 flags;
	__u64 offset;
	__u64 length;
	__u32 access;
	__u32 key;
};

/**
 * struct edu_nic_dereg_mr - EDU_NIC_IOCTL_DEREG_MR
 * @key: in: the registration to release, at once. Its mirror is torn
 *	down and its exporter mappings released when the ioctl returns,
 *	unless a DMA on it runs in another thread: then when that DMA ends
 *	(it completes normally).
 * @pad: must be zero.
 *
 * Works after unbind. A key that a REG_MR or REG_DMABUF of another thread
 * is still handing out (it has not returned) does not exist yet: -ENOENT
 * here and in every other ioctl.
 */
struct edu_nic_dereg_mr {
	__u32 key;
	__u32 pad;
};

/**
 * DOC: DMA directions and modes
 *
 * &edu_nic_dma.direction:
 *
 * - %EDU_NIC_DMA_FROM_MR: the device reads the region into the user
 *   buffer (needs %EDU_NIC_ACCESS_READ).
 * - %EDU_NIC_DMA_TO_MR: the device writes the user buffer into the region
 *   (needs %EDU_NIC_ACCESS_WRITE).
 *
 * &edu_nic_dma.mode:
 *
 * - %EDU_NIC_MODE_DEVICE: real bus-master DMA by the edu engine, through
 *   its 4 KiB buffer and a coherent bounce page, one command of at most 2
 *   KiB at a time (about 100 ms of guest virtual time each, two per 2 KiB:
 *   region <-> edu buffer <-> bounce buffer; four per page). For
 *   correctness tests.
 * - %EDU_NIC_MODE_BULK: emulated DMA, for benchmarks: the CPU copies
 *   through the very bus addresses the device would use, resolved the way
 *   the device's DMA would be (through its IOMMU domain when it has one):
 *   RAM through the kernel mapping, a BAR through ioremap_wc(). A read
 *   pins the user buffer's pages 256 at a time and copies into them with
 *   drm_memcpy_from_wc(); a buffer that cannot be pinned (a VM_PFNMAP
 *   mapping) is written with page faults disabled, faulted in between
 *   batches, as writes read theirs. Counted as bulk_bytes, apart from
 *   device DMA.
 */
#define EDU_NIC_DMA_FROM_MR	0
#define EDU_NIC_DMA_TO_MR	1

#define EDU_NIC_MODE_DEVICE	0
#define EDU_NIC_MODE_BULK	1

/**
 * struct edu_nic_dma - EDU_NIC_IOCTL_DMA, copy between region and buffer
 * @key: in: the registration.
 * @direction: in: EDU_NIC_DMA_* (DOC: DMA directions and modes).
 * @offset: in: byte offset into the region; any alignment.
 * @length: in: bytes, non-zero; offset + length must not wrap or pass the
 *	end of the region (-EINVAL).
 * @user_ptr: in: the user buffer; a bad one gets -EFAULT.
 * @mode: in: EDU_NIC_MODE_*.
 * @flags: in: must be zero.
 *
 * Page by page, one DMA ioctl per region at a time (others wait,
 * killably): if the region is not mirrored, or was invalidated since, or
 * is mirrored read-only and this is a write, the whole region is mirrored
 * again (hmm_range_fault() with HMM_PFN_REQ_FAULT, plus HMM_PFN_REQ_WRITE
 * for %EDU_NIC_DMA_TO_MR, naming the device as p2p_importer); then the
 * page's device address is used under the region's lock, which the mmu
 * notifier takes before tearing the mirror down, so no invalidation
 * completes while the device uses an address. Failures after argument
 * validation count in the errors counter.
 *
 * @flags non-zero, @direction or @mode above 1: -EINVAL, checked before
 * the key. The direction must be allowed by the registration's access
 * (-EPERM). A range that is no longer mapped, maps a vma without
 * PROT_READ or one hmm cannot mirror (VM_IO/VM_PFNMAP without
 * p2p_lookup), whose CPU fault failed (out of memory included), that lies
 * in a BAR the PCI core says the device cannot reach, or whose address
 * space has exited: -EFAULT. A write to memory that has become read-only,
 * or to a read-only exporter object (VGEM_P2P_CREATE_READ_ONLY): -EPERM.
 * edu_nic maps what hmm_range_fault() reported itself; if an IOMMU
 * mapping fails, a BAR run gets -EIO and a page -ENOMEM. A dma-buf registration is mapped again through
 * its exporter instead, whose error is returned. A region invalidated
 * while it is being mirrored (the exporter moving its memory) is mirrored
 * again, for as long as that takes, as hmm_range_fault() users loop on
 * its -EBUSY: contention is waited for, never an error.
 *
 * A device command that times out (10 s) gets -EIO and disables the
 * engine: every later device DMA and DMA_RAW on the device gets -EIO
 * until it is rebound. In bulk mode, an address the IOMMU has no
 * translation for gets -EIO. A pending fatal signal gets -EINTR; another
 * signal, while the mirror is made again after a racing invalidation or
 * while the exporter waits for a move (or a dma-buf registration for its
 * exporter's), -EINTR unless its handler was
 * installed with SA_RESTART (the call then restarts). An unbound device
 * (or exporter): -ENODEV. Out of memory (the bounce buffer, dma_map_page()
 * of an ordinary page, ioremap_wc() or the page array of a bulk read, the
 * exporter's mapping or eviction): -ENOMEM. On an error, the pages before
 * the failing one were transferred.
 */
struct edu_nic_dma {
	__u32 key;
	__u32 direction;
	__u64 offset;
	__u64 length;
	__u64 user_ptr;
	__u32 mode;
	__u32 flags;
};

/**
 * struct edu_nic_stats - counters of a registration or a device
 * @pages_p2p: pages mirrored peer-to-peer, counted at every mirroring:
 *	device memory in a PCI BAR (HMM_PFN_P2PDMA entries, which edu_nic
 *	maps with pci_p2pdma_map_resource()), or a dma-buf's pages that
 *	are not system RAM.
 * @pages_system: pages mirrored as system memory, counted at every
 *	mirroring: ordinary pages, among them an exporter's fallback, which
 *	edu_nic maps with dma_map_page().
 * @cur_pages_p2p: pages currently mirrored peer-to-peer.
 * @cur_pages_system: pages currently mirrored through system memory.
 * @faults: successful mirrorings (the RDMA core's walk and DMA mapping,
 *	or a dma-buf mapping).
 * @fault_retries: invalidations that overtook a mirroring in progress,
 *	each making the RDMA core walk the range again
 *	(mmu_interval_read_retry()), and walks abandoned after a second of
 *	hmm_range_fault() -EBUSY.
 * @invalidations: mmu notifier invalidations that tore down a mirror.
 * @remaps: mirrorings after the first, i.e. after an invalidation.
 * @p2p_maps: leases (struct p2p_lease) received from the exporters of
 *	device vmas, and dma-buf mappings made.
 * @device_dma_bytes: bytes moved by the edu DMA engine (EDU_NIC_MODE_DEVICE).
 * @device_dma_cmds: edu DMA commands issued (device counters only; 0 for
 *	a region).
 * @bulk_bytes: bytes moved by emulated DMA (EDU_NIC_MODE_BULK).
 * @errors: DMA ioctls that failed after validation.
 * @nr_mrs: live registrations (device counters only; 0 for a region).
 * @pages_bus: of @pages_p2p, the pages edu_nic mapped at their PCI bus
 *	address (pci_p2pdma_map_resource() said PCI_P2PDMA_MAP_BUS_ADDR: a
 *	switch routes the traffic).
 * @pages_iova: of @pages_p2p, the pages edu_nic mapped with
 *	dma_map_resource() (PCI_P2PDMA_MAP_THRU_HOST_BRIDGE): an IOVA behind
 *	an IOMMU.
 *
 * An exporter's fallback (system memory behind a device vma) counts as
 * system: the exporter reports system pages, which edu_nic maps itself.
 */
struct edu_nic_stats {
	__u64 pages_p2p;
	__u64 pages_system;
	__u64 cur_pages_p2p;
	__u64 cur_pages_system;
	__u64 faults;
	__u64 fault_retries;
	__u64 invalidations;
	__u64 remaps;
	__u64 p2p_maps;
	__u64 device_dma_bytes;
	__u64 device_dma_cmds;
	__u64 bulk_bytes;
	__u64 errors;
	__u64 nr_mrs;
	__u64 pages_bus;
	__u64 pages_iova;
};

/**
 * DOC: registration state
 *
 * &edu_nic_mr_stats.state bits:
 *
 * - %EDU_NIC_MR_MIRRORED: the region is currently mirrored (a dma-buf
 *   registration: mapped).
 * - %EDU_NIC_MR_WRITABLE: ... and mirrored for writing.
 * - %EDU_NIC_MR_DMABUF: a dma-buf registration (%EDU_NIC_IOCTL_REG_DMABUF).
 */
#define EDU_NIC_MR_MIRRORED	(1u << 0)
#define EDU_NIC_MR_WRITABLE	(1u << 1)
#define EDU_NIC_MR_DMABUF	(1u << 2)

/**
 * struct edu_nic_mr_stats - EDU_NIC_IOCTL_MR_STATS
 * @key: in: the registration.
 * @state: out: EDU_NIC_MR_* bits (DOC: registration state).
 * @addr: out: start address of the region; for a dma-buf, its offset.
 * @length: out: length of the region.
 * @access: out: its EDU_NIC_ACCESS_* bits.
 * @pad: must be zero.
 * @stats: out: its counters (nr_mrs is 0), a snapshot under the
 *	region's lock.
 *
 * Errors: -EINVAL @pad non-zero; -ENOENT no such key. Works after unbind.
 */
struct edu_nic_mr_stats {
	__u32 key;
	__u32 state;
	__u64 addr;
	__u64 length;
	__u32 access;
	__u32 pad;
	struct edu_nic_stats stats;
};

/**
 * DOC: device capabilities
 *
 * &edu_nic_dev_stats.caps bits: %EDU_NIC_CAP_IOMMU, the device's DMA is
 * translated by an IOMMU paging domain (0 after unbind).
 */
#define EDU_NIC_CAP_IOMMU	(1u << 0)

/**
 * struct edu_nic_dev_stats - EDU_NIC_IOCTL_DEV_STATS
 * @flags: in: must be zero.
 * @caps: out: EDU_NIC_CAP_* bits (DOC: device capabilities).
 * @stats: out: the device's counters, summed over all registrations,
 *	live and gone, of every file; device_dma_bytes and device_dma_cmds
 *	include DMA_RAW's.
 *
 * Errors: -EINVAL @flags non-zero. Works after unbind.
 */
struct edu_nic_dev_stats {
	__u32 flags;
	__u32 caps;
	struct edu_nic_stats stats;
};

/**
 * DOC: raw DMA
 *
 * %EDU_NIC_DMA_RAW_MAX (4096) is the largest &edu_nic_dma_raw.length, the
 * edu buffer's size.
 */
#define EDU_NIC_DMA_RAW_MAX	4096u

/**
 * struct edu_nic_dma_raw - EDU_NIC_IOCTL_DMA_RAW, debug: read a bus address
 * @bus_addr: in: the address the device reads, as the device sees it (an
 *	IOVA when an IOMMU translates its DMA). Not checked: this ioctl
 *	exists to show what a stale or wrong address does.
 * @length: in: bytes, 1 to EDU_NIC_DMA_RAW_MAX.
 * @user_ptr: in: buffer receiving what the device read.
 * @flags: in: must be zero.
 * @pad: must be zero.
 *
 * Needs CAP_SYS_RAWIO (-EPERM, checked before the struct is read). Before
 * each read command the edu buffer is filled, by DMA, with a random
 * 32-bit poison pattern. If after the read the buffer still holds the
 * poison, or the device's IOMMU domain has no translation for part of the
 * range (the IOMMU faulted the DMA: QEMU then delivers zeros, which the
 * pattern check cannot see), or the engine is disabled after a timeout,
 * the ioctl fails with -EIO instead of returning the data.
 *
 * Other errors: -EINVAL @flags or @pad non-zero, @length zero or above
 * %EDU_NIC_DMA_RAW_MAX, @bus_addr + @length wrapping; -ENOMEM out of
 * memory; -ENODEV the device is unbound; -EFAULT @user_ptr cannot be
 * written.
 */
struct edu_nic_dma_raw {
	__u64 bus_addr;
	__u64 length;
	__u64 user_ptr;
	__u32 flags;
	__u32 pad;
};

#define EDU_NIC_IOCTL_REG_MR	_IOWR(EDU_NIC_IOCTL_BASE, 0x00, struct edu_nic_reg_mr)
#define EDU_NIC_IOCTL_DEREG_MR	_IOW(EDU_NIC_IOCTL_BASE, 0x01, struct edu_nic_dereg_mr)
#define EDU_NIC_IOCTL_DMA	_IOW(EDU_NIC_IOCTL_BASE, 0x02, struct edu_nic_dma)
#define EDU_NIC_IOCTL_MR_STATS	_IOWR(EDU_NIC_IOCTL_BASE, 0x03, struct edu_nic_mr_stats)
#define EDU_NIC_IOCTL_DEV_STATS	_IOWR(EDU_NIC_IOCTL_BASE, 0x04, struct edu_nic_dev_stats)
#define EDU_NIC_IOCTL_DMA_RAW	_IOW(EDU_NIC_IOCTL_BASE, 0x05, struct edu_nic_dma_raw)
#define EDU_NIC_IOCTL_REG_DMABUF _IOWR(EDU_NIC_IOCTL_BASE, 0x06, struct edu_nic_reg_dmabuf)

#endif /* _UAPI_LINUX_EDU_NIC_H */
