/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vgem_p2p builds against two kernels while the project moves from
 * Debian's 6.1 with drm-patches/ to Debian's 7.2 with drm-patches-7.2/
 * (issue 49, docs/port-7.2.md): the API renames and signature changes
 * between them, each in the 7.2 form the driver's code uses. Every 6.1
 * part here and elsewhere says "6.1 retires:", so that dropping 6.1 is a
 * grep; the Kbuild picks the files of each kernel.
 */
#ifndef _VGEM_P2P_COMPAT_H_
#define _VGEM_P2P_COMPAT_H_

#include <linux/kref.h>
#include <linux/slab.h>
#include <linux/timer.h>
#include <linux/version.h>

#include <drm/drm_gem.h>
#include <drm/ttm/ttm_device.h>
#include <drm/ttm/ttm_placement.h>
#include <drm/ttm/ttm_resource.h>

#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
#include <drm/ttm/ttm_bo.h>
#else
/* 6.1 retires: ttm_bo_api.h and ttm_bo_driver.h, one ttm_bo.h on 7.2 */
#include <drm/ttm/ttm_bo_api.h>
#include <drm/ttm/ttm_bo_driver.h>
#include <drm/ttm/ttm_tt.h>
/* 6.1 retires: drm-patches/' vma hook and leases (series B on 7.2) */
#include <linux/p2p_map.h>
#endif

#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
/* The namespace of the dma-buf symbols, as MODULE_IMPORT_NS() takes it */
#define VGEM_P2P_NS_DMA_BUF	"DMA_BUF"
#else
/* 6.1 retires: namespaces as bare words, strings on 7.2 */
#define VGEM_P2P_NS_DMA_BUF	DMA_BUF
#endif

/*
 * Renames: the code calls the 7.2 name; 6.1 gets the 6.1 function under it.
 */
/* 6.1 retires: from_timer() */
#ifndef timer_container_of
#define timer_container_of(var, callback_timer, timer_fieldname) \
	from_timer(var, callback_timer, timer_fieldname)
#endif

/* 6.1 retires: kzalloc(sizeof(*p), GFP_KERNEL) */
#ifndef kzalloc_obj
#define kzalloc_obj(P)	kzalloc(sizeof(P), GFP_KERNEL)
#endif

#if LINUX_VERSION_CODE < KERNEL_VERSION(7, 0, 0)
/* 6.1 retires: dma_buf_move_notify() */
#define dma_buf_invalidate_mappings(dmabuf)	dma_buf_move_notify(dmabuf)
/* 6.1 retires: the GEM free put the reference TTM's init gave */
#define ttm_bo_fini(tbo)			ttm_bo_put(tbo)

/* 6.1 retires: ttm_tt_populate() for drivers, TTM's own on 7.2 */
static inline int ttm_bo_populate(struct ttm_buffer_object *tbo,
				  struct ttm_operation_ctx *ctx)
{
	return ttm_tt_populate(tbo->bdev, tbo->ttm, ctx);
}
#endif

static inline int
vgem_p2p_ttm_device_init(struct ttm_device *bdev, struct ttm_device_funcs *funcs,
			 struct device *dev, struct address_space *mapping,
			 struct drm_vma_offset_manager *vma_manager)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
	/* no TTM_ALLOCATION_* flag: pages from the pool, any address */
	return ttm_device_init(bdev, funcs, dev, mapping, vma_manager, 0);
#else
	/* 6.1 retires: use_dma_alloc and use_dma32, alloc_flags on 7.2 */
	return ttm_device_init(bdev, funcs, dev, mapping, vma_manager, false,
			       false);
#endif
}

/*
 * References on an object (a TTM BO that is a GEM object) taken by
 * lookups that race with its free, as xe_bo_get_unless_zero(): the GEM
 * reference, as everywhere else. The last one queues the GEM free
 * (vgem_p2p_gem.c), which lets TTM's own go with ttm_bo_fini().
 */
static inline bool vgem_p2p_bo_get_unless_zero(struct ttm_buffer_object *tbo)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
	return kref_get_unless_zero(&tbo->base.refcount);
