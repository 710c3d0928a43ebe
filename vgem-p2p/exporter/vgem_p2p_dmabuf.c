// SPDX-License-Identifier: GPL-2.0
/*
 * PRIME export with dynamic dma-buf attachments: the upstream way to hand
 * device memory to a peer, beside the vma path of vgem_p2p_export.c.
 *
 * An importer that attaches with dma_buf_dynamic_attach() and
 * importer_ops.allow_peer2peer may be handed VRAM: .attach keeps
 * attach->peer2peer only if the object allows p2p and
 * pci_p2pdma_distance() says the importer reaches our BAR, as amdgpu
 * does, and its DMA mask covers the BAR (vgem_p2p_importer_reaches_bar()). While the object is in VRAM, map_dma_buf then returns a page-less
 * sg_table of its BAR range: bus addresses, or IOVAs from
 * dma_map_resource() when an IOMMU translates the importer. Otherwise the
 * object moves to system memory and its pages are mapped. Nothing is
 * pinned: every move calls dma_buf_move_notify() (vgem_p2p_bo_move())
 * and the importer maps again, under the dma_resv, after it.
 *
 * A non-dynamic importer gets vgem's behaviour: dma-buf pins the object
 * (.pin moves it to system memory and ttm_bo_pin()s it there) and maps
 * its pages once, at attach.
 *
 * Object flags: NO_P2P serves every importer from system memory.
 * READ_ONLY refuses a mapping the device could write through (any
 * direction but DMA_TO_DEVICE) with -EPERM: dma-buf has no other notion
 * of access, and a non-dynamic attach, which dma-buf maps
 * bidirectionally, fails. DEVICE_ONLY objects are mapped for devices like
 * any other; the CPU cannot reach them through the dma-buf either (its
 * mmap is the object's, which gets SIGBUS; there is no vmap).
 */
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/module.h>
#include <linux/pci-p2pdma.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include <drm/drm_drv.h>
#include <drm/drm_prime.h>

#include "vgem_p2p_drv.h"
#include "vgem_p2p_trace.h"

MODULE_IMPORT_NS(DMA_BUF);

/* An sg_table handed to an importer, and how to take it back */
struct vgem_p2p_dmabuf_sgt {
	struct sg_table sgt;
	enum vgem_p2p_map_kind kind;
	u64 size;
};

static struct vgem_p2p_object *dmabuf_to_bo(struct dma_buf *dmabuf)
{
	return to_vgem_p2p_obj(dmabuf->priv);
}

/**
 * vgem_p2p_dmabuf_move_notify - tell dynamic importers the object moves
 * @bo: the object, whose dma_resv the caller holds
 *
 * From the move callback, as amdgpu_bo_move_notify() does: importers
 * drop their mappings and map again after the move.
 */
void vgem_p2p_dmabuf_move_notify(struct vgem_p2p_object *bo)
{
	dma_resv_assert_held(bo->tbo.base.resv);

	if (!bo->dmabuf)
		return;
	trace_vgem_p2p_move_notify(bo, atomic_read(&bo->nr_attachments));
	dma_buf_move_notify(bo->dmabuf);
	atomic64_inc(&bo->move_notifies);
	atomic64_inc(&obj_to_vdev(bo)->stats.move_notifies);
}

