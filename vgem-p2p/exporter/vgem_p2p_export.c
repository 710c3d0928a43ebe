// SPDX-License-Identifier: GPL-2.0
/*
 * Export policy: what an importing device gets when it asks for a range
 * of one of our vmas (vm_operations_struct.p2p_map). The exporter alone
 * decides:
 *
 *  - p2p denied by the object (VGEM_P2P_CREATE_NO_P2P), impossible in
 *    this topology (pci_p2pdma_map_type() on the BAR's provider says not
 *    supported), or the BAR's bus addresses above the importer's DMA mask
 *    (no IOMMU): the object moves to system
 *    memory and the importer gets dma_map_page() addresses of its pages.
 *    The importer cannot tell; only the counters can.
 *  - otherwise the PCI core maps the BAR range for it
 *    (pci_p2pdma_map_resource()): bus addresses where a switch routes the
 *    traffic, IOVA or not; dma_map_resource() where the host bridge does,
 *    which behind an IOMMU gives IOVAs.
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
		/* what vgem_p2p_map_locked() would get; no stats counted */
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
 * The CPU keeps using the pages (mmap) while importers do, for as long as
 * the mapping lives: only the importer knows when its device reads or
 * writes, so it syncs around each DMA (dma_sync_single_for_device()
 * before, _for_cpu() after a write), which is what moves the data when
 * swiotlb bounces it. A sync at map time would fill a bounce buffer the
 * importer refills anyway; one at unmap time would copy a stale bounce
 * buffer over what the CPU wrote since the device's last write. That is
 * how networking maps its long-lived receive pages (page_pool:
 * DMA_ATTR_SKIP_CPU_SYNC at map and unmap, a sync per use). With every
 * sync explicit, DMA-API debugging may be told that two writable
 * mappings of one page (two registrations over one range, or vma and
 * dma-buf importers of one object) are intended.
 */
#define VGEM_P2P_SYSTEM_MAP_ATTRS	DMA_ATTR_SKIP_CPU_SYNC

/* Undo the first @npages of vgem_p2p_map_system() */
static void vgem_p2p_unmap_system_pages(struct vgem_p2p_mapping *map,
					unsigned long npages)
{
	unsigned long i;

	for (i = 0; i < npages; i++) {
		dma_unmap_page_attrs(map->importer, map->dma[i], PAGE_SIZE,
				     map->dir, VGEM_P2P_SYSTEM_MAP_ATTRS);
		put_page(map->pages[i]);
	}
}

/* The fallback: the object is in system memory; map its pages */
static int vgem_p2p_map_system(struct vgem_p2p_object *bo,
			       struct vgem_p2p_mapping *map,
			       dma_addr_t *dma_addrs)
{
	unsigned long i;

	for (i = 0; i < map->npages; i++) {
		/* got by vgem_p2p_map_locked(), held under the dma_resv */
		struct page *page = xa_load(&bo->pages, map->first + i);

		map->dma[i] = dma_map_page_attrs(map->importer, page, 0,
						 PAGE_SIZE, map->dir,
						 VGEM_P2P_SYSTEM_MAP_ATTRS);
		if (dma_mapping_error(map->importer, map->dma[i]))
			goto err_unmap;
		/* the importer may use it after a move freed ours */
		get_page(page);
		map->pages[i] = page;
		dma_addrs[i] = map->dma[i];
	}
	return 0;

err_unmap:
	vgem_p2p_unmap_system_pages(map, i);
	return -EIO;
}

/*
 * Per-page arrays of a fallback mapping; a BAR mapping is one range and
 * needs none. kcalloc(), not kvcalloc(): p2p_unmap frees them from
 * importers' mmu notifier callbacks, possibly non-blockable ones (the OOM
 * reaper), where vfree() must not be called and vfree_atomic() is not
 * exported. kmalloc's limit (4 MiB: 512K pages, a 2 GiB mapping) is far
 * above any VRAM this device has; past it the mapping fails with -ENOMEM.
 */
static int vgem_p2p_mapping_alloc_pages(struct vgem_p2p_mapping *map)
{
	map->pages = kcalloc(map->npages, sizeof(*map->pages),
			     GFP_KERNEL | __GFP_NOWARN);
	map->dma = kcalloc(map->npages, sizeof(*map->dma),
			   GFP_KERNEL | __GFP_NOWARN);
	if (!map->pages || !map->dma)
		return -ENOMEM;
	return 0;
}

