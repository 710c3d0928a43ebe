// SPDX-License-Identifier: GPL-2.0
/*
 * Moving objects: forced moves (DRM_IOCTL_VGEM_P2P_MOVE), compaction of
 * fragmented VRAM, eviction to system memory and the way back.
 *
 * Every move follows the same steps (see vgem_p2p_drv.h for the lock
 * order, and why eviction and compaction only try-lock the dma_resv of
 * the objects they move):
 *  1. with the object's dma_resv and the device lock held: choose and
 *     allocate the new place, then invalidate: zap the object's range in
 *     every CPU mapping of the device file. That fires the mmu notifiers
 *     of every process mapping it, and importers release their p2p
 *     mappings (p2p_unmap) from their callbacks, before
 *     unmap_mapping_range() returns. Then tell the dynamic importers of
 *     its dma-buf (dma_buf_move_notify()), which drop their mappings and
 *     map again, under the dma_resv, after the move;
 *  2. with only the dma_resv held, copy the contents. CPU faults, new
 *     p2p_map and map_dma_buf calls on this object wait for its dma_resv,
 *     so nobody reaches either place meanwhile; those on other objects
 *     go on. Both places stay allocated, so nothing else is put there;
 *  3. poison the old place (still allocated to the move, so still
 *     without the device lock), or free the pages the object had in
 *     system memory;
 *  4. with the device lock taken again, switch the placement and free
 *     the old place.
 * As in TTM, whose moves copy under the buffer's reservation and take
 * the LRU lock only to update lists, the device lock is never held
 * across a copy: a 64 MiB move stalls no other object.
 */
#include <linux/highmem.h>
#include <linux/io.h>
#include <linux/sched.h>

#include <drm/drm_drv.h>
#include <drm/drm_vma_manager.h>

#include "vgem_p2p_drv.h"
#include "vgem_p2p_trace.h"

/* The "from" or "to" of a move that is in system memory */
#define VGEM_P2P_NOWHERE	(~0ull)

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
 * Step 2 of a move: let go of the device lock for the copy. The object's
 * dma_resv, held throughout, keeps everyone who would use its placement
 * out; @moving shows the copy, and the wait before it, in debugfs.
 *
 * An importer may still be using the old place through what it mapped
 * before move_notify: the dma-buf contract keeps that valid until the
 * importer's fences signal. So the copy, and the poisoning and freeing
 * of the old place after it, wait for every fence of the object, as
 * TTM's memcpy move does (ttm_bo_wait_ctx()), without the device lock.
 */
static void vgem_p2p_copy_begin(struct vgem_p2p_object *bo, u64 from, u64 to)
	__releases(&obj_to_vdev(bo)->lock)
{
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);

	lockdep_assert_held(&vdev->lock);
	dma_resv_assert_held(bo->base.resv);

	bo->moving = true;
	trace_vgem_p2p_move_begin(bo, from, to);
	mutex_unlock(&vdev->lock);
	dma_resv_wait_timeout(bo->base.resv, DMA_RESV_USAGE_BOOKKEEP, false,
			      MAX_SCHEDULE_TIMEOUT);
}

static void vgem_p2p_copy_end(struct vgem_p2p_object *bo)
	__acquires(&obj_to_vdev(bo)->lock)
{
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);

	mutex_lock(&vdev->lock);
	bo->moving = false;
}

/*
 * Lock and reference an object that eviction or compaction would move for
 * somebody else. @self is the object the caller moves, whose dma_resv it
 * holds. The reference keeps the object alive while the device lock is
 * dropped for its copy; a dying one (no references left) is skipped. So
 * is one with unsignalled fences: its move would wait for them (see
 * vgem_p2p_copy_begin()), and nobody asked to move it.
 */
static bool vgem_p2p_trylock_other(struct vgem_p2p_object *bo,
				   struct vgem_p2p_object *self)
{
	if (!kref_get_unless_zero(&bo->base.refcount))
		return false;
	if (bo == self)
		return true;
	if (dma_resv_trylock(bo->base.resv)) {
		if (dma_resv_test_signaled(bo->base.resv,
					   DMA_RESV_USAGE_BOOKKEEP))
			return true;
		dma_resv_unlock(bo->base.resv);
	}
	drm_gem_object_put(&bo->base);
	return false;
}

