// SPDX-License-Identifier: GPL-2.0
/*
 * edu_nic: dma-buf registrations, the upstream importer path beside the
 * hmm_range_fault() one of edu_nic_mr.c.
 *
 * A registration attaches dynamically (dma_buf_dynamic_attach()) with
 * peer2peer allowed, so the exporter may hand out its device memory; it
 * decides, and the addresses tell us which we got. The mapping is made
 * and used under the dma-buf's dma_resv: the exporter moves the memory
 * only with it held, and tells us first (move_notify), so a DMA, which
 * holds it, never overlaps a move. move_notify drops the mapping; the
 * next DMA maps again (dma_buf_map_attachment()) and waits for the
 * exporter's kernel fences (a move it did asynchronously) before using
 * it. Like the vma mirror, the mapping is all or nothing.
 */
#include <linux/dma-buf.h>
#include <linux/dma-resv.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/scatterlist.h>

#include "edu_nic.h"

MODULE_IMPORT_NS(DMA_BUF);

/* How long a DMA waits for an exporter's move to finish */
#define EDU_NIC_FENCE_TIMEOUT_MS	10000

static struct dma_resv *edu_nic_dmabuf_resv(struct edu_nic_mr *mr)
{
	return mr->dmabuf->resv;
}

/*
 * Per page of the registered range, the address the device uses. The
 * exporter's segments are page-aligned; anything else cannot be DMAed
 * page by page and is refused. Each segment is classified as a whole
 * (system RAM or the exporter's own memory), not page by page.
 */
static int edu_nic_dmabuf_fill(struct edu_nic_mr *mr, struct sg_table *sgt,
			       unsigned long *p2p)
{
	u64 skip = mr->start, pos = 0;
	struct scatterlist *sg;
	unsigned long i = 0, first;
	unsigned int n;

	bitmap_zero(mr->sysmem, mr->npages);
	for_each_sgtable_dma_sg(sgt, sg, n) {
		dma_addr_t addr = sg_dma_address(sg);
		u64 len = sg_dma_len(sg);

		if (!PAGE_ALIGNED(addr) || !PAGE_ALIGNED(len))
			return -EINVAL;
		first = i;
		for (; len && i < mr->npages;
		     len -= PAGE_SIZE, addr += PAGE_SIZE, pos += PAGE_SIZE) {
			if (pos < skip)
				continue;
			mr->dma_addrs[i++] = addr;
		}
		if (i > first)
			edu_nic_mr_classify(mr, first, i - first);
		if (i == mr->npages) {
			*p2p = mr->npages - bitmap_weight(mr->sysmem,
							  mr->npages);
			return 0;
		}
	}
	return -EINVAL;
}

/* Map the registration, with the dma_resv held and no mapping installed */
static int edu_nic_dmabuf_map(struct edu_nic_mr *mr)
{
	struct dma_resv *resv = edu_nic_dmabuf_resv(mr);
	bool write = mr->access & EDU_NIC_ACCESS_WRITE;
	struct sg_table *sgt;
	unsigned long p2p;
	long ret;

	dma_resv_assert_held(resv);

	sgt = dma_buf_map_attachment(mr->attach, edu_nic_mr_dir(write));
	if (IS_ERR(sgt))
		return PTR_ERR(sgt);

	/* An exporter's move may still be running on its own engine */
	ret = dma_resv_wait_timeout(resv, DMA_RESV_USAGE_KERNEL, false,
				    msecs_to_jiffies(EDU_NIC_FENCE_TIMEOUT_MS));
	if (ret <= 0) {
		ret = ret ?: -ETIMEDOUT;
		goto err_unmap;
	}
	ret = edu_nic_dmabuf_fill(mr, sgt, &p2p);
	if (ret)
		goto err_unmap;

	mutex_lock(&mr->lock);
	mr->sgt = sgt;
	mr->valid = true;
	mr->writable = write;
	edu_nic_mr_count(mr, faults, 1);
	if (mr->ever_mapped)
		edu_nic_mr_count(mr, remaps, 1);
	mr->ever_mapped = true;
	if (p2p)
		edu_nic_mr_count(mr, p2p_maps, 1);
	edu_nic_mr_count(mr, pages_p2p, p2p);
	edu_nic_mr_count(mr, pages_system, mr->npages - p2p);
	edu_nic_mr_count(mr, cur_pages_p2p, p2p);
	edu_nic_mr_count(mr, cur_pages_system, mr->npages - p2p);
	mutex_unlock(&mr->lock);
	return 0;

err_unmap:
	dma_buf_unmap_attachment(mr->attach, sgt, edu_nic_mr_dir(write));
	return ret;
}

