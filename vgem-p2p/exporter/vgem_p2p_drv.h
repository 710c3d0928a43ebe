/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vgem-p2p: vgem with VRAM, as a TTM driver. Shared definitions of the
 * driver's files.
 *
 * Locking, outermost first:
 *
 *   mmap_lock (CPU faults, hmm_range_fault() calling p2p_lookup)
 *     dma_resv of an object (reservation_ww_class): its placement
 *       TTM's lru_lock, the VRAM manager's lock    (inside TTM)
 *       i_mmap_rwsem, mmu notifiers   (ttm_bo_unmap_virtual() in moves)
 *         vgem_p2p_object.maps_lock   importer leases (p2p_release)
 *
 * An object's placement belongs to its dma_resv, as every TTM BO's does:
 * TTM moves it (ttm_bo_validate(), eviction) with the dma_resv held, and
 * whoever uses the placement to reach the memory (a CPU fault,
 * p2p_lookup, map_dma_buf, pin) holds it too. There is no device-wide
 * lock across a move: the moving object stalls only itself. Eviction
 * and compaction for another object only try-lock the objects they
 * would move, as TTM's eviction does (ttm_mem_evict_first()).
 *
 * Importers' move_notify callbacks run inside our moves with the
 * dma_resv held, and call back into dma_buf_unmap_attachment(): so
 * unmap_dma_buf takes no lock of ours. p2p_release() is called by
 * importers from their mmu notifier callbacks, inside
 * ttm_bo_unmap_virtual() of our moves: so it takes only maps_lock, which
 * is never held across an invalidation. Nothing may copy to or from user
 * space under a dma_resv, as a user fault would take mmap_lock inside it.
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
#include <linux/p2p_map.h>
#include <linux/pci.h>
#include <linux/pci-p2pdma.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include <drm/drm_device.h>
#include <drm/drm_gem.h>
#include <drm/drm_mm.h>
#include <drm/ttm/ttm_bo_api.h>
#include <drm/ttm/ttm_bo_driver.h>
#include <drm/ttm/ttm_device.h>
#include <drm/ttm/ttm_placement.h>
#include <drm/ttm/ttm_resource.h>

#include "vgem_p2p_drm.h"

#define DRIVER_NAME	"vgem_p2p"
#define VGEM_P2P_BAR	2

/*
 * The device-private pages one process (mm) migrated into one device,
 * against devmem_quota_pages: every open file of the process shares it,
 * so opening more files gives no more pages. Found by its mm in
 * vgem_p2p_devmem.charges. References: one per charged page, in its
 * zone_device_data, dropped by page_free; one per MIGRATE running for the
 * mm. The pages live in the mm, not in any file, and may outlive the mm's
 * last user (a fork's child maps them too, an importer holds them), so
 * the charge holds the mm_struct (mmgrab(), not its address space): no
 * other mm can take the same address while the charge is in the table.
 */
struct vgem_p2p_devmem_charge {
	struct hlist_node node;		/* in devmem.charges, under devmem.lock */
	struct mm_struct *mm;		/* the key; grabbed */
	refcount_t ref;			/* dropped to 0 under devmem.lock */
	atomic_long_t pages;
	struct llist_node free_node;	/* in devmem.free_charges, once dead */
};

/*
 * A client: an open file, and the VRAM of the objects it created, against
 * vram_quota_pages (vgem_p2p_client.c). References: the file's, and one
 * per object it created, which may outlive the file.
 */
struct vgem_p2p_client {
	struct kref ref;
	atomic_long_t vram_pages;
};

struct vgem_p2p_file {
	struct idr fence_idr;
	struct mutex fence_mutex;	/* protects fence_idr */
	struct vgem_p2p_client *client;
};

/* Device counters, DRM_IOCTL_VGEM_P2P_STATS; see the uAPI for meanings */
struct vgem_p2p_counters {
	atomic64_t p2p_maps;
	atomic64_t p2p_unmaps;
	atomic64_t p2p_pages_bus;
	atomic64_t p2p_pages_iova;
	atomic64_t fallbacks;
	atomic64_t moves;
	atomic64_t evictions;
	atomic64_t compactions;
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

/*
 * Device-private memory: the last quarter of the BAR, handed to the core
 * as MEMORY_DEVICE_PRIVATE pages. Page i of the pgmap is backed by the
 * BAR at @bar_offset + i * PAGE_SIZE.
 */
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
	/* live charges, by mm; a charge leaves it when its last ref goes */
	DECLARE_HASHTABLE(charges, 4);
	/*
	 * Dead charges, whose mm_struct is dropped from free_work: page_free
	 * may run in atomic context (under a page table lock), and mmdrop()
	 * may free the mm there, which must not be done in atomic context.
	 */
	struct llist_head free_charges;
	struct work_struct free_work;
};

/**
 * struct vgem_p2p_hold - a test knob that holds lookups after they answer
 * @on: set through debugfs: while it is, vgem_p2p_hold_wait() waits.
 * @held: how many wait (debugfs).
 * @wq: where they wait.
 */
struct vgem_p2p_hold {
	u32 on;
	atomic_t held;
	wait_queue_head_t wq;
};

