// SPDX-License-Identifier: GPL-2.0
/*
 * VRAM as a TTM resource manager: ttm_range_manager (drm_mm, in pages),
 * but what it frees is poisoned before reuse, so a device that kept an
 * address reads poison, not another object's data; and a range-restricted
 * place (compaction, VGEM_P2P_MOVE_VRAM_AT) takes its lowest hole. It
 * never evicts: TTM does.
 */
#include <linux/io.h>
#include <linux/slab.h>

#include <drm/drm_drv.h>
#include <drm/ttm/ttm_range_manager.h>

#include "vgem_p2p_drv.h"

static struct vgem_p2p_vram_mgr *to_vram_mgr(struct ttm_resource_manager *man)
{
	return container_of(man, struct vgem_p2p_vram_mgr, manager);
}

static struct vgem_p2p_device *mgr_to_vdev(struct ttm_resource_manager *man)
{
	return container_of(man, struct vgem_p2p_device, vram.manager);
}

/* Under the manager's lock, which the node leaves before its BO goes */
static struct ttm_buffer_object *node_to_tbo(struct drm_mm_node *node)
{
	return container_of(node, struct ttm_range_mgr_node,
			    mm_nodes[0])->base.bo;
}

static int vgem_p2p_vram_mgr_alloc(struct ttm_resource_manager *man,
				   struct ttm_buffer_object *tbo,
				   const struct ttm_place *place,
				   struct ttm_resource **res)
{
	struct vgem_p2p_vram_mgr *mgr = to_vram_mgr(man);
	unsigned long lpfn = place->lpfn ?: man->size;
	struct ttm_range_mgr_node *node;
	enum drm_mm_insert_mode mode;
	int ret;

	node = kzalloc(struct_size(node, mm_nodes, 1), GFP_KERNEL);
	if (!node)
		return -ENOMEM;
	mode = place->fpfn || place->lpfn ? DRM_MM_INSERT_LOW :
					    DRM_MM_INSERT_BEST;
	ttm_resource_init(tbo, place, &node->base);

	spin_lock(&mgr->lock);
	ret = drm_mm_insert_node_in_range(&mgr->mm, &node->mm_nodes[0],
					  vgem_p2p_res_npages(&node->base), 0, 0,
					  place->fpfn, lpfn, mode);
	spin_unlock(&mgr->lock);
	if (ret) {
		ttm_resource_fini(man, &node->base);
		kfree(node);
		return ret;
	}
	node->base.start = node->mm_nodes[0].start;
	*res = &node->base;
	return 0;
}

static void vgem_p2p_vram_mgr_free(struct ttm_resource_manager *man,
				   struct ttm_resource *res)
{
	struct ttm_range_mgr_node *node = to_ttm_range_mgr_node(res);
	struct vgem_p2p_vram_mgr *mgr = to_vram_mgr(man);
	struct vgem_p2p_device *vdev = mgr_to_vdev(man);
	int idx;

	/* not yet free, so unlocked: 64 MiB is slow */
	if (drm_dev_enter(&vdev->drm, &idx)) {
		memset_io(vdev->bar + ((u64)res->start << PAGE_SHIFT),
			  VGEM_P2P_POISON_BYTE,
			  (u64)vgem_p2p_res_npages(res) << PAGE_SHIFT);
		drm_dev_exit(idx);
	}
	spin_lock(&mgr->lock);
	drm_mm_remove_node(&node->mm_nodes[0]);
	spin_unlock(&mgr->lock);
	ttm_resource_fini(man, res);
	kfree(node);
}

static bool vgem_p2p_vram_mgr_intersects(struct ttm_resource_manager *man,
					 struct ttm_resource *res,
					 const struct ttm_place *place,
					 size_t size)
{
	return place->fpfn < res->start + PFN_UP(size) &&
	       (!place->lpfn || place->lpfn > res->start);
}

static bool vgem_p2p_vram_mgr_compatible(struct ttm_resource_manager *man,
					 struct ttm_resource *res,
					 const struct ttm_place *place,
					 size_t size)
{
	return res->start >= place->fpfn &&
	       (!place->lpfn || res->start + PFN_UP(size) <= place->lpfn);
}