/* Drop the mapping, if any; @moved: the exporter asked (move_notify) */
static void edu_nic_dmabuf_unmap(struct edu_nic_mr *mr, bool moved)
{
	struct sg_table *sgt;

	dma_resv_assert_held(edu_nic_dmabuf_resv(mr));

	mutex_lock(&mr->lock);
	sgt = mr->sgt;
	mr->sgt = NULL;
	if (mr->valid) {
		edu_nic_mr_count(mr, cur_pages_p2p, -mr->stats.cur_pages_p2p);
		edu_nic_mr_count(mr, cur_pages_system,
				 -mr->stats.cur_pages_system);
		if (moved)
			edu_nic_mr_count(mr, invalidations, 1);
		mr->valid = false;
		mr->writable = false;
	}
	mutex_unlock(&mr->lock);

	if (sgt)
		dma_buf_unmap_attachment(mr->attach, sgt,
					 edu_nic_mr_dir(mr->access &
							EDU_NIC_ACCESS_WRITE));
}

/*
 * The exporter is about to move the memory, or has; it holds the dma_resv,
 * so no DMA of ours is in flight. Stop using the addresses for good.
 */
static void edu_nic_dmabuf_move_notify(struct dma_buf_attachment *attach)
{
	edu_nic_dmabuf_unmap(attach->importer_priv, true);
}

static const struct dma_buf_attach_ops edu_nic_dmabuf_attach_ops = {
	.allow_peer2peer = true,
	.move_notify = edu_nic_dmabuf_move_notify,
};

/**
 * edu_nic_dmabuf_lock_mirror - lock a dma-buf registration for DMA
 * @mr: the region, op_lock held
 *
 * Maps it again if a move dropped the mapping.
 *
 * Return: 0 with the dma_resv and mr->lock held and the mapping valid, or
 * a negative errno with neither held.
 */
int edu_nic_dmabuf_lock_mirror(struct edu_nic_mr *mr)
{
	struct dma_resv *resv = edu_nic_dmabuf_resv(mr);
	int ret = 0;

	lockdep_assert_held(&mr->op_lock);

	dma_resv_lock(resv, NULL);
	/* Unbound: do not even ask the exporter for addresses. */
	if (READ_ONCE(mr->nic->dead))
		ret = -ENODEV;
	else if (!mr->valid)
		ret = edu_nic_dmabuf_map(mr);
	if (ret) {
		dma_resv_unlock(resv);
		return ret;
	}
	mutex_lock(&mr->lock);
	return 0;
}

/**
 * edu_nic_dmabuf_lock_installed - lock a dma-buf registration's mapping
 * @mr: the region
 *
 * As edu_nic_dmabuf_lock_mirror(), but never maps: the engine is held,
 * and the exporter is not to be called under it.
 *
 * Return: 0 with the dma_resv and mr->lock held, or -EAGAIN (a move
 * dropped the mapping) with neither held.
 */
int edu_nic_dmabuf_lock_installed(struct edu_nic_mr *mr)
{
	struct dma_resv *resv = edu_nic_dmabuf_resv(mr);

	dma_resv_lock(resv, NULL);
	if (!mr->valid) {
		dma_resv_unlock(resv);
		return -EAGAIN;
	}
	mutex_lock(&mr->lock);
	return 0;
}

