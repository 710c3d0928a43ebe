/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vgem-p2p: vgem with VRAM, as a TTM driver.
 *
 * Lock order, outermost first:
 *
 *   mmap_lock (CPU faults, hmm_range_fault() calling p2p_lookup)
 *     dma_resv of an object: its placement, as for every TTM BO
 *       vgem_p2p_device.vram_close_lock, read (a fault after unplug)
 *         TTM's lru_lock, the VRAM manager's lock
 *         vgem_p2p_device.vram_charge_lock (a leaf: the VRAM quota)
 *         i_mmap_rwsem, mmu notifiers   (ttm_bo_unmap_virtual() in moves)
 *           vgem_p2p_object.maps_lock
 *
 * No device-wide lock is held across a move, but for vram_close_lock,
 * which only unbind takes for write, holding nothing else of ours.
 * Importers call back into
 * us from inside our moves: move_notify into dma_buf_unmap_attachment()
 * (so unmap_dma_buf takes no lock of ours) and mmu notifiers into
 * p2p_release() (so it takes only maps_lock). Nothing copies to or from
 * user space under a dma_resv.
 */
#ifndef _VGEM_P2P_DRV_H_
#define _VGEM_P2P_DRV_H_

#include <linux/dma-buf.h>
#include <linux/dma-resv.h>
#include <linux/hashtable.h>
#include <linux/kref.h>
#include <linux/llist.h>
#include <linux/memremap.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/pci-p2pdma.h>
#include <linux/refcount.h>
#include <linux/rwsem.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include <drm/drm_device.h>
#include <drm/drm_gem.h>
#include <drm/drm_mm.h>
#include <drm/ttm/ttm_device.h>
#include <drm/ttm/ttm_placement.h>
#include <drm/ttm/ttm_resource.h>

#include "vgem_p2p_compat.h"
#include "vgem_p2p_drm.h"

#define DRIVER_NAME	"vgem_p2p"
#define VGEM_P2P_BAR	2

/*
 * The device-private pages one mm migrated into the device, against
 * devmem_quota_pages: per mm, not per file, so more files give no more
 * pages. References: one per charged page (its zone_device_data), one
 * per running MIGRATE. The pages may outlive the mm's last user, so the
 * charge mmgrab()s the mm: no other mm can reuse the key meanwhile.
 */
struct vgem_p2p_devmem_charge {
	struct hlist_node node;		/* in devmem.charges, under devmem.lock */
	struct mm_struct *mm;		/* the key; grabbed */
	refcount_t ref;			/* dropped to 0 under devmem.lock */
	atomic_long_t pages;
	struct llist_node free_node;	/* in devmem.free_charges, once dead */
};

/*
 * The VRAM one process (mm) moved objects into, against vram_quota_pages:
 * keyed as vgem_p2p_devmem_charge is, per mm. It lives while it has pages:
 * each object it moved into VRAM holds its own while there
 * (vgem_p2p_object.vram_charge), and the mm is grabbed meanwhile, so no
 * other mm can reuse the key.
 */
struct vgem_p2p_vram_charge {
	struct hlist_node node;		/* in vram_charges */
	struct mm_struct *mm;		/* the key; grabbed */
	unsigned long pages;		/* under vram_charge_lock */
};

struct vgem_p2p_file {
	struct idr fence_idr;
	struct mutex fence_mutex;	/* protects fence_idr */
};

/* Device counters: struct drm_vgem_p2p_stats, and debugfs "counters" */
struct vgem_p2p_counters {
	atomic64_t p2p_maps;
	atomic64_t p2p_unmaps;
	atomic64_t p2p_pages_bus;
	atomic64_t p2p_pages_iova;
	atomic64_t fallbacks;
	atomic64_t moves;
	atomic64_t evictions;
	atomic64_t compactions;
	atomic64_t backoffs;		/* debugfs only: MOVEs that let go */
	atomic64_t invalidations;
	atomic64_t bytes_copied;
	atomic64_t bytes_bounced;
	atomic64_t devmem_p2p_maps;
	atomic64_t devmem_to_device;
	atomic64_t devmem_to_ram;
	atomic64_t dmabuf_attachments;	/* live */
	atomic64_t dmabuf_maps_p2p;
	atomic64_t dmabuf_maps_system;
	atomic64_t dmabuf_unmaps;
	atomic64_t move_notifies;
};

