// SPDX-License-Identifier: GPL-2.0
/*
 * PRIME export, the way vgem does it: an attachment pins the object, and
 * the importer gets an sg table of its system pages. A pinned object
 * stays in system memory, where nothing moves it, until the last unpin.
 */
#include <drm/drm_prime.h>

#include "vgem_p2p_drv.h"

int vgem_p2p_gem_pin(struct drm_gem_object *obj)
{
	struct vgem_p2p_object *bo = to_vgem_p2p_obj(obj);
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);
	int ret;

	mutex_lock(&vdev->lock);
	ret = vgem_p2p_move_to_system(bo);
	if (!ret)
		bo->pin_count++;
	mutex_unlock(&vdev->lock);
	return ret;
}

void vgem_p2p_gem_unpin(struct drm_gem_object *obj)
{
	struct vgem_p2p_object *bo = to_vgem_p2p_obj(obj);
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);

	mutex_lock(&vdev->lock);
	WARN_ON(!bo->pin_count);
	bo->pin_count--;
	mutex_unlock(&vdev->lock);
}

struct sg_table *vgem_p2p_gem_get_sg_table(struct drm_gem_object *obj)
{
	struct vgem_p2p_object *bo = to_vgem_p2p_obj(obj);
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);
	struct sg_table *sgt;

	mutex_lock(&vdev->lock);
	if (WARN_ON(!bo->pin_count || bo->in_vram))
		sgt = ERR_PTR(-EINVAL);
	else
		sgt = drm_prime_pages_to_sg(obj->dev, bo->pages,
					    vgem_p2p_npages(bo));
	mutex_unlock(&vdev->lock);
	return sgt;
}
