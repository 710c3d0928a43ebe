// SPDX-License-Identifier: GPL-2.0
/*
 * CPU mappings. An object's mmap is a VM_IO | VM_PFNMAP vma: nothing in
 * it is a page the core may pin or migrate, and only this driver knows
 * what backs it. Faults insert the BAR pfn (write-combined) of VRAM
 * objects, or the pfn of the system page of evicted ones; moves zap the
 * ptes (see vgem_p2p_move.c). The same vm_ops offer p2p_map/p2p_unmap to
 * importing devices (vgem_p2p_export.c).
 */
#include <linux/mm.h>

#include <drm/drm_drv.h>
#include <drm/drm_vma_manager.h>

#include "vgem_p2p_drv.h"

int vgem_p2p_gem_mmap(struct drm_gem_object *obj, struct vm_area_struct *vma)
{
	/* pfn maps cannot be copied on write */
	if (is_cow_mapping(vma->vm_flags))
		return -EINVAL;

	vma->vm_flags |= VM_IO | VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP;
	vma->vm_page_prot = vm_get_page_prot(vma->vm_flags);
	return 0;
}

/*
 * The placement belongs to the object's dma_resv, which a move holds
 * while it copies. Wait for it the way ttm_bo_vm_reserve() does: without
 * mmap_lock when the fault may be retried, so that other threads of the
 * process can fault meanwhile.
 */
static vm_fault_t vgem_p2p_fault_reserve(struct vgem_p2p_object *bo,
					 struct vm_fault *vmf)
{
	struct dma_resv *resv = bo->base.resv;

	if (dma_resv_trylock(resv))
		return 0;
	if (fault_flag_allow_retry_first(vmf->flags)) {
		if (!(vmf->flags & FAULT_FLAG_RETRY_NOWAIT)) {
			/* the vma, and its reference, may go with mmap_lock */
			drm_gem_object_get(&bo->base);
			mmap_read_unlock(vmf->vma->vm_mm);
			if (!dma_resv_lock_interruptible(resv, NULL))
				dma_resv_unlock(resv);
			drm_gem_object_put(&bo->base);
		}
		return VM_FAULT_RETRY;
	}
	if (dma_resv_lock_interruptible(resv, NULL))
		return VM_FAULT_NOPAGE;
	return 0;
}

static vm_fault_t vgem_p2p_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct vgem_p2p_object *bo = to_vgem_p2p_obj(vma->vm_private_data);
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);
	pgoff_t pgoff = vmf->pgoff - drm_vma_node_start(&bo->base.vma_node);
	bool present;
	vm_fault_t ret;
	int idx;

	/* Memory "not even mapped to the CPU": p2p only */
	if (bo->flags & VGEM_P2P_CREATE_DEVICE_ONLY)
		return VM_FAULT_SIGBUS;
	if (pgoff >= vgem_p2p_npages(bo))
		return VM_FAULT_SIGBUS;
	ret = vgem_p2p_fault_reserve(bo, vmf);
	if (ret)
		return ret;
	/*
	 * After unplug, what the unplug evicted, and what was in system
	 * memory already, is still served from there; only the BAR is gone.
	 */
	present = drm_dev_enter(&vdev->drm, &idx);
	if (!present && bo->in_vram) {
		ret = VM_FAULT_SIGBUS;
		goto out_unlock_resv;
	}

	/*
	 * An evicted VRAM object comes back on use, if that costs no one
	 * else their place; not while importers use it through the
	 * fallback, which would only push it out again. The device lock
	 * is for that decision only: inserting the pfn needs the dma_resv.
	 */
	if (present && !bo->in_vram && !(bo->flags & VGEM_P2P_CREATE_SYSTEM) &&
	    !READ_ONCE(bo->nr_fallback_maps) &&
	    !atomic_read(&bo->dmabuf_system_maps)) {
		mutex_lock(&vdev->lock);
		if (!bo->pin_count && !vgem_p2p_held_in_system(bo) &&
		    !vgem_p2p_move_to_vram(bo, -1, VGEM_P2P_ALLOC_COMPACT))
			bo->reason = VGEM_P2P_REASON_RETURNED;
		mutex_unlock(&vdev->lock);
	}

	if (bo->in_vram) {
		unsigned long pfn = PHYS_PFN(vdev->bar_phys + bo->node.start) +
				    pgoff;

		ret = vmf_insert_pfn_prot(vma, vmf->address, pfn,
					  pgprot_writecombine(vma->vm_page_prot));
	} else {
		/*
		 * A page in system memory comes on first use, this page
		 * only: the object may be larger than RAM. A fault that
		 * cannot have it gets SIGBUS, as drm_gem_shmem_fault() (what
		 * vgem faults with) gives one when it has no page: our
		 * shmem mapping allocates with __GFP_RETRY_MAYFAIL, so
		 * VM_FAULT_OOM would not free anything, and since
		 * pagefault_out_of_memory() no longer kills outside a
		 * memcg the fault would only be retried for ever.
		 */
		struct page *page = vgem_p2p_page_get(bo, pgoff);

		ret = IS_ERR(page) ? VM_FAULT_SIGBUS :
		      vmf_insert_pfn(vma, vmf->address, page_to_pfn(page));
	}
	if (present)
		drm_dev_exit(idx);
out_unlock_resv:
	dma_resv_unlock(bo->base.resv);
	return ret;
}

/*
 * Importers mirror the vma with mmu notifiers and p2p_map(), not through
 * its page tables, so mprotect()'s change_protection() - which walks only
 * populated page tables and never has any over a device-only object -
 * would leave them with the permissions they had. Dropping a permission
 * therefore zaps the range: zap_vma_ptes() invalidates it through the mmu
 * notifiers whether or not ptes exist, importers p2p_unmap, and their next
 * fault sees the new vm_flags (vma_p2p_map() checks VM_WRITE, we VM_READ).
 * mprotect() holds mmap_lock for writing, so no importer re-faults before
 * the new flags are in place. SGX's sgx_vma_mprotect() is the precedent
 * for the hook; it only refuses, we only revoke.
 */
static int vgem_p2p_mprotect(struct vm_area_struct *vma, unsigned long start,
			     unsigned long end, unsigned long newflags)
{
	if (vma->vm_flags & ~newflags & (VM_READ | VM_WRITE))
		zap_vma_ptes(vma, start, end - start);
	return 0;
}

const struct vm_operations_struct vgem_p2p_vm_ops = {
	.fault = vgem_p2p_fault,
	.mprotect = vgem_p2p_mprotect,
	.open = drm_gem_vm_open,
	.close = drm_gem_vm_close,
	.p2p_lookup = vgem_p2p_vma_p2p_lookup,
	.p2p_release = vgem_p2p_vma_p2p_release,
};
