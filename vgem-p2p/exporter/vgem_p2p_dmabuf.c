// SPDX-License-Identifier: GPL-2.0
/*
 * PRIME export with dynamic dma-buf attachments. A peer2peer importer that
 * reaches our BAR gets the object's VRAM as a page-less sg_table
 * (vgem_p2p_dmabuf_bar.c); others get its system pages. Dynamic importers
 * follow moves (invalidate_mappings); importers that pin hold the object
 * in system memory, as with vgem, or on 7.2 in VRAM if they let us revoke
 * the pin.
 */
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include <drm/drm_drv.h>
#include <drm/drm_prime.h>
#include <drm/ttm/ttm_tt.h>

#include "vgem_p2p_drv.h"
#include "vgem_p2p_trace.h"

MODULE_IMPORT_NS(VGEM_P2P_NS_DMA_BUF);

static struct vgem_p2p_object *dmabuf_to_bo(struct dma_buf *dmabuf)
{
	return to_vgem_p2p_obj(dmabuf->priv);
}

/* From the move callback, as amdgpu_bo_move_notify() does */
void vgem_p2p_dmabuf_move_notify(struct vgem_p2p_object *bo)
{
	dma_resv_assert_held(bo->tbo.base.resv);

	if (!bo->dmabuf)
		return;
	trace_vgem_p2p_move_notify(bo, atomic_read(&bo->nr_attachments));
	dma_buf_invalidate_mappings(bo->dmabuf);
	atomic64_inc(&bo->move_notifies);
	atomic64_inc(&obj_to_vdev(bo)->stats.move_notifies);
}

static int vgem_p2p_dmabuf_attach(struct dma_buf *dmabuf,
				  struct dma_buf_attachment *attach)
{
	struct vgem_p2p_object *bo = dmabuf_to_bo(dmabuf);
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);
	int idx;

	/* Once per attachment, as amdgpu does: the topology does not change */
	if (attach->peer2peer && drm_dev_enter(&vdev->drm, &idx)) {
		attach->peer2peer = vgem_p2p_reaches_bar(vdev, attach->dev,
							 bo->flags);
		drm_dev_exit(idx);
	} else {
		attach->peer2peer = false;
	}

	atomic_inc(&bo->nr_attachments);
	if (!attach->peer2peer)
		atomic_inc(&bo->nr_system_attachments);
	atomic64_inc(&vdev->stats.dmabuf_attachments);
	return 0;
}

static void vgem_p2p_dmabuf_detach(struct dma_buf *dmabuf,
				   struct dma_buf_attachment *attach)
{
	struct vgem_p2p_object *bo = dmabuf_to_bo(dmabuf);

	atomic_dec(&bo->nr_attachments);
	if (!attach->peer2peer)
		atomic_dec(&bo->nr_system_attachments);
	atomic64_dec(&obj_to_vdev(bo)->stats.dmabuf_attachments);
}

/*
 * Importers that cannot follow moves: in VRAM only where
 * vgem_p2p_dmabuf_pin_bar() may take it back, else in system memory
 */
static int vgem_p2p_dmabuf_pin(struct dma_buf_attachment *attach)
{
	struct vgem_p2p_object *bo = dmabuf_to_bo(attach->dmabuf);
	int ret;

	if (vgem_p2p_dmabuf_pin_bar(attach))
		return 0;
	ret = vgem_p2p_place(bo, VGEM_P2P_TO_SYSTEM, VGEM_P2P_REASON_PINNED);
	if (ret)
		return ret;
	ttm_bo_pin(&bo->tbo);
	return 0;
}

static void vgem_p2p_dmabuf_unpin(struct dma_buf_attachment *attach)
{
	ttm_bo_unpin(&dmabuf_to_bo(attach->dmabuf)->tbo);
}

/* Undo the first @n page mappings of a system sg table */
static void vgem_p2p_dmabuf_unmap_pages(struct device *dev,
					struct sg_table *sgt, unsigned int n,
					enum dma_data_direction dir)
{
	struct scatterlist *sg;
	unsigned int i;

