// SPDX-License-Identifier: GPL-2.0
/*
 * Device-private memory (HMM), as lib/test_hmm.c: the last quarter of the
 * BAR as MEMORY_DEVICE_PRIVATE pages. DRM_IOCTL_VGEM_P2P_MIGRATE moves
 * anonymous memory in and out, a CPU touch migrates a page back, and a peer
 * faulting it through hmm_range_fault() gets its BAR address instead.
 *
 * 6.1 retires: this file, on drm-patches/' dev_pagemap_ops; 7.2 builds
 * vgem_p2p_devmem_stub.c until the drm_pagemap rebuild replaces it.
 */
#include <linux/bitmap.h>
#include <linux/hashtable.h>
#include <linux/highmem.h>
#include <linux/io.h>
#include <linux/migrate.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pagemap.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>

#include "vgem_p2p_drv.h"
#include "vgem_p2p_trace.h"

#define VGEM_P2P_MIGRATE_CHUNK	32	/* pages per migrate_vma_setup() */

static unsigned long devmem_quota_pages;
module_param(devmem_quota_pages, ulong, 0644);
MODULE_PARM_DESC(devmem_quota_pages,
		 "Device-private pages one process (mm), through all its open files, may have migrated into a device at once (0: half of the device's)");

static struct vgem_p2p_devmem_charge *
vgem_p2p_devmem_charge_find(struct vgem_p2p_devmem *devmem,
			    struct mm_struct *mm)
{
	struct vgem_p2p_devmem_charge *charge;

	lockdep_assert_held(&devmem->lock);

	hash_for_each_possible(devmem->charges, charge, node, (unsigned long)mm)
		if (charge->mm == mm)
			return charge;
	return NULL;
}

/*
 * @mm's charge, referenced. A dying charge has left the table under the
 * lock, so any charge found is alive.
 */
static struct vgem_p2p_devmem_charge *
vgem_p2p_devmem_charge_get(struct vgem_p2p_devmem *devmem,
			   struct mm_struct *mm)
{
	struct vgem_p2p_devmem_charge *charge, *new;
	unsigned long flags;

	spin_lock_irqsave(&devmem->lock, flags);
	charge = vgem_p2p_devmem_charge_find(devmem, mm);
	if (charge)
		refcount_inc(&charge->ref);
	spin_unlock_irqrestore(&devmem->lock, flags);
	if (charge)
		return charge;

	new = kzalloc_obj(*new);
	if (!new)
		return ERR_PTR(-ENOMEM);
	refcount_set(&new->ref, 1);
	new->mm = mm;

	spin_lock_irqsave(&devmem->lock, flags);
	/* another thread may have added one meanwhile */
	charge = vgem_p2p_devmem_charge_find(devmem, mm);
	if (charge) {
		refcount_inc(&charge->ref);
	} else {
		mmgrab(mm);
		hash_add(devmem->charges, &new->node, (unsigned long)mm);
		charge = new;
		new = NULL;
	}
	spin_unlock_irqrestore(&devmem->lock, flags);
	kfree(new);
	return charge;
}

static void vgem_p2p_devmem_free_work(struct work_struct *work)
{
	struct vgem_p2p_devmem *devmem =
		container_of(work, struct vgem_p2p_devmem, free_work);
	struct vgem_p2p_devmem_charge *charge, *tmp;

	llist_for_each_entry_safe(charge, tmp,
				  llist_del_all(&devmem->free_charges),
				  free_node) {
		mmdrop(charge->mm);
		kfree(charge);
	}
}

/* Any context: page_free calls it */
static void vgem_p2p_devmem_charge_put(struct vgem_p2p_devmem *devmem,
				       struct vgem_p2p_devmem_charge *charge)
{
	unsigned long flags;

	if (!refcount_dec_and_lock_irqsave(&charge->ref, &devmem->lock,
					   &flags))
		return;
	hash_del(&charge->node);
	spin_unlock_irqrestore(&devmem->lock, flags);
	WARN_ON(atomic_long_read(&charge->pages));
	if (llist_add(&charge->free_node, &devmem->free_charges))
		schedule_work(&devmem->free_work);
}

