// SPDX-License-Identifier: GPL-2.0
/*
 * Moving objects: forced moves (DRM_IOCTL_VGEM_P2P_MOVE), compaction of
 * fragmented VRAM, eviction to system memory and the way back.
 *
 * Every move follows the same steps, under the object's dma_resv and the
 * device lock (see vgem_p2p_drv.h for the order, and why eviction and
 * compaction only try-lock the dma_resv of the objects they move):
 *  1. invalidate: zap the object's range in every CPU mapping of the
 *     device file. That fires the mmu notifiers of every process mapping
 *     it, and importers release their p2p mappings (p2p_unmap) from their
 *     callbacks, before unmap_mapping_range() returns. Then tell the
 *     dynamic importers of its dma-buf (dma_buf_move_notify()), which
 *     drop their mappings and map again, under the dma_resv, after the
 *     move. CPU faults, new p2p_map and map_dma_buf calls wait for the
 *     device lock, so after this step nobody can reach the old location;
 *  2. copy the contents to the new location;
 *  3. switch the placement;
 *  4. poison the old VRAM location.
 */
#include <linux/highmem.h>
#include <linux/io.h>

#include <drm/drm_drv.h>
#include <drm/drm_vma_manager.h>

#include "vgem_p2p_drv.h"
#include "vgem_p2p_trace.h"

void vgem_p2p_invalidate(struct vgem_p2p_object *bo)
{
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);

	lockdep_assert_held(&vdev->lock);
	dma_resv_assert_held(bo->base.resv);

	/*
	 * Mmaps of the object's dma-buf too: drm_gem_dmabuf_export() gives
	 * the dma-buf file the device's address space.
	 */
	drm_vma_node_unmap(&bo->base.vma_node, vdev->drm.anon_inode->i_mapping);
	atomic64_inc(&vdev->stats.invalidations);
	trace_vgem_p2p_invalidate(bo, READ_ONCE(bo->nr_maps));

	if (bo->dmabuf) {
		trace_vgem_p2p_move_notify(bo, atomic_read(&bo->nr_attachments));
		dma_buf_move_notify(bo->dmabuf);
		atomic64_inc(&bo->move_notifies);
		atomic64_inc(&vdev->stats.move_notifies);
	}
}

/*
 * Lock an object that eviction or compaction would move for somebody
 * else. @self is the object the caller moves, whose dma_resv it holds.
 */
static bool vgem_p2p_trylock_other(struct vgem_p2p_object *bo,
				   struct vgem_p2p_object *self)
{
	return bo == self || dma_resv_trylock(bo->base.resv);
}

static void vgem_p2p_unlock_other(struct vgem_p2p_object *bo,
				  struct vgem_p2p_object *self)
{
	if (bo != self)
		dma_resv_unlock(bo->base.resv);
}

static void vgem_p2p_moved(struct vgem_p2p_object *bo, u64 bytes)
{
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);

	bo->moves++;
	atomic64_inc(&vdev->stats.moves);
	atomic64_add(bytes, &vdev->stats.bytes_copied);
}

/* Copy VRAM to VRAM through a bounce page; forward, so dst <= src is safe */
static int vgem_p2p_copy_vram(struct vgem_p2p_device *vdev, u64 dst, u64 src,
			      u64 size)
{
	void *bounce;
	u64 done;

	if (dst == src)
		return 0;
	if (WARN_ON(dst > src && dst < src + size))
		return -EINVAL;
	bounce = (void *)__get_free_page(GFP_KERNEL);
	if (!bounce)
		return -ENOMEM;
	for (done = 0; done < size; done += PAGE_SIZE) {
		memcpy_fromio(bounce, vdev->bar + src + done, PAGE_SIZE);
		memcpy_toio(vdev->bar + dst + done, bounce, PAGE_SIZE);
	}
	free_page((unsigned long)bounce);
	return 0;
}

/**
 * vgem_p2p_move_to_system - evict an object from VRAM
 * @bo: the object
 *
 * Also gives an object already in system memory its pages, if it has
 * none yet: callers want to use them.
 *
 * Return: 0 (also when already in system memory), -ENOMEM, or -ENODEV
 * if the contents were lost with the device.
 */
