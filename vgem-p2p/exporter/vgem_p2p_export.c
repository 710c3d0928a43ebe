// SPDX-License-Identifier: GPL-2.0
/*
 * Export policy: what an importing device gets for a range of one of our
 * vmas (p2p_lookup). The exporter alone decides:
 *
 *  - NO_P2P objects, or no way for the importer to use the BAR's addresses
 *    (pci_p2pdma_resource_map_type(): no p2p route, or a bus address its
 *    DMA mask does not cover with nothing to translate it): the object
 *    moves to system memory and the importer maps its pages.
 *  - otherwise the BAR's pfns and provider, which the importer maps with
 *    pci_p2pdma_map_resource(): a bus address through a switch, a
 *    dma_map_resource() mapping through the host bridge.
 *
 * Leases hold no DMA state: the importer maps after its sequence check and
 * unmaps on invalidation. dma-buf importers are mapped in map_dma_buf.
 *
 * 6.1 retires: this file, on drm-patches/' map types, vma hook and leases;
 * vgem_p2p_peer.c decides on 7.2, where series B brings the vma hook back.
 */
#include <linux/dma-mapping.h>
#include <linux/pci-p2pdma.h>
#include <linux/slab.h>

#include <drm/drm_drv.h>
#include <drm/drm_vma_manager.h>

#include "vgem_p2p_drv.h"
#include "vgem_p2p_trace.h"

/* Does the PCI core route @dev to our BAR at all (any map type)? */
static bool vgem_p2p_bar_routed(struct vgem_p2p_device *vdev,
				struct device *dev)
{
	return vdev->provider &&
	       pci_p2pdma_map_type(vdev->provider, dev) !=
	       PCI_P2PDMA_MAP_NOT_SUPPORTED;
}

/* How @importer reaches our memory; @obj_flags is 0 for device-private pages */
enum vgem_p2p_map_kind vgem_p2p_export_kind(struct vgem_p2p_device *vdev,
					    struct device *importer,
					    u32 obj_flags)
{
	if ((obj_flags & VGEM_P2P_CREATE_NO_P2P) || !vdev->provider)
		return VGEM_P2P_MAP_SYSTEM;
	/* the whole BAR, as importers get pfns anywhere in it */
	switch (pci_p2pdma_resource_map_type(vdev->provider, importer,
					     vdev->bar_phys, vdev->bar_size)) {
	case PCI_P2PDMA_MAP_BUS_ADDR:
		return VGEM_P2P_MAP_BUS;
	case PCI_P2PDMA_MAP_THRU_HOST_BRIDGE:
		return VGEM_P2P_MAP_IOVA;
	default:
		return VGEM_P2P_MAP_SYSTEM;
	}
}

/* May @importer be given the BAR at all? dma-buf attachments ask once */
bool vgem_p2p_reaches_bar(struct vgem_p2p_device *vdev,
			  struct device *importer, u32 obj_flags)
{
	return vgem_p2p_export_kind(vdev, importer, obj_flags) !=
	       VGEM_P2P_MAP_SYSTEM;
}

/*
 * @importer's address of a BAR range: a bus address through a switch (@kind
 * BUS), else an IOVA mapping, as pci_p2pdma_map_resource() decides.
 * Return: 0, -EOPNOTSUPP if @importer cannot reach the BAR after all, or
 * -EIO if the IOMMU mapping failed.
 */
int vgem_p2p_export_bar(struct vgem_p2p_device *vdev, struct device *importer,
			enum vgem_p2p_map_kind *kind, u64 bar_offset, u64 size,
			enum dma_data_direction dir, dma_addr_t *addr)
{
	int type;

	if (!vdev->provider)
		return -EOPNOTSUPP;
	type = pci_p2pdma_map_resource(vdev->provider, importer,
				       vdev->bar_phys + bar_offset, size, dir,
				       addr);
	switch (type) {
	case PCI_P2PDMA_MAP_BUS_ADDR:
		*kind = VGEM_P2P_MAP_BUS;
		return 0;
	case PCI_P2PDMA_MAP_THRU_HOST_BRIDGE:
		*kind = VGEM_P2P_MAP_IOVA;
		return 0;
	case PCI_P2PDMA_MAP_NOT_SUPPORTED:
		return -EOPNOTSUPP;
	default:
		return type < 0 ? type : -EIO;
	}
}