/* The last reference may go here: the free is queued, not done inline */
static void vgem_p2p_unlock_other(struct vgem_p2p_object *bo,
				  struct vgem_p2p_object *self)
{
	if (bo != self)
		dma_resv_unlock(bo->base.resv);
	drm_gem_object_put(&bo->base);
}

static void vgem_p2p_moved(struct vgem_p2p_object *bo, u64 bytes)
{
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);

	bo->moves++;
	atomic64_inc(&vdev->stats.moves);
	atomic64_add(bytes, &vdev->stats.bytes_copied);
}

/*
 * Copy VRAM to VRAM through a page-sized @bounce; forward, so dst <= src
 * is safe. Long copies run without the device lock, and the kernel may
 * not preempt: give the CPU up now and then.
 */
static void vgem_p2p_copy_vram(struct vgem_p2p_device *vdev, void *bounce,
			       u64 dst, u64 src, u64 size)
{
	u64 done;

	if (WARN_ON(dst > src && dst < src + size))
		return;
	for (done = 0; done < size; done += PAGE_SIZE) {
		memcpy_fromio(bounce, vdev->bar + src + done, PAGE_SIZE);
		memcpy_toio(vdev->bar + dst + done, bounce, PAGE_SIZE);
		cond_resched();
	}
}

/**
 * vgem_p2p_move_to_system - evict an object from VRAM
 * @bo: the object, whose dma_resv the caller holds
 *
 * Also gives an object already in system memory all of its pages that
 * it has none of yet: callers want to use them all. Called with the
 * device lock held; drops it while copying.
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
	dma_resv_assert_held(bo->base.resv);

	if (!bo->in_vram)
		return vgem_p2p_pages_get(bo, 0, npages);

	vgem_p2p_invalidate(bo);
	offset = bo->node.start;
	vgem_p2p_copy_begin(bo, offset, VGEM_P2P_NOWHERE);
	/* In VRAM, the shmem file is empty: this allocates the pages */
	ret = vgem_p2p_pages_get(bo, 0, npages);
	for (i = 0; !ret && i < npages; i++) {
		void *dst = kmap_local_page(xa_load(&bo->pages, i));

		memcpy_fromio(dst, vdev->bar + offset + i * PAGE_SIZE, PAGE_SIZE);
		kunmap_local(dst);
		cond_resched();
	}
	/* Still allocated to us, so poisoned before the device lock, too */
	if (!ret)
		vgem_p2p_vram_poison(vdev, offset, bo->base.size);
	vgem_p2p_copy_end(bo);
	if (ret)
		return ret;

	bo->in_vram = false;
	vgem_p2p_vram_free(vdev, &bo->node);
	vgem_p2p_vram_uncharge(bo);

	vgem_p2p_moved(bo, bo->base.size);
	atomic64_inc(&vdev->stats.evictions);
	trace_vgem_p2p_evict(bo, offset);
	return 0;
}

/*
 * From system memory into @node; a page never used is zeroes. Needs no
 * page it does not have, so a move to VRAM cannot fail for lack of them.
 */
static void vgem_p2p_fill_vram(struct vgem_p2p_object *bo,
			       struct drm_mm_node *node)
{
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);
	unsigned long i, npages = vgem_p2p_npages(bo);
	void __iomem *dst = vdev->bar + node->start;

	if (!bo->nr_pages) {
		memset_io(dst, 0, bo->base.size);
		return;
	}
	for (i = 0; i < npages; i++) {
		struct page *page = xa_load(&bo->pages, i);
		void *src;

		if (page) {
			src = kmap_local_page(page);
			memcpy_toio(dst + i * PAGE_SIZE, src, PAGE_SIZE);
			kunmap_local(src);
		} else {
			memset_io(dst + i * PAGE_SIZE, 0, PAGE_SIZE);
		}
		cond_resched();
	}
}

/**
 * vgem_p2p_move_to_vram - move an object into VRAM, or within it
 * @bo: the object, whose dma_resv the caller holds
 * @offset: VRAM offset to move to, or -1 for anywhere else
 * @policy: whether other objects may be compacted/evicted to make room
 *
 * Called with the device lock held; drops it while copying, and while
 * compaction and eviction copy other objects.
 *
 * Return: 0; -ENOSPC without room; -EDQUOT if the object's client holds
 * its quota of VRAM; -EBUSY if @offset is taken; -EINVAL if pinned for a
 * dma-buf; -ENOMEM.
 */