/* The last quarter of the BAR, as MEMORY_DEVICE_PRIVATE pages */
struct vgem_p2p_devmem {
	struct dev_pagemap pgmap;
	struct resource *res;
	resource_size_t bar_offset;
	resource_size_t size;
	bool ready;
	spinlock_t lock;	/* protects used, next, nr_used, charges */
	unsigned long *used;		/* bitmap: page i of the pgmap in use */
	unsigned long next;		/* where the next search starts */
	unsigned long nr_used;
	DECLARE_HASHTABLE(charges, 4);	/* live charges, by mm */
	/* dead charges: page_free may be atomic, mmdrop() must not be */
	struct llist_head free_charges;
	struct work_struct free_work;
};

/* A debugfs test knob: while @on, vgem_p2p_hold_wait() waits */
struct vgem_p2p_hold {
	u32 on;
	atomic_t held;			/* how many wait */
	wait_queue_head_t wq;
};

/* TTM's VRAM manager over [0, vram_size) of the BAR */
struct vgem_p2p_vram_mgr {
	struct ttm_resource_manager manager;
	spinlock_t lock;		/* protects mm */
	struct drm_mm mm;		/* in pages */
};

struct vgem_p2p_device {
	struct drm_device drm;
	struct ttm_device bdev;
	struct pci_dev *pdev;

	/* The whole BAR: [0, vram_size) for objects, then devmem */
	phys_addr_t bar_phys;		/* CPU physical address */
	pci_bus_addr_t bar_bus;		/* address on the PCI bus */
	resource_size_t bar_size;
	void __iomem *bar;		/* write-combined CPU mapping */
	/* the BAR's, for pci_p2pdma_*(); NULL: no importer gets the BAR */
	struct p2pdma_provider *provider;
	resource_size_t vram_size;
	struct vgem_p2p_vram_mgr vram;
	/*
	 * Set once unbind is done evicting (vgem_p2p_evict_all()): what is
	 * still in VRAM then is lost. Not TTM's use_type, which may not be
	 * cleared while objects are left in the manager. Set under
	 * vram_close_lock, which a CPU fault holds for read while it saves
	 * an object from VRAM after unplug (vgem_p2p_save_from_vram()), so
	 * that unbind does not return, and the BAR go, under its copy.
	 */
	struct rw_semaphore vram_close_lock;
	bool vram_closed;

	struct mutex objects_lock;	/* protects objects */
	struct list_head objects;	/* all objects, oldest first */

	/* VRAM quota charges, by mm: vgem_p2p_quota.c */
	spinlock_t vram_charge_lock;	/* protects vram_charges, their pages */
	DECLARE_HASHTABLE(vram_charges, 4);

	struct vgem_p2p_devmem devmem;
	struct vgem_p2p_counters stats;
	/* debugfs hold_after_lookup, see vgem_p2p_vma_p2p_lookup() */
	struct vgem_p2p_hold hold_after_lookup;
	/* debugfs hold_in_clear: creation, before it clears its VRAM */
	struct vgem_p2p_hold hold_in_clear;
	/* 7.2: live dma-buf mappings of the BAR, which unplug waits out */
	atomic_t dmabuf_bar_maps;
};

static inline struct vgem_p2p_device *to_vgem_p2p(struct drm_device *drm)
{
	return container_of(drm, struct vgem_p2p_device, drm);
}

