// SPDX-License-Identifier: GPL-2.0
/*
 * Clients and their VRAM quota. Any allocation may evict other clients'
 * objects, as in every TTM driver; what bounds a client is
 * vram_quota_pages, the VRAM that the objects it created may hold at
 * once. Mainline bounds clients with the dmem cgroup controller (6.14),
 * charged where TTM allocates a resource; 6.1 has none, so this is a
 * driver limit, as devmem_quota_pages is for device-private pages.
 *
 * A client is an open file of the device. An object is charged to the
 * client that created it while it is in VRAM, whoever moved it there,
 * and holds a reference on it: objects outlive files.
 */
#include <linux/module.h>
#include <linux/slab.h>

#include "vgem_p2p_drv.h"

static unsigned long vram_quota_pages;
module_param(vram_quota_pages, ulong, 0644);
MODULE_PARM_DESC(vram_quota_pages,
		 "VRAM pages the objects one client (open file) created may hold at once (0: no limit)");

struct vgem_p2p_client *vgem_p2p_client_create(void)
{
	struct vgem_p2p_client *client;

	client = kzalloc(sizeof(*client), GFP_KERNEL);
	if (client)
		kref_init(&client->ref);
	return client;
}

static void vgem_p2p_client_release(struct kref *ref)
{
	struct vgem_p2p_client *client =
		container_of(ref, struct vgem_p2p_client, ref);

	WARN_ON(client->vram_pages);
	kfree(client);
}

void vgem_p2p_client_put(struct vgem_p2p_client *client)
{
	kref_put(&client->ref, vgem_p2p_client_release);
}

/**
 * vgem_p2p_vram_charge - charge an object's VRAM to the client that made it
 * @bo: an object about to be placed in VRAM, not in VRAM now
 *
 * Called with the device lock held, before the VRAM is allocated: the
 * charge is the right to allocate, so that allocations of one client
 * that drop the device lock to evict cannot all pass the quota together.
 *
 * Return: 0, or -EDQUOT if the client's objects hold their quota.
 */
int vgem_p2p_vram_charge(struct vgem_p2p_object *bo)
{
	struct vgem_p2p_client *client = bo->owner;
	unsigned long quota = READ_ONCE(vram_quota_pages);
	unsigned long npages = vgem_p2p_npages(bo);

	lockdep_assert_held(&obj_to_vdev(bo)->lock);

	if (quota && (npages > quota || client->vram_pages > quota - npages))
		return -EDQUOT;
	client->vram_pages += npages;
	return 0;
}

/**
 * vgem_p2p_vram_uncharge - the object left VRAM, or never got there
 * @bo: the object, charged
 *
 * Called with the device lock held.
 */
void vgem_p2p_vram_uncharge(struct vgem_p2p_object *bo)
{
	lockdep_assert_held(&obj_to_vdev(bo)->lock);

	bo->owner->vram_pages -= vgem_p2p_npages(bo);
}
