// SPDX-License-Identifier: GPL-2.0
/*
 * vgem-p2p: vgem (dumb buffers, mmap, PRIME, fences) with VRAM on the BAR
 * of QEMU's ivshmem-plain, as a TTM driver with device-private pages beside
 * TTM; the example exporter of peer-to-peer through a vma.
 *
 * BAR layout: [0, 3/4) VRAM for GEM objects (TTM_PL_VRAM), [3/4, 1)
 * device-private memory (vgem_p2p_devmem.c).
 */
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/pci-p2pdma.h>
#include <linux/seq_file.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem_ttm_helper.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_managed.h>
#include <drm/drm_prime.h>
#include <drm/drm_print.h>

#include "vgem_p2p_drv.h"

#define DRIVER_DESC	"vgem with VRAM on a PCI BAR, exported p2p"
/* 6.1 retires: drm_driver.date */
#define DRIVER_DATE	"20261203"
#define DRIVER_MAJOR	1
#define DRIVER_MINOR	0

/* As amdgpu's pcie_p2p: an administrator's way out of peer-to-peer */
static bool p2pdma = true;
module_param(p2pdma, bool, 0444);
MODULE_PARM_DESC(p2pdma,
		 "Offer VRAM to peer devices (default: Y; N: every importer gets system memory)");

#if LINUX_VERSION_CODE < KERNEL_VERSION(7, 0, 0)
/* 6.1 retires: our own client ids; the DRM core's (drm_file.client_id) */
static atomic64_t vgem_p2p_client_ids = ATOMIC64_INIT(0);
#endif

struct vgem_p2p_file_priv {
	struct vgem_p2p_file fences;
#if LINUX_VERSION_CODE < KERNEL_VERSION(7, 0, 0)
	/* 6.1 retires: our own client ids; the DRM core's (drm_file.client_id) */
	u64 client_id;
#endif
};

static int vgem_p2p_open(struct drm_device *dev, struct drm_file *file)
{
	struct vgem_p2p_file_priv *priv;
	int ret;

	priv = kzalloc_obj(*priv);
	if (!priv)
		return -ENOMEM;
	ret = vgem_p2p_fence_open(&priv->fences);
	if (ret)
		goto err_free_priv;
#if LINUX_VERSION_CODE < KERNEL_VERSION(7, 0, 0)
	/* 6.1 retires: our own client ids; the DRM core's (drm_file.client_id) */
	priv->client_id = atomic64_inc_return(&vgem_p2p_client_ids);
#endif
	/* vgem's fence ioctls find their state at the start of driver_priv */
	file->driver_priv = &priv->fences;
	return 0;

err_free_priv:
	kfree(priv);
	return ret;
}

static void vgem_p2p_postclose(struct drm_device *dev, struct drm_file *file)
{
	struct vgem_p2p_file_priv *priv =
		container_of(file->driver_priv, struct vgem_p2p_file_priv, fences);

	vgem_p2p_fence_close(&priv->fences);
	kfree(priv);
}

static int vgem_p2p_stats_ioctl(struct drm_device *dev, void *data,
				struct drm_file *file)
{
	struct vgem_p2p_device *vdev = to_vgem_p2p(dev);
	struct vgem_p2p_counters *c = &vdev->stats;
	struct drm_vgem_p2p_stats *args = data;

	if (args->flags || args->pad)
		return -EINVAL;

	args->p2p_maps = atomic64_read(&c->p2p_maps);
	args->p2p_unmaps = atomic64_read(&c->p2p_unmaps);
	args->p2p_pages_bus = atomic64_read(&c->p2p_pages_bus);
	args->p2p_pages_iova = atomic64_read(&c->p2p_pages_iova);
	args->fallbacks = atomic64_read(&c->fallbacks);
	args->moves = atomic64_read(&c->moves);
	args->evictions = atomic64_read(&c->evictions);
	args->compactions = atomic64_read(&c->compactions);
	args->invalidations = atomic64_read(&c->invalidations);
	args->bytes_copied = atomic64_read(&c->bytes_copied);
	args->bytes_bounced = atomic64_read(&c->bytes_bounced);
	args->devmem_p2p_maps = atomic64_read(&c->devmem_p2p_maps);
	args->devmem_to_device = atomic64_read(&c->devmem_to_device);
	args->devmem_to_ram = atomic64_read(&c->devmem_to_ram);
	args->dmabuf_attachments = atomic64_read(&c->dmabuf_attachments);
	args->dmabuf_maps_p2p = atomic64_read(&c->dmabuf_maps_p2p);
	args->dmabuf_maps_system = atomic64_read(&c->dmabuf_maps_system);
	args->dmabuf_unmaps = atomic64_read(&c->dmabuf_unmaps);
	args->move_notifies = atomic64_read(&c->move_notifies);
	args->vram_size = vdev->vram_size;
	args->vram_used = vgem_p2p_vram_used(vdev);
	vgem_p2p_devmem_usage(vdev, &args->devmem_size, &args->devmem_used);
	return 0;
}

