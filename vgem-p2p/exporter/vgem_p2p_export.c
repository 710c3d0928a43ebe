// SPDX-License-Identifier: GPL-2.0
/*
 * Export policy: what an importing device gets when it asks for a range
 * of one of our vmas (vm_operations_struct.p2p_lookup). The exporter
 * alone decides:
 *
 *  - p2p denied by the object (VGEM_P2P_CREATE_NO_P2P), impossible in
 *    this topology (pci_p2pdma_map_type() on the BAR's provider says not
 *    supported), or the BAR's bus addresses above the importer's DMA mask
 *    (no IOMMU): the object moves to system memory and the importer gets
 *    the pfns of its pages, ordinary entries it maps with dma_map_page().
 *  - otherwise the importer gets the BAR's pfns and provider, and maps
 *    them with pci_p2pdma_map_resource(): bus addresses where a switch
 *    routes the traffic, IOVA or not; dma_map_resource() where the host
 *    bridge does, which behind an IOMMU gives IOVAs.
 *
 * The importer maps after its sequence check and unmaps on invalidation;
 * what we keep per importer (a lease) holds no DMA state. dma-buf
 * importers are mapped by us instead, in map_dma_buf, as dma-buf wants.
 */
#include <linux/dma-mapping.h>
#include <linux/iommu.h>
#include <linux/pci-p2pdma.h>
#include <linux/slab.h>

#include <drm/drm_drv.h>
#include <drm/drm_vma_manager.h>

#include <vgem_p2p_iommu.h>

#include "vgem_p2p_drv.h"
#include "vgem_p2p_trace.h"

/* One definition for both drivers: see vgem_p2p_iommu.h */
bool vgem_p2p_importer_translated(struct device *importer)
{
	return vgem_p2p_dma_translated(importer);
}

/**
 * vgem_p2p_importer_reaches_bar - can @importer address our whole BAR?
 * @vdev: the exporter
 * @importer: the importing device
 *
 * An IOVA is allocated under the importer's DMA mask; a bus address is
 * what it is, and a device with a narrower mask cannot reach it (QEMU's
 * edu clamps the address and writes elsewhere). The check dma-direct
 * makes (dma_capable()), with the mask the DMA API gives drivers.
 */
bool vgem_p2p_importer_reaches_bar(struct vgem_p2p_device *vdev,
				   struct device *importer)
{
	u64 limit = min_not_zero(dma_get_mask(importer),
				 importer->bus_dma_limit);

	return vgem_p2p_importer_translated(importer) ||
	       vdev->bar_bus + vdev->bar_size - 1 <= limit;
}

/* Does the PCI core route @dev to our BAR at all (any map type)? */
static bool vgem_p2p_bar_routed(struct vgem_p2p_device *vdev,
				struct device *dev)
{
	return vdev->provider &&
	       pci_p2pdma_map_type(vdev->provider, dev) !=
	       PCI_P2PDMA_MAP_NOT_SUPPORTED;
}

/**
 * vgem_p2p_export_kind - how @importer will reach memory of this device
 * @vdev: the exporter
 * @importer: the importing device
 * @obj_flags: the object's VGEM_P2P_CREATE_* flags, 0 for device-private
 *	pages
 */
enum vgem_p2p_map_kind vgem_p2p_export_kind(struct vgem_p2p_device *vdev,
					    struct device *importer,
					    u32 obj_flags)
{
	if (obj_flags & VGEM_P2P_CREATE_NO_P2P)
		return VGEM_P2P_MAP_SYSTEM;
	if (!vgem_p2p_bar_routed(vdev, importer) ||
	    !vgem_p2p_importer_reaches_bar(vdev, importer))
		return VGEM_P2P_MAP_SYSTEM;
	if (vgem_p2p_importer_translated(importer))
		return VGEM_P2P_MAP_IOVA;
	return VGEM_P2P_MAP_BUS;
}

