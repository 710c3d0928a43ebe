// SPDX-License-Identifier: GPL-2.0
/*
 * edu_nic: how a registration of the address space is DMA mapped, on 7.x.
 *
 * The RDMA core only faults: ib_umem_odp_map_dma_and_lock() walks the
 * range with hmm_range_fault() into the umem's struct hmm_dma_map and
 * returns, its sequence checked, with umem_mutex held. The driver maps,
 * as mlx5's populate_mtt() does: the whole range with hmm_dma_map_pfns()
 * (one map-type lookup and IOTLB sync per run), then each entry's address
 * with hmm_dma_map_pfn(), which has it at hand, into the registration's
 * own array. An entry's sticky flags say what it is: HMM_PFN_P2PDMA_BUS a
 * peer's BAR at its PCI bus address, HMM_PFN_P2PDMA a peer's BAR through
 * the host bridge (an IOVA behind an IOMMU), neither system memory.
 * hmm_dma_map_alloc() refuses a device whose mappings could bounce (a
 * limited mask, swiotlb), so nothing is synced.
 *
 * Unmapping is the core's ib_umem_odp_unmap_dma_pages(), as for mlx5.
 */
#include <linux/hmm.h>
#include <linux/hmm-dma.h>
#include <linux/pci-p2pdma.h>
#include <linux/slab.h>

#include <rdma/ib_umem_odp.h>

#include "edu_nic.h"

/* Prepare a new registration, before its first fault: its address array */
int edu_nic_odp_map_init(struct edu_nic_mr *mr)
{
	mr->dma_addrs = kvcalloc(mr->npages, sizeof(*mr->dma_addrs),
				 GFP_KERNEL);
	return mr->dma_addrs ? 0 : -ENOMEM;
}

/*
 * Map every entry of the region, which the core faulted and none of which
 * is mapped, with mr->lock held. On failure what was mapped before it
 * stays mapped, for the caller to unmap with the rest.
 */
static int edu_nic_odp_map_locked(struct edu_nic_mr *mr)
{
	struct ib_umem_odp *odp = mr->odp;
	struct device *dev = odp->umem.ibdev->dma_device;
	struct pci_p2pdma_map_state p2pdma_state = {};
	unsigned long *pfns = odp->map.pfn_list;
	unsigned long i;
	int ret;

	lockdep_assert_held(mr->lock);

	ret = hmm_dma_map_pfns(dev, &odp->map, 0, mr->npages, &p2pdma_state);
	for (i = 0; i < mr->npages; i++) {
		/* Where it failed; or (the core faulted it) never */
		if (!(pfns[i] & HMM_PFN_DMA_MAPPED)) {
			ret = ret ?: -EFAULT;
			continue;
		}
		/* As populate_mtt(); ib_umem_odp_unmap_dma_pages() counts back */
		odp->npages++;
		if (!ret)
			mr->dma_addrs[i] = hmm_dma_map_pfn(dev, &odp->map, i,
							   &p2pdma_state);
	}
	return ret;
}

/*
 * Fault and map the whole region, with ib_umem_odp_map_dma_and_lock()'s
 * return value: on success with mr->lock held.
 */
int edu_nic_odp_map_dma_and_lock(struct edu_nic_mr *mr, bool write)
{
	int npages, ret;

	npages = ib_umem_odp_map_dma_and_lock(mr->odp, mr->start, mr->length,
					      write ? HMM_PFN_WRITE : 0, true);
	if (npages < 0)
		return npages;
	ret = edu_nic_odp_map_locked(mr);
	if (ret) {
		/*
		 * As mlx5 after a failed populate_mtt(): what was mapped
		 * stays so until an invalidation or the caller unmaps it.
		 */
		mutex_unlock(mr->lock);
		return ret;
	}
	return npages;
}

/* The address the device uses for page @i of the installed mirror */
dma_addr_t edu_nic_odp_addr(struct edu_nic_mr *mr, unsigned long i)
{
	return mr->dma_addrs[i];
}

/* Page @i is system memory: neither a bus address nor a host bridge's */
bool edu_nic_odp_page_sysmem(struct edu_nic_mr *mr, unsigned long i)
{
	return !(mr->odp->map.pfn_list[i] &
		 (HMM_PFN_P2PDMA | HMM_PFN_P2PDMA_BUS));
}

/* hmm_dma_map maps coherent only: no sync */
enum dma_data_direction edu_nic_odp_sync_dir(struct edu_nic_mr *mr,
					     unsigned long i)
{
	return DMA_NONE;
}

/* A switch routes page @i's address: the IOMMU never sees it */
bool edu_nic_odp_bus_addr(struct edu_nic_mr *mr, unsigned long i)
{
	return mr->odp->map.pfn_list[i] & HMM_PFN_P2PDMA_BUS;
}

/* Leases are series B's (p2p_lease), not in drm-patches-7.2/ yet: none */
unsigned long edu_nic_odp_nr_leases(struct edu_nic_mr *mr)
{
	return 0;
}