	for_each_sgtable_sg(sgt, sg, i) {
		if (i == n)
			break;
		dma_unmap_page_attrs(dev, sg_dma_address(sg), PAGE_SIZE, dir,
				     DMA_ATTR_SKIP_CPU_SYNC);
		cond_resched();
	}
}

/*
 * One dma_map_page() per page, as the vma fallback and TTM do. The CPU
 * keeps using the pages, so importers sync the pages they touch and unmap
 * skips the sync, which would copy a stale bounce buffer over CPU writes.
 * dma_map_sgtable() would merge pages into segments whose partial syncs
 * DMA-API debugging misreports once two importers map the same pages.
 */
static struct sg_table *
vgem_p2p_dmabuf_map_system(struct vgem_p2p_object *bo, struct device *dev,
			   enum dma_data_direction dir, u32 reason)
{
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);
	struct vgem_p2p_dmabuf_sgt *s;
	struct scatterlist *sg;
	unsigned int i;
	int ret;

	s = kzalloc_obj(*s);
	if (!s)
		return ERR_PTR(-ENOMEM);
	ret = vgem_p2p_place(bo, VGEM_P2P_TO_SYSTEM, reason);
	if (ret)
		goto err_free;

	s->kind = VGEM_P2P_MAP_SYSTEM;
	s->size = bo->tbo.base.size;
	ret = sg_alloc_table(&s->sgt, vgem_p2p_npages(bo), GFP_KERNEL);
	if (ret)
		goto err_free;
	for_each_sgtable_sg(&s->sgt, sg, i) {
		/* the move waits for the importer's fences before it frees them */
		struct page *page = bo->tbo.ttm->pages[i];
		dma_addr_t addr;

		addr = dma_map_page_attrs(dev, page, 0, PAGE_SIZE, dir,
					  DMA_ATTR_SKIP_CPU_SYNC);
		if (dma_mapping_error(dev, addr)) {
			ret = -ENOMEM;
			goto err_unmap;
		}
		sg_set_page(sg, page, PAGE_SIZE, 0);
		sg_dma_address(sg) = addr;
		sg_dma_len(sg) = PAGE_SIZE;
		/* an object may be half of RAM: 100,000s of pages */
		cond_resched();
	}
	atomic_inc(&bo->dmabuf_system_maps);
	atomic64_inc(&vdev->stats.dmabuf_maps_system);
	return &s->sgt;

err_unmap:
	vgem_p2p_dmabuf_unmap_pages(dev, &s->sgt, i, dir);
	sg_free_table(&s->sgt);
err_free:
	kfree(s);
	return ERR_PTR(ret);
}

static struct sg_table *
vgem_p2p_dmabuf_map(struct dma_buf_attachment *attach,
		    enum dma_data_direction dir)
{
	struct vgem_p2p_object *bo = dmabuf_to_bo(attach->dmabuf);
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);
	bool p2p = attach->peer2peer;
	struct sg_table *sgt;
	int idx;

	dma_resv_assert_held(bo->tbo.base.resv);

	/* the direction is dma-buf's only notion of access */
	if (dir != DMA_TO_DEVICE && (bo->flags & VGEM_P2P_CREATE_READ_ONLY))
		return ERR_PTR(-EPERM);

	/* Once the device is gone, only its system memory is left */
	if (p2p && !drm_dev_enter(&vdev->drm, &idx))
		p2p = false;

	/* Evicted, and p2p would work: come back, if there is room */
	if (p2p)
		vgem_p2p_return(bo);
	if (p2p && vgem_p2p_resident_vram(bo))
		sgt = vgem_p2p_dmabuf_map_bar(bo, attach, dir);
	else
		sgt = vgem_p2p_dmabuf_map_system(bo, attach->dev, dir,
						 attach->peer2peer ?
						 VGEM_P2P_REASON_EVICTED :
						 VGEM_P2P_REASON_NO_P2P_IMPORTER);

	if (p2p)
		drm_dev_exit(idx);
	return sgt;
}

