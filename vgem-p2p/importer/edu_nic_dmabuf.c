// SPDX-License-Identifier: GPL-2.0
/*
 * edu_nic: dma-buf registrations.
 *
 * An RDMA dma-buf umem, as mlx5's dma-buf MRs are: a dynamic attachment
 * with peer2peer allowed, so the exporter may hand out its device memory.
 * Its invalidation (move_notify on 6.1) drops the mapping, as
 * mlx5_ib_dmabuf_invalidate_cb() does; the next DMA maps it again
 * (ib_umem_dmabuf_map_pages() waits for the exporter's fences). The
 * mapping is all or nothing.
 */
#include <linux/dma-buf.h>
#include <linux/dma-resv.h>
#include <linux/fs.h>
#include <linux/ioport.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/sched/signal.h>

#include <rdma/ib_umem.h>

#include "edu_nic.h"

MODULE_IMPORT_NS(EDU_NIC_NS_DMA_BUF);

static struct dma_resv *edu_nic_dmabuf_resv(struct edu_nic_mr *mr)
{
	return mr->umem_dmabuf->attach->dmabuf->resv;
}

/*
 * Set the mr->sysmem bits of pages [@i, @i + @n) whose addresses reach
 * system RAM: one region_intersects() per physically contiguous stretch
 * (a VRAM range is one), page by page only for a mixed one. An address
 * the IOMMU cannot translate stays unset: no DMA reaches it.
 */
static void edu_nic_dmabuf_classify(struct edu_nic_mr *mr, unsigned long i,
				    unsigned long n)
{
	struct iommu_domain *domain = edu_nic_dma_domain(mr->nic);
	unsigned long end = i + n, j, k;
	phys_addr_t phys;

	while (i < end) {
		phys = edu_nic_mr_phys(mr, domain, i);
		for (j = i + 1; j < end; j++)
			if (edu_nic_mr_phys(mr, domain, j) !=
			    phys + ((phys_addr_t)(j - i) << PAGE_SHIFT))
				break;
		if (!phys) {
			i = j;
			continue;
		}
		switch (region_intersects(phys, (j - i) << PAGE_SHIFT,
					  IORESOURCE_SYSTEM_RAM,
					  IORES_DESC_NONE)) {
		case REGION_INTERSECTS:
			bitmap_set(mr->sysmem, i, j - i);
			break;
		case REGION_MIXED:
			for (k = i; k < j; k++)
				if (page_is_ram(PHYS_PFN(phys) + k - i))
					__set_bit(k, mr->sysmem);
			break;
		}
		i = j;
	}
}

/*
 * Per page, the device address from the umem's scatterlist, which
 * ib_umem_dmabuf_map_pages() trimmed to the range. A segment that is not
 * page-aligned cannot be DMAed page by page.
 */
static int edu_nic_dmabuf_fill(struct edu_nic_mr *mr, unsigned long *p2p,
			       unsigned long *bus)
{
	struct sg_table *sgt = &mr->umem_dmabuf->umem.sgt_append.sgt;
	struct scatterlist *sg;
	unsigned long i = 0, first;
	unsigned int n;

	bitmap_zero(mr->sysmem, mr->npages);
	bitmap_zero(mr->bus, mr->npages);
	for_each_sg(sgt->sgl, sg, sgt->nents, n) {
		dma_addr_t addr = sg_dma_address(sg);
		u64 len = sg_dma_len(sg);

		if (!PAGE_ALIGNED(addr) || !PAGE_ALIGNED(len))
			return -EINVAL;
		first = i;
		for (; len && i < mr->npages; len -= PAGE_SIZE, addr += PAGE_SIZE)
			mr->dma_addrs[i++] = addr;
		if (i == first)
			continue;
		/* before classifying: a bus address is no IOVA */
		if (sg_dma_is_bus_address(sg))
			bitmap_set(mr->bus, first, i - first);
		edu_nic_dmabuf_classify(mr, first, i - first);
		if (i == mr->npages) {
			*p2p = mr->npages - bitmap_weight(mr->sysmem,
							  mr->npages);
			*bus = bitmap_weight(mr->bus, mr->npages);
			return 0;
		}
	}
	return -EINVAL;
}