/**
 * edu_nic_dmabuf_unlock_mirror - undo edu_nic_dmabuf_lock_mirror()
 * @mr: the region
 */
void edu_nic_dmabuf_unlock_mirror(struct edu_nic_mr *mr)
{
	mutex_unlock(&mr->lock);
	dma_resv_unlock(edu_nic_dmabuf_resv(mr));
}

/**
 * edu_nic_dmabuf_create - EDU_NIC_IOCTL_REG_DMABUF's work
 * @nic: the device
 * @req: the request, checked but for the dma-buf itself
 *
 * Return: the region, attached and mapped, with one reference, not yet
 * published (the ioctl publishes it once it has its key); or an ERR_PTR().
 */
struct edu_nic_mr *edu_nic_dmabuf_create(struct edu_nic *nic,
					 const struct edu_nic_reg_dmabuf *req)
{
	struct dma_buf_attachment *attach;
	struct dma_buf *dmabuf;
	struct edu_nic_mr *mr;
	int ret;

	dmabuf = dma_buf_get((int)req->fd);
	if (IS_ERR(dmabuf))
		return ERR_CAST(dmabuf);
	/*
	 * The device writing through a dma-buf is a write to it: the fd
	 * must be open for writing, as mmap() of a file for a shared
	 * writable mapping requires (-EACCES there too).
	 */
	ret = -EACCES;
	if ((req->access & EDU_NIC_ACCESS_WRITE) &&
	    !(dmabuf->file->f_mode & FMODE_WRITE))
		goto err_put_dmabuf;
	ret = -EINVAL;
	if (req->offset >= dmabuf->size ||
	    req->length > dmabuf->size - req->offset)
		goto err_put_dmabuf;

	ret = -ENOMEM;
	mr = edu_nic_mr_alloc(nic, req->offset, req->length, req->access,
			      EDU_NIC_KIND_DMABUF);
	if (!mr)
		goto err_put_dmabuf;
	mr->dmabuf = dmabuf;

	attach = dma_buf_dynamic_attach(dmabuf, &nic->pdev->dev,
					&edu_nic_dmabuf_attach_ops, mr);
	if (IS_ERR(attach)) {
		ret = PTR_ERR(attach);
		goto err_free_mr;
	}
	mr->attach = attach;

	/* Map now, so that the exporter's refusal shows at registration */
	mutex_lock(&mr->op_lock);
	ret = edu_nic_dmabuf_lock_mirror(mr);
	if (!ret)
		edu_nic_dmabuf_unlock_mirror(mr);
	mutex_unlock(&mr->op_lock);
	if (ret)
		goto err_detach;
	return mr;

err_detach:
	edu_nic_dmabuf_release(mr);
	edu_nic_mr_free(mr);
	return ERR_PTR(ret);

err_free_mr:
	edu_nic_mr_free(mr);
err_put_dmabuf:
	dma_buf_put(dmabuf);
	return ERR_PTR(ret);
}

/**
 * edu_nic_dmabuf_kill - drop the mapping of a device being unbound
 * @mr: the region; the device is already marked dead, so it is not
 *	mapped again
 */
void edu_nic_dmabuf_kill(struct edu_nic_mr *mr)
{
	struct dma_resv *resv = edu_nic_dmabuf_resv(mr);

	dma_resv_lock(resv, NULL);
	edu_nic_dmabuf_unmap(mr, false);
	dma_resv_unlock(resv);
}

/**
 * edu_nic_dmabuf_release - unmap, detach and drop the dma-buf
 * @mr: the region, no longer reachable; edu_nic_mr_free() follows
 */
void edu_nic_dmabuf_release(struct edu_nic_mr *mr)
{
	edu_nic_dmabuf_kill(mr);
	dma_buf_detach(mr->dmabuf, mr->attach);
	dma_buf_put(mr->dmabuf);
}
