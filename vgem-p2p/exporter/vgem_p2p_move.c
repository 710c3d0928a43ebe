// SPDX-License-Identifier: GPL-2.0
/*
 * Forced moves (DRM_IOCTL_VGEM_P2P_MOVE) and compaction of fragmented
 * VRAM, both TTM validations that invalidate importers (vgem_p2p_ttm.c).
 */
#include <linux/sched.h>

#include <drm/drm_drv.h>

#include "vgem_p2p_drv.h"

/* Into the lowest hole below @bo, if any; no busy placement: no eviction */
static void vgem_p2p_compact_one(struct vgem_p2p_object *bo)
{
	struct ttm_operation_ctx ctx = { .interruptible = false };
	struct ttm_place place = {
		.mem_type = TTM_PL_VRAM,
		.lpfn = bo->tbo.resource->start,
		.flags = VGEM_P2P_PL_NO_EVICT,
	};
	struct ttm_placement pl = { .num_placement = 1, .placement = &place };

	if (place.lpfn < vgem_p2p_npages(bo))
		return;
	ttm_bo_validate(&bo->tbo, &pl, &ctx);
}

/*
 * Slide VRAM objects, in address order, down into holes so that the holes
 * merge above them. Pinned, reserved (the caller's own too) and busy objects
 * stay, as eviction skips them.
 */
void vgem_p2p_compact(struct vgem_p2p_device *vdev)
{
	struct vgem_p2p_object *bo;
	u64 cursor = 0;

	atomic64_inc(&vdev->stats.compactions);
	while ((bo = vgem_p2p_vram_next(vdev, &cursor))) {
		struct dma_resv *resv = bo->tbo.base.resv;

		/*
		 * pin_count is written under the reservation; deleted by
		 * ttm_bo_release() without it, as it resurrects the object for
		 * a delayed destroy: a peek.
		 */
		if (dma_resv_trylock(resv)) {
			if (!READ_ONCE(bo->tbo.deleted) && !bo->tbo.pin_count &&
			    vgem_p2p_resident_vram(bo) &&
			    dma_resv_test_signaled(resv,
						   DMA_RESV_USAGE_BOOKKEEP))
				vgem_p2p_compact_one(bo);
			dma_resv_unlock(resv);
		}
		vgem_p2p_bo_put(&bo->tbo);
		cond_resched();
	}
}

static int vgem_p2p_move_locked(struct vgem_p2p_object *bo,
				struct drm_vgem_p2p_move *args,
				struct vgem_p2p_object **backoff)
{
	int ret;

	switch (args->target) {
	case VGEM_P2P_MOVE_SYSTEM:
		ret = vgem_p2p_place(bo, VGEM_P2P_TO_SYSTEM,
				     VGEM_P2P_REASON_MOVE);
		break;
	case VGEM_P2P_MOVE_VRAM:
		ret = vgem_p2p_move_to_vram(bo, backoff);
		break;
	default:
		ret = vgem_p2p_place_at(bo, args->offset);
		break;
	}
	args->offset = bo->vram_offset;
	return ret;
}

int vgem_p2p_move_ioctl(struct drm_device *dev, void *data,
			struct drm_file *file)
{
	struct vgem_p2p_device *vdev = to_vgem_p2p(dev);
	struct drm_vgem_p2p_move *args = data;
	struct drm_gem_object *obj;
	int ret, idx;

	if (args->flags || args->pad)
		return -EINVAL;
	/*
	 * A move into VRAM may evict others within the client's quota, as a
	 * creation may; choosing the offset is a debug tool for CAP_SYS_ADMIN.
	 */
	switch (args->target) {
	case VGEM_P2P_MOVE_VRAM_AT:
		if (!PAGE_ALIGNED(args->offset) ||
		    args->offset >= vdev->vram_size)
			return -EINVAL;
		if (!capable(CAP_SYS_ADMIN))
			return -EPERM;
		break;
	case VGEM_P2P_MOVE_VRAM:
	case VGEM_P2P_MOVE_SYSTEM:
		if (args->offset)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}

	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	if (args->target == VGEM_P2P_MOVE_VRAM_AT &&
	    args->offset + obj->size > vdev->vram_size) {
		ret = -EINVAL;
		goto out_put;
	}
	if (!drm_dev_enter(dev, &idx)) {
		ret = -ENODEV;
		goto out_put;
	}
	for (;;) {
		struct vgem_p2p_object *backoff;

		ret = dma_resv_lock_interruptible(obj->resv, NULL);
		if (ret)
			break;
		ret = vgem_p2p_move_locked(to_vgem_p2p_obj(obj), args,
					   &backoff);
		dma_resv_unlock(obj->resv);
		if (ret != -EDEADLK)
			break;
		/* as ww_mutex_lock_slow(): wait for it holding nothing */
		ret = dma_resv_lock_interruptible(backoff->tbo.base.resv, NULL);
		if (!ret)
			dma_resv_unlock(backoff->tbo.base.resv);
		vgem_p2p_bo_put(&backoff->tbo);
		if (ret)
			break;
	}
	drm_dev_exit(idx);
out_put:
	drm_gem_object_put(obj);
	return ret;
}
