// SPDX-License-Identifier: GPL-2.0
/*
 * Device-private memory: none yet. vgem_p2p_devmem.c is built on
 * drm-patches/' dev_pagemap_ops (p2p_allow, get_dma_pfn_for_device); its
 * rebuild on drm_pagemap (docs/port-7.2.md §3) takes this file's place
 * in the Kbuild, behind the same calls. Until then the last quarter of
 * the BAR stays unused, MIGRATE answers -EOPNOTSUPP and STATS reports no
 * device memory.
 */
#include "vgem_p2p_drv.h"

int vgem_p2p_devmem_init(struct vgem_p2p_device *vdev,
			 resource_size_t bar_offset, resource_size_t size)
{
	return 0;
}

void vgem_p2p_devmem_fini(struct vgem_p2p_device *vdev)
{
}

void vgem_p2p_devmem_usage(struct vgem_p2p_device *vdev, u64 *size,
			   u64 *used)
{
	*size = 0;
	*used = 0;
}

/* Bad arguments get their errno, as with device memory; good ones none */
int vgem_p2p_migrate_ioctl(struct drm_device *dev, void *data,
			   struct drm_file *file)
{
	return vgem_p2p_migrate_check(data) ?: -EOPNOTSUPP;
}