/* Does not sleep. Undoes vgem_p2p_export_bar(): dma-buf unmap, PEER ioctl */
void vgem_p2p_unexport_bar(struct device *importer, enum vgem_p2p_map_kind kind,
			   dma_addr_t addr, u64 size, enum dma_data_direction dir)
{
	pci_p2pdma_unmap_resource(importer, kind == VGEM_P2P_MAP_IOVA ?
				  PCI_P2PDMA_MAP_THRU_HOST_BRIDGE :
				  PCI_P2PDMA_MAP_BUS_ADDR,
				  addr, size, dir);
}

/* DRM_IOCTL_VGEM_P2P_PEER: what a peer gets, from a one-page test mapping */
int vgem_p2p_peer_ioctl(struct drm_device *dev, void *data,
			struct drm_file *file)
{
	struct vgem_p2p_device *vdev = to_vgem_p2p(dev);
	struct drm_vgem_p2p_peer *args = data;
	enum vgem_p2p_map_kind kind;
	struct pci_dev *peer;
	dma_addr_t addr;
	int ret = 0, idx;

	peer = vgem_p2p_peer_get(args);
	if (IS_ERR(peer))
		return PTR_ERR(peer);
	if (!drm_dev_enter(dev, &idx)) {
		ret = -ENODEV;
		goto out_put_peer;
	}

	args->reachable = vgem_p2p_bar_routed(vdev, &peer->dev);
	args->path = VGEM_P2P_PEER_NONE;
	if (args->reachable)
		ret = vgem_p2p_export_bar(vdev, &peer->dev, &kind, 0, PAGE_SIZE,
					  DMA_TO_DEVICE, &addr);
	if (args->reachable && !ret) {
		args->path = kind == VGEM_P2P_MAP_BUS ? VGEM_P2P_PEER_BUS :
							VGEM_P2P_PEER_MAPPED;
		vgem_p2p_unexport_bar(&peer->dev, kind, addr, PAGE_SIZE,
				      DMA_TO_DEVICE);
	}
	if (ret == -EOPNOTSUPP)
		ret = 0;
	drm_dev_exit(idx);
out_put_peer:
	pci_dev_put(peer);
	return ret;
}

/*
 * ttm_device_funcs.p2p_access: the export policy, before TTM says where the
 * object is. Return: 0, -EPERM for a write to a read-only object, or what
 * moving the object to system memory failed with.
 */
int vgem_p2p_ttm_p2p_access(struct ttm_buffer_object *tbo,
			    struct device *importer, unsigned int flags)
{
	struct vgem_p2p_object *bo = tbo_to_bo(tbo);
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);

	if ((flags & P2P_MAP_WRITE) && (bo->flags & VGEM_P2P_CREATE_READ_ONLY))
		return -EPERM;
	if (vgem_p2p_export_kind(vdev, importer, bo->flags) ==
	    VGEM_P2P_MAP_SYSTEM)
		return vgem_p2p_ttm_p2p_unreachable(tbo, importer);
	vgem_p2p_return(bo);
	return 0;
}

/*
 * ttm_device_funcs.p2p_unreachable: to system memory, which every importer
 * reaches, as amdgpu keeps a dma-buf in GTT for importers without p2p.
 */
int vgem_p2p_ttm_p2p_unreachable(struct ttm_buffer_object *tbo,
				 struct device *importer)
{
	struct vgem_p2p_object *bo = tbo_to_bo(tbo);

	if (!vgem_p2p_resident_vram(bo))
		return 0;
	return vgem_p2p_place(bo, VGEM_P2P_TO_SYSTEM,
			      VGEM_P2P_REASON_NO_P2P_IMPORTER);
}

/* ttm_device_funcs.p2p_provider: the one BAR VRAM is in */
struct p2pdma_provider *vgem_p2p_ttm_p2p_provider(struct ttm_buffer_object *tbo)
{
	return obj_to_vdev(tbo_to_bo(tbo))->provider;
}

static void vgem_p2p_lease_add(struct vgem_p2p_object *bo,
			       struct vgem_p2p_lease *lease)
{
	drm_gem_object_get(&bo->tbo.base);
	spin_lock(&bo->maps_lock);
	list_add_tail(&lease->link, &bo->maps);
	bo->nr_maps++;
	if (lease->refused)
		bo->nr_refused_maps++;
	spin_unlock(&bo->maps_lock);
}

