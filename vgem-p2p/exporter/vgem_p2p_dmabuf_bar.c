// SPDX-License-Identifier: GPL-2.0
/*
 * VRAM for peer2peer dma-buf importers, as VFIO exports a BAR
 * (vfio_pci_dmabuf.c): dma_buf_phys_vec_to_sgt() maps the object's BAR
 * range for the importer, as bus addresses or through the host bridge,
 * which the PCI core chooses between, and dma_buf_free_sgt() unmaps it.
 * An importer that cannot follow moves pins the object in VRAM only if it
 * lets us revoke the pin, and unplug revokes every mapping of the BAR, as
 * VFIO does when the device goes.
 */
#include <linux/dma-buf.h>
#include <linux/dma-buf-mapping.h>
#include <linux/wait_bit.h>

#include <drm/drm_drv.h>

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
	atomic_inc(&vdev->dmabuf_bar_maps);
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
	struct vgem_p2p_device *vdev =
		obj_to_vdev(to_vgem_p2p_obj(attach->dmabuf->priv));

	if (sgt->orig_nents)
		return false;
	dma_buf_free_sgt(attach, sgt, dir);
	if (atomic_dec_and_test(&vdev->dmabuf_bar_maps))
		wake_up_var(&vdev->dmabuf_bar_maps);
	return true;
}

/*
 * Pin in VRAM? Only for an importer that lets us revoke the pin
 * (dma_buf_attach_revocable(): its invalidate_mappings unmaps and unpins,
 * as ib_umem_dmabuf's revocable pins do), as VFIO admits no other; and
 * only while every attachment reaches the BAR, as amdgpu_dma_buf_pin()
 * pins in VRAM. An evicted object comes back first, if it fits.
 * Return: true if pinned there.
 */
bool vgem_p2p_dmabuf_pin_bar(struct dma_buf_attachment *attach)
{
	struct vgem_p2p_object *bo = to_vgem_p2p_obj(attach->dmabuf->priv);
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);
	bool pinned = false;
	int idx;

	dma_resv_assert_held(bo->tbo.base.resv);

	if (!attach->peer2peer || !dma_buf_attach_revocable(attach) ||
	    atomic_read(&bo->nr_system_attachments))
		return false;
	/* vgem_p2p_dmabuf_revoke() finds every pin made before unplug */
	if (!drm_dev_enter(&vdev->drm, &idx))
		return false;
	vgem_p2p_return(bo);
	if (vgem_p2p_resident_vram(bo)) {
		ttm_bo_pin(&bo->tbo);
		pinned = true;
	}
	drm_dev_exit(idx);
	return pinned;
}

/**
 * vgem_p2p_dmabuf_revoke - unplug: take the BAR back from dma-buf importers
 * @vdev: the device, unplugged: no mapping made from now on is of the BAR
 *
 * As vfio_pci_dma_buf_move() revokes: for each object in VRAM, under its
 * reservation, tell the importers (dma_buf_invalidate_mappings(); those
 * that pinned it there unmap and unpin) and wait for their fences; then,
 * holding nothing, wait for the last mapping of the BAR to go, which an
 * importer may unmap after its callback, even of an object moved out
 * before. What is left in VRAM is unpinned then, for unbind's eviction.
 */
void vgem_p2p_dmabuf_revoke(struct vgem_p2p_device *vdev)
{
	struct vgem_p2p_object *bo;
	u64 cursor = 0;

	while ((bo = vgem_p2p_vram_next(vdev, &cursor))) {
		struct dma_resv *resv = bo->tbo.base.resv;

		dma_resv_lock(resv, NULL);
		if (bo->dmabuf && vgem_p2p_resident_vram(bo)) {
			vgem_p2p_dmabuf_move_notify(bo);
			dma_resv_wait_timeout(resv, DMA_RESV_USAGE_BOOKKEEP,
					      false, MAX_SCHEDULE_TIMEOUT);
		}
		dma_resv_unlock(resv);
		vgem_p2p_bo_put(&bo->tbo);
	}
	wait_var_event(&vdev->dmabuf_bar_maps,
		       !atomic_read(&vdev->dmabuf_bar_maps));
}
