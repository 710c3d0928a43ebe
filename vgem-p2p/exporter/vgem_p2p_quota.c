// SPDX-License-Identifier: GPL-2.0
/*
 * The VRAM quota. Any allocation may evict others' objects, as in every
 * TTM driver; vram_quota_pages bounds what one process (mm) has moved
 * into VRAM and still holds there, through all its files of the device.
 * Per mm, as the device-private quota is (vgem_p2p_devmem.c), not per
 * open file, which gave each open of the node a quota of its own.
 * Charged to whoever moves an object in, the creator or not, as
 * mainline's dmem cgroup (6.14) charges the allocating task's cgroup in
 * ttm_resource_alloc() and uncharges that cgroup in ttm_resource_free(),
 * whoever frees or evicts; 6.1 has no dmem cgroup.
 */
#include <linux/module.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "vgem_p2p_drv.h"

static unsigned long vram_quota_pages;
module_param(vram_quota_pages, ulong, 0644);
MODULE_PARM_DESC(vram_quota_pages,
		 "VRAM pages the objects one process (mm), through all its open files, moved into VRAM may hold there at once (0: no limit)");

void vgem_p2p_vram_charges_init(struct vgem_p2p_device *vdev)
{
	spin_lock_init(&vdev->vram_charge_lock);
	hash_init(vdev->vram_charges);
}

static struct vgem_p2p_vram_charge *
vgem_p2p_vram_charge_find(struct vgem_p2p_device *vdev, struct mm_struct *mm)
{
	struct vgem_p2p_vram_charge *charge;

	lockdep_assert_held(&vdev->vram_charge_lock);

	hash_for_each_possible(vdev->vram_charges, charge, node,
			       (unsigned long)mm)
		if (charge->mm == mm)
			return charge;
	return NULL;
}

/**
 * vgem_p2p_vram_charge - charge @bo's VRAM to the calling process
 * @bo: the object, reserved, on its way into VRAM and charged to nobody
 *
 * Before the placement, so that an object over quota evicts nobody, and
 * the check and the charge under one lock, so that two placements by one
 * process cannot both pass the check: a placement that then finds no
 * room, or fails, gives the charge back (vgem_p2p_vram_uncharge()).
 *
 * Return: 0; -EDQUOT past the quota, or with no process to charge (a
 * kernel thread's use of an evicted object leaves it where it is);
 * -ENOMEM.
 */
int vgem_p2p_vram_charge(struct vgem_p2p_object *bo)
{
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);
	unsigned long quota = READ_ONCE(vram_quota_pages);
	unsigned long npages = vgem_p2p_npages(bo);
	struct vgem_p2p_vram_charge *charge, *new = NULL;
	struct mm_struct *mm = current->mm;
	int ret = 0;

	dma_resv_assert_held(bo->tbo.base.resv);

	if (WARN_ON_ONCE(bo->vram_charge))
		return 0;
	if (!mm || (quota && npages > quota))
		return -EDQUOT;
	for (;;) {
		spin_lock(&vdev->vram_charge_lock);
		charge = vgem_p2p_vram_charge_find(vdev, mm);
		if (charge || new)
			break;
		spin_unlock(&vdev->vram_charge_lock);
		new = kzalloc(sizeof(*new), GFP_KERNEL);
		if (!new)
			return -ENOMEM;
	}
	if (!charge) {
		/* the key may not be reused while the charge lives */
		mmgrab(mm);
		new->mm = mm;
		hash_add(vdev->vram_charges, &new->node, (unsigned long)mm);
		charge = new;
		new = NULL;
	}
	/* a new charge has room: npages is within the quota */
	if (quota && charge->pages + npages > quota) {
		ret = -EDQUOT;
	} else {
		charge->pages += npages;
		bo->vram_charge = charge;
	}
	spin_unlock(&vdev->vram_charge_lock);
	kfree(new);
	return ret;
}

/*
 * @bo, reserved (or being freed), left VRAM or never got there: give its
 * pages back to whoever they were charged to. The charge goes with its
 * last pages.
 */
void vgem_p2p_vram_uncharge(struct vgem_p2p_object *bo)
{
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);
	struct vgem_p2p_vram_charge *charge = bo->vram_charge;
	bool dead;

	if (!charge)
		return;
	bo->vram_charge = NULL;
	spin_lock(&vdev->vram_charge_lock);
	charge->pages -= vgem_p2p_npages(bo);
	dead = !charge->pages;
	if (dead)
		hash_del(&charge->node);
	spin_unlock(&vdev->vram_charge_lock);
	if (dead) {
		mmdrop(charge->mm);
		kfree(charge);
	}
}