static unsigned long vgem_p2p_devmem_quota(struct vgem_p2p_devmem *devmem)
{
	return READ_ONCE(devmem_quota_pages) ?: (devmem->size >> PAGE_SHIFT) / 2;
}

/*
 * Charge up to @n pages within @quota, each holding a reference (the
 * caller's keeps it above 0). Racing MIGRATEs may both be cut short, never
 * both pass the quota. Return: how many were charged.
 */
static unsigned long
vgem_p2p_devmem_charge(struct vgem_p2p_devmem_charge *charge,
		       unsigned long n, unsigned long quota)
{
	long pages = atomic_long_add_return(n, &charge->pages);
	unsigned long over = pages > quota ? min_t(unsigned long,
						   pages - quota, n) : 0;

	if (over)
		atomic_long_sub(over, &charge->pages);
	if (n - over)
		refcount_add(n - over, &charge->ref);
	return n - over;
}

/* Any context: page_free calls it */
static void vgem_p2p_devmem_uncharge(struct vgem_p2p_devmem *devmem,
				     struct vgem_p2p_devmem_charge *charge)
{
	atomic_long_dec(&charge->pages);
	vgem_p2p_devmem_charge_put(devmem, charge);
}

static struct vgem_p2p_device *page_to_vdev(struct page *page)
{
	return container_of(page->pgmap, struct vgem_p2p_device, devmem.pgmap);
}

static u64 vgem_p2p_devmem_offset(struct vgem_p2p_device *vdev,
				  struct page *page)
{
	unsigned long first = PHYS_PFN(vdev->devmem.pgmap.range.start);

	return vdev->devmem.bar_offset +
	       ((u64)(page_to_pfn(page) - first) << PAGE_SHIFT);
}

static void __iomem *vgem_p2p_devmem_io(struct vgem_p2p_device *vdev,
					struct page *page)
{
	return vdev->bar + vgem_p2p_devmem_offset(vdev, page);
}

/*
 * The first free run of @n pages from @from or, unless @whole, of up to @n.
 * Return: its length, 0 if none.
 */
static unsigned long vgem_p2p_devmem_take(struct vgem_p2p_devmem *devmem,
					  unsigned long from, unsigned long n,
					  bool whole, unsigned long *first)
{
	unsigned long size = devmem->size >> PAGE_SHIFT;
	unsigned long start, end;

	lockdep_assert_held(&devmem->lock);

	if (whole)
		start = bitmap_find_next_zero_area(devmem->used, size, from,
						   n, 0);
	else
		start = find_next_zero_bit(devmem->used, size, from);
	if (start >= size)
		return 0;
	end = find_next_bit(devmem->used, min(size, start + n), start);
	bitmap_set(devmem->used, start, end - start);
	*first = start;
	return end - start;
}

/*
 * Up to @n pages contiguous in the BAR, next-fit (as kernel/dma/coherent.c)
 * so that a migrated range stays contiguous and importers map few
 * stretches; a whole run anywhere beats a shorter one. Return: the first
 * page, NULL if full; *@got the run's length.
 */
static struct page *vgem_p2p_devmem_alloc_run(struct vgem_p2p_device *vdev,
					      unsigned long n,
					      unsigned long *got)
{
	struct vgem_p2p_devmem *devmem = &vdev->devmem;
	unsigned long flags, first = 0;

	spin_lock_irqsave(&devmem->lock, flags);
	*got = vgem_p2p_devmem_take(devmem, devmem->next, n, true, &first) ?:
	       vgem_p2p_devmem_take(devmem, 0, n, true, &first) ?:
	       vgem_p2p_devmem_take(devmem, devmem->next, n, false, &first) ?:
	       vgem_p2p_devmem_take(devmem, 0, n, false, &first);
	if (*got) {
		devmem->nr_used += *got;
		devmem->next = first + *got;
		if (devmem->next >= devmem->size >> PAGE_SHIFT)
			devmem->next = 0;
	}
	spin_unlock_irqrestore(&devmem->lock, flags);
	if (!*got)
		return NULL;
	return pfn_to_page(PHYS_PFN(devmem->pgmap.range.start) + first);
}

