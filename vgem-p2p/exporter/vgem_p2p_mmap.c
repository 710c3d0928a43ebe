// SPDX-License-Identifier: GPL-2.0
/*
 * CPU mappings: TTM's vmas, with a fault handler that, like
 * amdgpu_gem_fault(), refuses device-only objects, returns evicted ones to
 * VRAM and serves system memory after unplug (saving an object unbind has
 * yet to evict there first); and, on 6.1, p2p_lookup/p2p_release.
 */
#include <linux/mm.h>

#include <drm/drm_drv.h>

#include "vgem_p2p_drv.h"

#if LINUX_VERSION_CODE < KERNEL_VERSION(7, 0, 0)
/*
 * 6.1 retires: TTM's vmas held TTM references; on 7.2 they hold GEM
 * references, drm_gem_ttm_mmap() and ttm_bo_vm_open()/_close() as they are.
 * The vma keeps the GEM reference drm_gem_mmap_obj() took, as GEM vmas do
 * (drm_gem_vm_open()), for leases to take theirs once the handles are
 * closed; drm_gem_ttm_mmap() would drop it.
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
#endif

/*
 * SIGBUS without system pages, as drm_gem_shmem_fault(): TTM's VM_FAULT_OOM
 * would retry for ever, as the OOM path no longer kills outside a memcg.
 */
static vm_fault_t vgem_p2p_fault_reserved(struct vm_fault *vmf,
					  struct vgem_p2p_object *bo)
{
	struct ttm_operation_ctx ctx = { .interruptible = false };

	if (!vgem_p2p_resident_vram(bo) && ttm_bo_populate(&bo->tbo, &ctx))
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
	int idx, err;

	/* Memory "not even mapped to the CPU": p2p only */
	if (bo->flags & VGEM_P2P_CREATE_DEVICE_ONLY)
		return VM_FAULT_SIGBUS;
	ret = ttm_bo_vm_reserve(tbo, vmf);
	if (ret)
		return ret;

	if (drm_dev_enter(&vdev->drm, &idx)) {
		/* not while fallback importers would only push it out again */
		if (!READ_ONCE(bo->nr_fallback_maps) &&
		    !atomic_read(&bo->dmabuf_system_maps))
			vgem_p2p_return(bo);
		ret = vgem_p2p_fault_reserved(vmf, bo);
		drm_dev_exit(idx);
		goto out_unlock;
	}
	err = vgem_p2p_save_from_vram(bo);
	if (!err)
		/* unplugged: in system memory, or saved there before unbind */
		ret = vgem_p2p_fault_reserved(vmf, bo);
	else if (err == -EINTR)
		/* a signal ended the save's wait, as ttm_bo_vm_fault_idle()'s */
		ret = VM_FAULT_NOPAGE;
	else
		/* unplugged, and lost with VRAM: only its BAR range had it */
		ret = VM_FAULT_SIGBUS;
out_unlock:
	if (ret == VM_FAULT_RETRY && !(vmf->flags & FAULT_FLAG_RETRY_NOWAIT))
		return ret;
	dma_resv_unlock(tbo->base.resv);
	return ret;
}

const struct vm_operations_struct vgem_p2p_vm_ops = {
	.fault = vgem_p2p_fault,
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
	.open = ttm_bo_vm_open,
	.close = ttm_bo_vm_close,
#else
	/* 6.1 retires: TTM's vmas held TTM references */
	.open = vgem_p2p_vm_open,
	.close = vgem_p2p_vm_close,
	/* 6.1 retires: drm-patches/' vma hook; not on 7.2 until series B */
	.p2p_lookup = vgem_p2p_vma_p2p_lookup,
	.p2p_release = vgem_p2p_vma_p2p_release,
#endif
};