static int vgem_p2p_dmabuf_attach(struct dma_buf *dmabuf,
				  struct dma_buf_attachment *attach)
{
	struct vgem_p2p_object *bo = dmabuf_to_bo(dmabuf);
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);
	int idx;

	/* Decided once per attachment: the topology does not change */
	if (attach->peer2peer) {
		if (!drm_dev_enter(&vdev->drm, &idx)) {
			attach->peer2peer = false;
		} else {
			if ((bo->flags & VGEM_P2P_CREATE_NO_P2P) ||
			    pci_p2pdma_distance(vdev->pdev, attach->dev,
						false) < 0 ||
			    !vgem_p2p_importer_reaches_bar(vdev, attach->dev))
				attach->peer2peer = false;
			drm_dev_exit(idx);
		}
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

/* Non-dynamic importers only: they cannot follow moves */
static int vgem_p2p_dmabuf_pin(struct dma_buf_attachment *attach)
{
	struct vgem_p2p_object *bo = dmabuf_to_bo(attach->dmabuf);
	bool was_in_vram = vgem_p2p_resident_vram(bo);
	int ret;

	ret = vgem_p2p_place(bo, VGEM_P2P_TO_SYSTEM);
	if (ret)
		return ret;
	if (was_in_vram)
		bo->reason = VGEM_P2P_REASON_PINNED;
	ttm_bo_pin(&bo->tbo);
	return 0;
}

static void vgem_p2p_dmabuf_unpin(struct dma_buf_attachment *attach)
{
	ttm_bo_unpin(&dmabuf_to_bo(attach->dmabuf)->tbo);
}

/*
 * The longest segment @dev takes, in whole pages: its DMA segment limit,
 * which as an unsigned int also keeps a scatterlist's length from
 * wrapping (an object may be 4 GiB or more).
 */
static unsigned int vgem_p2p_dmabuf_max_seg(struct device *dev)
{
	unsigned int seg = dma_get_max_seg_size(dev) & PAGE_MASK;

	return max_t(unsigned int, seg, PAGE_SIZE);
}

/* The object's BAR range, for @dev, in segments @dev can take */
static int vgem_p2p_dmabuf_map_vram(struct vgem_p2p_object *bo,
				    struct device *dev,
				    enum dma_data_direction dir,
				    struct vgem_p2p_dmabuf_sgt *s)
{
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);
	unsigned int seg = vgem_p2p_dmabuf_max_seg(dev);
	struct scatterlist *sg;
	dma_addr_t addr;
	u64 off = 0;
	int ret, i;

	dma_resv_assert_held(bo->tbo.base.resv);

	s->size = bo->tbo.base.size;
	ret = sg_alloc_table(&s->sgt, DIV_ROUND_UP_ULL(s->size, seg),
			     GFP_KERNEL);
	if (ret)
		return ret;
	ret = vgem_p2p_export_bar(vdev, dev, &s->kind,
				  (u64)bo->tbo.resource->start << PAGE_SHIFT, s->size,
				  dir, &addr);
	if (ret) {
		sg_free_table(&s->sgt);
		return ret;
	}
	/* No struct page behind a BAR: importers use only the DMA side */
	for_each_sgtable_sg(&s->sgt, sg, i) {
		unsigned int len = min_t(u64, seg, s->size - off);

		sg_set_page(sg, NULL, len, 0);
		sg_dma_address(sg) = addr + off;
		sg_dma_len(sg) = len;
		off += len;
	}
	atomic64_inc(&vdev->stats.dmabuf_maps_p2p);
	return 0;
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
	}
}

/*
 * Move the object to system memory and map its pages for @dev, one
 * dma_map_page() per page and one segment per page, as the vma fallback
 * (vgem_p2p_export.c) and TTM map system pages for importers. The CPU
 * keeps using the pages (mmap) while devices do, so the importer syncs
 * the page each DMA touches, and a sync at unmap would copy a stale
 * bounce buffer over the CPU's writes (see VGEM_P2P_SYSTEM_MAP_ATTRS).
 * A page-sized sync is one the DMA API allows only on a single mapping:
 * dma_map_sgtable() would merge contiguous pages into segments, whose
 * partial syncs DMA-API debugging cannot attribute once two importers
 * map the same pages, and reports as memory never mapped.
 */
static int vgem_p2p_dmabuf_map_system(struct vgem_p2p_object *bo,
				      struct device *dev,
				      enum dma_data_direction dir,
				      struct vgem_p2p_dmabuf_sgt *s)
{
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);
	struct scatterlist *sg;
	unsigned int i;
	int ret;

	ret = vgem_p2p_place(bo, VGEM_P2P_TO_SYSTEM);
	if (ret)
		return ret;

	s->kind = VGEM_P2P_MAP_SYSTEM;
	s->size = bo->tbo.base.size;
	ret = sg_alloc_table(&s->sgt, vgem_p2p_npages(bo), GFP_KERNEL);
	if (ret)
		return ret;
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
	}
	atomic_inc(&bo->dmabuf_system_maps);
	atomic64_inc(&vdev->stats.dmabuf_maps_system);
	return 0;