static void vgem_p2p_devmem_page_free(struct page *page)
{
	struct vgem_p2p_device *vdev = page_to_vdev(page);
	struct vgem_p2p_devmem *devmem = &vdev->devmem;
	struct vgem_p2p_devmem_charge *charge = page->zone_device_data;
	unsigned long flags;

	spin_lock_irqsave(&devmem->lock, flags);
	__clear_bit(page_to_pfn(page) - PHYS_PFN(devmem->pgmap.range.start),
		    devmem->used);
	devmem->nr_used--;
	spin_unlock_irqrestore(&devmem->lock, flags);
	vgem_p2p_devmem_uncharge(devmem, charge);
}

/* Copy the device pages selected in @args to new system pages */
static void vgem_p2p_devmem_copy_to_ram(struct vgem_p2p_device *vdev,
					struct migrate_vma *args)
{
	unsigned long i;

	for (i = 0; i < args->npages; i++) {
		struct page *spage = migrate_pfn_to_page(args->src[i]);
		struct page *dpage;
		void *dst;

		args->dst[i] = 0;
		if (!spage || !(args->src[i] & MIGRATE_PFN_MIGRATE))
			continue;
		dpage = alloc_page_vma(GFP_HIGHUSER_MOVABLE, args->vma,
				       args->start + (i << PAGE_SHIFT));
		if (!dpage)
			continue;
		lock_page(dpage);
		dst = kmap_local_page(dpage);
		memcpy_fromio(dst, vgem_p2p_devmem_io(vdev, spage), PAGE_SIZE);
		kunmap_local(dst);
		args->dst[i] = migrate_pfn(page_to_pfn(dpage));
		if (args->src[i] & MIGRATE_PFN_WRITE)
			args->dst[i] |= MIGRATE_PFN_WRITE;
	}
}

static unsigned long vgem_p2p_migrated(struct migrate_vma *args)
{
	unsigned long i, n = 0;

	for (i = 0; i < args->npages; i++)
		if ((args->src[i] & MIGRATE_PFN_MIGRATE) && args->dst[i])
			n++;
	return n;
}

static vm_fault_t vgem_p2p_devmem_migrate_to_ram(struct vm_fault *vmf)
{
	struct vgem_p2p_device *vdev = page_to_vdev(vmf->page);
	unsigned long src = 0, dst = 0;
	struct migrate_vma args = {
		.vma = vmf->vma,
		.start = vmf->address & PAGE_MASK,
		.end = (vmf->address & PAGE_MASK) + PAGE_SIZE,
		.src = &src,
		.dst = &dst,
		.pgmap_owner = vdev,
		.flags = MIGRATE_VMA_SELECT_DEVICE_PRIVATE,
		.fault_page = vmf->page,
	};
	vm_fault_t ret = 0;
	unsigned long n;

	if (migrate_vma_setup(&args))
		return VM_FAULT_SIGBUS;
	vgem_p2p_devmem_copy_to_ram(vdev, &args);
	/* no page: 0 would re-fault forever; OOM, as do_anonymous_page() */
	if ((src & MIGRATE_PFN_MIGRATE) && !dst)
		ret = VM_FAULT_OOM;
	migrate_vma_pages(&args);
	n = vgem_p2p_migrated(&args);
	migrate_vma_finalize(&args);
	atomic64_add(n, &vdev->stats.devmem_to_ram);
	trace_vgem_p2p_migrate(args.start, n, false);
	return ret;
}

/*
 * A peer reaches the pages in the BAR if p2p works between us; else the
 * core migrates them to RAM. Nothing to record: every migration
 * invalidates the importer first.
 */
static struct p2pdma_provider *
vgem_p2p_devmem_p2p_allow(struct dev_pagemap *pgmap, struct device *importer)
{
	struct vgem_p2p_device *vdev =
		container_of(pgmap, struct vgem_p2p_device, devmem.pgmap);
	enum vgem_p2p_map_kind kind;
	int idx;

	/* unplugged or in devmem_fini(): no walk of a dying PCI topology */
	if (!drm_dev_enter(&vdev->drm, &idx))
		return ERR_PTR(-ENODEV);
	if (!READ_ONCE(vdev->devmem.ready)) {
		drm_dev_exit(idx);
		return ERR_PTR(-ENODEV);
	}
	kind = vgem_p2p_export_kind(vdev, importer, 0);
	drm_dev_exit(idx);
	if (kind == VGEM_P2P_MAP_SYSTEM)
		return ERR_PTR(-EOPNOTSUPP);
	return vdev->provider;
}