int vgem_p2p_move_to_system(struct vgem_p2p_object *bo)
{
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);
	unsigned long i, npages = vgem_p2p_npages(bo);
	u64 offset;
	int ret;

	lockdep_assert_held(&vdev->lock);

	/* In VRAM, the shmem file is empty: this allocates the pages */
	ret = vgem_p2p_pages_get(bo);
	if (ret || !bo->in_vram)
		return ret;

	vgem_p2p_invalidate(bo);
	offset = bo->node.start;
	for (i = 0; i < npages; i++) {
		void *dst = kmap_local_page(bo->pages[i]);

		memcpy_fromio(dst, vdev->bar + offset + i * PAGE_SIZE, PAGE_SIZE);
		kunmap_local(dst);
	}
	bo->in_vram = false;
	vgem_p2p_vram_free(vdev, &bo->node);
	vgem_p2p_vram_poison(vdev, offset, bo->base.size);

	vgem_p2p_moved(bo, bo->base.size);
	atomic64_inc(&vdev->stats.evictions);
	trace_vgem_p2p_evict(bo, offset);
	return 0;
}

/* From system memory into an allocated @node; none used yet means zeroes */
static void vgem_p2p_fill_vram(struct vgem_p2p_object *bo,
			       struct drm_mm_node *node)
{
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);
	unsigned long i, npages = vgem_p2p_npages(bo);

	if (!bo->pages) {
		memset_io(vdev->bar + node->start, 0, bo->base.size);
		return;
	}
	for (i = 0; i < npages; i++) {
		void *src = kmap_local_page(bo->pages[i]);

		memcpy_toio(vdev->bar + node->start + i * PAGE_SIZE, src,
			    PAGE_SIZE);
		kunmap_local(src);
	}
	vgem_p2p_pages_release(bo);
}

/**
 * vgem_p2p_move_to_vram - move an object into VRAM, or within it
 * @bo: the object
 * @offset: VRAM offset to move to, or -1 for anywhere else
 * @policy: whether other objects may be compacted/evicted to make room
 *
 * Return: 0; -ENOSPC without room; -EBUSY if @offset is taken; -EINVAL if
 * pinned for a dma-buf.
 */
int vgem_p2p_move_to_vram(struct vgem_p2p_object *bo, s64 offset,
			  enum vgem_p2p_alloc policy)
{
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);
	struct drm_mm_node node = {};
	u64 old = 0;
	int ret;

	lockdep_assert_held(&vdev->lock);

	if (bo->pin_count)
		return -EINVAL;

	if (offset >= 0) {
		node.start = offset;
		node.size = bo->base.size;
		ret = drm_mm_reserve_node(&vdev->mm, &node);
		if (ret)
			return ret == -ENOSPC ? -EBUSY : ret;
		vdev->vram_used += node.size;
	} else {
		ret = vgem_p2p_vram_alloc(vdev, &node, bo->base.size, policy, bo);
		if (ret)
			return ret;
	}

	/* Compaction may have moved us: read the old place only now */
	vgem_p2p_invalidate(bo);
	if (bo->in_vram) {
		old = bo->node.start;
		ret = vgem_p2p_copy_vram(vdev, node.start, old, bo->base.size);
		if (ret) {
			vgem_p2p_vram_free(vdev, &node);
			return ret;
		}
		vgem_p2p_vram_free(vdev, &bo->node);
	} else {
		vgem_p2p_fill_vram(bo, &node);
	}
	drm_mm_replace_node(&node, &bo->node);
	if (bo->in_vram)
		vgem_p2p_vram_poison(vdev, old, bo->base.size);
	trace_vgem_p2p_move(bo, bo->in_vram ? old : ~0ull, bo->node.start);
	bo->in_vram = true;
	vgem_p2p_moved(bo, bo->base.size);
	return 0;
}

/*
 * Put a node back where it was, which is free: it was removed under the
 * device lock, held since. A failure would leave an object in VRAM that
 * the allocator does not know of, to be handed out twice: so it is a bug.
 */
static void vgem_p2p_node_restore(struct vgem_p2p_device *vdev,
				  struct drm_mm_node *node, u64 start, u64 size)
{
	lockdep_assert_held(&vdev->lock);