static void vgem_p2p_vram_mgr_debug(struct ttm_resource_manager *man,
				    struct drm_printer *printer)
{
	struct vgem_p2p_vram_mgr *mgr = to_vram_mgr(man);

	spin_lock(&mgr->lock);
	drm_mm_print(&mgr->mm, printer);
	spin_unlock(&mgr->lock);
}

static const struct ttm_resource_manager_func vgem_p2p_vram_mgr_func = {
	.alloc = vgem_p2p_vram_mgr_alloc,
	.free = vgem_p2p_vram_mgr_free,
	.intersects = vgem_p2p_vram_mgr_intersects,
	.compatible = vgem_p2p_vram_mgr_compatible,
	.debug = vgem_p2p_vram_mgr_debug,
};

void vgem_p2p_vram_mgr_init(struct vgem_p2p_device *vdev)
{
	struct vgem_p2p_vram_mgr *mgr = &vdev->vram;
	struct ttm_resource_manager *man = &mgr->manager;

	man->func = &vgem_p2p_vram_mgr_func;
	ttm_resource_manager_init(man, &vdev->bdev,
				  vdev->vram_size >> PAGE_SHIFT);
	spin_lock_init(&mgr->lock);
	drm_mm_init(&mgr->mm, 0, man->size);
	ttm_set_driver_manager(&vdev->bdev, TTM_PL_VRAM, man);
	ttm_resource_manager_set_used(man, true);
}

/* The device is gone or going: every object has left VRAM */
void vgem_p2p_vram_mgr_fini(struct vgem_p2p_device *vdev)
{
	struct vgem_p2p_vram_mgr *mgr = &vdev->vram;
	struct ttm_resource_manager *man = &mgr->manager;

	ttm_resource_manager_set_used(man, false);
	if (ttm_resource_manager_evict_all(&vdev->bdev, man))
		return;
	spin_lock(&mgr->lock);
	drm_mm_takedown(&mgr->mm);
	spin_unlock(&mgr->lock);
	ttm_resource_manager_cleanup(man);
	ttm_set_driver_manager(&vdev->bdev, TTM_PL_VRAM, NULL);
}

u64 vgem_p2p_vram_used(struct vgem_p2p_device *vdev)
{
	return ttm_resource_manager_usage(&vdev->vram.manager);
}

/* Enough VRAM free for @size in total, but no hole that holds it? */
bool vgem_p2p_vram_fragmented(struct vgem_p2p_device *vdev, u64 size)
{
	struct vgem_p2p_vram_mgr *mgr = &vdev->vram;
	u64 hole_start, hole_end, pages = size >> PAGE_SHIFT;
	struct drm_mm_node *hole;
	bool fits = false;

	if (vdev->vram_size - vgem_p2p_vram_used(vdev) < size)
		return false;
	spin_lock(&mgr->lock);
	drm_mm_for_each_hole(hole, &mgr->mm, hole_start, hole_end) {
		if (hole_end - hole_start >= pages) {
			fits = true;
			break;
		}
	}
	spin_unlock(&mgr->lock);
	return !fits;
}

/* Would freeing @node give room to a place of @pl, as TTM's range check? */
static bool vgem_p2p_node_in_placement(const struct drm_mm_node *node,
				       const struct ttm_placement *pl)
{
	const struct ttm_place *place;
	unsigned int i;

	for (i = 0; (place = vgem_p2p_pl_evict_place(pl, i)); i++) {
		if (node->start + node->size > place->fpfn &&
		    (!place->lpfn || node->start < place->lpfn))
			return true;
	}
	return false;
}

