/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What both vgem-p2p drivers mean by "the IOMMU translates this device's
 * DMA", so that the exporter's choice of address (IOVA or bus address)
 * and the importer's reading of it can never disagree.
 */
#ifndef _VGEM_P2P_IOMMU_H
#define _VGEM_P2P_IOMMU_H

#include <linux/device.h>
#include <linux/iommu.h>

/**
 * vgem_p2p_dma_translated - does the DMA API hand @dev IOVAs?
 * @dev: a device doing DMA
 *
 * True when the device's domain is a DMA-API domain (IOMMU_DOMAIN_DMA or
 * _DMA_FQ): exactly the domains for which iommu_setup_dma_ops() installs
 * iommu-dma, so dma_map_*() return IOVAs of that domain, and the address
 * a DMA reaches is iommu_iova_to_phys() of it. An identity domain, or
 * none, leaves dma-direct: bus addresses. A paging domain that is not a
 * DMA-API domain (IOMMU_DOMAIN_UNMANAGED, VFIO's) is not the DMA API's
 * to use, and a driver bound through the DMA API never sees one.
 */
static inline bool vgem_p2p_dma_translated(struct device *dev)
{
	struct iommu_domain *domain = iommu_get_domain_for_dev(dev);

	return domain && iommu_is_dma_domain(domain);
}

#endif /* _VGEM_P2P_IOMMU_H */
