// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs, in /sys/kernel/debug/dri/N/:
 *   vram_map  the VRAM manager: objects and holes, in bytes
 *   objects   every object: placement, flags, importer mappings
 *   counters  the device counters (as DRM_IOCTL_VGEM_P2P_STATS)
 *   hold_after_lookup, held_after_lookup
 *             a test knob: while it is 1, every p2p_lookup() waits after
 *             answering, counted in held_after_lookup
 *   hold_in_clear, held_in_clear
 *             a test knob: while it is 1, every creation of an object in
 *             VRAM waits before it clears it, counted in held_in_clear
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include <drm/drm_debugfs.h>
#include <drm/drm_file.h>
#include <drm/drm_print.h>

#include "vgem_p2p_drv.h"

static void vgem_p2p_vram_range(struct seq_file *m, u64 start, u64 end,
				const char *what)
{
	start <<= PAGE_SHIFT;
	end <<= PAGE_SHIFT;
	if (end > start)
		seq_printf(m, "0x%016llx-0x%016llx: %llu: %s\n", start, end,
			   end - start, what);
}

/* drm_mm_print(), in bytes */
static int vgem_p2p_vram_map_show(struct seq_file *m, void *data)
{
	struct drm_info_node *node = m->private;
	struct vgem_p2p_device *vdev = to_vgem_p2p(node->minor->dev);
	struct vgem_p2p_vram_mgr *mgr = &vdev->vram;
	u64 used = vgem_p2p_vram_used(vdev), prev = 0;
	struct drm_mm_node *n;

	seq_printf(m, "vram: %pa bytes at bus %pad, 0x%016llx used\n",
		   &vdev->vram_size, &vdev->bar_bus, used);
	spin_lock(&mgr->lock);
	drm_mm_for_each_node(n, &mgr->mm) {
		vgem_p2p_vram_range(m, prev, n->start, "free");
		vgem_p2p_vram_range(m, n->start, n->start + n->size, "used");
		prev = n->start + n->size;
	}
	vgem_p2p_vram_range(m, prev, mgr->manager.size, "free");
	spin_unlock(&mgr->lock);
	return 0;
}

static const char * const vgem_p2p_kind_names[] = {
	[VGEM_P2P_MAP_BUS] = "bus",
	[VGEM_P2P_MAP_IOVA] = "iova",
	[VGEM_P2P_MAP_SYSTEM] = "system",
};

static const char * const vgem_p2p_reason_names[] = {
	[VGEM_P2P_REASON_CREATE] = "create",
	[VGEM_P2P_REASON_MOVE] = "move",
	[VGEM_P2P_REASON_EVICTED] = "evicted",
	[VGEM_P2P_REASON_RETURNED] = "returned",
	[VGEM_P2P_REASON_NO_P2P_IMPORTER] = "no_p2p_importer",
	[VGEM_P2P_REASON_PINNED] = "pinned",
};

static int vgem_p2p_objects_show(struct seq_file *m, void *data)
{
	struct drm_info_node *node = m->private;
	struct vgem_p2p_device *vdev = to_vgem_p2p(node->minor->dev);
	struct vgem_p2p_object *bo;
	struct vgem_p2p_lease *lease;

	mutex_lock(&vdev->objects_lock);
	list_for_each_entry(bo, &vdev->objects, link) {
		if (vgem_p2p_in_vram(bo))
			seq_printf(m, "%p size %zu vram 0x%llx", bo,
				   bo->tbo.base.size, READ_ONCE(bo->vram_offset));
		else
			seq_printf(m, "%p size %zu system", bo,
				   bo->tbo.base.size);
		if (dma_resv_trylock(bo->tbo.base.resv)) {
			seq_printf(m, " flags 0x%x moves %llu pins %u reason %s",
				   bo->flags, bo->moves, bo->tbo.pin_count,
				   vgem_p2p_reason_names[vgem_p2p_placement_reason(bo)]);
			dma_resv_unlock(bo->tbo.base.resv);
		} else {
			seq_printf(m, " flags 0x%x busy", bo->flags);
		}
		seq_printf(m, " dmabuf attachments %d move_notifies %lld\n",
			   atomic_read(&bo->nr_attachments),
			   atomic64_read(&bo->move_notifies));
		spin_lock(&bo->maps_lock);
		list_for_each_entry(lease, &bo->maps, link)
			seq_printf(m, "  importer %s pages %lu+%lu %s %s\n",
				   dev_name(lease->importer), lease->first,
				   lease->npages,
				   vgem_p2p_kind_names[lease->kind],
				   lease->dir == DMA_TO_DEVICE ? "ro" : "rw");
		spin_unlock(&bo->maps_lock);
	}
	mutex_unlock(&vdev->objects_lock);
	return 0;
}