/**
 * vgem_p2p_export_bar - address of a BAR range for an importer
 * @vdev: the exporter
 * @importer: the importing device
 * @kind: out: VGEM_P2P_MAP_BUS (a bus address, nothing mapped) or
 *	VGEM_P2P_MAP_IOVA (mapped with dma_map_resource(): an IOVA behind
 *	an IOMMU)
 * @bar_offset: offset of the range in the BAR
 * @size: its size
 * @dir: DMA direction
 * @addr: out: the address of the range's start, for @importer
 *
 * The decision is the PCI core's (pci_p2pdma_map_resource() on the BAR's
 * provider): a bus
 * address when a switch routes the traffic, whether or not the importer
 * is translated; a mapping when the host bridge routes it.
 *
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
		atomic64_add(size >> PAGE_SHIFT, &vdev->stats.p2p_pages_bus);
		return 0;
	case PCI_P2PDMA_MAP_THRU_HOST_BRIDGE:
		*kind = VGEM_P2P_MAP_IOVA;
		atomic64_add(size >> PAGE_SHIFT, &vdev->stats.p2p_pages_iova);
		return 0;
	case PCI_P2PDMA_MAP_NOT_SUPPORTED:
		return -EOPNOTSUPP;
	default:
		return type < 0 ? type : -EIO;
	}
}

/* Does not sleep: called from p2p_unmap */
void vgem_p2p_unexport_bar(struct device *importer, enum vgem_p2p_map_kind kind,
			   dma_addr_t addr, u64 size, enum dma_data_direction dir)
{
	pci_p2pdma_unmap_resource(importer, kind == VGEM_P2P_MAP_IOVA ?
				  PCI_P2PDMA_MAP_THRU_HOST_BRIDGE :
				  PCI_P2PDMA_MAP_BUS_ADDR,
				  addr, size, dir);
}

/**
 * vgem_p2p_peer_ioctl - DRM_IOCTL_VGEM_P2P_PEER: what would a peer get?
 * @dev: the exporter
 * @data: struct drm_vgem_p2p_peer
 * @file: the caller
 *
 * The kernel's own answer, so that user space need not re-derive it from
 * sysfs: the map type pci_p2pdma_map_type() gives for the BAR's provider,
 * and the kind of address a mapping of VRAM
 * for the peer gets now, from a real one-page mapping undone at once.
 */
int vgem_p2p_peer_ioctl(struct drm_device *dev, void *data,
			struct drm_file *file)
{
	struct vgem_p2p_device *vdev = to_vgem_p2p(dev);
	struct drm_vgem_p2p_peer *args = data;
	enum vgem_p2p_map_kind kind = VGEM_P2P_MAP_SYSTEM;
	struct pci_dev *peer;
	dma_addr_t addr;
	int ret, idx;

	if (args->flags || args->bus > 0xff || args->devfn > 0xff)
		return -EINVAL;
	peer = pci_get_domain_bus_and_slot(args->domain, args->bus,
					   args->devfn);
	if (!peer)
		return -ENODEV;
	if (!drm_dev_enter(dev, &idx)) {
		ret = -ENODEV;
		goto out_put_peer;
	}

	args->reachable = vgem_p2p_bar_routed(vdev, &peer->dev);
	args->path = VGEM_P2P_PEER_NONE;
	ret = 0;
	if (args->reachable) {
		/* what an importer's mapping of the BAR gets; no stats counted */
		int type = pci_p2pdma_map_resource(vdev->provider, &peer->dev,
						   vdev->bar_phys, PAGE_SIZE,
						   DMA_TO_DEVICE, &addr);

		if (type == PCI_P2PDMA_MAP_BUS_ADDR)
			kind = VGEM_P2P_MAP_BUS;
		else if (type == PCI_P2PDMA_MAP_THRU_HOST_BRIDGE)
			kind = VGEM_P2P_MAP_IOVA;
		else if (type < 0)
			ret = type;
		if (kind != VGEM_P2P_MAP_SYSTEM)
			vgem_p2p_unexport_bar(&peer->dev, kind, addr,
					      PAGE_SIZE, DMA_TO_DEVICE);
	}
	if (kind == VGEM_P2P_MAP_BUS)
		args->path = VGEM_P2P_PEER_BUS;
	else if (kind == VGEM_P2P_MAP_IOVA)
		args->path = VGEM_P2P_PEER_MAPPED;
	drm_dev_exit(idx);
out_put_peer:
	pci_dev_put(peer);
	return ret;
}