/* Under the page table lock mapping @page, so it cannot migrate meanwhile */
static int vgem_p2p_devmem_get_dma_pfn_for_device(struct page *page,
						  unsigned long *dma_pfn)
{
	struct vgem_p2p_device *vdev = page_to_vdev(page);

	*dma_pfn = PHYS_PFN(vdev->bar_phys +
			    vgem_p2p_devmem_offset(vdev, page));
	atomic64_inc(&vdev->stats.devmem_p2p_maps);
	return 0;
}

static const struct dev_pagemap_ops vgem_p2p_devmem_ops = {
	.page_free = vgem_p2p_devmem_page_free,
	.migrate_to_ram = vgem_p2p_devmem_migrate_to_ram,
	.p2p_allow = vgem_p2p_devmem_p2p_allow,
	.get_dma_pfn_for_device = vgem_p2p_devmem_get_dma_pfn_for_device,
};

/* Does @args want a new device page for its entry @i? */
static bool vgem_p2p_devmem_wanted(struct migrate_vma *args, unsigned long i)
{
	struct page *spage = migrate_pfn_to_page(args->src[i]);

	return (args->src[i] & MIGRATE_PFN_MIGRATE) &&
	       !(spage && is_zone_device_page(spage));
}

/* Return: false if the process's quota cut it short */
static bool vgem_p2p_devmem_copy_to_device(struct vgem_p2p_device *vdev,
					   struct migrate_vma *args,
					   struct vgem_p2p_devmem_charge *charge)
{
	unsigned long i, want = 0, left, run = 0;
	struct page *next = NULL;
	bool within_quota;

	for (i = 0; i < args->npages; i++)
		if (vgem_p2p_devmem_wanted(args, i))
			want++;
	left = vgem_p2p_devmem_charge(charge, want,
				      vgem_p2p_devmem_quota(&vdev->devmem));
	within_quota = left == want;

	for (i = 0; i < args->npages; i++) {
		struct page *spage = migrate_pfn_to_page(args->src[i]);
		struct page *dpage;

		args->dst[i] = 0;
		if (!vgem_p2p_devmem_wanted(args, i) || !left)
			continue;
		if (!run) {
			next = vgem_p2p_devmem_alloc_run(vdev, left, &run);
			if (!next) {
				/* device full: return the unused charges */
				for (; left; left--)
					vgem_p2p_devmem_uncharge(&vdev->devmem,
								 charge);
				continue;
			}
		}
		dpage = next++;
		run--;
		left--;
		dpage->zone_device_data = charge;
		zone_device_page_init(dpage);	/* refcount 1, locked */
		if (spage) {
			void *src = kmap_local_page(spage);

			memcpy_toio(vgem_p2p_devmem_io(vdev, dpage), src,
				    PAGE_SIZE);
			kunmap_local(src);
		} else {
			memset_io(vgem_p2p_devmem_io(vdev, dpage), 0, PAGE_SIZE);
		}
		args->dst[i] = migrate_pfn(page_to_pfn(dpage));
		if ((args->src[i] & MIGRATE_PFN_WRITE) ||
		    (!spage && (args->vma->vm_flags & VM_WRITE)))
			args->dst[i] |= MIGRATE_PFN_WRITE;
	}
	return within_quota;
}

