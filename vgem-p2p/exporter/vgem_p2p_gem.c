// SPDX-License-Identifier: GPL-2.0
/*
 * GEM objects: creation in VRAM or system memory, dumb buffers, and
 * destruction.
 *
 * The last reference to an object may be dropped by p2p_unmap(), which
 * runs in an importer's mmu notifier callback and must not sleep; so the
 * object's free callback only queues the real work.
 */
#include <linux/overflow.h>
#include <linux/pagemap.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>

#include "vgem_p2p_drv.h"

/* Module-wide, so that it outlives every device: see vgem_p2p_free_wq_fini */
static struct workqueue_struct *vgem_p2p_free_wq;

/* System pages got by all objects of all devices: see vgem_p2p_page_get() */
static atomic_long_t vgem_p2p_pages_pinned = ATOMIC_LONG_INIT(0);

/* Marks, in vgem_p2p_object.pages, a page vgem_p2p_pages_get() just got */
#define VGEM_P2P_PAGE_NEW	XA_MARK_0

/**
 * vgem_p2p_page_get - give an object in system memory one of its pages
 * @bo: the object, whose dma_resv the caller holds; not in VRAM, or
 *	being moved out of it
 * @pgoff: the page, below the object's page count
 *
 * System memory is the object's shmem file, as for vgem and every
 * shmem-backed GEM driver, and each page of it is allocated on its first
 * use (a CPU fault on it, a fallback p2p_map of a range holding it; a
 * dma-buf map, an eviction or MOVE_SYSTEM, which need all of them), not at
 * creation: so an object may be larger than RAM, as vgem's dumb buffers
 * may, and its pages are charged to the memory cgroup of the task that
 * first touches them and show up as Shmem. This is drm_gem_get_pages()
 * one page at a time, as vgem's fault handler got its pages before vgem
 * used the shmem helpers (vgem_gem_fault(): shmem_read_mapping_page() of
 * the faulting page only). Once got, a page stays until the object moves
 * to VRAM or dies, with the reference shmem_read_mapping_page() took,
 * which keeps it from being migrated, and the mapping unevictable, as
 * drm_gem_get_pages() keeps it: CPU ptes and importers' DMA addresses
 * point at it, and nothing would tell those users to let go.
 *
 * Return: the page; ERR_PTR(-ENOMEM); or ERR_PTR(-ENODEV) if the contents
 * were lost with the device.
 */
struct page *vgem_p2p_page_get(struct vgem_p2p_object *bo, pgoff_t pgoff)
{
	struct page *page;
	int ret;

	/* Not the device lock: a move to system memory allocates unlocked */
	dma_resv_assert_held(bo->base.resv);

	page = xa_load(&bo->pages, pgoff);
	if (page)
		return page;
	if (bo->lost)
		return ERR_PTR(-ENODEV);
	/*
	 * Got pages are pinned and, without swap, unreclaimable, and they
	 * count against no process: past a limit the OOM killer finds
	 * nothing to kill. Cap them at half of RAM, as TTM caps the pages
	 * of its buffer objects (ttm_tt.c, ttm_pages_limit).
	 */
	if (atomic_long_inc_return(&vgem_p2p_pages_pinned) >
	    totalram_pages() / 2) {
		ret = -ENOMEM;
		goto err_uncount;
	}
	page = shmem_read_mapping_page(bo->base.filp->f_mapping, pgoff);
	if (IS_ERR(page)) {
		/* shmem's -ENOSPC is memory it could not account, too */
		ret = PTR_ERR(page) == -ENOSPC ? -ENOMEM : PTR_ERR(page);
		goto err_uncount;
	}
	ret = xa_err(xa_store(&bo->pages, pgoff, page, GFP_KERNEL));
	if (ret)
		goto err_put;
	bo->nr_pages++;
	return page;

err_put:
	put_page(page);
err_uncount:
	atomic_long_dec(&vgem_p2p_pages_pinned);
	return ERR_PTR(ret);
}

/*
 * Give back pages [@first, @end) of the shmem file, which nobody maps or
 * holds: those a failed vgem_p2p_pages_get() got and has put.
 */
static void vgem_p2p_pages_truncate(struct vgem_p2p_object *bo,
				    pgoff_t first, pgoff_t end)
{
	if (end > first)
		shmem_truncate_range(file_inode(bo->base.filp),
				     (loff_t)first << PAGE_SHIFT,
				     ((loff_t)end << PAGE_SHIFT) - 1);
}