static inline struct vgem_p2p_device *bdev_to_vdev(struct ttm_device *bdev)
{
	return container_of(bdev, struct vgem_p2p_device, bdev);
}

struct vgem_p2p_object {
	struct ttm_buffer_object tbo;
	u32 flags;			/* VGEM_P2P_CREATE_*, immutable */
	/*
	 * Whom its VRAM is charged to while it is there: the process that
	 * moved it in. Under the dma_resv.
	 */
	struct vgem_p2p_vram_charge *vram_charge;

	/*
	 * The resource's VRAM offset (~0: system memory) and populated
	 * pages, for readers without the dma_resv (OBJ_INFO, debugfs,
	 * fdinfo): written under it, read with READ_ONCE().
	 */
	u64 vram_offset;
	unsigned long nr_pages;
	/* VGEM_P2P_REASON_* of the last placement change, under the dma_resv */
	u32 reason;
	u64 moves;			/* under the dma_resv */
	/* set once creation placed it: its first placement is no move */
	bool created;
	struct list_head link;		/* in vgem_p2p_device.objects */

	/* Importer leases (struct vgem_p2p_lease), under maps_lock */
	spinlock_t maps_lock;
	struct list_head maps;
	unsigned int nr_maps;
	unsigned int nr_fallback_maps;
	/*
	 * Leases of importers that cannot reach the BAR: they hold the
	 * object in system memory (vgem_p2p_held_in_system()). Raised
	 * before the lookup takes the dma_resv, so a placement decision
	 * sees every lease given before it.
	 */
	unsigned int nr_refused_maps;
	atomic64_t p2p_maps_total;
	atomic64_t fallback_maps_total;

	/* under the dma_resv; obj->dma_buf goes with the last handle */
	struct dma_buf *dmabuf;
	atomic_t nr_attachments;
	/* of those, without peer2peer: they hold it in system memory too */
	atomic_t nr_system_attachments;
	atomic_t dmabuf_system_maps;	/* live, of system pages */
	atomic64_t move_notifies;

	/* the GEM release, then the device reference: vgem_p2p_gem.c */
	struct work_struct free_work;
	struct work_struct destroy_work;
};

static inline struct vgem_p2p_object *to_vgem_p2p_obj(struct drm_gem_object *obj)
{
	return container_of(obj, struct vgem_p2p_object, tbo.base);
}

static inline struct vgem_p2p_object *tbo_to_bo(struct ttm_buffer_object *tbo)
{
	return container_of(tbo, struct vgem_p2p_object, tbo);
}

static inline struct vgem_p2p_device *obj_to_vdev(struct vgem_p2p_object *bo)
{
	return bdev_to_vdev(bo->tbo.bdev);
}

static inline unsigned long vgem_p2p_npages(struct vgem_p2p_object *bo)
{
	return bo->tbo.base.size >> PAGE_SHIFT;
}

/* vram_offset of an object in system memory */
#define VGEM_P2P_NOWHERE	(~0ull)

/* Was the object in VRAM when its last move ended? No lock needed */
static inline bool vgem_p2p_in_vram(struct vgem_p2p_object *bo)
{
	return READ_ONCE(bo->vram_offset) != VGEM_P2P_NOWHERE;
}

/* Under the dma_resv: is the object's resource in VRAM now? */
static inline bool vgem_p2p_resident_vram(struct vgem_p2p_object *bo)
{
	dma_resv_assert_held(bo->tbo.base.resv);
	return bo->tbo.resource->mem_type == TTM_PL_VRAM;
}

/* How an importer reaches an object */
enum vgem_p2p_map_kind {
	VGEM_P2P_MAP_BUS,	/* BAR bus addresses, untranslated DMA */
	VGEM_P2P_MAP_IOVA,	/* BAR mapped by dma_map_resource() */
	VGEM_P2P_MAP_SYSTEM,	/* fallback: system pages, dma_map_page() */
};