static const struct drm_ioctl_desc vgem_p2p_ioctls[] = {
	DRM_IOCTL_DEF_DRV(VGEM_FENCE_ATTACH, vgem_p2p_fence_attach_ioctl,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(VGEM_FENCE_SIGNAL, vgem_p2p_fence_signal_ioctl,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(VGEM_P2P_CREATE, vgem_p2p_create_ioctl,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(VGEM_P2P_MOVE, vgem_p2p_move_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(VGEM_P2P_OBJ_INFO, vgem_p2p_obj_info_ioctl,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(VGEM_P2P_MIGRATE, vgem_p2p_migrate_ioctl,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(VGEM_P2P_STATS, vgem_p2p_stats_ioctl,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(VGEM_P2P_MMAP_OFFSET, vgem_p2p_mmap_offset_ioctl,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(VGEM_P2P_PEER, vgem_p2p_peer_ioctl,
			  DRM_RENDER_ALLOW),
};

#if LINUX_VERSION_CODE < KERNEL_VERSION(7, 0, 0)
/*
 * 6.1 retires: fdinfo in the fops, with drm-memory-*; 7.2's is
 * vgem_p2p_fdinfo.c, under drm_show_fdinfo().
 * Documentation/gpu/drm-usage-stats.rst; 6.1 has no drm_show_memory_stats().
 * Racy against moves: fdinfo is a snapshot.
 */
static void vgem_p2p_show_fdinfo(struct seq_file *m, struct file *f)
{
	struct drm_file *file = f->private_data;
	struct vgem_p2p_device *vdev = to_vgem_p2p(file->minor->dev);
	struct vgem_p2p_file_priv *priv =
		container_of(file->driver_priv, struct vgem_p2p_file_priv, fences);
	struct drm_gem_object *obj;
	u64 vram = 0, system = 0, resident = 0;
	int id;

	spin_lock(&file->table_lock);
	idr_for_each_entry(&file->object_idr, obj, id) {
		struct vgem_p2p_object *bo = to_vgem_p2p_obj(obj);

		if (vgem_p2p_in_vram(bo)) {
			vram += obj->size;
		} else {
			system += obj->size;
			resident += (u64)READ_ONCE(bo->nr_pages) << PAGE_SHIFT;
		}
	}
	spin_unlock(&file->table_lock);

	seq_printf(m, "drm-driver:\t%s\n", DRIVER_NAME);
	seq_printf(m, "drm-pdev:\t%s\n", pci_name(vdev->pdev));
	seq_printf(m, "drm-client-id:\t%llu\n", priv->client_id);
	seq_printf(m, "drm-memory-vram:\t%llu KiB\n", vram >> 10);
	seq_printf(m, "drm-memory-system:\t%llu KiB\n", system >> 10);
	seq_printf(m, "drm-resident-vram:\t%llu KiB\n", vram >> 10);
	seq_printf(m, "drm-resident-system:\t%llu KiB\n", resident >> 10);
}
#endif

static const struct file_operations vgem_p2p_fops = {
	.owner = THIS_MODULE,
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
	DRM_GEM_FOPS,
	.show_fdinfo = drm_show_fdinfo,
#else
	/* 6.1 retires: DRM_GEM_FOPS of 6.1, and our fdinfo */
	.open = drm_open,
	.release = drm_release,
	.unlocked_ioctl = drm_ioctl,
	.compat_ioctl = drm_compat_ioctl,
	.poll = drm_poll,
	.read = drm_read,
	.llseek = noop_llseek,
	.mmap = drm_gem_mmap,
	.show_fdinfo = vgem_p2p_show_fdinfo,
#endif
};

static const struct drm_driver vgem_p2p_driver = {
	.driver_features = DRIVER_GEM | DRIVER_RENDER,
	.open = vgem_p2p_open,
	.postclose = vgem_p2p_postclose,
	.ioctls = vgem_p2p_ioctls,
	.num_ioctls = ARRAY_SIZE(vgem_p2p_ioctls),
	.fops = &vgem_p2p_fops,
	.dumb_create = vgem_p2p_dumb_create,
	.dumb_map_offset = drm_gem_ttm_dumb_map_offset,
	.prime_handle_to_fd = drm_gem_prime_handle_to_fd,
	.prime_fd_to_handle = drm_gem_prime_fd_to_handle,
	.gem_prime_import = vgem_p2p_gem_prime_import,
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
	.show_fdinfo = vgem_p2p_show_fdinfo,
#else
	/*
	 * 6.1 retires: mmap of an exported dma-buf, as vgem (moves zap it
	 * with the rest), which 7.2's drm_gem_dmabuf_mmap() does itself
	 */
	.gem_prime_mmap = drm_gem_prime_mmap,
#endif
	.debugfs_init = vgem_p2p_debugfs_init,

	.name = DRIVER_NAME,
	.desc = DRIVER_DESC,
#if LINUX_VERSION_CODE < KERNEL_VERSION(7, 0, 0)
	/* 6.1 retires: drm_driver.date */
	.date = DRIVER_DATE,
#endif
	.major = DRIVER_MAJOR,
	.minor = DRIVER_MINOR,
};

/* The last object is gone: its reference kept the device */
static void vgem_p2p_release_ttm(struct drm_device *drm, void *data)
{
	struct vgem_p2p_device *vdev = to_vgem_p2p(drm);

	vgem_p2p_vram_mgr_fini(vdev);
	ttm_device_fini(&vdev->bdev);
	/* every object's VRAM charge went with it */
	WARN_ON(!hash_empty(vdev->vram_charges));
}

static int vgem_p2p_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct vgem_p2p_device *vdev;
	resource_size_t devmem_size;
	u64 devmem_bytes, devmem_used;
	int ret;

	vdev = devm_drm_dev_alloc(&pdev->dev, &vgem_p2p_driver,
				  struct vgem_p2p_device, drm);
	if (IS_ERR(vdev))
		return PTR_ERR(vdev);
	vdev->pdev = pdev;
	INIT_LIST_HEAD(&vdev->objects);
	init_waitqueue_head(&vdev->hold_after_lookup.wq);
	init_waitqueue_head(&vdev->hold_in_clear.wq);
	init_rwsem(&vdev->vram_close_lock);
	vgem_p2p_vram_charges_init(vdev);
	ret = drmm_mutex_init(&vdev->drm, &vdev->objects_lock);
	if (ret)
		return ret;

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	if (!(pci_resource_flags(pdev, VGEM_P2P_BAR) & IORESOURCE_MEM) ||
	    pci_resource_len(pdev, VGEM_P2P_BAR) < 4 * PAGE_SIZE)
		return -ENODEV;
	ret = pci_request_region(pdev, VGEM_P2P_BAR, DRIVER_NAME);
	if (ret)
		return ret;

	vdev->bar_phys = pci_resource_start(pdev, VGEM_P2P_BAR);
	vdev->bar_bus = pci_bus_address(pdev, VGEM_P2P_BAR);
	vdev->bar_size = pci_resource_len(pdev, VGEM_P2P_BAR);
	vdev->bar = devm_ioremap_wc(&pdev->dev, vdev->bar_phys, vdev->bar_size);
	if (!vdev->bar)
		return -ENOMEM;

	/* Without a provider, importers are served from system memory */
	if (p2pdma) {
		ret = pcim_p2pdma_init(pdev);
		if (ret)
			drm_warn(&vdev->drm, "no p2pdma provider: %d\n", ret);
		else
			vdev->provider = pcim_p2pdma_provider(pdev,
							      VGEM_P2P_BAR);
	}

	devmem_size = round_down(vdev->bar_size / 4, PAGE_SIZE);
	vdev->vram_size = vdev->bar_size - devmem_size;
	ret = vgem_p2p_ttm_device_init(&vdev->bdev, &vgem_p2p_ttm_funcs,
				       &pdev->dev,
				       vdev->drm.anon_inode->i_mapping,
				       vdev->drm.vma_offset_manager);
	if (ret)
		return ret;
	vgem_p2p_vram_mgr_init(vdev);
	ret = drmm_add_action_or_reset(&vdev->drm, vgem_p2p_release_ttm, NULL);
	if (ret)
		return ret;

	/* Optional: without it, the MIGRATE ioctl reports -ENODEV */
	ret = vgem_p2p_devmem_init(vdev, vdev->vram_size, devmem_size);
	if (ret)
		drm_warn(&vdev->drm, "no device-private memory: %d\n", ret);

	pci_set_drvdata(pdev, vdev);
	ret = drm_dev_register(&vdev->drm, 0);
	if (ret)
		goto err_devmem_fini;

	vgem_p2p_devmem_usage(vdev, &devmem_bytes, &devmem_used);
	devmem_size = devmem_bytes;
	drm_info(&vdev->drm, "%pa bytes of VRAM at bus %pad, %pa device-private\n",
		 &vdev->vram_size, &vdev->bar_bus, &devmem_size);
	return 0;

err_devmem_fini:
	vgem_p2p_devmem_fini(vdev);
	return ret;
}

/*
 * TTM skips objects whose dma_resv is held: unplug must empty VRAM, so
 * retry. What cannot be evicted for lack of memory is lost: it stays in
 * the manager, which TTM will not see disabled then (a WARN), until its
 * next move zeroes it or its release frees it; the driver's own flag
 * closes VRAM instead, and vgem_p2p_vram_mgr_fini() disables it once
 * the last object is gone.
 */
static void vgem_p2p_evict_all(struct vgem_p2p_device *vdev)
{
	struct ttm_resource_manager *man = &vdev->vram.manager;
	int ret;

	while ((ret = ttm_resource_manager_evict_all(&vdev->bdev, man)) ==
	       -EBUSY)
		schedule_timeout_uninterruptible(1);
	if (ret)
		drm_warn(&vdev->drm, "objects lost with the device: %d\n", ret);
	else
		ttm_resource_manager_set_used(man, false);
	down_write(&vdev->vram_close_lock);
	WRITE_ONCE(vdev->vram_closed, true);
	up_write(&vdev->vram_close_lock);
}

static void vgem_p2p_remove(struct pci_dev *pdev)
{
	struct vgem_p2p_device *vdev = pci_get_drvdata(pdev);

	/* No new ioctl, fault or p2p_lookup reaches the hardware after this */
	drm_dev_unplug(&vdev->drm);
	vgem_p2p_free_wq_flush();
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
	/* importers may read the BAR until they unmap: as VFIO, wait for that */
	vgem_p2p_dmabuf_revoke(vdev);
#endif
	/*
	 * Objects outlive the BAR (open files, importers): evict them, as
	 * drivers do on suspend, which invalidates every mapping of VRAM.
	 */
	vgem_p2p_evict_all(vdev);
	vgem_p2p_devmem_fini(vdev);
}

static const struct pci_device_id vgem_p2p_pci_ids[] = {
	{ PCI_DEVICE(PCI_VENDOR_ID_REDHAT_QUMRANET, 0x1110) },	/* ivshmem */
	{ }
};
MODULE_DEVICE_TABLE(pci, vgem_p2p_pci_ids);

static struct pci_driver vgem_p2p_pci_driver = {
	.name = DRIVER_NAME,
	.id_table = vgem_p2p_pci_ids,
	.probe = vgem_p2p_probe,
	.remove = vgem_p2p_remove,
};

static int __init vgem_p2p_init(void)
{
	int ret;

	ret = vgem_p2p_free_wq_init();
	if (ret)
		return ret;
	ret = pci_register_driver(&vgem_p2p_pci_driver);
	if (ret)
		vgem_p2p_free_wq_fini();
	return ret;
}

static void __exit vgem_p2p_exit(void)
{
	pci_unregister_driver(&vgem_p2p_pci_driver);
	vgem_p2p_free_wq_fini();
}

module_init(vgem_p2p_init);
module_exit(vgem_p2p_exit);

MODULE_DESCRIPTION(DRIVER_DESC);
MODULE_LICENSE("GPL");