/*
 * The VRAM manager: a TTM resource manager over [0, vram_size) of the
 * BAR, on drm_mm as ttm_range_manager is, that fills what it frees with
 * VGEM_P2P_POISON_BYTE (vgem_p2p_vram_mgr.c).
 */
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

	struct mutex objects_lock;	/* protects objects */
	struct list_head objects;	/* all objects, oldest first */

	struct vgem_p2p_devmem devmem;
	struct vgem_p2p_counters stats;
	/* debugfs hold_after_lookup, see vgem_p2p_vma_p2p_lookup() */
	struct vgem_p2p_hold hold_after_lookup;
	/* debugfs hold_in_clear: creation, before it clears its VRAM */
	struct vgem_p2p_hold hold_in_clear;
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
	/* charged for the object's VRAM while it is there; referenced */
	struct vgem_p2p_client *owner;

	/*
	 * Where the object is, as the last move left it: its VRAM offset, ~0
	 * in system memory, a copy of what its TTM resource says for
	 * OBJ_INFO, debugfs and fdinfo, which do not take the dma_resv.
	 * Written under the dma_resv (the move callback), read with
	 * READ_ONCE() elsewhere (vgem_p2p_in_vram()).
	 */
	u64 vram_offset;
	/* pages of its ttm_tt while populated, for fdinfo; as vram_offset */
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
	 * Of those, the leases of importers that cannot reach the BAR
	 * (vgem_p2p_lease.refused): while there are any, no importer's
	 * lookup brings the object back to VRAM, so that importers of
	 * mixed reachability do not bounce it (vgem_p2p_held_in_system()).
	 * Raised before the lookup takes the dma_resv, so that a placement
	 * decision sees every lease given before it.
	 */
	unsigned int nr_refused_maps;
	atomic64_t p2p_maps_total;
	atomic64_t fallback_maps_total;

	/*
	 * Our dma-buf while it exists (export to release), under the
	 * object's dma_resv. Not obj->dma_buf, which is dropped with the last
	 * GEM handle while the dma-buf and its attachments live on.
	 */
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

/* Was the object in VRAM when its last move ended? No lock needed */
static inline bool vgem_p2p_in_vram(struct vgem_p2p_object *bo)
{
	return READ_ONCE(bo->vram_offset) != ~0ull;
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
 * One importer's lease on a range of an object, given by p2p_lookup and
 * freed by p2p_release: the export policy's record of who uses the
 * object, and how. Holds a reference on the object, and no DMA state:
 * the importer maps and unmaps.
 */
struct vgem_p2p_lease {
	struct p2p_lease base;
	struct vgem_p2p_object *bo;
	struct device *importer;
	struct list_head link;		/* in bo->maps, under maps_lock */
	/* where the importer reaches the pages, as pci_p2pdma_map_type() says */
	enum vgem_p2p_map_kind kind;
	/* the importer cannot (or may not) reach the BAR: see nr_refused_maps */
	bool refused;
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
bool vgem_p2p_vram_contended(struct vgem_p2p_device *vdev,
			     struct vgem_p2p_object *self);

/* vgem_p2p_ttm.c */
extern struct ttm_device_funcs vgem_p2p_ttm_funcs;
int vgem_p2p_place(struct vgem_p2p_object *bo, enum vgem_p2p_where where);
int vgem_p2p_place_at(struct vgem_p2p_object *bo, u64 offset);

/* vgem_p2p_client.c */
struct vgem_p2p_client *vgem_p2p_client_create(void);
void vgem_p2p_client_put(struct vgem_p2p_client *client);
bool vgem_p2p_quota_allows(struct vgem_p2p_object *bo);
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
int vgem_p2p_gem_mmap(struct drm_gem_object *obj, struct vm_area_struct *vma);

/* vgem_p2p_export.c */
enum vgem_p2p_map_kind vgem_p2p_export_kind(struct vgem_p2p_device *vdev,
					    struct device *importer,
					    u32 obj_flags);
bool vgem_p2p_importer_translated(struct device *importer);
bool vgem_p2p_importer_reaches_bar(struct vgem_p2p_device *vdev,
				   struct device *importer);
int vgem_p2p_export_bar(struct vgem_p2p_device *vdev, struct device *importer,
			enum vgem_p2p_map_kind *kind, u64 bar_offset, u64 size,
			enum dma_data_direction dir, dma_addr_t *addr);
void vgem_p2p_unexport_bar(struct device *importer, enum vgem_p2p_map_kind kind,
			   dma_addr_t addr, u64 size, enum dma_data_direction dir);
int vgem_p2p_peer_ioctl(struct drm_device *dev, void *data,
			struct drm_file *file);
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
bool vgem_p2p_held_in_system(struct vgem_p2p_object *bo);
u32 vgem_p2p_placement_reason(struct vgem_p2p_object *bo);
bool vgem_p2p_may_return(struct vgem_p2p_object *bo);

/* vgem_p2p_move.c */
void vgem_p2p_compact(struct vgem_p2p_device *vdev);
int vgem_p2p_move_ioctl(struct drm_device *dev, void *data,
			struct drm_file *file);

/* vgem_p2p_devmem.c */
int vgem_p2p_devmem_init(struct vgem_p2p_device *vdev,
			 resource_size_t bar_offset, resource_size_t size);
void vgem_p2p_devmem_fini(struct vgem_p2p_device *vdev);
int vgem_p2p_migrate_ioctl(struct drm_device *dev, void *data,
			   struct drm_file *file);

/* vgem_p2p_dmabuf.c */
void vgem_p2p_dmabuf_move_notify(struct vgem_p2p_object *bo);
struct dma_buf *vgem_p2p_gem_prime_export(struct drm_gem_object *obj,
					  int flags);
struct drm_gem_object *vgem_p2p_gem_prime_import(struct drm_device *dev,
						 struct dma_buf *dma_buf);

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