/* Does not sleep: called from importers' mmu notifier callbacks */
static void vgem_p2p_lease_del(struct vgem_p2p_object *bo,
			       struct vgem_p2p_lease *lease)
{
	spin_lock(&bo->maps_lock);
	list_del(&lease->link);
	bo->nr_maps--;
	if (lease->kind == VGEM_P2P_MAP_SYSTEM)
		bo->nr_fallback_maps--;
	if (lease->refused)
		bo->nr_refused_maps--;
	spin_unlock(&bo->maps_lock);
	kfree(lease);
	/* may be the last reference: freeing is deferred to a worker */
	drm_gem_object_put(&bo->tbo.base);
}

/*
 * vm_operations_struct.p2p_lookup: TTM's, which applies the policy
 * (vgem_p2p_ttm_p2p_access()); the lease is published first, for the
 * policy to count (vgem_p2p_held_in_system()).
 *
 * Return: the lease, or ERR_PTR(): -EINVAL beyond the object, -EPERM for
 * a write to a read-only object or a vma without VM_READ, -ENODEV after
 * unplug, -EINTR if a signal interrupted the wait for a move, -ENOMEM.
 */
struct p2p_lease *vgem_p2p_vma_p2p_lookup(struct vm_area_struct *vma,
					  struct device *importer,
					  unsigned long start, unsigned long end,
					  unsigned long *pfns,
					  struct p2pdma_provider **providers,
					  unsigned int flags)
{
	struct vgem_p2p_object *bo = tbo_to_bo(vma->vm_private_data);
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);
	unsigned long npages = (end - start) >> PAGE_SHIFT;
	struct vgem_p2p_lease *lease;
	struct p2p_lease *ret;
	int idx;

	/* vma_p2p_lookup() checks VM_WRITE only; PROT_NONE revokes reads too */
	if (!(vma->vm_flags & VM_READ))
		return ERR_PTR(-EPERM);
	lease = kzalloc_obj(*lease);
	if (!lease)
		return ERR_PTR(-ENOMEM);
	lease->base.owner = THIS_MODULE;
	lease->bo = bo;
	lease->importer = importer;
	lease->first = vma->vm_pgoff - drm_vma_node_start(&bo->tbo.base.vma_node) +
		       ((start - vma->vm_start) >> PAGE_SHIFT);
	lease->npages = npages;
	lease->dir = flags & P2P_MAP_WRITE ? DMA_BIDIRECTIONAL : DMA_TO_DEVICE;
	/* the PCI walk starts at our pci_dev, which unbind tears down */
	if (!drm_dev_enter(&vdev->drm, &idx)) {
		kfree(lease);
		return ERR_PTR(-ENODEV);
	}
	lease->kind = vgem_p2p_export_kind(vdev, importer, bo->flags);
	drm_dev_exit(idx);
	lease->refused = lease->kind == VGEM_P2P_MAP_SYSTEM;
	vgem_p2p_lease_add(bo, lease);

	ret = ttm_bo_vm_p2p_lookup(vma, importer, start, end, pfns, providers,
				   flags);
	if (IS_ERR(ret)) {
		/* not counted as a fallback yet */
		lease->kind = VGEM_P2P_MAP_BUS;
		vgem_p2p_lease_del(bo, lease);
		return ret;
	}
	if (!providers[0]) {
		spin_lock(&bo->maps_lock);
		lease->kind = VGEM_P2P_MAP_SYSTEM;
		bo->nr_fallback_maps++;
		spin_unlock(&bo->maps_lock);
		atomic64_inc(&vdev->stats.fallbacks);
		atomic64_add(npages << PAGE_SHIFT, &vdev->stats.bytes_bounced);
		atomic64_inc(&bo->fallback_maps_total);
	}
	atomic64_inc(&bo->p2p_maps_total);
	atomic64_inc(&vdev->stats.p2p_maps);
	trace_vgem_p2p_map(bo, lease);
	/* test window before the importer's sequence check: no lock held */
	vgem_p2p_hold_wait(&vdev->hold_after_lookup);
	return &lease->base;
}

void vgem_p2p_vma_p2p_release(struct p2p_lease *base)
{
	struct vgem_p2p_lease *lease =
		container_of(base, struct vgem_p2p_lease, base);
	struct vgem_p2p_object *bo = lease->bo;

	atomic64_inc(&obj_to_vdev(bo)->stats.p2p_unmaps);
	trace_vgem_p2p_unmap(bo, lease);
	vgem_p2p_lease_del(bo, lease);
}
