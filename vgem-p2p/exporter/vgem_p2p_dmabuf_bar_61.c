// SPDX-License-Identifier: GPL-2.0
/*
 * VRAM for peer2peer dma-buf importers, on 6.1: the object's BAR range as
 * bus addresses or as one dma_map_resource() mapping, which drm-patches/'
 * pci_p2pdma_map_resource() chooses between, in segments the importer
 * takes. Pinned objects are in system memory.
 *
 * 6.1 retires: this file; 7.2's is vgem_p2p_dmabuf_bar.c.
 */
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include "vgem_p2p_drv.h"

/* In whole pages; an unsigned int, so sg lengths of >= 4 GiB objects fit */
static unsigned int vgem_p2p_dmabuf_max_seg(struct device *dev)
{
	unsigned int seg = dma_get_max_seg_size(dev) & PAGE_MASK;

	return max_t(unsigned int, seg, PAGE_SIZE);
}

/* The object's BAR range, for @attach's device, in segments it can take */
struct sg_table *vgem_p2p_dmabuf_map_bar(struct vgem_p2p_object *bo,
					 struct dma_buf_attachment *attach,
					 enum dma_data_direction dir)
{
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);
	struct device *dev = attach->dev;
	unsigned int seg = vgem_p2p_dmabuf_max_seg(dev);
	struct vgem_p2p_dmabuf_sgt *s;
	struct scatterlist *sg;
	dma_addr_t addr;
	u64 off = 0;
	int ret, i;

	dma_resv_assert_held(bo->tbo.base.resv);

	s = kzalloc_obj(*s);
	if (!s)
		return ERR_PTR(-ENOMEM);
	s->size = bo->tbo.base.size;
	ret = sg_alloc_table(&s->sgt, DIV_ROUND_UP_ULL(s->size, seg),
			     GFP_KERNEL);
	if (ret)
		goto err_free;
	ret = vgem_p2p_export_bar(vdev, dev, &s->kind,
				  (u64)bo->tbo.resource->start << PAGE_SHIFT, s->size,
				  dir, &addr);
	if (ret) {
		sg_free_table(&s->sgt);
		goto err_free;
	}
	atomic64_add(s->size >> PAGE_SHIFT, s->kind == VGEM_P2P_MAP_BUS ?
		     &vdev->stats.p2p_pages_bus : &vdev->stats.p2p_pages_iova);
	/*
	 * No struct page behind a BAR: importers use only the DMA side. A
	 * bus address is marked as dma-direct's and dma-iommu's
	 * pci_p2pdma_map_segment() users mark theirs: an importer behind an
	 * IOMMU must not take an address a switch routes for an IOVA.
	 */
	for_each_sgtable_sg(&s->sgt, sg, i) {
		unsigned int len = min_t(u64, seg, s->size - off);

		sg_set_page(sg, NULL, len, 0);
		sg_dma_address(sg) = addr + off;
		sg_dma_len(sg) = len;
		if (s->kind == VGEM_P2P_MAP_BUS)
			sg_dma_mark_bus_address(sg);
		off += len;
	}
	atomic64_inc(&vdev->stats.dmabuf_maps_p2p);
	return &s->sgt;

err_free:
	kfree(s);
	return ERR_PTR(ret);
}

/* Does not sleep. Return: false if @sgt is not of the BAR */
bool vgem_p2p_dmabuf_unmap_bar(struct dma_buf_attachment *attach,
			       struct sg_table *sgt,
			       enum dma_data_direction dir)
{
	struct vgem_p2p_dmabuf_sgt *s =
		container_of(sgt, struct vgem_p2p_dmabuf_sgt, sgt);

	if (s->kind == VGEM_P2P_MAP_SYSTEM)
		return false;
	vgem_p2p_unexport_bar(attach->dev, s->kind, sg_dma_address(sgt->sgl),
			      s->size, dir);
	sg_free_table(sgt);
	kfree(s);
	return true;
}

/* Never: a pinned object is in system memory, as vgem's are */
bool vgem_p2p_dmabuf_pin_bar(struct dma_buf_attachment *attach)
{
	return false;
}