/*
 * An importer's lease on a range of an object, from p2p_lookup to
 * p2p_release: who uses it, and how. It holds a reference on the object
 * and no DMA state: the importer maps and unmaps.
 */
struct vgem_p2p_lease {
#if LINUX_VERSION_CODE < KERNEL_VERSION(7, 0, 0)
	/* 6.1 retires: drm-patches/' lease; 7.2 has none yet (series B) */
	struct p2p_lease base;
#endif
	struct vgem_p2p_object *bo;
	struct device *importer;
	struct list_head link;		/* in bo->maps, under maps_lock */
	enum vgem_p2p_map_kind kind;	/* as pci_p2pdma_map_type() says */
	bool refused;			/* see nr_refused_maps */
	enum dma_data_direction dir;	/* DMA_BIDIRECTIONAL: it may write */
	pgoff_t first;			/* first page of the object */
	unsigned long npages;
};

/* Where vgem_p2p_place() puts an object */
enum vgem_p2p_where {
	VGEM_P2P_TO_SYSTEM,
	VGEM_P2P_TO_VRAM,	/* anywhere, compacting and evicting others */
	VGEM_P2P_TO_VRAM_ELSEWHERE,	/* as TO_VRAM, off its VRAM range */
	VGEM_P2P_RETURN_TO_VRAM,	/* compacting, never evicting */
};

/* vgem_p2p_vram_mgr.c */
void vgem_p2p_vram_mgr_init(struct vgem_p2p_device *vdev);
void vgem_p2p_vram_mgr_fini(struct vgem_p2p_device *vdev);
bool vgem_p2p_vram_fragmented(struct vgem_p2p_device *vdev, u64 size);
struct vgem_p2p_object *vgem_p2p_vram_next(struct vgem_p2p_device *vdev,
					   u64 *cursor);
u64 vgem_p2p_vram_used(struct vgem_p2p_device *vdev);
/* Why TTM's eviction found no room: vgem_p2p_vram_busy() */
enum vgem_p2p_vram_busy {
	VGEM_P2P_VRAM_FULL,	/* of what it may not evict */
	VGEM_P2P_VRAM_FENCED,	/* of what it may evict only once busy ones may */
	VGEM_P2P_VRAM_FREEING,	/* an object is being freed */
	VGEM_P2P_VRAM_HELD,	/* an object is reserved by another task */
	VGEM_P2P_VRAM_AGAIN,	/* an object is evictable now */
};

/*
 * A ttm_place flag of ours, beside TTM's: eviction for the place may take
 * busy objects too, waiting for their fences (vgem_p2p_eviction_valuable())
 */
#define VGEM_P2P_PL_FLAG_EVICT_BUSY	BIT(16)

/* Evictable-now verdicts in a row before "no room": TTM's fails for RAM */
#define VGEM_P2P_EVICT_AGAIN	16

enum vgem_p2p_vram_busy vgem_p2p_vram_busy(struct vgem_p2p_device *vdev,
					   struct vgem_p2p_object *self,
					   const struct ttm_placement *pl,
					   struct vgem_p2p_object **held);

/* vgem_p2p_ttm.c */
extern struct ttm_device_funcs vgem_p2p_ttm_funcs;
extern struct ttm_placement vgem_p2p_sys_placement;
int vgem_p2p_place(struct vgem_p2p_object *bo, enum vgem_p2p_where where,
		   u32 reason);
int vgem_p2p_move_to_vram(struct vgem_p2p_object *bo,
			  struct vgem_p2p_object **backoff);
int vgem_p2p_place_at(struct vgem_p2p_object *bo, u64 offset);
int vgem_p2p_save_from_vram(struct vgem_p2p_object *bo);

/* vgem_p2p_quota.c */
void vgem_p2p_vram_charges_init(struct vgem_p2p_device *vdev);
int vgem_p2p_vram_charge(struct vgem_p2p_object *bo);
void vgem_p2p_vram_uncharge(struct vgem_p2p_object *bo);

