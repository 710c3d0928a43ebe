// SPDX-License-Identifier: GPL-2.0
/*
 * GEM objects, which are TTM buffer objects: creation in VRAM or system
 * memory, dumb buffers, OBJ_INFO, and destruction.
 */
#include <linux/overflow.h>
#include <linux/slab.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem_ttm_helper.h>

#include "vgem_p2p_drv.h"

/* Module-wide, so that it outlives every device */
static struct workqueue_struct *vgem_p2p_free_wq;
/* Objects not destroyed yet, TTM's delayed deletes among them */
static atomic_t vgem_p2p_live_objects = ATOMIC_INIT(0);

/*
 * On our workqueue: the last device reference ends the ttm_device, whose
 * fini flushes TTM's delayed-delete worker, where bo_destroy may run.
 */
static void vgem_p2p_destroy_work(struct work_struct *work)
{
	struct vgem_p2p_object *bo =
		container_of(work, struct vgem_p2p_object, destroy_work);
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);

	kfree(bo);
	drm_dev_put(&vdev->drm);
	if (atomic_dec_and_test(&vgem_p2p_live_objects))
		wake_up_var(&vgem_p2p_live_objects);
}

/* ttm_buffer_object.destroy: TTM freed its memory */
static void vgem_p2p_bo_destroy(struct ttm_buffer_object *tbo)
{
	struct vgem_p2p_object *bo = tbo_to_bo(tbo);
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);

	WARN_ON(bo->nr_maps);
	mutex_lock(&vdev->objects_lock);
	list_del(&bo->link);
	mutex_unlock(&vdev->objects_lock);
	drm_gem_object_release(&tbo->base);
	queue_work(vgem_p2p_free_wq, &bo->destroy_work);
}

static void vgem_p2p_free_work(struct work_struct *work)
{
	struct vgem_p2p_object *bo =
		container_of(work, struct vgem_p2p_object, free_work);

	/*
	 * Wait for fences left by gone clients (they may stand for DMA), so
	 * TTM frees it now, not from a delayed delete that may outlive us.
	 */
	dma_resv_wait_timeout(bo->tbo.base.resv, DMA_RESV_USAGE_BOOKKEEP,
			      false, MAX_SCHEDULE_TIMEOUT);
	ttm_bo_fini(&bo->tbo);
}

/* May run in atomic context (p2p_release); TTM's release sleeps */
static void vgem_p2p_gem_free(struct drm_gem_object *obj)
{
	queue_work(vgem_p2p_free_wq, &to_vgem_p2p_obj(obj)->free_work);
}

static const struct drm_gem_object_funcs vgem_p2p_gem_funcs = {
	.free = vgem_p2p_gem_free,
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
	.mmap = drm_gem_ttm_mmap,
#else
	/* 6.1 retires: TTM's vmas held TTM references */
	.mmap = vgem_p2p_gem_mmap,
#endif
	.vm_ops = &vgem_p2p_vm_ops,
	.export = vgem_p2p_gem_prime_export,
	.print_info = drm_gem_ttm_print_info,
};

/*
 * @may_fall_back: without VRAM room or quota, start in system
 * memory, as if evicted at once, instead of -ENOSPC or -EDQUOT.
 */
static struct vgem_p2p_object *
vgem_p2p_object_create(struct vgem_p2p_device *vdev, u64 size, u32 flags,
		       bool may_fall_back)
{
	struct ttm_operation_ctx ctx = { .interruptible = false };
	struct vgem_p2p_object *bo;
	int ret;

	/* a size mmap offsets and dma-buf files can hold: a file's */
	if (!size || size > MAX_LFS_FILESIZE - PAGE_SIZE)
		return ERR_PTR(-EINVAL);
	size = PAGE_ALIGN(size);
	if (!(flags & VGEM_P2P_CREATE_SYSTEM) && size > vdev->vram_size &&
	    !may_fall_back)
		return ERR_PTR(-ENOSPC);
	/* one that starts in VRAM must be evictable (vgem_p2p_tt_populate()) */
	if (!(flags & VGEM_P2P_CREATE_SYSTEM) && size <= vdev->vram_size &&
	    size > (u64)(totalram_pages() / 2) << PAGE_SHIFT)
		return ERR_PTR(-EINVAL);

	bo = kzalloc_obj(*bo);
	if (!bo)
		return ERR_PTR(-ENOMEM);
	bo->flags = flags;
	bo->tbo.base.funcs = &vgem_p2p_gem_funcs;
	spin_lock_init(&bo->maps_lock);
	INIT_LIST_HEAD(&bo->maps);
	INIT_WORK(&bo->free_work, vgem_p2p_free_work);
	INIT_WORK(&bo->destroy_work, vgem_p2p_destroy_work);
	WRITE_ONCE(bo->vram_offset, VGEM_P2P_NOWHERE);
	drm_gem_private_object_init(&vdev->drm, &bo->tbo.base, size);
	drm_dev_get(&vdev->drm);
	atomic_inc(&vgem_p2p_live_objects);
	mutex_lock(&vdev->objects_lock);
	list_add_tail(&bo->link, &vdev->objects);
	mutex_unlock(&vdev->objects_lock);

	/* From here on, TTM's put destroys it (vgem_p2p_bo_destroy()) */
	ret = ttm_bo_init_reserved(&vdev->bdev, &bo->tbo, ttm_bo_type_device,
				   &vgem_p2p_sys_placement, 0, &ctx, NULL, NULL,
				   vgem_p2p_bo_destroy);
	if (ret)
		return ERR_PTR(ret == -ENOSPC ? -ENOMEM : ret);
	/*
	 * Created in system memory, then placed; vgem_p2p_bo_move() clears
	 * VRAM on the way in. SYSTEM objects get zeroed pages on first use.
	 */
	ret = flags & VGEM_P2P_CREATE_SYSTEM ? 0 :
	      vgem_p2p_place(bo, VGEM_P2P_TO_VRAM, VGEM_P2P_REASON_CREATE);
	if ((ret == -ENOSPC || ret == -EDQUOT) && may_fall_back)
		ret = 0;
	bo->created = true;
	dma_resv_unlock(bo->tbo.base.resv);
	if (ret) {
		drm_gem_object_put(&bo->tbo.base);
		return ERR_PTR(ret);
	}
	return bo;
}