int vgem_p2p_move_to_vram(struct vgem_p2p_object *bo, s64 offset,
			  enum vgem_p2p_alloc policy)
{
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);
	struct drm_mm_node node = {};
	void *bounce = NULL;
	u64 from;
	int ret;

	lockdep_assert_held(&vdev->lock);
	dma_resv_assert_held(bo->base.resv);

	if (bo->pin_count)
		return -EINVAL;
	/* before anything is invalidated: a failed move costs no one */
	if (bo->in_vram) {
		bounce = (void *)__get_free_page(GFP_KERNEL);
		if (!bounce)
			return -ENOMEM;
	} else {
		ret = vgem_p2p_vram_charge(bo);
		if (ret)
			return ret;
	}

	if (offset >= 0) {
		node.start = offset;
		node.size = bo->base.size;
		node.color = VGEM_P2P_NODE_TRANSIT;
		ret = drm_mm_reserve_node(&vdev->mm, &node);
		if (ret) {
			ret = ret == -ENOSPC ? -EBUSY : ret;
			goto out_uncharge;
		}
		vdev->vram_used += node.size;
	} else {
		ret = vgem_p2p_vram_alloc(vdev, &node, bo->base.size, policy, bo);
		if (ret)
			goto out_uncharge;
	}

	/* Compaction may have moved us: read the old place only now */
	from = bo->in_vram ? bo->node.start : VGEM_P2P_NOWHERE;
	vgem_p2p_invalidate(bo);
	vgem_p2p_copy_begin(bo, from, node.start);
	/*
	 * Poisoning the old place and freeing the pages take as long as the
	 * copy: they are done before the device lock too, while the old
	 * place is still allocated to us and only we see the pages.
	 */
	if (bo->in_vram) {
		vgem_p2p_copy_vram(vdev, bounce, node.start, from,
				   bo->base.size);
		vgem_p2p_vram_poison(vdev, from, bo->base.size);
	} else {
		vgem_p2p_fill_vram(bo, &node);
		vgem_p2p_pages_release(bo);
	}
	vgem_p2p_copy_end(bo);

	if (bo->in_vram)
		vgem_p2p_vram_free(vdev, &bo->node);
	drm_mm_replace_node(&node, &bo->node);
	bo->node.color = VGEM_P2P_NODE_OBJECT;
	trace_vgem_p2p_move(bo, from, bo->node.start);
	bo->in_vram = true;
	vgem_p2p_moved(bo, bo->base.size);
	ret = 0;
	goto out_free_bounce;

out_uncharge:
	if (!bo->in_vram)
		vgem_p2p_vram_uncharge(bo);
out_free_bounce:
	if (bounce)
		free_page((unsigned long)bounce);
	return ret;
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

/*
 * Slide one object down to the lowest hole below its end. Only an object
 * that moves is invalidated: one that stays keeps its importers' and the
 * CPU's mappings. Choosing the place before invalidating is safe: the
 * allocator is ours alone under the device lock, and the contents stay
 * at @old until the copy, which runs without the device lock.
 */
static void vgem_p2p_compact_one(struct vgem_p2p_device *vdev,
				 struct vgem_p2p_object *bo, void *bounce)
{
	struct drm_mm_node *node = &bo->node, ghost = {};
	u64 old = node->start, size = node->size;
	u64 new, ghost_start;
	int ret;

	lockdep_assert_held(&vdev->lock);
	dma_resv_assert_held(bo->base.resv);

	drm_mm_remove_node(node);
	ret = drm_mm_insert_node_in_range(&vdev->mm, node, size, PAGE_SIZE,
					  VGEM_P2P_NODE_OBJECT, 0, old + size,
					  DRM_MM_INSERT_LOW);
	/* Its own place is free, so this cannot fail */
	if (WARN_ON(ret)) {
		vgem_p2p_node_restore(vdev, node, old, size);
		return;
	}
	new = node->start;
	if (new == old)
		return;

	/* What the new place does not cover is read until the copy ends */
	ghost_start = max(old, new + size);
	ghost.color = VGEM_P2P_NODE_TRANSIT;
	vgem_p2p_node_restore(vdev, &ghost, ghost_start,
			      old + size - ghost_start);
	vdev->vram_used += ghost.size;

	vgem_p2p_invalidate(bo);
	vgem_p2p_copy_begin(bo, old, new);
	vgem_p2p_copy_vram(vdev, bounce, new, old, size);
	vgem_p2p_vram_poison(vdev, ghost.start, ghost.size);
	vgem_p2p_copy_end(bo);