	node->start = start;
	node->size = size;
	WARN_ON(drm_mm_reserve_node(&vdev->mm, node));
}

/* Slide one object down to the lowest hole below its end */
static void vgem_p2p_compact_one(struct vgem_p2p_device *vdev,
				 struct vgem_p2p_object *bo)
{
	struct drm_mm_node *node = &bo->node;
	u64 old = node->start, size = node->size;
	u64 new;
	int ret;

	vgem_p2p_invalidate(bo);
	drm_mm_remove_node(node);
	ret = drm_mm_insert_node_in_range(&vdev->mm, node, size, PAGE_SIZE, 0,
					  0, old + size, DRM_MM_INSERT_LOW);
	/* Its own place is free, so this cannot fail */
	if (WARN_ON(ret)) {
		vgem_p2p_node_restore(vdev, node, old, size);
		return;
	}
	new = node->start;
	if (new == old)
		return;
	if (vgem_p2p_copy_vram(vdev, new, old, size)) {
		/* out of memory for the bounce page: put it back */
		drm_mm_remove_node(node);
		vgem_p2p_node_restore(vdev, node, old, size);
		return;
	}
	if (new + size <= old)
		vgem_p2p_vram_poison(vdev, old, size);
	else
		vgem_p2p_vram_poison(vdev, new + size, old - new);
	vgem_p2p_moved(bo, size);
	trace_vgem_p2p_move(bo, old, new);
}

/**
 * vgem_p2p_compact - slide every movable VRAM object as low as it goes
 * @vdev: the device
 * @self: an object whose dma_resv the caller holds, or NULL
 *
 * Walks the objects in address order. Each is taken out of the allocator
 * and put back at the lowest hole that fits it, which is never above its
 * old place: so the copy runs forward, and overlap is harmless. Pinned
 * objects, and those whose dma_resv is busy, stay where they are.
 */
void vgem_p2p_compact(struct vgem_p2p_device *vdev,
		      struct vgem_p2p_object *self)
{
	struct drm_mm_node *node, *next;

	lockdep_assert_held(&vdev->lock);

	atomic64_inc(&vdev->stats.compactions);
	drm_mm_for_each_node_safe(node, next, &vdev->mm) {
		struct vgem_p2p_object *bo =
			container_of(node, struct vgem_p2p_object, node);

		if (bo->pin_count || !vgem_p2p_trylock_other(bo, self))
			continue;
		vgem_p2p_compact_one(vdev, bo);
		vgem_p2p_unlock_other(bo, self);
	}
}

/* Dying: its free is queued behind our lock; take the VRAM back, no copy */
static void vgem_p2p_drop_dying(struct vgem_p2p_device *vdev,
				struct vgem_p2p_object *bo)
{
	vgem_p2p_vram_poison(vdev, bo->node.start, bo->base.size);
	vgem_p2p_vram_free(vdev, &bo->node);
	bo->in_vram = false;
	bo->lost = true;
	bo->reason = VGEM_P2P_REASON_EVICTED;
}

/**
 * vgem_p2p_evict_one - evict the oldest object in VRAM other than @self
 * @vdev: the device
 * @self: an object not to evict, whose dma_resv the caller may hold, or
 *	NULL
 *
 * Return: 0 if one was evicted, -ENOSPC if none could be.
 */
int vgem_p2p_evict_one(struct vgem_p2p_device *vdev,
		       struct vgem_p2p_object *self)
{
	struct vgem_p2p_object *bo;
	int ret;

	lockdep_assert_held(&vdev->lock);

	list_for_each_entry(bo, &vdev->objects, link) {
		if (bo == self || !bo->in_vram || bo->pin_count)
			continue;
		/* Nobody can map a dying object any more */
		if (!kref_read(&bo->base.refcount)) {
			vgem_p2p_drop_dying(vdev, bo);
			return 0;
		}
		if (!dma_resv_trylock(bo->base.resv))
			continue;
		ret = vgem_p2p_move_to_system(bo);
		dma_resv_unlock(bo->base.resv);
		if (ret)
			continue;
		bo->reason = VGEM_P2P_REASON_EVICTED;
		/* evicted: to the end of the line */
		list_move_tail(&bo->link, &vdev->objects);
		return 0;
	}
	return -ENOSPC;
}

