// SPDX-License-Identifier: GPL-2.0
/*
 * VRAM: the ivshmem BAR, managed with drm_mm under vgem_p2p_device.lock.
 *
 * An allocation that does not fit first compacts VRAM when enough of it
 * is free in total (fragmentation), then, if the caller allows, evicts
 * the least recently placed objects to system memory until it fits.
 */
#include <linux/io.h>

#include "vgem_p2p_drv.h"

int vgem_p2p_vram_init(struct vgem_p2p_device *vdev)
{
	drm_mm_init(&vdev->mm, 0, vdev->vram_size);
	vdev->vram_used = 0;
	return 0;
}

void vgem_p2p_vram_fini(struct vgem_p2p_device *vdev)
{
	drm_mm_takedown(&vdev->mm);
}

static int vgem_p2p_vram_insert(struct vgem_p2p_device *vdev,
				struct drm_mm_node *node, u64 size)
{
	int ret;

	/* The caller's until it is an object's (enum vgem_p2p_node_color) */
	ret = drm_mm_insert_node_generic(&vdev->mm, node, size, PAGE_SIZE,
					 VGEM_P2P_NODE_TRANSIT,
					 DRM_MM_INSERT_BEST);
	if (!ret)
		vdev->vram_used += size;
	return ret;
}

/**
 * vgem_p2p_vram_alloc - allocate VRAM, compacting and evicting as allowed
 * @vdev: the device
 * @node: zeroed node to insert
 * @size: page-aligned size
 * @policy: whether other objects may be evicted
 * @self: the object the VRAM is for, which must not be evicted for
 *	itself, or NULL; the caller holds its dma_resv
 *
 * Called with the device lock held. Compaction and eviction drop it while
 * they copy other objects, so the allocator may change meanwhile.
 *
 * Return: 0, or -ENOSPC.
 */
int vgem_p2p_vram_alloc(struct vgem_p2p_device *vdev, struct drm_mm_node *node,
			u64 size, enum vgem_p2p_alloc policy,
			struct vgem_p2p_object *self)
{
	lockdep_assert_held(&vdev->lock);

	if (size > vdev->vram_size)
		return -ENOSPC;

	for (;;) {
		if (!vgem_p2p_vram_insert(vdev, node, size))
			return 0;
		/* Enough free in total, but in pieces: slide objects down */
		if (vdev->vram_size - vdev->vram_used >= size) {
			vgem_p2p_compact(vdev, self);
			if (!vgem_p2p_vram_insert(vdev, node, size))
				return 0;
		}
		if (policy != VGEM_P2P_ALLOC_EVICT)
			return -ENOSPC;
		if (vgem_p2p_evict_one(vdev, self))
			return -ENOSPC;
	}
}

void vgem_p2p_vram_free(struct vgem_p2p_device *vdev, struct drm_mm_node *node)
{
	lockdep_assert_held(&vdev->lock);

	vdev->vram_used -= node->size;
	drm_mm_remove_node(node);
}

/*
 * Fill VRAM that no object owns any more, so that a device still using
 * an address it should have given up reads poison, not stale data.
 */
void vgem_p2p_vram_poison(struct vgem_p2p_device *vdev, u64 offset, u64 size)
{
	memset_io(vdev->bar + offset, VGEM_P2P_POISON_BYTE, size);
}
