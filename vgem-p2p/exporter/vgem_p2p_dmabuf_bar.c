// SPDX-License-Identifier: GPL-2.0
/*
 * VRAM for peer2peer dma-buf importers, as VFIO exports a BAR
 * (vfio_pci_dmabuf.c): dma_buf_phys_vec_to_sgt() maps the object's BAR
 * range for the importer, as bus addresses or through the host bridge,
 * which the PCI core chooses between, and dma_buf_free_sgt() unmaps it.
 */
#include <linux/dma-buf.h>
#include <linux/dma-buf-mapping.h>

#include "vgem_p2p_drv.h"

/* The object's BAR range, for @attach's device */
struct sg_table *vgem_p2p_dmabuf_map_bar(struct vgem_p2p_object *bo,
					 struct dma_buf_attachment *attach,
					 enum dma_data_direction dir)
{
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);
	struct phys_vec vec = {
		.paddr = vdev->bar_phys +
			 ((phys_addr_t)bo->tbo.resource->start << PAGE_SHIFT),
		.len = bo->tbo.base.size,
	};
	struct sg_table *sgt;

	dma_resv_assert_held(bo->tbo.base.resv);

	sgt = dma_buf_phys_vec_to_sgt(attach, vdev->provider, &vec, 1, vec.len,
				      dir);
	if (IS_ERR(sgt))
		return sgt;
	atomic64_inc(&vdev->stats.dmabuf_maps_p2p);
	return sgt;
}

/*
 * Does not sleep. dma_buf_phys_vec_to_sgt() leaves its tables without a
 * CPU list (orig_nents 0), which ours of system pages have.
 * Return: false if @sgt is not of the BAR.
 */
bool vgem_p2p_dmabuf_unmap_bar(struct dma_buf_attachment *attach,
			       struct sg_table *sgt,
			       enum dma_data_direction dir)
{
	if (sgt->orig_nents)
		return false;
	dma_buf_free_sgt(attach, sgt, dir);
	return true;
}

/* Not yet: a pinned object is in system memory, as vgem's are */
bool vgem_p2p_dmabuf_pin_bar(struct dma_buf_attachment *attach)
{
	return false;
}