/*
 * The kind of BAR address @importer will get, as pci_p2pdma_map_resource()
 * will decide it when the importer maps: for the lease's debugfs line and
 * tracepoint only. The importer counts what it actually got.
 */
static enum vgem_p2p_map_kind vgem_p2p_bar_kind(struct vgem_p2p_device *vdev,
						struct device *importer)
{
	return pci_p2pdma_map_type(vdev->provider, importer) ==
	       PCI_P2PDMA_MAP_BUS_ADDR ? VGEM_P2P_MAP_BUS : VGEM_P2P_MAP_IOVA;
}

/**
 * vgem_p2p_may_return - may a use bring @bo back to VRAM?
 * @bo: the object, whose dma_resv the caller holds
 *
 * An object created in VRAM and evicted comes back on use (a CPU fault,
 * a p2p lookup or dma-buf map that would reach the BAR), if that costs
 * no one else their place, unless it is pinned, or an importer that
 * cannot reach the BAR uses it (vgem_p2p_held_in_system()).
 */
bool vgem_p2p_may_return(struct vgem_p2p_object *bo)
{
	return !(bo->flags & VGEM_P2P_CREATE_SYSTEM) && !bo->tbo.pin_count &&
	       !vgem_p2p_resident_vram(bo) && !vgem_p2p_held_in_system(bo);
}

/**
 * vgem_p2p_ttm_p2p_access - ttm_device_funcs.p2p_access
 * @tbo: the object an importer asks for, reserved
 * @importer: the importing device
 * @flags: P2P_MAP_WRITE if @importer will write
 *
 * Applies the export policy (see the top of this file) before TTM says
 * where the object is: an importer that will not get the BAR gets the
 * object in system memory; one that would brings an evicted object back.
 * Nothing is mapped: the importer maps after its sequence check, and
 * every move invalidates it first (ttm_bo_unmap_virtual()).
 *
 * Return: 0, -EPERM for a write to a read-only object, or what moving
 * the object to system memory failed with.
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
	if (vgem_p2p_may_return(bo) &&
	    !vgem_p2p_place(bo, VGEM_P2P_RETURN_TO_VRAM))
		bo->reason = VGEM_P2P_REASON_RETURNED;
	return 0;
}

/**
 * vgem_p2p_ttm_p2p_unreachable - ttm_device_funcs.p2p_unreachable
 * @tbo: the object, reserved
 * @importer: a device that will not get the BAR
 *
 * The fallback: the object moves to system memory, where every importer
 * reaches it, as amdgpu keeps a dma-buf in GTT for importers without p2p.
 *
 * Return: 0 or what the move failed with.
 */
int vgem_p2p_ttm_p2p_unreachable(struct ttm_buffer_object *tbo,
				 struct device *importer)
{
	struct vgem_p2p_object *bo = tbo_to_bo(tbo);
	int ret;

	if (!vgem_p2p_resident_vram(bo))
		return 0;
	ret = vgem_p2p_place(bo, VGEM_P2P_TO_SYSTEM);
	if (!ret)
		bo->reason = VGEM_P2P_REASON_NO_P2P_IMPORTER;
	return ret;
}

/* ttm_device_funcs.p2p_provider: the one BAR VRAM is in */
struct p2pdma_provider *vgem_p2p_ttm_p2p_provider(struct ttm_buffer_object *tbo)
{
	return obj_to_vdev(tbo_to_bo(tbo))->provider;
}

static void vgem_p2p_lease_add(struct vgem_p2p_object *bo,
			       struct vgem_p2p_lease *lease)
{
	/* the lease's reference on the object */
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
	/* may be the last reference: the object frees itself in a worker */
	drm_gem_object_put(&bo->tbo.base);
}