	vgem_p2p_vram_free(vdev, &ghost);
	vgem_p2p_moved(bo, size);
	trace_vgem_p2p_move(bo, old, new);
}

/*
 * The lowest object at or above *@cursor that compaction may move, locked
 * and referenced; *@cursor goes past it. Looked up afresh each time: the
 * device lock is dropped while an object is copied, and the allocator
 * may change meanwhile.
 */
static struct vgem_p2p_object *
vgem_p2p_compact_next(struct vgem_p2p_device *vdev, u64 *cursor,
		      struct vgem_p2p_object *self)
{
	struct drm_mm_node *node;

	lockdep_assert_held(&vdev->lock);

	drm_mm_for_each_node_in_range(node, &vdev->mm, *cursor,
				      vdev->vram_size) {
		struct vgem_p2p_object *bo;

		if (node->start < *cursor)
			continue;
		*cursor = node->start + node->size;
		if (node->color != VGEM_P2P_NODE_OBJECT)
			continue;
		bo = container_of(node, struct vgem_p2p_object, node);
		if (!bo->pin_count && vgem_p2p_trylock_other(bo, self))
			return bo;
	}
	return NULL;
}

/**
 * vgem_p2p_compact - slide every movable VRAM object as low as it goes
 * @vdev: the device
 * @self: an object whose dma_resv the caller holds, or NULL
 *
 * Walks the objects in address order. Each is taken out of the allocator
 * and put back at the lowest hole that fits it, which is never above its
 * old place: so the copy runs forward, and overlap is harmless. Pinned
 * objects, and those whose dma_resv is busy, stay where they are; only
 * objects that move are invalidated. Called with the device lock held;
 * drops it while each object is copied.
 */
void vgem_p2p_compact(struct vgem_p2p_device *vdev,
		      struct vgem_p2p_object *self)
{
	struct vgem_p2p_object *bo;
	u64 cursor = 0;
	void *bounce;

	lockdep_assert_held(&vdev->lock);

	bounce = (void *)__get_free_page(GFP_KERNEL);
	if (!bounce)
		return;
	atomic64_inc(&vdev->stats.compactions);
	while ((bo = vgem_p2p_compact_next(vdev, &cursor, self))) {
		vgem_p2p_compact_one(vdev, bo, bounce);
		vgem_p2p_unlock_other(bo, self);
	}
	free_page((unsigned long)bounce);
}

/* Dying: its free is queued behind our lock; take the VRAM back, no copy */
static void vgem_p2p_drop_dying(struct vgem_p2p_device *vdev,
				struct vgem_p2p_object *bo)
{
	vgem_p2p_vram_poison(vdev, bo->node.start, bo->base.size);
	vgem_p2p_vram_free(vdev, &bo->node);
	vgem_p2p_vram_uncharge(bo);
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
 * Called with the device lock held; drops it while copying.
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
		/*
		 * Nobody can map a dying object any more; its free waits for
		 * its fences before it gives the VRAM back, and so do we.
		 */
		if (!kref_read(&bo->base.refcount)) {
			if (!dma_resv_test_signaled(bo->base.resv,
						    DMA_RESV_USAGE_BOOKKEEP))
				continue;
			vgem_p2p_drop_dying(vdev, bo);
			return 0;
		}
		if (!vgem_p2p_trylock_other(bo, self))
			continue;
		ret = vgem_p2p_move_to_system(bo);
		if (!ret) {
			bo->reason = VGEM_P2P_REASON_EVICTED;
			/* evicted: to the end of the line */
			list_move_tail(&bo->link, &vdev->objects);
		}
		/*
		 * Even if that was its last reference, @bo stays on the list
		 * until its free worker gets the device lock: the walk goes on.
		 */
		vgem_p2p_unlock_other(bo, self);
		if (!ret)
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
	bool was_in_vram;
	int ret, idx;

	if (args->flags || args->pad)
		return -EINVAL;
	/*
	 * A move into VRAM is an allocation like a creation: it may evict
	 * other clients' objects, within the client's quota, as any TTM
	 * driver's allocation does (vgem_p2p_client.c). Picking the offset
	 * is a debugging tool, for CAP_SYS_ADMIN only.
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
		ret = vgem_p2p_move_to_vram(bo, -1, VGEM_P2P_ALLOC_EVICT);
		break;
	default:
		ret = vgem_p2p_move_to_vram(bo, args->offset,
					    VGEM_P2P_ALLOC_EVICT);
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
