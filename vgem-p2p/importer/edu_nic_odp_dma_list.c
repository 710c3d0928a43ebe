// SPDX-License-Identifier: GPL-2.0
/*
 * edu_nic: how a registration of the address space is DMA mapped, on 6.1.
 *
 * 6.1 retires: this file (edu_nic_odp_hmm_dma.c is 7.x's). The series'
 * RDMA core maps each page it faults, after its sequence check, into the
 * umem's dma_list: system pages with ib_dma_map_page_attrs(), peers' BARs
 * with pci_p2pdma_map_resource(), keeping the map type of those in
 * p2p_map_type. edu_nic reads the result.
 */
#include <linux/hmm.h>
#include <linux/pci-p2pdma.h>

#include <rdma/ib_umem_odp.h>

#include "edu_nic.h"

/*
 * The CPU keeps using the pages while they are mapped, and an unmap's sync
 * would copy a bounce buffer over what it wrote: each DMA syncs its page
 * instead. This also tells DMA-API debugging that several writable
 * mappings of one page are intended.
 */
#define EDU_NIC_MAP_ATTRS	DMA_ATTR_SKIP_CPU_SYNC

/* Prepare a new registration's umem, before its first fault */
int edu_nic_odp_map_init(struct edu_nic_mr *mr)
{
	mr->odp->dma_attrs = EDU_NIC_MAP_ATTRS;
	return 0;
}

/*
 * Fault and map the whole region, as ib_umem_odp_map_dma_and_lock(), with
 * its return value: on success with mr->lock held.
 */
int edu_nic_odp_map_dma_and_lock(struct edu_nic_mr *mr, bool write)
{
	u64 access = ODP_READ_ALLOWED_BIT |
		     (write ? ODP_WRITE_ALLOWED_BIT : 0);

	return ib_umem_odp_map_dma_and_lock(mr->odp, mr->start, mr->length,
					    access, true);
}

/* The address the device uses for page @i of the installed mirror */
dma_addr_t edu_nic_odp_addr(struct edu_nic_mr *mr, unsigned long i)
{
	return mr->odp->dma_list[i] & ODP_DMA_ADDR_MASK;
}

/*
 * How the RDMA core mapped page @i: PCI_P2PDMA_MAP_UNKNOWN for a page of
 * system memory, else the map type of the BAR it is in.
 */
static enum pci_p2pdma_map_type edu_nic_odp_map_type(struct edu_nic_mr *mr,
						     unsigned long i)
{
	if (!mr->odp->p2p_map_type)
		return PCI_P2PDMA_MAP_UNKNOWN;
	return mr->odp->p2p_map_type[i];
}

/* Page @i is system memory: the device reaches it through a sync */
bool edu_nic_odp_page_sysmem(struct edu_nic_mr *mr, unsigned long i)
{
	return edu_nic_odp_map_type(mr, i) == PCI_P2PDMA_MAP_UNKNOWN;
}

/* The direction system page @i is mapped, and synced, with */
enum dma_data_direction edu_nic_odp_sync_dir(struct edu_nic_mr *mr,
					     unsigned long i)
{
	return ib_umem_odp_dma_dir(mr->odp,
				   hmm_pfn_to_page(mr->odp->pfn_list[i]));
}

/* A switch routes page @i's address: the IOMMU never sees it */
bool edu_nic_odp_bus_addr(struct edu_nic_mr *mr, unsigned long i)
{
	return edu_nic_odp_map_type(mr, i) == PCI_P2PDMA_MAP_BUS_ADDR;
}

/* The exporters' leases (struct p2p_lease) the installed mirror holds */
unsigned long edu_nic_odp_nr_leases(struct edu_nic_mr *mr)
{
	unsigned long nleases = 0;
	struct list_head *pos;

	list_for_each(pos, &mr->odp->p2p_leases)
		nleases++;
	return nleases;
}