/* vgem_p2p_gem.c */
int vgem_p2p_dumb_create(struct drm_file *file, struct drm_device *dev,
			 struct drm_mode_create_dumb *args);
int vgem_p2p_create_ioctl(struct drm_device *dev, void *data,
			  struct drm_file *file);
int vgem_p2p_mmap_offset_ioctl(struct drm_device *dev, void *data,
			       struct drm_file *file);
int vgem_p2p_obj_info_ioctl(struct drm_device *dev, void *data,
			    struct drm_file *file);
void vgem_p2p_free_wq_flush(void);
int vgem_p2p_free_wq_init(void);
void vgem_p2p_free_wq_fini(void);

/* vgem_p2p_mmap.c */
extern const struct vm_operations_struct vgem_p2p_vm_ops;
/* 6.1 retires: TTM's vmas held TTM references */
int vgem_p2p_gem_mmap(struct drm_gem_object *obj, struct vm_area_struct *vma);

/* vgem_p2p_ttm.c, the placement policy */
bool vgem_p2p_held_in_system(struct vgem_p2p_object *bo);
u32 vgem_p2p_placement_reason(struct vgem_p2p_object *bo);
void vgem_p2p_return(struct vgem_p2p_object *bo);

/* vgem_p2p_peer.c (7.2), vgem_p2p_export.c (6.1): who reaches the BAR */
bool vgem_p2p_reaches_bar(struct vgem_p2p_device *vdev,
			  struct device *importer, u32 obj_flags);
int vgem_p2p_peer_ioctl(struct drm_device *dev, void *data,
			struct drm_file *file);

#if LINUX_VERSION_CODE < KERNEL_VERSION(7, 0, 0)
/*
 * 6.1 retires: vgem_p2p_export.c, on drm-patches/' map types, vma hook
 * and leases
 */
enum vgem_p2p_map_kind vgem_p2p_export_kind(struct vgem_p2p_device *vdev,
					    struct device *importer,
					    u32 obj_flags);
int vgem_p2p_export_bar(struct vgem_p2p_device *vdev, struct device *importer,
			enum vgem_p2p_map_kind *kind, u64 bar_offset, u64 size,
			enum dma_data_direction dir, dma_addr_t *addr);
void vgem_p2p_unexport_bar(struct device *importer, enum vgem_p2p_map_kind kind,
			   dma_addr_t addr, u64 size, enum dma_data_direction dir);
struct p2p_lease *vgem_p2p_vma_p2p_lookup(struct vm_area_struct *vma,
					  struct device *importer,
					  unsigned long start, unsigned long end,
					  unsigned long *pfns,
					  struct p2pdma_provider **providers,
					  unsigned int flags);
void vgem_p2p_vma_p2p_release(struct p2p_lease *lease);
int vgem_p2p_ttm_p2p_access(struct ttm_buffer_object *tbo,
			    struct device *importer, unsigned int flags);
int vgem_p2p_ttm_p2p_unreachable(struct ttm_buffer_object *tbo,
				 struct device *importer);
struct p2pdma_provider *vgem_p2p_ttm_p2p_provider(struct ttm_buffer_object *tbo);
#endif

/* vgem_p2p_move.c */
void vgem_p2p_compact(struct vgem_p2p_device *vdev);
int vgem_p2p_move_ioctl(struct drm_device *dev, void *data,
			struct drm_file *file);

/*
 * Device-private memory, all that the rest of the driver calls of it:
 * vgem_p2p_devmem.c (6.1), vgem_p2p_devmem_stub.c (7.2: none yet)
 */
int vgem_p2p_devmem_init(struct vgem_p2p_device *vdev,
			 resource_size_t bar_offset, resource_size_t size);