static int vgem_p2p_create_handle(struct drm_file *file,
				  struct vgem_p2p_device *vdev, u64 size,
				  u32 flags, bool may_fall_back, u32 *handle)
{
	struct vgem_p2p_object *bo;
	int ret, idx;

	/* unplug evicts what it sees: a later one would clear a BAR not ours */
	if (!drm_dev_enter(&vdev->drm, &idx))
		return -ENODEV;
	bo = vgem_p2p_object_create(vdev, size, flags, may_fall_back);
	drm_dev_exit(idx);
	if (IS_ERR(bo))
		return PTR_ERR(bo);
	ret = drm_gem_handle_create(file, &bo->tbo.base, handle);
	drm_gem_object_put(&bo->tbo.base);
	return ret;
}

int vgem_p2p_dumb_create(struct drm_file *file, struct drm_device *dev,
			 struct drm_mode_create_dumb *args)
{
	u64 pitch, size;

	if (!args->width || !args->height || !args->bpp)
		return -EINVAL;
	pitch = (u64)args->width * DIV_ROUND_UP(args->bpp, 8);
	if (check_mul_overflow(pitch, (u64)args->height, &size) ||
	    pitch > U32_MAX || size > U64_MAX - PAGE_SIZE)
		return -EINVAL;
	args->pitch = pitch;
	args->size = PAGE_ALIGN(size);

	/* in VRAM, falling back to system memory where vgem would succeed */
	return vgem_p2p_create_handle(file, to_vgem_p2p(dev), args->size, 0,
				      true, &args->handle);
}

int vgem_p2p_create_ioctl(struct drm_device *dev, void *data,
			  struct drm_file *file)
{
	struct drm_vgem_p2p_create *args = data;

	if (args->flags & ~VGEM_P2P_CREATE_FLAGS)
		return -EINVAL;
	if (!args->size || args->size > U64_MAX - PAGE_SIZE)
		return -EINVAL;
	args->size = PAGE_ALIGN(args->size);
	return vgem_p2p_create_handle(file, to_vgem_p2p(dev), args->size,
				      args->flags, false, &args->handle);
}

/* MAP_DUMB for render nodes, which may not call it */
int vgem_p2p_mmap_offset_ioctl(struct drm_device *dev, void *data,
			       struct drm_file *file)
{
	struct drm_vgem_p2p_mmap_offset *args = data;

	if (args->flags)
		return -EINVAL;
	return drm_gem_ttm_dumb_map_offset(file, dev, args->handle,
					   &args->offset);
}

int vgem_p2p_obj_info_ioctl(struct drm_device *dev, void *data,
			    struct drm_file *file)
{
	struct drm_vgem_p2p_obj_info *args = data;
	struct drm_gem_object *obj;
	struct vgem_p2p_object *bo;
	int ret;

	if (args->pad)
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	bo = to_vgem_p2p_obj(obj);

	/* a placement and its reason from the same moment */
	ret = dma_resv_lock_interruptible(obj->resv, NULL);
	if (ret)
		goto out_put;
	args->size = obj->size;
	args->flags = bo->flags;
	args->placement = vgem_p2p_in_vram(bo) ? VGEM_P2P_PLACEMENT_VRAM :
					VGEM_P2P_PLACEMENT_SYSTEM;
	args->vram_offset = bo->vram_offset;
	args->moves = bo->moves;
	args->reason = vgem_p2p_placement_reason(bo);
	dma_resv_unlock(obj->resv);

	spin_lock(&bo->maps_lock);
	args->mappings = bo->nr_maps;
	spin_unlock(&bo->maps_lock);
	args->p2p_maps = atomic64_read(&bo->p2p_maps_total);
	args->fallback_maps = atomic64_read(&bo->fallback_maps_total);
	args->dmabuf_attachments = atomic_read(&bo->nr_attachments);
	args->pad3 = 0;
	args->move_notifies = atomic64_read(&bo->move_notifies);
out_put:
	drm_gem_object_put(obj);
	return ret;
}

void vgem_p2p_free_wq_flush(void)
{
	flush_workqueue(vgem_p2p_free_wq);
}

int vgem_p2p_free_wq_init(void)
{
	vgem_p2p_free_wq = alloc_workqueue("vgem_p2p_free", VGEM_P2P_WQ_PERCPU, 0);
	return vgem_p2p_free_wq ? 0 : -ENOMEM;
}

/*
 * Module exit: a last p2p_release may have just queued a free, and TTM may
 * still hold delayed deletes: wait for every object before the code goes.
 */
void vgem_p2p_free_wq_fini(void)
{
	wait_var_event(&vgem_p2p_live_objects,
		       !atomic_read(&vgem_p2p_live_objects));
	destroy_workqueue(vgem_p2p_free_wq);
}