/**
 * vgem_p2p_pages_get - give an object in system memory a range of pages
 * @bo: the object, whose dma_resv the caller holds
 * @first: the first page
 * @count: how many, @first + @count at most the object's page count
 *
 * vgem_p2p_page_get() for each page that has none yet, rescheduling
 * between pages: a range may be most of RAM, and on a kernel without
 * preemption a loop over it that never yields stalled RCU for 26 s in a
 * fuzz run under TCG (i915 reschedules per page while it reads its shmem
 * objects in, shmem_sg_alloc_table(), for the same reason). All or
 * nothing: on failure the pages this call got are given back, so that a
 * failed ioctl leaves no memory behind; those got before stay.
 *
 * Return: 0, -ENOMEM, or -ENODEV if the contents were lost with the
 * device.
 */
int vgem_p2p_pages_get(struct vgem_p2p_object *bo, pgoff_t first,
		       unsigned long count)
{
	unsigned long i, added = 0;
	pgoff_t run = 0, end = 0;
	struct page *page;
	int ret = 0;

	dma_resv_assert_held(bo->base.resv);

	for (i = first; i < first + count; i++) {
		if (!xa_load(&bo->pages, i)) {
			page = vgem_p2p_page_get(bo, i);
			if (IS_ERR(page)) {
				ret = PTR_ERR(page);
				break;
			}
			xa_set_mark(&bo->pages, i, VGEM_P2P_PAGE_NEW);
			added++;
		}
		cond_resched();
	}
	if (!added)
		return ret;
	xa_for_each_marked(&bo->pages, i, page, VGEM_P2P_PAGE_NEW) {
		cond_resched();
		if (!ret) {
			xa_clear_mark(&bo->pages, i, VGEM_P2P_PAGE_NEW);
			continue;
		}
		/* nobody maps it yet: we held the dma_resv since */
		xa_erase(&bo->pages, i);
		bo->nr_pages--;
		atomic_long_dec(&vgem_p2p_pages_pinned);
		put_page(page);
		/* truncated a run of consecutive pages at a time */
		if (i != end) {
			vgem_p2p_pages_truncate(bo, run, end);
			run = i;
		}
		end = i + 1;
	}
	vgem_p2p_pages_truncate(bo, run, end);
	return ret;
}

/**
 * vgem_p2p_pages_release - give an object's system memory back
 * @bo: the object, whose dma_resv the caller holds; its contents are in
 *	VRAM now, or nobody wants them
 *
 * Truncating the shmem file frees the memory now rather than with the
 * file. No importer maps them any more: a move invalidates every
 * importer before it releases them, and the object's release comes after
 * the last lease's (see vgem_p2p_export.c).
 */
void vgem_p2p_pages_release(struct vgem_p2p_object *bo)
{
	struct page *page;
	unsigned long i;

	/* Not the device lock: a move to VRAM releases them unlocked */
	dma_resv_assert_held(bo->base.resv);

	if (!bo->nr_pages)
		return;
	xa_for_each(&bo->pages, i, page) {
		put_page(page);
		cond_resched();
	}
	xa_destroy(&bo->pages);
	atomic_long_sub(bo->nr_pages, &vgem_p2p_pages_pinned);
	bo->nr_pages = 0;
	shmem_truncate_range(file_inode(bo->base.filp), 0, (loff_t)-1);
}

static void vgem_p2p_free_work(struct work_struct *work)
{
	struct vgem_p2p_object *bo =
		container_of(work, struct vgem_p2p_object, free_work);
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);

	WARN_ON(bo->nr_maps);

	/*
	 * Fences still pending (vgem's own, attached by a client that has
	 * gone) may stand for DMA to the object: keep its VRAM until they
	 * signal, as TTM delays the release of a busy BO.
	 */
	dma_resv_wait_timeout(bo->base.resv, DMA_RESV_USAGE_BOOKKEEP, false,
			      MAX_SCHEDULE_TIMEOUT);

	mutex_lock(&vdev->lock);
	list_del(&bo->link);
	if (bo->in_vram) {
		vgem_p2p_vram_poison(vdev, bo->node.start, bo->base.size);
		vgem_p2p_vram_free(vdev, &bo->node);
		vgem_p2p_vram_uncharge(bo);
	}
	mutex_unlock(&vdev->lock);

	/* Uncontended: nobody else can reach the object any more */
	dma_resv_lock(bo->base.resv, NULL);
	vgem_p2p_pages_release(bo);
	dma_resv_unlock(bo->base.resv);

	drm_gem_object_release(&bo->base);
	vgem_p2p_client_put(bo->owner);
	kfree(bo);
	/* the object's reference on the device, taken at creation */
	drm_dev_put(&vdev->drm);
}