#else
	/* 6.1 retires: TTM's own references, internal to TTM on 7.2 */
	return ttm_bo_get_unless_zero(tbo);
#endif
}

static inline void vgem_p2p_bo_put(struct ttm_buffer_object *tbo)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
	drm_gem_object_put(&tbo->base);
#else
	/* 6.1 retires: TTM's own references, internal to TTM on 7.2 */
	ttm_bo_put(tbo);
#endif
}

/* Has the last reference gone, so that the object is being freed? */
static inline bool vgem_p2p_bo_unreferenced(struct ttm_buffer_object *tbo)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
	return !kref_read(&tbo->base.refcount);
#else
	/* 6.1 retires: TTM's own references, internal to TTM on 7.2 */
	return !kref_read(&tbo->kref);
#endif
}

/* A resource's size in pages */
static inline unsigned long vgem_p2p_res_npages(const struct ttm_resource *res)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
	return PFN_UP(res->size);
#else
	/* 6.1 retires: ttm_resource.num_pages, size in bytes on 7.2 */
	return res->num_pages;
#endif
}

/*
 * Placements. TTM on 7.2 has one list of places: those flagged
 * TTM_PL_FLAG_DESIRED it tries only without evicting, those flagged
 * TTM_PL_FLAG_FALLBACK only by evicting, others both ways. Ours are of
 * one kind at a time: VGEM_P2P_PL_NO_EVICT on every place, or on none
 * once vgem_p2p_pl_evict() lets TTM evict for them.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
#define VGEM_P2P_PL_NO_EVICT	TTM_PL_FLAG_DESIRED

/* TTM may evict others for the places of @pl, which are @places */
static inline void vgem_p2p_pl_evict(struct ttm_placement *pl,
				     struct ttm_place *places)
{
	unsigned int i;

	for (i = 0; i < pl->num_placement; i++)
		places[i].flags &= ~TTM_PL_FLAG_DESIRED;
}

/* The @n-th place of @pl that TTM evicts others for, NULL past the last */
static inline const struct ttm_place *
vgem_p2p_pl_evict_place(const struct ttm_placement *pl, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < pl->num_placement; i++)
		if (!(pl->placement[i].flags & TTM_PL_FLAG_DESIRED) && !n--)
			return &pl->placement[i];
	return NULL;
}
#else
/* 6.1 retires: placement and busy_placement, no TTM_PL_FLAG_DESIRED */
#define VGEM_P2P_PL_NO_EVICT	0

/* 6.1 retires: placement and busy_placement, no TTM_PL_FLAG_DESIRED */
static inline void vgem_p2p_pl_evict(struct ttm_placement *pl,
				     struct ttm_place *places)
{
	pl->num_busy_placement = pl->num_placement;
	pl->busy_placement = places;
}

/* 6.1 retires: placement and busy_placement, no TTM_PL_FLAG_DESIRED */
static inline const struct ttm_place *
vgem_p2p_pl_evict_place(const struct ttm_placement *pl, unsigned int n)
{
	return n < pl->num_busy_placement ? &pl->busy_placement[n] : NULL;
}
#endif

/*
 * Tracepoints: on 7.2 __assign_str() takes its source from __string().
 * For TP_fast_assign() in vgem_p2p_trace.h.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
/* what follows @dst is the source 6.1 wants */
#define vgem_p2p_assign_str(dst, ...)	__assign_str(dst)
#else
/* 6.1 retires: __assign_str(dst, src) */
#define vgem_p2p_assign_str(dst, src)	__assign_str(dst, src)
#endif

/*
 * 6.1 retires: 7.2 wants a workqueue to say WQ_PERCPU or WQ_UNBOUND
 * (alloc_workqueue() WARNs otherwise); per-CPU was 6.1's default.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
#define VGEM_P2P_WQ_PERCPU	WQ_PERCPU
#else
#define VGEM_P2P_WQ_PERCPU	0
#endif

#endif /* _VGEM_P2P_COMPAT_H_ */
