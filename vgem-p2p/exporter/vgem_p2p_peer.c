// SPDX-License-Identifier: GPL-2.0
/*
 * Who reaches the BAR: pci_p2pdma_distance(), as amdgpu_dma_buf_attach()
 * and xe's xe_has_interconnect() ask. How (bus addresses through a switch,
 * or a mapping through the host bridge) is the PCI core's map type, which
 * it applies when it maps (dma_buf_phys_vec_to_sgt()) and which modules
 * cannot ask for: pci_p2pdma_map_type() is not exported.
 *
 * 6.1's vgem_p2p_export.c answered from drm-patches/' map types, and
 * served the vma hook, which 7.2 has not yet (series B, docs/port-7.2.md).
 */
#include <linux/dma-mapping.h>
#include <linux/pci-p2pdma.h>

#include <drm/drm_file.h>

#include "vgem_p2p_drv.h"
#include "vgem_p2p_iommu.h"

/*
 * Can @dev use the BAR's addresses, whichever the core hands it? A switch
 * routes the bus address untranslated, so it must be under @dev's DMA mask
 * even behind an IOMMU; through the host bridge dma-direct gives the CPU
 * physical address (and WARNs past the mask), an IOMMU an IOVA under it.
 * 6.1's pci_p2pdma_resource_map_type() held the mask to the one address
 * its map type gave.
 */
static bool vgem_p2p_bar_addressable(struct vgem_p2p_device *vdev,
				     struct device *dev)
{
	u64 limit = min_not_zero(dma_get_mask(dev), dev->bus_dma_limit);
	u64 last = vdev->bar_size - 1;

	if (vdev->bar_bus + last > limit)
		return false;
	return vgem_p2p_dma_translated(dev) || vdev->bar_phys + last <= limit;
}

/**
 * vgem_p2p_reaches_bar - may @importer be given the BAR?
 * @vdev: our device, inside drm_dev_enter(): the PCI walk starts at it
 * @importer: the device that would reach it by DMA
 * @obj_flags: the object's VGEM_P2P_CREATE_*; with VGEM_P2P_CREATE_NO_P2P
 *	never
 *
 * Return: true if the PCI core has a peer-to-peer route between us, and
 * @importer can use the BAR's addresses; false: it gets system memory.
 */
bool vgem_p2p_reaches_bar(struct vgem_p2p_device *vdev,
			  struct device *importer, u32 obj_flags)
{
	if ((obj_flags & VGEM_P2P_CREATE_NO_P2P) || !vdev->provider)
		return false;
	return pci_p2pdma_distance(vdev->pdev, importer, false) >= 0 &&
	       vgem_p2p_bar_addressable(vdev, importer);
}

/*
 * DRM_IOCTL_VGEM_P2P_PEER: its path (VGEM_P2P_PEER_BUS or _MAPPED) is the
 * map type, which the exporter cannot learn here; it answers once the
 * uAPI has a plain "p2p" path (docs/port-7.2.md §3, "uAPI changes forced
 * by 7.2"), from vgem_p2p_reaches_bar().
 */
int vgem_p2p_peer_ioctl(struct drm_device *dev, void *data,
			struct drm_file *file)
{
	/* bad input, or a device that does not exist, whatever the path */
	struct pci_dev *peer = vgem_p2p_peer_get(data);

	if (IS_ERR(peer))
		return PTR_ERR(peer);
	pci_dev_put(peer);
	return -EOPNOTSUPP;
}