/* May be called in atomic context, from p2p_unmap */
static void vgem_p2p_gem_free(struct drm_gem_object *obj)
{
	struct vgem_p2p_object *bo = to_vgem_p2p_obj(obj);

	queue_work(vgem_p2p_free_wq, &bo->free_work);
}

static const struct drm_gem_object_funcs vgem_p2p_gem_funcs = {
	.free = vgem_p2p_gem_free,
	.mmap = vgem_p2p_gem_mmap,
	.vm_ops = &vgem_p2p_vm_ops,
	.export = vgem_p2p_gem_prime_export,
};

/*
 * @client: who creates it, charged for its VRAM
 * @may_fall_back: a VRAM object that finds no room, or no quota left, is
 * placed in system memory, as if evicted at once, instead of failing
 * with -ENOSPC or -EDQUOT
 */
static struct vgem_p2p_object *
vgem_p2p_object_create(struct vgem_p2p_device *vdev,
		       struct vgem_p2p_client *client, u64 size, u32 flags,
		       bool may_fall_back)
{
	struct vgem_p2p_object *bo;
	int ret;

	if (!size || size > U64_MAX - PAGE_SIZE)
		return ERR_PTR(-EINVAL);
	size = PAGE_ALIGN(size);
	if (!(flags & VGEM_P2P_CREATE_SYSTEM) && size > vdev->vram_size &&
	    !may_fall_back)
		return ERR_PTR(-ENOSPC);
	/*
	 * One that starts in VRAM must be evictable: system memory must be
	 * able to hold it too. One created in system memory (SYSTEM, or a
	 * dumb buffer larger than VRAM) is backed lazily, page by page, as
	 * vgem's are: it is not refused for its size, and a use that needs
	 * more pages than there are fails then, with -ENOMEM or SIGBUS.
	 */
	if (!(flags & VGEM_P2P_CREATE_SYSTEM) && size <= vdev->vram_size &&
	    size > (u64)totalram_pages() << PAGE_SHIFT)
		return ERR_PTR(-EINVAL);

	bo = kzalloc(sizeof(*bo), GFP_KERNEL);
	if (!bo)
		return ERR_PTR(-ENOMEM);
	bo->flags = flags;
	bo->owner = client;
	kref_get(&client->ref);
	bo->base.funcs = &vgem_p2p_gem_funcs;
	xa_init(&bo->pages);
	spin_lock_init(&bo->maps_lock);
	INIT_LIST_HEAD(&bo->maps);
	INIT_WORK(&bo->free_work, vgem_p2p_free_work);

	/*
	 * System memory, when it needs any, is a shmem file, as in vgem.
	 * shmem says -ENOSPC when it cannot allocate the inode: out of
	 * kernel memory, while our -ENOSPC means no room in VRAM.
	 */
	ret = drm_gem_object_init(&vdev->drm, &bo->base, size);
	if (ret == -ENOSPC)
		ret = -ENOMEM;
	if (ret)
		goto err_release;
	/*
	 * Pinned while got: keep them out of ZONE_MOVABLE, as before. And
	 * fail with -ENOMEM rather than invoke the OOM killer, which cannot
	 * see whose they are: __GFP_RETRY_MAYFAIL, as TTM allocates with
	 * ttm_operation_ctx.gfp_retry_mayfail.
	 */
	mapping_set_gfp_mask(bo->base.filp->f_mapping,
			     GFP_HIGHUSER | __GFP_RETRY_MAYFAIL | __GFP_NOWARN);
	/* held pages stay put, as drm_gem_get_pages() keeps them */
	mapping_set_unevictable(bo->base.filp->f_mapping);
	/* the offset space is full: no memory, not no VRAM, for the caller */
	ret = drm_gem_create_mmap_offset(&bo->base);
	if (ret == -ENOSPC)
		ret = -ENOMEM;
	if (ret)
		goto err_release;

	/*
	 * Held until the VRAM is cleared, which takes as long as a move:
	 * done without the device lock, as a move copies, while eviction
	 * and compaction, which find the object on the list, skip it.
	 */
	dma_resv_lock(bo->base.resv, NULL);
	mutex_lock(&vdev->lock);
	/* A SYSTEM object gets its (zeroed) pages on first use */
	ret = 0;
	if (!(flags & VGEM_P2P_CREATE_SYSTEM)) {
		ret = vgem_p2p_vram_charge(bo);
		if (!ret) {
			ret = vgem_p2p_vram_alloc(vdev, &bo->node, size,
						  VGEM_P2P_ALLOC_EVICT, NULL);
			if (ret)
				vgem_p2p_vram_uncharge(bo);
		}
		if (!ret) {
			bo->node.color = VGEM_P2P_NODE_OBJECT;
			bo->in_vram = true;
		} else if ((ret == -ENOSPC || ret == -EDQUOT) &&
			   may_fall_back) {
			/* Evicted from the start: pages on first use */
			ret = 0;
		}
	}
	if (!ret)
		list_add_tail(&bo->link, &vdev->objects);
	mutex_unlock(&vdev->lock);
	if (ret)
		goto err_unlock_resv;

	if (bo->in_vram) {
		vgem_p2p_hold_wait(&vdev->hold_in_clear);
		memset_io(vdev->bar + bo->node.start, 0, size);
	}
	dma_resv_unlock(bo->base.resv);
	drm_dev_get(&vdev->drm);
	return bo;

err_unlock_resv:
	dma_resv_unlock(bo->base.resv);
err_release:
	drm_gem_object_release(&bo->base);
	vgem_p2p_client_put(client);
	kfree(bo);
	return ERR_PTR(ret);
}