/* Map the registration, which has no mapping installed */
static int edu_nic_dmabuf_map(struct edu_nic_mr *mr)
{
	bool write = mr->access & EDU_NIC_ACCESS_WRITE;
	unsigned long p2p, bus;
	int ret;

	dma_resv_assert_held(edu_nic_dmabuf_resv(mr));

	ret = ib_umem_dmabuf_map_pages(mr->umem_dmabuf);
	if (ret)
		return ret;
	ret = edu_nic_dmabuf_fill(mr, &p2p, &bus);
	if (ret) {
		ib_umem_dmabuf_unmap_pages(mr->umem_dmabuf);
		return ret;
	}

	mutex_lock(mr->lock);
	edu_nic_mr_installed(mr, write, p2p, p2p ? 1 : 0);
	if (EDU_NIC_DMA_BUF_SPLITS_P2P) {
		edu_nic_mr_count(mr, pages_bus, bus);
		edu_nic_mr_count(mr, pages_iova, p2p - bus);
	}
	mutex_unlock(mr->lock);
	return 0;
}

/* Mark the mapping gone, if installed; @moved: the exporter asked */
static void edu_nic_dmabuf_uninstall(struct edu_nic_mr *mr, bool moved)
{
	mutex_lock(mr->lock);
	if (mr->valid) {
		edu_nic_mr_uninstalled(mr);
		if (moved)
			edu_nic_mr_count(mr, invalidations, 1);
	}
	mutex_unlock(mr->lock);
}

/* Drop the mapping, if any; @moved: the exporter asked (invalidate) */
static void edu_nic_dmabuf_unmap(struct edu_nic_mr *mr, bool moved)
{
	dma_resv_assert_held(edu_nic_dmabuf_resv(mr));

	edu_nic_dmabuf_uninstall(mr, moved);
	ib_umem_dmabuf_unmap_pages(mr->umem_dmabuf);
}

/*
 * The exporter moves the memory: stop using the addresses. Its
 * dma_buf_attach_ops.invalidate_mappings (move_notify on 6.1).
 */
static void edu_nic_dmabuf_invalidate(struct dma_buf_attachment *attach)
{
	struct ib_umem_dmabuf *umem_dmabuf = attach->importer_priv;
	struct edu_nic_mr *mr = umem_dmabuf->private;

	/* Not yet a registration, or not mapped: nothing to drop */
	if (!mr || !umem_dmabuf->sgt)
		return;
	edu_nic_dmabuf_unmap(mr, true);
}

/*
 * The exporter revokes a pinned import (7.x), under the dma_resv: stop
 * using the addresses for good, as irdma_umem_dmabuf_revoke() invalidates
 * its MR. The core then unmaps and unpins the buffer; each DMA fails with
 * -ENODEV until the registration goes. This may come before
 * edu_nic_dmabuf_create() has set mr->umem_dmabuf: nothing is installed
 * then, and the first mapping fails.
 */
static void edu_nic_dmabuf_revoke(void *priv)
{
	edu_nic_dmabuf_uninstall(priv, true);
}

static const struct dma_buf_attach_ops edu_nic_dmabuf_attach_ops = {
	.allow_peer2peer = true,
	EDU_NIC_DMA_BUF_INVALIDATE(edu_nic_dmabuf_invalidate),
};

/*
 * Lock a dma-buf registration for DMA, mapping it again if a move dropped
 * the mapping (@write is unused: it has the registration's access).
 * Returns 0 with the dma_resv and mr->lock held, or an errno with neither.
 * A move holds the dma_resv across its fence wait (a vgem fence: up to
 * 10 s) and its copy; only signals end the wait for it, as for an ODP
 * registration: -EINTR for a fatal one, else -ERESTARTSYS.
 */
static int edu_nic_dmabuf_lock_mirror(struct edu_nic_mr *mr, bool write)
{
	struct dma_resv *resv = edu_nic_dmabuf_resv(mr);
	int ret;

	lockdep_assert_held(&mr->op_lock);

	ret = dma_resv_lock_interruptible(resv, NULL);
	if (ret == -EINTR && !fatal_signal_pending(current))
		return -ERESTARTSYS;
	if (ret)
		return ret;
	/* Unbound, or revoked: do not even ask the exporter for addresses. */
	if (READ_ONCE(mr->nic->dead) ||
	    edu_nic_umem_dmabuf_revoked(mr->umem_dmabuf))
		ret = -ENODEV;
	else if (!mr->valid)
		ret = edu_nic_dmabuf_map(mr);
	if (ret) {
		dma_resv_unlock(resv);
		return ret;
	}
	mutex_lock(mr->lock);
	return 0;
}