err_unmap:
	vgem_p2p_dmabuf_unmap_pages(dev, &s->sgt, i, dir);
	sg_free_table(&s->sgt);
	return ret;
}

static struct sg_table *
vgem_p2p_dmabuf_map(struct dma_buf_attachment *attach,
		    enum dma_data_direction dir)
{
	struct vgem_p2p_object *bo = dmabuf_to_bo(attach->dmabuf);
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);
	struct vgem_p2p_dmabuf_sgt *s;
	bool p2p = attach->peer2peer;
	int ret, idx;

	/* Dynamic importers call us with it, dma-buf for the others */
	dma_resv_assert_held(bo->tbo.base.resv);

	if (dir != DMA_TO_DEVICE && (bo->flags & VGEM_P2P_CREATE_READ_ONLY))
		return ERR_PTR(-EPERM);

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return ERR_PTR(-ENOMEM);

	/* Once the device is gone, only its system memory is left */
	if (p2p && !drm_dev_enter(&vdev->drm, &idx))
		p2p = false;

	/* Evicted, and p2p would work: come back, if there is room */
	if (p2p && vgem_p2p_may_return(bo) &&
	    !vgem_p2p_place(bo, VGEM_P2P_RETURN_TO_VRAM))
		bo->reason = VGEM_P2P_REASON_RETURNED;
	if (p2p && vgem_p2p_resident_vram(bo)) {
		ret = vgem_p2p_dmabuf_map_vram(bo, attach->dev, dir, s);
	} else {
		bool was_in_vram = vgem_p2p_resident_vram(bo);

		ret = vgem_p2p_dmabuf_map_system(bo, attach->dev, dir, s);
		if (!ret && was_in_vram)
			bo->reason = attach->peer2peer ?
				     VGEM_P2P_REASON_EVICTED :
				     VGEM_P2P_REASON_NO_P2P_IMPORTER;
	}

	if (p2p)
		drm_dev_exit(idx);
	if (ret) {
		kfree(s);
		return ERR_PTR(ret);
	}
	return &s->sgt;
}

/*
 * Called by importers from their move_notify callbacks, that is inside
 * our own moves: takes no lock of ours.
 */
static void vgem_p2p_dmabuf_unmap(struct dma_buf_attachment *attach,
				  struct sg_table *sgt,
				  enum dma_data_direction dir)
{
	struct vgem_p2p_dmabuf_sgt *s =
		container_of(sgt, struct vgem_p2p_dmabuf_sgt, sgt);
	struct vgem_p2p_object *bo = dmabuf_to_bo(attach->dmabuf);

	if (s->kind == VGEM_P2P_MAP_SYSTEM) {
		vgem_p2p_dmabuf_unmap_pages(attach->dev, sgt, sgt->orig_nents,
					    dir);
		atomic_dec(&bo->dmabuf_system_maps);
	} else {
		vgem_p2p_unexport_bar(attach->dev, s->kind,
				      sg_dma_address(sgt->sgl), s->size, dir);
	}
	trace_vgem_p2p_dmabuf_unmap(bo, attach->dev, s->size);
	sg_free_table(sgt);
	kfree(s);
	atomic64_inc(&obj_to_vdev(bo)->stats.dmabuf_unmaps);
}

static void vgem_p2p_dmabuf_release(struct dma_buf *dmabuf)
{
	struct vgem_p2p_object *bo = dmabuf_to_bo(dmabuf);

	/* No attachment is left: no more move_notify for this one */
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

/**
 * vgem_p2p_gem_prime_export - drm_gem_object_funcs.export
 * @obj: the object
 * @flags: the dma-buf file's flags
 *
 * drm_gem_prime_export() with our dma_buf_ops. DRM keeps one dma-buf per
 * object while it has GEM handles (obj->dma_buf); we remember it until
 * its release, which may come much later, to notify its importers.
 *
 * Return: the dma-buf or an ERR_PTR().
 */
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

/**
 * vgem_p2p_gem_prime_import - drm_driver.gem_prime_import
 * @dev: the importing device
 * @dma_buf: the dma-buf
 *
 * Our own dma-bufs come back as the object they export, as
 * drm_gem_prime_import() does for drm_gem_prime_dmabuf_ops.
 *
 * Return: the object, referenced, or an ERR_PTR().
 */
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
