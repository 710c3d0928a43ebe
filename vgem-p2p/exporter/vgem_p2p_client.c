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

	WARN_ON(atomic_long_read(&client->vram_pages));
	kfree(client);
}

void vgem_p2p_client_put(struct vgem_p2p_client *client)
{
	kref_put(&client->ref, vgem_p2p_client_release);
}

/* Would the object's client stay within its quota with the object in VRAM? */
bool vgem_p2p_quota_allows(struct vgem_p2p_object *bo)
{
	unsigned long quota = READ_ONCE(vram_quota_pages);

	return !quota ||
	       atomic_long_read(&bo->owner->vram_pages) + vgem_p2p_npages(bo) <=
	       quota;
}

/**
 * vgem_p2p_vram_charge - charge an object's VRAM to the client that made it
 * @bo: an object moving into VRAM from system memory
 *
 * Called from the move, with the VRAM allocated: where mainline's dmem
 * controller charges in ttm_resource_alloc(), this driver charges on the
 * way in, from its move callback, which sees where the object comes
 * from. vgem_p2p_place() asks vgem_p2p_quota_allows() first, so that an
 * object over quota evicts nobody.
 *
 * Return: 0, or -EDQUOT if the client's objects hold their quota.
 */
int vgem_p2p_vram_charge(struct vgem_p2p_object *bo)
{
	unsigned long quota = READ_ONCE(vram_quota_pages);
	unsigned long npages = vgem_p2p_npages(bo);
	atomic_long_t *used = &bo->owner->vram_pages;

	if (atomic_long_add_return(npages, used) > quota && quota) {
		atomic_long_sub(npages, used);
		return -EDQUOT;
	}
	return 0;
}

/* The object left VRAM, or never got there */
void vgem_p2p_vram_uncharge(struct vgem_p2p_object *bo)
{
	atomic_long_sub(vgem_p2p_npages(bo), &bo->owner->vram_pages);
}