/* One chunk of at most VGEM_P2P_MIGRATE_CHUNK pages, under mmap_lock */
static int vgem_p2p_migrate_chunk(struct vgem_p2p_device *vdev,
				  struct mm_struct *mm, unsigned long addr,
				  unsigned long end, bool to_device,
				  struct vgem_p2p_devmem_charge *charge,
				  unsigned long *next, u64 *npages)
{
	unsigned long src[VGEM_P2P_MIGRATE_CHUNK], dst[VGEM_P2P_MIGRATE_CHUNK];
	struct vm_area_struct *vma = vma_lookup(mm, addr);
	struct migrate_vma args = {
		.src = src,
		.dst = dst,
		.pgmap_owner = vdev,
	};
	bool within_quota = true;
	unsigned long n;
	int ret;

	lockdep_assert_held(&mm->mmap_lock);

	if (!vma || !vma_is_anonymous(vma) || (vma->vm_flags & VM_SHARED))
		return -EINVAL;
	*next = min3(end, vma->vm_end,
		     addr + (VGEM_P2P_MIGRATE_CHUNK << PAGE_SHIFT));
	args.vma = vma;
	args.start = addr;
	args.end = *next;
	args.flags = to_device ? MIGRATE_VMA_SELECT_SYSTEM :
				 MIGRATE_VMA_SELECT_DEVICE_PRIVATE;
	ret = migrate_vma_setup(&args);
	if (ret)
		return ret;
	if (to_device)
		within_quota = vgem_p2p_devmem_copy_to_device(vdev, &args,
							      charge);
	else
		vgem_p2p_devmem_copy_to_ram(vdev, &args);
	migrate_vma_pages(&args);
	n = vgem_p2p_migrated(&args);
	migrate_vma_finalize(&args);

	*npages += n;
	atomic64_add(n, to_device ? &vdev->stats.devmem_to_device :
				    &vdev->stats.devmem_to_ram);
	trace_vgem_p2p_migrate(addr, n, to_device);
	if (!within_quota)
		return -EDQUOT;
	/* device memory ran out */
	if (to_device && n < args.cpages)
		return -ENOMEM;
	return 0;
}

/*
 * mmap_lock per chunk, killable and unbindable between chunks, as gup
 * (__get_user_pages()) and MADV_PAGEOUT walk: a range may span TASK_SIZE.
 */
static int vgem_p2p_migrate_range(struct vgem_p2p_device *vdev,
				  struct mm_struct *mm, unsigned long start,
				  unsigned long end, bool to_device,
				  struct vgem_p2p_devmem_charge *charge,
				  u64 *npages)
{
	unsigned long addr, next;
	int ret = 0;

	for (addr = start; addr < end; addr = next) {
		if (fatal_signal_pending(current))
			return -EINTR;
		if (drm_dev_is_unplugged(&vdev->drm))
			return -ENODEV;
		cond_resched();
		if (mmap_read_lock_killable(mm))
			return -EINTR;
		ret = vgem_p2p_migrate_chunk(vdev, mm, addr, end, to_device,
					     charge, &next, npages);
		mmap_read_unlock(mm);
		if (ret)
			break;
	}
	return ret;
}

int vgem_p2p_migrate_ioctl(struct drm_device *dev, void *data,
			   struct drm_file *file)
{
	struct vgem_p2p_device *vdev = to_vgem_p2p(dev);
	struct drm_vgem_p2p_migrate *args = data;
	struct vgem_p2p_devmem_charge *charge = NULL;
	int ret, idx;

	ret = vgem_p2p_migrate_check(args);
	if (ret)
		return ret;
	if (!vdev->devmem.ready)
		return -ENODEV;
	if (!drm_dev_enter(dev, &idx))
		return -ENODEV;

	args->npages = 0;
	if (args->direction == VGEM_P2P_MIGRATE_TO_DEVICE) {
		charge = vgem_p2p_devmem_charge_get(&vdev->devmem,
						    current->mm);
		if (IS_ERR(charge)) {
			ret = PTR_ERR(charge);
			goto out_exit;
		}
	}
	ret = vgem_p2p_migrate_range(vdev, current->mm, args->addr,
				     args->addr + args->size, !!charge, charge,
				     &args->npages);
	if (charge)
		vgem_p2p_devmem_charge_put(&vdev->devmem, charge);
out_exit:
	drm_dev_exit(idx);
	return ret;
}

