/* SPDX-License-Identifier: GPL-2.0 */
/*
 * edu_nic: what differs between the kernels it builds against, Debian's
 * 6.1 with drm-patches/ and 7.2 with drm-patches-7.2/ (issue 49).
 *
 * Each block says what 6.1 did in its "6.1 retires:" line: when 6.1 goes,
 * grep for that, keep the 7.x side and drop the block. Code that differs
 * in structure rather than by a name lives in its own file, selected in
 * the Kbuild file (the ODP mapping, edu_nic_odp_*.c).
 */
#ifndef _EDU_NIC_COMPAT_H
#define _EDU_NIC_COMPAT_H

#include <linux/err.h>
#include <linux/scatterlist.h>
#include <linux/version.h>

#include <rdma/ib_umem.h>

/*
 * 6.1 retires: MODULE_IMPORT_NS() took a bare identifier; since 6.13 it
 * takes a string literal. Both expand this macro first.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
#define EDU_NIC_NS_DMA_BUF	"DMA_BUF"
#else
#define EDU_NIC_NS_DMA_BUF	DMA_BUF
#endif

/* 6.1 retires: sg_is_dma_bus_address() is sg_dma_is_bus_address() */
#if LINUX_VERSION_CODE < KERNEL_VERSION(7, 0, 0)
#define sg_dma_is_bus_address(sg)	sg_is_dma_bus_address(sg)
#endif

/*
 * 6.1 retires: dma_buf_attach_ops.move_notify is .invalidate_mappings,
 * called by dma_buf_invalidate_mappings() (was dma_buf_move_notify()).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
#define EDU_NIC_DMA_BUF_INVALIDATE(fn)	.invalidate_mappings = (fn)
#else
#define EDU_NIC_DMA_BUF_INVALIDATE(fn)	.move_notify = (fn)
#endif

/*
 * 6.1 retires: its exporters mark the bus addresses of a dma-buf mapping
 * (sg_dma_mark_bus_address(), pci_p2pdma_map_segment()), so edu_nic told
 * its bus and IOVA pages apart; 7.x's dma_buf_phys_vec_to_sgt() marks
 * none, so a dma-buf's p2p pages count as neither (pages_bus and
 * pages_iova are ODP's only).
 */
#define EDU_NIC_DMA_BUF_SPLITS_P2P \
	(LINUX_VERSION_CODE < KERNEL_VERSION(7, 0, 0))

/*
 * 6.1 retires: a pinned dma-buf import could not be revoked. 7.x's is
 * revocable, as irdma_reg_user_mr_dmabuf() imports: the exporter may
 * revoke it (unplug, a forced move), which calls @revoke(@priv) under the
 * dma_resv before the core unmaps and unpins it for good.
 */
static inline struct ib_umem_dmabuf *
edu_nic_umem_dmabuf_get_pinned(struct ib_device *device, unsigned long offset,
			       size_t size, int fd, int access,
			       void (*revoke)(void *priv), void *priv)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
	struct ib_umem_dmabuf *umem_dmabuf;

	umem_dmabuf = ib_umem_dmabuf_get_pinned_revocable_and_lock(device,
								   offset,
								   size, fd,
								   access);
	if (IS_ERR(umem_dmabuf))
		return umem_dmabuf;
	ib_umem_dmabuf_set_revoke_locked(umem_dmabuf, revoke, priv);
	ib_umem_dmabuf_revoke_unlock(umem_dmabuf);
	return umem_dmabuf;
#else
	return ib_umem_dmabuf_get_pinned(device, offset, size, fd, access);
#endif
}

/* 6.1 retires: nothing revokes a dma-buf umem before its release there */
static inline bool edu_nic_umem_dmabuf_revoked(struct ib_umem_dmabuf *umem)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
	return umem->revoked;
#else
	return false;
#endif
}

/* 6.1 retires: kzalloc_obj(), 7.x's typed kzalloc(), with its flags */
#ifndef kzalloc_obj
#define kzalloc_obj(P, gfp)	kzalloc(sizeof(P), gfp)
#endif

#endif /* _EDU_NIC_COMPAT_H */
