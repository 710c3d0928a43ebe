// SPDX-License-Identifier: GPL-2.0
/*
 * Clients (open files) and their VRAM quota. Any allocation may evict
 * others' objects, as in every TTM driver; vram_quota_pages bounds what
 * the objects a client created hold in VRAM at once, whoever moved them
 * there. Mainline has the dmem cgroup (6.14) for this; 6.1 has none.
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

/*
 * From the move callback, on the way into VRAM (dmem charges in
 * ttm_resource_alloc(), which cannot see where the object comes from).
 * vgem_p2p_place() asks vgem_p2p_quota_allows() first, so an object over
 * quota evicts nobody. Return: 0 or -EDQUOT.
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