int vgem_p2p_devmem_init(struct vgem_p2p_device *vdev,
			 resource_size_t bar_offset, resource_size_t size)
{
	struct vgem_p2p_devmem *devmem = &vdev->devmem;
	struct resource *res;
	void *addr;
	int ret;

	spin_lock_init(&devmem->lock);
	hash_init(devmem->charges);
	init_llist_head(&devmem->free_charges);
	INIT_WORK(&devmem->free_work, vgem_p2p_devmem_free_work);
	devmem->used = bitmap_zalloc(size >> PAGE_SHIFT, GFP_KERNEL);
	if (!devmem->used)
		return -ENOMEM;
	res = request_free_mem_region(&iomem_resource, size,
				      "vgem_p2p device-private");
	if (IS_ERR(res)) {
		ret = PTR_ERR(res);
		goto err_free_bitmap;
	}

	devmem->res = res;
	devmem->bar_offset = bar_offset;
	devmem->pgmap.type = MEMORY_DEVICE_PRIVATE;
	devmem->pgmap.range.start = res->start;
	devmem->pgmap.range.end = res->end;
	devmem->pgmap.nr_range = 1;
	devmem->pgmap.ops = &vgem_p2p_devmem_ops;
	devmem->pgmap.owner = vdev;
	addr = memremap_pages(&devmem->pgmap, dev_to_node(&vdev->pdev->dev));
	if (IS_ERR(addr)) {
		ret = PTR_ERR(addr);
		goto err_release_region;
	}

	devmem->size = size;
	devmem->ready = true;
	return 0;

err_release_region:
	release_mem_region(res->start, resource_size(res));
	devmem->res = NULL;
err_free_bitmap:
	bitmap_free(devmem->used);
	devmem->used = NULL;
	return ret;
}

/* For STATS: the device-private memory, and how much of it is in use */
void vgem_p2p_devmem_usage(struct vgem_p2p_device *vdev, u64 *size,
			   u64 *used)
{
	struct vgem_p2p_devmem *devmem = &vdev->devmem;
	unsigned long flags;

	*size = devmem->size;
	spin_lock_irqsave(&devmem->lock, flags);
	*used = (u64)devmem->nr_used << PAGE_SHIFT;
	spin_unlock_irqrestore(&devmem->lock, flags);
}

/* Bring every device page in use back to RAM, then drop the pgmap */
void vgem_p2p_devmem_fini(struct vgem_p2p_device *vdev)
{
	struct vgem_p2p_devmem *devmem = &vdev->devmem;
	unsigned long first = PHYS_PFN(devmem->pgmap.range.start);
	unsigned long i, npages = devmem->size >> PAGE_SHIFT;
	unsigned long *src, *dst;

	if (!devmem->ready)
		return;
	devmem->ready = false;

	src = kvcalloc(npages, sizeof(*src), GFP_KERNEL | __GFP_NOFAIL);
	dst = kvcalloc(npages, sizeof(*dst), GFP_KERNEL | __GFP_NOFAIL);
	migrate_device_range(src, first, npages);
	for (i = 0; i < npages; i++) {
		struct page *spage = migrate_pfn_to_page(src[i]);
		struct page *dpage;
		void *p;

		if (!spage || !(src[i] & MIGRATE_PFN_MIGRATE))
			continue;
		dpage = alloc_page(GFP_HIGHUSER_MOVABLE | __GFP_NOFAIL);
		lock_page(dpage);
		p = kmap_local_page(dpage);
		memcpy_fromio(p, vgem_p2p_devmem_io(vdev, spage), PAGE_SIZE);
		kunmap_local(p);
		dst[i] = migrate_pfn(page_to_pfn(dpage));
		if (src[i] & MIGRATE_PFN_WRITE)
			dst[i] |= MIGRATE_PFN_WRITE;
	}
	migrate_device_pages(src, dst, npages);
	migrate_device_finalize(src, dst, npages);
	kvfree(src);
	kvfree(dst);

	/* every page freed, so every charge is dead: drop their mms */
	memunmap_pages(&devmem->pgmap);
	WARN_ON(!hash_empty(devmem->charges));
	flush_work(&devmem->free_work);
	release_mem_region(devmem->res->start, resource_size(devmem->res));
	bitmap_free(devmem->used);
}