/**
 * vgem_p2p_vma_p2p_lookup - vm_operations_struct.p2p_lookup
 * @vma: one of our vmas
 * @importer: the device that will access the object
 * @start: start of the range, in @vma
 * @end: end of the range (exclusive)
 * @pfns: out: one pfn per page
 * @providers: out: our BAR's provider, or NULL for system pages
 * @flags: P2P_MAP_WRITE if @importer will write
 *
 * TTM's lookup (ttm_bo_vm_p2p_lookup(), which calls the policy in
 * vgem_p2p_ttm_p2p_access()), and a lease: the policy needs to know
 * while an importer that cannot reach the BAR uses the object
 * (vgem_p2p_held_in_system()), so the lease is published before the
 * lookup decides a placement.
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
	lease = kzalloc(sizeof(*lease), GFP_KERNEL);
	if (!lease)
		return ERR_PTR(-ENOMEM);
	lease->base.owner = THIS_MODULE;
	lease->bo = bo;
	lease->importer = importer;
	lease->first = vma->vm_pgoff - drm_vma_node_start(&bo->tbo.base.vma_node) +
		       ((start - vma->vm_start) >> PAGE_SHIFT);
	lease->npages = npages;
	lease->dir = flags & P2P_MAP_WRITE ? DMA_BIDIRECTIONAL : DMA_TO_DEVICE;
	/* walks up from our pci_dev, which unbind is tearing down */
	if (!drm_dev_enter(&vdev->drm, &idx)) {
		kfree(lease);
		return ERR_PTR(-ENODEV);
	}
	lease->kind = vgem_p2p_export_kind(vdev, importer, bo->flags);
	if (lease->kind != VGEM_P2P_MAP_SYSTEM)
		lease->kind = vgem_p2p_bar_kind(vdev, importer);
	drm_dev_exit(idx);
	lease->refused = lease->kind == VGEM_P2P_MAP_SYSTEM;
	vgem_p2p_lease_add(bo, lease);

	ret = ttm_bo_vm_p2p_lookup(vma, importer, start, end, pfns, providers,
				   flags);
	if (IS_ERR(ret)) {
		/* not counted as a fallback yet: see below */
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
	/*
	 * A test's window between an importer's walk and its sequence check,
	 * where a move must make the check fail and nothing may be mapped
	 * yet: the lease exists, and no lock of ours is held.
	 */
	vgem_p2p_hold_wait(&vdev->hold_after_lookup);
	return &lease->base;
}

void vgem_p2p_vma_p2p_release(struct p2p_lease *base)
{
	struct vgem_p2p_lease *lease =
		container_of(base, struct vgem_p2p_lease, base);
	struct vgem_p2p_object *bo = lease->bo;
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);

	atomic64_inc(&vdev->stats.p2p_unmaps);
	trace_vgem_p2p_unmap(bo, lease);
	vgem_p2p_lease_del(bo, lease);
}

/**
 * vgem_p2p_held_in_system - must @bo stay in system memory for an importer?
 * @bo: the object
 *
 * True while an importer that cannot reach the BAR (or may not: NO_P2P)
 * maps the object through its vma, or has a dma-buf attachment without
 * peer2peer. Such an importer would move the object back to system
 * memory at its next mapping, so returning it to VRAM for another
 * importer would make it bounce between the two at every turn. amdgpu
 * keeps a dma-buf out of VRAM while any attachment cannot do p2p
 * (amdgpu_dma_buf_pin()); this is the same rule, for vma importers too.
 */
bool vgem_p2p_held_in_system(struct vgem_p2p_object *bo)
{
	return READ_ONCE(bo->nr_refused_maps) ||
	       atomic_read(&bo->nr_system_attachments);
}

/**
 * vgem_p2p_placement_reason - why @bo is where it is, VGEM_P2P_REASON_*
 * @bo: the object, its dma_resv held
 */
u32 vgem_p2p_placement_reason(struct vgem_p2p_object *bo)
{
	dma_resv_assert_held(bo->tbo.base.resv);

	if (!vgem_p2p_in_vram(bo) && bo->tbo.pin_count)
		return VGEM_P2P_REASON_PINNED;
	if (!vgem_p2p_in_vram(bo) && vgem_p2p_held_in_system(bo))
		return VGEM_P2P_REASON_NO_P2P_IMPORTER;
	return bo->reason;
}