/*
 * As edu_nic_dmabuf_lock_mirror(), but with the engine held, so -EAGAIN
 * where it would wait or map. A move holds the dma_resv across its fence
 * wait and its copy: waiting for it here would stall every user of the
 * device for one object. On -EAGAIN the transfer drops the engine and
 * waits in edu_nic_dmabuf_lock_mirror(), then retries: as TTM's eviction
 * try-locks a BO under its LRU lock and waits for a busy one only once
 * that is dropped (ttm_mem_evict_wait_busy()), and as mlx5 waits in the
 * faulting MR's own work (pagefault_dmabuf_mr()), which no other MR's
 * DMA waits for.
 */
static int edu_nic_dmabuf_lock_installed(struct edu_nic_mr *mr, bool write)
{
	struct dma_resv *resv = edu_nic_dmabuf_resv(mr);

	if (!dma_resv_trylock(resv))
		return -EAGAIN;
	if (!mr->valid) {
		dma_resv_unlock(resv);
		return -EAGAIN;
	}
	mutex_lock(mr->lock);
	return 0;
}

static void edu_nic_dmabuf_unlock_mirror(struct edu_nic_mr *mr)
{
	mutex_unlock(mr->lock);
	dma_resv_unlock(edu_nic_dmabuf_resv(mr));
}

/*
 * The checks the RDMA core leaves to us: the device writing is a write to
 * the dma-buf, so its fd must be open for writing (-EACCES, as for a
 * shared writable mmap()); and the range must lie in the buffer.
 */
static int edu_nic_dmabuf_check(struct dma_buf *dmabuf,
				const struct edu_nic_reg_dmabuf *req)
{
	if ((req->access & EDU_NIC_ACCESS_WRITE) &&
	    !(dmabuf->file->f_mode & FMODE_WRITE))
		return -EACCES;
	if (req->offset >= dmabuf->size ||
	    req->length > dmabuf->size - req->offset)
		return -EINVAL;
	return 0;
}

/* Drop the mapping of a device being unbound, already marked dead */
static void edu_nic_dmabuf_kill(struct edu_nic_mr *mr)
{
	struct dma_resv *resv = edu_nic_dmabuf_resv(mr);

	dma_resv_lock(resv, NULL);
	edu_nic_dmabuf_unmap(mr, false);
	dma_resv_unlock(resv);
}

/* The last reference: unmap, detach and drop the dma-buf */
static void edu_nic_dmabuf_release(struct edu_nic_mr *mr)
{
	edu_nic_dmabuf_kill(mr);
	ib_umem_release(&mr->umem_dmabuf->umem);
}

static dma_addr_t edu_nic_dmabuf_addr(struct edu_nic_mr *mr, unsigned long i)
{
	return mr->dma_addrs[i];
}

/* Page @i is system memory (mr->sysmem): the device reaches it synced */
static bool edu_nic_dmabuf_page_sysmem(struct edu_nic_mr *mr,
				       unsigned long i)
{
	return test_bit(i, mr->sysmem);
}

static enum dma_data_direction edu_nic_dmabuf_sync_dir(struct edu_nic_mr *mr,
						       unsigned long i)
{
	return ib_umem_dma_dir(&mr->umem_dmabuf->umem);
}

/* Page @i's address is a bus address (mr->bus): no IOMMU translates it */
static bool edu_nic_dmabuf_bus_addr(struct edu_nic_mr *mr, unsigned long i)
{
	return test_bit(i, mr->bus);
}