/* Does not sleep: called from p2p_unmap */
static void vgem_p2p_mapping_free(struct vgem_p2p_mapping *map)
{
	kfree(map->pages);
	kfree(map->dma);
	kfree(map);
}

/* Under the device lock: place the object as @kind needs, then map it */
static int vgem_p2p_map_locked(struct vgem_p2p_device *vdev,
			       struct vgem_p2p_object *bo,
			       struct vgem_p2p_mapping *map,
			       dma_addr_t *dma_addrs)
{
	unsigned long i;
	dma_addr_t addr;
	int ret;

	lockdep_assert_held(&vdev->lock);
	dma_resv_assert_held(bo->base.resv);

	map->refused = map->kind == VGEM_P2P_MAP_SYSTEM;
	/*
	 * Evicted, and p2p would work: come back, if there is room, unless
	 * an importer that cannot reach the BAR uses it: it would only be
	 * pushed out again at that importer's next mapping.
	 */
	if (map->kind != VGEM_P2P_MAP_SYSTEM && !bo->in_vram &&
	    !(bo->flags & VGEM_P2P_CREATE_SYSTEM) && !bo->pin_count &&
	    !vgem_p2p_held_in_system(bo)) {
		if (vgem_p2p_move_to_vram(bo, -1, VGEM_P2P_ALLOC_COMPACT))
			map->kind = VGEM_P2P_MAP_SYSTEM;
		else
			bo->reason = VGEM_P2P_REASON_RETURNED;
	}
	if (!bo->in_vram)
		map->kind = VGEM_P2P_MAP_SYSTEM;

	if (map->kind != VGEM_P2P_MAP_SYSTEM) {
		ret = vgem_p2p_export_bar(vdev, map->importer, &map->kind,
					  bo->node.start +
					  (map->first << PAGE_SHIFT),
					  map->npages << PAGE_SHIFT, map->dir,
					  &addr);
		/* the PCI core knows better than our guess: fall back */
		if (ret == -EOPNOTSUPP) {
			map->kind = VGEM_P2P_MAP_SYSTEM;
			map->refused = true;
		} else if (ret) {
			return ret;
		}
	}
	if (map->kind == VGEM_P2P_MAP_SYSTEM) {
		bool was_in_vram = bo->in_vram;

		/*
		 * Evicting needs every page, as the copy's destination; in
		 * system memory the mapping needs only those of its range.
		 */
		ret = bo->in_vram ? vgem_p2p_move_to_system(bo) :
		      vgem_p2p_pages_get(bo, map->first, map->npages);
		if (ret)
			return ret;
		if (was_in_vram)
			bo->reason = VGEM_P2P_REASON_NO_P2P_IMPORTER;
		ret = vgem_p2p_mapping_alloc_pages(map);
		if (ret)
			return ret;
		ret = vgem_p2p_map_system(bo, map, dma_addrs);
		if (ret)
			return ret;
		atomic64_inc(&vdev->stats.fallbacks);
		atomic64_add(map->npages << PAGE_SHIFT,
			     &vdev->stats.bytes_bounced);
		atomic64_inc(&bo->fallback_maps_total);
		return 0;
	}

	map->iova = addr;
	for (i = 0; i < map->npages; i++)
		dma_addrs[i] = addr + (i << PAGE_SHIFT);
	return 0;
}