void vgem_p2p_devmem_fini(struct vgem_p2p_device *vdev);
void vgem_p2p_devmem_usage(struct vgem_p2p_device *vdev, u64 *size,
			   u64 *used);
/*
 * DRM_IOCTL_VGEM_P2P_PEER's device, with a reference, after its arguments
 * are checked: ERR_PTR(-EINVAL) for bad ones, ERR_PTR(-ENODEV) for a
 * device that does not exist.
 */
static inline struct pci_dev *
vgem_p2p_peer_get(const struct drm_vgem_p2p_peer *args)
{
	struct pci_dev *peer;

	if (args->flags || args->bus > 0xff || args->devfn > 0xff)
		return ERR_PTR(-EINVAL);
	peer = pci_get_domain_bus_and_slot(args->domain, args->bus,
					   args->devfn);
	return peer ?: ERR_PTR(-ENODEV);
}

/*
 * DRM_IOCTL_VGEM_P2P_MIGRATE's arguments, checked before anything else
 * whichever memory serves it: 0 or -EINVAL.
 */
static inline int
vgem_p2p_migrate_check(const struct drm_vgem_p2p_migrate *args)
{
	if (args->flags || args->direction > VGEM_P2P_MIGRATE_TO_RAM)
		return -EINVAL;
	if (!args->size || !PAGE_ALIGNED(args->addr) ||
	    !PAGE_ALIGNED(args->size) || args->addr + args->size < args->addr ||
	    args->addr + args->size > TASK_SIZE)
		return -EINVAL;
	return 0;
}

int vgem_p2p_migrate_ioctl(struct drm_device *dev, void *data,
			   struct drm_file *file);

/* vgem_p2p_dmabuf.c */
/*
 * An sg_table we fill for an importer (system pages; on 6.1 the BAR too),
 * and how to take it back
 */
struct vgem_p2p_dmabuf_sgt {
	struct sg_table sgt;
	enum vgem_p2p_map_kind kind;
	u64 size;
};

void vgem_p2p_dmabuf_move_notify(struct vgem_p2p_object *bo);
struct dma_buf *vgem_p2p_gem_prime_export(struct drm_gem_object *obj,
					  int flags);
struct drm_gem_object *vgem_p2p_gem_prime_import(struct drm_device *dev,
						 struct dma_buf *dma_buf);

/*
 * VRAM for peer2peer importers: vgem_p2p_dmabuf_bar.c (7.2),
 * vgem_p2p_dmabuf_bar_61.c (6.1)
 */
struct sg_table *vgem_p2p_dmabuf_map_bar(struct vgem_p2p_object *bo,
					 struct dma_buf_attachment *attach,
					 enum dma_data_direction dir);
bool vgem_p2p_dmabuf_unmap_bar(struct dma_buf_attachment *attach,
			       struct sg_table *sgt,
			       enum dma_data_direction dir);
bool vgem_p2p_dmabuf_pin_bar(struct dma_buf_attachment *attach);
void vgem_p2p_dmabuf_revoke(struct vgem_p2p_device *vdev);

#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
/* vgem_p2p_fdinfo.c; 6.1's is vgem_p2p_drv.c's */
struct drm_printer;
void vgem_p2p_show_fdinfo(struct drm_printer *p, struct drm_file *file);
#endif

/* vgem_p2p_debugfs.c */
void vgem_p2p_debugfs_init(struct drm_minor *minor);
void vgem_p2p_hold_wait(struct vgem_p2p_hold *h);

/* vgem_p2p_fence.c */
int vgem_p2p_fence_open(struct vgem_p2p_file *vfile);
void vgem_p2p_fence_close(struct vgem_p2p_file *vfile);
int vgem_p2p_fence_attach_ioctl(struct drm_device *dev, void *data,
				struct drm_file *file);
int vgem_p2p_fence_signal_ioctl(struct drm_device *dev, void *data,
				struct drm_file *file);

#endif /* _VGEM_P2P_DRV_H_ */