static int vgem_p2p_create_handle(struct drm_file *file,
				  struct vgem_p2p_device *vdev, u64 size,
				  u32 flags, bool may_fall_back, u32 *handle)
{
	struct vgem_p2p_file *vfile = file->driver_priv;
	struct vgem_p2p_object *bo;
	int ret, idx;

	/*
	 * Unplug evicts every object it can see: one created after that
	 * would land in, and clear, a BAR that is no longer ours.
	 */
	if (!drm_dev_enter(&vdev->drm, &idx))
		return -ENODEV;
	bo = vgem_p2p_object_create(vdev, vfile->client, size, flags,
				    may_fall_back);
	drm_dev_exit(idx);
	if (IS_ERR(bo))
		return PTR_ERR(bo);
	ret = drm_gem_handle_create(file, &bo->base, handle);
	drm_gem_object_put(&bo->base);
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

	/*
	 * In VRAM like any framebuffer, but where vgem would succeed, so do
	 * we: without room (larger than VRAM, all of it pinned, or the
	 * client's quota used up) the
	 * buffer starts in system memory, and comes back to VRAM on use
	 * once there is room, like an evicted object.
	 */
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
	return drm_gem_dumb_map_offset(file, dev, args->handle, &args->offset);
}

int vgem_p2p_obj_info_ioctl(struct drm_device *dev, void *data,
			    struct drm_file *file)
{
	struct vgem_p2p_device *vdev = to_vgem_p2p(dev);
	struct drm_vgem_p2p_obj_info *args = data;
	struct drm_gem_object *obj;
	struct vgem_p2p_object *bo;

	if (args->pad)
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	bo = to_vgem_p2p_obj(obj);

	mutex_lock(&vdev->lock);
	args->size = obj->size;
	args->flags = bo->flags;
	args->placement = bo->in_vram ? VGEM_P2P_PLACEMENT_VRAM :
					VGEM_P2P_PLACEMENT_SYSTEM;
	args->vram_offset = bo->in_vram ? bo->node.start : ~0ull;
	args->moves = bo->moves;
	args->reason = vgem_p2p_placement_reason(bo);
	mutex_unlock(&vdev->lock);

	spin_lock(&bo->maps_lock);
	args->mappings = bo->nr_maps;
	spin_unlock(&bo->maps_lock);
	args->p2p_maps = atomic64_read(&bo->p2p_maps_total);
	args->fallback_maps = atomic64_read(&bo->fallback_maps_total);
	args->dmabuf_attachments = atomic_read(&bo->nr_attachments);
	args->pad3 = 0;
	args->move_notifies = atomic64_read(&bo->move_notifies);

	drm_gem_object_put(obj);
	return 0;
}

void vgem_p2p_free_wq_flush(void)
{
	flush_workqueue(vgem_p2p_free_wq);
}

int vgem_p2p_free_wq_init(void)
{
	vgem_p2p_free_wq = alloc_workqueue("vgem_p2p_free", 0, 0);
	return vgem_p2p_free_wq ? 0 : -ENOMEM;
}

/*
 * Module exit: an importer's last p2p_unmap drops its module reference
 * right after queueing a free; flush before the code goes away.
 */
void vgem_p2p_free_wq_fini(void)
{
	destroy_workqueue(vgem_p2p_free_wq);
}