/* Runs inside our moves (importers' move_notify): see vgem_p2p_drv.h */
static void vgem_p2p_dmabuf_unmap(struct dma_buf_attachment *attach,
				  struct sg_table *sgt,
				  enum dma_data_direction dir)
{
	struct vgem_p2p_object *bo = dmabuf_to_bo(attach->dmabuf);

	if (!vgem_p2p_dmabuf_unmap_bar(attach, sgt, dir)) {
		vgem_p2p_dmabuf_unmap_pages(attach->dev, sgt, sgt->orig_nents,
					    dir);
		atomic_dec(&bo->dmabuf_system_maps);
		sg_free_table(sgt);
		kfree(container_of(sgt, struct vgem_p2p_dmabuf_sgt, sgt));
	}
	trace_vgem_p2p_dmabuf_unmap(bo, attach->dev, bo->tbo.base.size);
	atomic64_inc(&obj_to_vdev(bo)->stats.dmabuf_unmaps);
}

static void vgem_p2p_dmabuf_release(struct dma_buf *dmabuf)
{
	struct vgem_p2p_object *bo = dmabuf_to_bo(dmabuf);

	/* no attachment left to notify */
	dma_resv_lock(bo->tbo.base.resv, NULL);
	if (bo->dmabuf == dmabuf)
		bo->dmabuf = NULL;
	dma_resv_unlock(bo->tbo.base.resv);

	/* drops the dma-buf's references on the object and the device */
	drm_gem_dmabuf_release(dmabuf);
}

static const struct dma_buf_ops vgem_p2p_dmabuf_ops = {
	.attach = vgem_p2p_dmabuf_attach,
	.detach = vgem_p2p_dmabuf_detach,
	.pin = vgem_p2p_dmabuf_pin,
	.unpin = vgem_p2p_dmabuf_unpin,
	.map_dma_buf = vgem_p2p_dmabuf_map,
	.unmap_dma_buf = vgem_p2p_dmabuf_unmap,
	.release = vgem_p2p_dmabuf_release,
	.mmap = drm_gem_dmabuf_mmap,
};

/* drm_gem_prime_export() with our ops, remembered in bo->dmabuf */
struct dma_buf *vgem_p2p_gem_prime_export(struct drm_gem_object *obj,
					  int flags)
{
	struct vgem_p2p_object *bo = to_vgem_p2p_obj(obj);
	struct dma_buf_export_info exp_info = {
		.exp_name = KBUILD_MODNAME,
		.owner = obj->dev->driver->fops->owner,
		.ops = &vgem_p2p_dmabuf_ops,
		.size = obj->size,
		.flags = flags,
		.priv = obj,
		.resv = obj->resv,
	};
	struct dma_buf *dmabuf;

	dmabuf = drm_gem_dmabuf_export(obj->dev, &exp_info);
	if (IS_ERR(dmabuf))
		return dmabuf;

	dma_resv_lock(obj->resv, NULL);
	/* A second live dma-buf: DRM's bookkeeping should prevent it */
	if (bo->dmabuf) {
		dma_resv_unlock(obj->resv);
		dma_buf_put(dmabuf);
		return ERR_PTR(-EBUSY);
	}
	bo->dmabuf = dmabuf;
	dma_resv_unlock(obj->resv);
	return dmabuf;
}

/* Our own dma-bufs come back as their object, as drm_gem_prime_import() */
struct drm_gem_object *vgem_p2p_gem_prime_import(struct drm_device *dev,
						 struct dma_buf *dma_buf)
{
	struct drm_gem_object *obj = dma_buf->priv;

	if (dma_buf->ops == &vgem_p2p_dmabuf_ops && obj->dev == dev) {
		drm_gem_object_get(obj);
		return obj;
	}
	return drm_gem_prime_import(dev, dma_buf);
}
