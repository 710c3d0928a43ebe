// SPDX-License-Identifier: GPL-2.0
/*
 * fdinfo (Documentation/gpu/drm-usage-stats.rst): drm_show_fdinfo()
 * prints the driver, the client id and the device; this, the memory of a
 * file's objects by region, as xe's show_meminfo() does. Racy against
 * moves: fdinfo is a snapshot.
 */
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>

#include "vgem_p2p_drv.h"

/* drm_driver.show_fdinfo */
void vgem_p2p_show_fdinfo(struct drm_printer *p, struct drm_file *file)
{
	struct drm_memory_stats vram = {}, system = {};
	struct drm_gem_object *obj;
	int id;

	spin_lock(&file->table_lock);
	idr_for_each_entry(&file->object_idr, obj, id) {
		struct vgem_p2p_object *bo = to_vgem_p2p_obj(obj);
		struct drm_memory_stats *stats;

		if (vgem_p2p_in_vram(bo)) {
			stats = &vram;
			stats->resident += obj->size;
		} else {
			stats = &system;
			stats->resident +=
				(u64)READ_ONCE(bo->nr_pages) << PAGE_SHIFT;
		}
		if (drm_gem_object_is_shared_for_memory_stats(obj))
			stats->shared += obj->size;
		else
			stats->private += obj->size;
	}
	spin_unlock(&file->table_lock);

	drm_print_memory_stats(p, &system, DRM_GEM_OBJECT_RESIDENT, "system");
	drm_print_memory_stats(p, &vram, DRM_GEM_OBJECT_RESIDENT, "vram");
}