/*
 * Why TTM's eviction found no room for @self in @pl's busy places, from
 * the unpinned objects it could have evicted there:
 * - one idle and not reserved now: TTM ran while it was reserved, or
 *   before it went idle, so try again (VGEM_P2P_VRAM_AGAIN);
 * - one being freed gives its room back by itself (VGEM_P2P_VRAM_FREEING);
 * - one reserved by another task is contention, not a lack of room
 *   (VGEM_P2P_VRAM_HELD): *@held is the one of them at the lowest
 *   kernel address, referenced, for vgem_p2p_place_where() to order
 *   itself against (any fixed order would do);
 * - one fenced, unless @pl's places let eviction take busy objects
 *   (VGEM_P2P_PL_FLAG_EVICT_BUSY: then it is evictable now), is room
 *   only for the last resort (VGEM_P2P_VRAM_FENCED);
 * - otherwise what is left is pinned: VRAM is full.
 * Reservations are only peeked at: a node stays, and its BO with it,
 * while the manager's lock is held.
 */
enum vgem_p2p_vram_busy vgem_p2p_vram_busy(struct vgem_p2p_device *vdev,
					   struct vgem_p2p_object *self,
					   const struct ttm_placement *pl,
					   struct vgem_p2p_object **held)
{
	enum vgem_p2p_vram_busy busy = VGEM_P2P_VRAM_FULL;
	struct vgem_p2p_vram_mgr *mgr = &vdev->vram;
	struct ttm_buffer_object *lowest = NULL;
	const struct ttm_place *first = vgem_p2p_pl_evict_place(pl, 0);
	struct drm_mm_node *node;
	bool evict_busy = first && first->flags & VGEM_P2P_PL_FLAG_EVICT_BUSY;

	spin_lock(&mgr->lock);
	drm_mm_for_each_node(node, &mgr->mm) {
		struct ttm_buffer_object *tbo = node_to_tbo(node);

		/* peeks: TTM writes both without this lock */
		if (tbo == &self->tbo || READ_ONCE(tbo->pin_count) ||
		    !vgem_p2p_node_in_placement(node, pl))
			continue;
		if (vgem_p2p_bo_unreferenced(tbo) || READ_ONCE(tbo->deleted)) {
			busy = max(busy, VGEM_P2P_VRAM_FREEING);
		} else if (dma_resv_is_locked(tbo->base.resv)) {
			busy = max(busy, VGEM_P2P_VRAM_HELD);
			if (!lowest || tbo < lowest)
				lowest = tbo;
		} else if (!evict_busy &&
			   !dma_resv_test_signaled(tbo->base.resv,
						   DMA_RESV_USAGE_BOOKKEEP)) {
			busy = max(busy, VGEM_P2P_VRAM_FENCED);
		} else {
			busy = VGEM_P2P_VRAM_AGAIN;
			break;
		}
	}
	if (busy == VGEM_P2P_VRAM_HELD && !vgem_p2p_bo_get_unless_zero(lowest))
		busy = VGEM_P2P_VRAM_FREEING;
	spin_unlock(&mgr->lock);
	if (busy != VGEM_P2P_VRAM_HELD)
		lowest = NULL;
	*held = lowest ? tbo_to_bo(lowest) : NULL;
	return busy;
}

/*
 * For compaction's walk while objects move: the lowest object at or above
 * *@cursor, referenced, or NULL; *@cursor becomes its end.
 */
struct vgem_p2p_object *vgem_p2p_vram_next(struct vgem_p2p_device *vdev,
					   u64 *cursor)
{
	struct vgem_p2p_vram_mgr *mgr = &vdev->vram;
	struct ttm_buffer_object *tbo = NULL;
	struct drm_mm_node *node;

	spin_lock(&mgr->lock);
	drm_mm_for_each_node_in_range(node, &mgr->mm, *cursor >> PAGE_SHIFT,
				      mgr->manager.size) {
		if (node->start < *cursor >> PAGE_SHIFT)
			continue;
		*cursor = (node->start + node->size) << PAGE_SHIFT;
		if (vgem_p2p_bo_get_unless_zero(node_to_tbo(node))) {
			tbo = node_to_tbo(node);
			break;
		}
	}
	spin_unlock(&mgr->lock);
	return tbo ? tbo_to_bo(tbo) : NULL;
}