/*
 * Device going away: keep the data of objects that outlive it. One
 * object at a time, since its dma_resv must be taken before the device
 * lock; an object that cannot be copied for lack of memory loses its
 * contents, as the BAR goes away anyway.
 */
void vgem_p2p_evict_all(struct vgem_p2p_device *vdev)
{
	struct vgem_p2p_object *bo;

	for (;;) {
		mutex_lock(&vdev->lock);
		list_for_each_entry(bo, &vdev->objects, link) {
			if (!bo->in_vram)
				continue;
			if (kref_get_unless_zero(&bo->base.refcount))
				break;
			vgem_p2p_drop_dying(vdev, bo);
		}
		mutex_unlock(&vdev->lock);
		if (list_entry_is_head(bo, &vdev->objects, link))
			return;

		dma_resv_lock(bo->base.resv, NULL);
		mutex_lock(&vdev->lock);
		if (vgem_p2p_move_to_system(bo)) {
			vgem_p2p_invalidate(bo);
			vgem_p2p_drop_dying(vdev, bo);
			drm_warn(&vdev->drm, "object %p lost: out of memory\n",
				 bo);
		}
		bo->reason = VGEM_P2P_REASON_EVICTED;
		mutex_unlock(&vdev->lock);
		dma_resv_unlock(bo->base.resv);
		drm_gem_object_put(&bo->base);
	}
}

int vgem_p2p_move_ioctl(struct drm_device *dev, void *data,
			struct drm_file *file)
{
	struct vgem_p2p_device *vdev = to_vgem_p2p(dev);
	struct drm_vgem_p2p_move *args = data;
	struct drm_gem_object *obj;
	struct vgem_p2p_object *bo;
	enum vgem_p2p_alloc policy;
	bool was_in_vram;
	int ret, idx;

	if (args->flags || args->pad)
		return -EINVAL;
	/*
	 * Moving one's own object is anyone's business; pushing other
	 * clients' objects out of VRAM is not: only CAP_SYS_ADMIN evicts,
	 * or picks a placement (a debugging tool). Others may still compact,
	 * which keeps every object in VRAM.
	 */
	policy = capable(CAP_SYS_ADMIN) ? VGEM_P2P_ALLOC_EVICT :
					  VGEM_P2P_ALLOC_COMPACT;
	switch (args->target) {
	case VGEM_P2P_MOVE_VRAM_AT:
		if (!PAGE_ALIGNED(args->offset) ||
		    args->offset >= vdev->vram_size)
			return -EINVAL;
		if (policy != VGEM_P2P_ALLOC_EVICT)
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
	bo = to_vgem_p2p_obj(obj);
	if (args->target == VGEM_P2P_MOVE_VRAM_AT &&
	    args->offset + obj->size > vdev->vram_size) {
		ret = -EINVAL;
		goto out_put;
	}
	if (!drm_dev_enter(dev, &idx)) {
		ret = -ENODEV;
		goto out_put;
	}

	ret = dma_resv_lock_interruptible(obj->resv, NULL);
	if (ret)
		goto out_exit;
	mutex_lock(&vdev->lock);
	was_in_vram = bo->in_vram;
	switch (args->target) {
	case VGEM_P2P_MOVE_SYSTEM:
		ret = vgem_p2p_move_to_system(bo);
		break;
	case VGEM_P2P_MOVE_VRAM:
		ret = vgem_p2p_move_to_vram(bo, -1, policy);
		break;
	default:
		ret = vgem_p2p_move_to_vram(bo, args->offset, policy);
		break;
	}
	if (!ret && (was_in_vram || bo->in_vram))
		bo->reason = VGEM_P2P_REASON_MOVE;
	args->offset = bo->in_vram ? bo->node.start : ~0ull;
	mutex_unlock(&vdev->lock);
	dma_resv_unlock(obj->resv);
out_exit:
	drm_dev_exit(idx);
out_put:
	drm_gem_object_put(obj);
	return ret;
}