struct p2p_map *vgem_p2p_vma_p2p_map(struct vm_area_struct *vma,
				     struct device *importer,
				     unsigned long start, unsigned long end,
				     dma_addr_t *dma_addrs, unsigned int flags)
{
	struct vgem_p2p_object *bo = to_vgem_p2p_obj(vma->vm_private_data);
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);
	unsigned long npages = (end - start) >> PAGE_SHIFT;
	struct vgem_p2p_mapping *map;
	pgoff_t first;
	int ret, idx;

	first = vma->vm_pgoff - drm_vma_node_start(&bo->base.vma_node) +
		((start - vma->vm_start) >> PAGE_SHIFT);
	if (first + npages > vgem_p2p_npages(bo))
		return ERR_PTR(-EINVAL);
	if ((flags & P2P_MAP_WRITE) && (bo->flags & VGEM_P2P_CREATE_READ_ONLY))
		return ERR_PTR(-EPERM);
	/* vma_p2p_map() checks VM_WRITE only; PROT_NONE revokes reads too */
	if (!(vma->vm_flags & VM_READ))
		return ERR_PTR(-EPERM);

	map = kzalloc(sizeof(*map), GFP_KERNEL);
	if (!map)
		return ERR_PTR(-ENOMEM);
	map->base.owner = THIS_MODULE;
	map->bo = bo;
	map->importer = importer;
	map->first = first;
	map->npages = npages;
	map->dir = flags & P2P_MAP_WRITE ? DMA_BIDIRECTIONAL : DMA_TO_DEVICE;

	if (!drm_dev_enter(&vdev->drm, &idx)) {
		ret = -ENODEV;
		goto err_free_map;
	}
	/* walks up from our pci_dev, which unbind is tearing down */
	map->kind = vgem_p2p_export_kind(vdev, importer, bo->flags);
	/* The mapping may move the object: mmap_lock > dma_resv, see drv.h */
	dma_resv_lock(bo->base.resv, NULL);
	mutex_lock(&vdev->lock);
	ret = vgem_p2p_map_locked(vdev, bo, map, dma_addrs);
	if (!ret) {
		/* the mapping's reference on the object */
		drm_gem_object_get(&bo->base);
		spin_lock(&bo->maps_lock);
		list_add_tail(&map->link, &bo->maps);
		bo->nr_maps++;
		if (map->kind == VGEM_P2P_MAP_SYSTEM)
			bo->nr_fallback_maps++;
		if (map->refused)
			bo->nr_refused_maps++;
		spin_unlock(&bo->maps_lock);
		atomic64_inc(&bo->p2p_maps_total);
		atomic64_inc(&vdev->stats.p2p_maps);
		trace_vgem_p2p_map(bo, map);
	}
	mutex_unlock(&vdev->lock);
	dma_resv_unlock(bo->base.resv);
	drm_dev_exit(idx);
	if (ret)
		goto err_free_map;
	return &map->base;

err_free_map:
	vgem_p2p_mapping_free(map);
	return ERR_PTR(ret);
}

/* Must not sleep: called from importers' mmu notifier callbacks */
void vgem_p2p_vma_p2p_unmap(struct p2p_map *base)
{
	struct vgem_p2p_mapping *map =
		container_of(base, struct vgem_p2p_mapping, base);
	struct vgem_p2p_object *bo = map->bo;
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);

	spin_lock(&bo->maps_lock);
	list_del(&map->link);
	bo->nr_maps--;
	if (map->kind == VGEM_P2P_MAP_SYSTEM)
		bo->nr_fallback_maps--;
	if (map->refused)
		bo->nr_refused_maps--;
	spin_unlock(&bo->maps_lock);

	if (map->kind == VGEM_P2P_MAP_SYSTEM)
		vgem_p2p_unmap_system_pages(map, map->npages);
	else
		vgem_p2p_unexport_bar(map->importer, map->kind, map->iova,
				      map->npages << PAGE_SHIFT, map->dir);
	atomic64_inc(&vdev->stats.p2p_unmaps);
	trace_vgem_p2p_unmap(bo, map);

	vgem_p2p_mapping_free(map);
	/* may be the last reference: the object frees itself in a worker */
	drm_gem_object_put(&bo->base);
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
 * Mappings are counted under the device lock, which the caller holds
 * when it decides a placement.
 */
bool vgem_p2p_held_in_system(struct vgem_p2p_object *bo)
{
	return READ_ONCE(bo->nr_refused_maps) ||
	       atomic_read(&bo->nr_system_attachments);
}

/**
 * vgem_p2p_placement_reason - why @bo is where it is, VGEM_P2P_REASON_*
 * @bo: the object, its device lock held
 */
u32 vgem_p2p_placement_reason(struct vgem_p2p_object *bo)
{
	lockdep_assert_held(&obj_to_vdev(bo)->lock);

	if (!bo->in_vram && bo->pin_count)
		return VGEM_P2P_REASON_PINNED;
	if (!bo->in_vram && vgem_p2p_held_in_system(bo))
		return VGEM_P2P_REASON_NO_P2P_IMPORTER;
	return bo->reason;
}