/* No .first_dma_addr: the dma_resv, not the mirror lock, guards the mapping */
static const struct edu_nic_mr_ops edu_nic_dmabuf_ops = {
	.lock_mirror = edu_nic_dmabuf_lock_mirror,
	.lock_installed = edu_nic_dmabuf_lock_installed,
	.unlock_mirror = edu_nic_dmabuf_unlock_mirror,
	.addr = edu_nic_dmabuf_addr,
	.bus_addr = edu_nic_dmabuf_bus_addr,
	.page_sysmem = edu_nic_dmabuf_page_sysmem,
	.sync_dir = edu_nic_dmabuf_sync_dir,
	.kill = edu_nic_dmabuf_kill,
	.release = edu_nic_dmabuf_release,
};

/**
 * edu_nic_dmabuf_create - EDU_NIC_IOCTL_REG_DMABUF's work
 * @nic: the device
 * @req: the request, checked but for the dma-buf itself
 *
 * With %EDU_NIC_REG_DMABUF_PINNED, pinned as mlx5 pins a DEVX umem's: the
 * exporter never moves it. On 7.x it may revoke it, as from irdma's.
 *
 * Return: the region, attached and mapped, with one reference, not yet
 * published (the ioctl publishes it once it has its key); or an ERR_PTR().
 */
struct edu_nic_mr *edu_nic_dmabuf_create(struct edu_nic *nic,
					 const struct edu_nic_reg_dmabuf *req)
{
	int access = req->access & EDU_NIC_ACCESS_WRITE ?
		     IB_ACCESS_LOCAL_WRITE : 0;
	struct ib_umem_dmabuf *umem_dmabuf;
	struct dma_buf *dmabuf;
	struct edu_nic_mr *mr;
	int ret;

	dmabuf = dma_buf_get((int)req->fd);
	if (IS_ERR(dmabuf))
		return ERR_CAST(dmabuf);
	ret = edu_nic_dmabuf_check(dmabuf, req);
	dma_buf_put(dmabuf);
	if (ret)
		return ERR_PTR(ret);

	mr = edu_nic_mr_alloc(nic, req->offset, req->length, req->access,
			      EDU_NIC_KIND_DMABUF, &edu_nic_dmabuf_ops);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	ret = -ENOMEM;
	mr->dma_addrs = kvcalloc(mr->npages, sizeof(*mr->dma_addrs),
				 GFP_KERNEL);
	mr->sysmem = kvcalloc(BITS_TO_LONGS(mr->npages), sizeof(long),
			      GFP_KERNEL);
	mr->bus = kvcalloc(BITS_TO_LONGS(mr->npages), sizeof(long),
			   GFP_KERNEL);
	if (!mr->dma_addrs || !mr->sysmem || !mr->bus)
		goto err_free_mr;

	if (req->flags & EDU_NIC_REG_DMABUF_PINNED)
		umem_dmabuf = edu_nic_umem_dmabuf_get_pinned(&nic->ibdev,
							     req->offset,
							     req->length,
							     (int)req->fd,
							     access,
							     edu_nic_dmabuf_revoke,
							     mr);
	else
		umem_dmabuf = ib_umem_dmabuf_get(&nic->ibdev, req->offset,
						 req->length, (int)req->fd,
						 access,
						 &edu_nic_dmabuf_attach_ops);
	if (IS_ERR(umem_dmabuf)) {
		ret = PTR_ERR(umem_dmabuf);
		goto err_free_mr;
	}
	mr->umem_dmabuf = umem_dmabuf;
	/* The fd may name another dma-buf now: hold that one to the rules */
	ret = edu_nic_dmabuf_check(umem_dmabuf->attach->dmabuf, req);
	if (ret)
		goto err_release_umem;

	dma_resv_lock(edu_nic_dmabuf_resv(mr), NULL);
	umem_dmabuf->private = mr;
	dma_resv_unlock(edu_nic_dmabuf_resv(mr));

	/* Map now, so that the exporter's refusal shows at registration */
	mutex_lock(&mr->op_lock);
	ret = edu_nic_dmabuf_lock_mirror(mr, false);
	if (!ret)
		edu_nic_dmabuf_unlock_mirror(mr);
	mutex_unlock(&mr->op_lock);
	if (ret)
		goto err_release_umem;
	return mr;

err_release_umem:
	ib_umem_release(&umem_dmabuf->umem);
err_free_mr:
	edu_nic_mr_free(mr);
	return ERR_PTR(ret);
}