static int vgem_p2p_counters_show(struct seq_file *m, void *data)
{
	struct drm_info_node *node = m->private;
	struct vgem_p2p_device *vdev = to_vgem_p2p(node->minor->dev);
	struct vgem_p2p_counters *c = &vdev->stats;

#define SHOW(x) seq_printf(m, "%-20s %lld\n", #x, atomic64_read(&c->x))
	SHOW(p2p_maps);
	SHOW(p2p_unmaps);
	SHOW(p2p_pages_bus);
	SHOW(p2p_pages_iova);
	SHOW(fallbacks);
	SHOW(moves);
	SHOW(evictions);
	SHOW(compactions);
	SHOW(invalidations);
	SHOW(bytes_copied);
	SHOW(bytes_bounced);
	SHOW(devmem_p2p_maps);
	SHOW(devmem_to_device);
	SHOW(devmem_to_ram);
	SHOW(dmabuf_attachments);
	SHOW(dmabuf_maps_p2p);
	SHOW(dmabuf_maps_system);
	SHOW(dmabuf_unmaps);
	SHOW(move_notifies);
	SHOW(backoffs);
#undef SHOW
	return 0;
}

static const struct drm_info_list vgem_p2p_debugfs_list[] = {
	{ "vram_map", vgem_p2p_vram_map_show, 0 },
	{ "objects", vgem_p2p_objects_show, 0 },
	{ "counters", vgem_p2p_counters_show, 0 },
};

/* A fatal signal ends the wait */
void vgem_p2p_hold_wait(struct vgem_p2p_hold *h)
{
	if (!READ_ONCE(h->on))
		return;
	atomic_inc(&h->held);
	wait_event_killable(h->wq, !READ_ONCE(h->on));
	atomic_dec(&h->held);
}

static int vgem_p2p_hold_get(void *data, u64 *val)
{
	struct vgem_p2p_hold *h = data;

	*val = READ_ONCE(h->on);
	return 0;
}

static int vgem_p2p_hold_set(void *data, u64 val)
{
	struct vgem_p2p_hold *h = data;

	WRITE_ONCE(h->on, !!val);
	if (!val)
		wake_up_all(&h->wq);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(vgem_p2p_hold_fops, vgem_p2p_hold_get,
			 vgem_p2p_hold_set, "%llu\n");

void vgem_p2p_debugfs_init(struct drm_minor *minor)
{
	struct vgem_p2p_device *vdev = to_vgem_p2p(minor->dev);
	struct dentry *root = minor->debugfs_root;

	drm_debugfs_create_files(vgem_p2p_debugfs_list,
				 ARRAY_SIZE(vgem_p2p_debugfs_list), root, minor);
	debugfs_create_file_unsafe("hold_after_lookup", 0600, root,
				   &vdev->hold_after_lookup,
				   &vgem_p2p_hold_fops);
	debugfs_create_atomic_t("held_after_lookup", 0400, root,
				&vdev->hold_after_lookup.held);
	debugfs_create_file_unsafe("hold_in_clear", 0600, root,
				   &vdev->hold_in_clear, &vgem_p2p_hold_fops);
	debugfs_create_atomic_t("held_in_clear", 0400, root,
				&vdev->hold_in_clear.held);
}
