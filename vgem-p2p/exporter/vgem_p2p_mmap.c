// SPDX-License-Identifier: GPL-2.0
/*
 * CPU mappings: TTM's (ttm_bo_mmap_obj(), a VM_IO | VM_PFNMAP vma),
 * with a fault handler that does what this driver does before TTM maps
 * an object, as amdgpu's amdgpu_gem_fault() does: refuse device-only
 * objects, bring an evicted object back to VRAM, and keep serving system
 * memory after unplug. The same vm_ops offer p2p_lookup/p2p_release to
 * importing devices (vgem_p2p_export.c).
 */
#include <linux/mm.h>

#include <drm/drm_drv.h>

#include "vgem_p2p_drv.h"

/*
 * The vma holds a GEM reference besides TTM's, as GEM vmas do
 * (drm_gem_vm_open()): importers' leases take GEM references, which
 * must not be taken on an object whose handles are all closed while a
 * vma still maps it. drm_gem_mmap_obj() took it; drm_gem_ttm_mmap()
 * would drop it.
 */
int vgem_p2p_gem_mmap(struct drm_gem_object *obj, struct vm_area_struct *vma)
{
	return ttm_bo_mmap_obj(vma, &to_vgem_p2p_obj(obj)->tbo);
}

static void vgem_p2p_vm_open(struct vm_area_struct *vma)
{
	drm_gem_object_get(vma->vm_private_data);
	ttm_bo_vm_open(vma);
}

static void vgem_p2p_vm_close(struct vm_area_struct *vma)
{
	struct drm_gem_object *obj = vma->vm_private_data;

	ttm_bo_vm_close(vma);
	drm_gem_object_put(obj);
}

/*
 * A page of system memory the fault cannot have gets SIGBUS, as
 * drm_gem_shmem_fault() gives one: TTM says VM_FAULT_OOM, which since
 * pagefault_out_of_memory() no longer kills outside a memcg would only
 * retry the fault for ever.
 */
static vm_fault_t vgem_p2p_fault_reserved(struct vm_fault *vmf,
					  struct vgem_p2p_object *bo)
{
	struct ttm_operation_ctx ctx = { .interruptible = false };

	if (!vgem_p2p_resident_vram(bo) &&
	    ttm_tt_populate(bo->tbo.bdev, bo->tbo.ttm, &ctx))
		return VM_FAULT_SIGBUS;
	return ttm_bo_vm_fault_reserved(vmf, vmf->vma->vm_page_prot,
					TTM_BO_VM_NUM_PREFAULT);
}

static vm_fault_t vgem_p2p_fault(struct vm_fault *vmf)
{
	struct ttm_buffer_object *tbo = vmf->vma->vm_private_data;
	struct vgem_p2p_object *bo = tbo_to_bo(tbo);
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);
	vm_fault_t ret;
	int idx;

	/* Memory "not even mapped to the CPU": p2p only */
	if (bo->flags & VGEM_P2P_CREATE_DEVICE_ONLY)
		return VM_FAULT_SIGBUS;
	ret = ttm_bo_vm_reserve(tbo, vmf);
	if (ret)
		return ret;

	if (drm_dev_enter(&vdev->drm, &idx)) {
		/*
		 * An evicted VRAM object comes back on use, if that costs no
		 * one else their place; not while importers use it through
		 * the fallback, which would only push it out again.
		 */
		if (vgem_p2p_may_return(bo) && !READ_ONCE(bo->nr_fallback_maps) &&
		    !atomic_read(&bo->dmabuf_system_maps) &&
		    !vgem_p2p_place(bo, VGEM_P2P_RETURN_TO_VRAM))
			bo->reason = VGEM_P2P_REASON_RETURNED;
		ret = vgem_p2p_fault_reserved(vmf, bo);
		drm_dev_exit(idx);
	} else if (vgem_p2p_resident_vram(bo)) {
		/* after unplug only the BAR is gone: the rest is served */
		ret = VM_FAULT_SIGBUS;
	} else {
		ret = vgem_p2p_fault_reserved(vmf, bo);
	}
	if (ret == VM_FAULT_RETRY && !(vmf->flags & FAULT_FLAG_RETRY_NOWAIT))
		return ret;
	dma_resv_unlock(tbo->base.resv);
	return ret;
}

/*
 * Importers mirror the vma with mmu notifiers and p2p_lookup(), not
 * through its page tables, so mprotect()'s change_protection() - which
 * walks only populated page tables and never has any over a device-only
 * object - would leave them with the permissions they had. Dropping a
 * permission therefore zaps the range: zap_vma_ptes() invalidates it
 * through the mmu notifiers whether or not ptes exist, importers
 * release, and their next lookup sees the new vm_flags (vma_p2p_lookup()
 * checks VM_WRITE, we VM_READ). mprotect() holds mmap_lock for writing,
 * so no importer looks up again before the new flags are in place. SGX's
 * sgx_vma_mprotect() is the precedent for the hook; it only refuses, we
 * only revoke.
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
	.open = vgem_p2p_vm_open,
	.close = vgem_p2p_vm_close,
	.p2p_lookup = vgem_p2p_vma_p2p_lookup,
	.p2p_release = vgem_p2p_vma_p2p_release,
};
