// SPDX-License-Identifier: GPL-2.0
/*
 * edu_nic: memory registrations, and DMA through their mirrors.
 *
 * A registration is an RDMA umem of a range of the address space
 * (edu_nic_odp.c) or of a dma-buf (edu_nic_dmabuf.c), behind struct
 * edu_nic_mr_ops. Here: lifetime, counters, and DMA, by the edu engine or
 * by the CPU through the same addresses (the bulk mode).
 */
#include <linux/highmem.h>
#include <linux/io.h>
#include <linux/ioport.h>
#include <linux/iosys-map.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <drm/drm_cache.h>

#include "edu_nic.h"

/**
 * edu_nic_mr_phys - the physical address a page's DMA reaches
 * @mr: the region, its mirror locked
 * @domain: edu_nic_dma_domain()
 * @i: the page
 *
 * A bus address a switch routes never reaches the IOMMU.
 *
 * Return: the page's physical address; 0 if the IOMMU would fault it.
 */
phys_addr_t edu_nic_mr_phys(struct edu_nic_mr *mr, struct iommu_domain *domain,
			    unsigned long i)
{
	if (mr->ops->bus_addr && mr->ops->bus_addr(mr, i))
		domain = NULL;
	return edu_nic_domain_to_phys(domain, mr->ops->addr(mr, i)) &
	       PAGE_MASK;
}

/**
 * edu_nic_mr_installed - mark a region's mirror installed, and count it
 * @mr: the region, its mirror lock held
 * @write: it was made for writing
 * @p2p: how many of its pages the device reaches peer-to-peer
 * @p2p_maps: the exporters' leases it holds, or its dma-buf mapping
 */
void edu_nic_mr_installed(struct edu_nic_mr *mr, bool write,
			  unsigned long p2p, unsigned long p2p_maps)
{
	lockdep_assert_held(mr->lock);

	mr->valid = true;
	mr->writable = write;
	edu_nic_mr_count(mr, faults, 1);
	if (mr->ever_mapped)
		edu_nic_mr_count(mr, remaps, 1);
	mr->ever_mapped = true;
	edu_nic_mr_count(mr, p2p_maps, p2p_maps);
	edu_nic_mr_count(mr, pages_p2p, p2p);
	edu_nic_mr_count(mr, pages_system, mr->npages - p2p);
	edu_nic_mr_count(mr, cur_pages_p2p, p2p);
	edu_nic_mr_count(mr, cur_pages_system, mr->npages - p2p);
}

/* Mark a region's installed mirror gone */
void edu_nic_mr_uninstalled(struct edu_nic_mr *mr)
{
	lockdep_assert_held(mr->lock);

	edu_nic_mr_count(mr, cur_pages_p2p, -mr->stats.cur_pages_p2p);
	edu_nic_mr_count(mr, cur_pages_system, -mr->stats.cur_pages_system);
	mr->valid = false;
	mr->writable = false;
}

/**
 * edu_nic_mr_prefetch - mirror a whole region now
 * @mr: the region
 *
 * Return: 0 or the error the first DMA would have seen.
 */
int edu_nic_mr_prefetch(struct edu_nic_mr *mr)
{
	int ret;

	mutex_lock(&mr->op_lock);
	ret = mr->ops->lock_mirror(mr, mr->access & EDU_NIC_ACCESS_WRITE);
	if (!ret)
		mr->ops->unlock_mirror(mr);
	mutex_unlock(&mr->op_lock);
	return ret;
}

/*
 * A page of the mirror as the engine's target. The lock sets @sync (the
 * page is system memory mapped to be synced: before the transfer's first
 * command and, for a write, after its last) and @last (this command ends
 * it).
 */
struct edu_nic_mr_page_target {
	struct edu_nic_dma_target base;
	struct edu_nic_mr *mr;
	unsigned long i;
	unsigned long pgoff;
	size_t len;
	bool write;
	bool sync;
	bool last;
};

static int edu_nic_mr_page_lock(struct edu_nic_dma_target *t, size_t off,
				size_t len, dma_addr_t *addr)
{
	struct edu_nic_mr_page_target *pt =
		container_of(t, struct edu_nic_mr_page_target, base);
	struct edu_nic_mr *mr = pt->mr;
	int ret;

	ret = mr->ops->lock_installed(mr, pt->write);
	if (ret)
		return ret;
	pt->sync = mr->ops->page_sysmem(mr, pt->i) &&
		   mr->ops->sync_dir(mr, pt->i) != DMA_NONE;
	pt->last = off + len == pt->len;
	/*
	 * The whole page, in the direction it was mapped with, or DMA-API
	 * debugging cannot tell which of a page's mappings is synced. Once
	 * per transfer: an invalidation would end the transfer.
	 */
	if (pt->sync && !off)
		dma_sync_single_for_device(&mr->nic->pdev->dev,
					   mr->ops->addr(mr, pt->i), PAGE_SIZE,
					   mr->ops->sync_dir(mr, pt->i));
	*addr = mr->ops->addr(mr, pt->i) + pt->pgoff + off;
	return 0;
}

static void edu_nic_mr_page_unlock(struct edu_nic_dma_target *t)
{
	struct edu_nic_mr_page_target *pt =
		container_of(t, struct edu_nic_mr_page_target, base);
	struct edu_nic_mr *mr = pt->mr;

	if (pt->sync && pt->write && pt->last)
		dma_sync_single_for_cpu(&mr->nic->pdev->dev,
					mr->ops->addr(mr, pt->i), PAGE_SIZE,
					mr->ops->sync_dir(mr, pt->i));
	mr->ops->unlock_mirror(mr);
}

/*
 * One page or less with the edu engine. An invalidation between two of
 * its commands ends the transfer with -EAGAIN, as does a dma-buf's
 * dma_resv held by a move: fault the mirror in again (waiting for the
 * move there, without the engine) and redo it whole.
 */
static int edu_nic_mr_device_page(struct edu_nic_mr *mr, unsigned long i,
				  unsigned long pgoff, void *buf, size_t len,
				  bool write)
{
	struct edu_nic_mr_page_target pt = {
		.base = {
			.lock = edu_nic_mr_page_lock,
			.unlock = edu_nic_mr_page_unlock,
		},
		.mr = mr,
		.i = i,
		.pgoff = pgoff,
		.len = len,
		.write = write,
	};
	int ret;

	do {
		ret = mr->ops->lock_mirror(mr, write);
		if (ret)
			return ret;
		mr->ops->unlock_mirror(mr);
		if (write)
			ret = edu_nic_dma_to_bus(mr->nic, &pt.base, buf, len);
		else
			ret = edu_nic_dma_from_bus(mr->nic, &pt.base, buf, len,
						   false);
	} while (ret == -EAGAIN);
	if (ret)
		return ret;

	/* The device-wide count is kept by the engine, which sees all DMA */
	mutex_lock(mr->lock);
	mr->stats.device_dma_bytes += len;
	mutex_unlock(mr->lock);
	return 0;
}

/* Pages copied per hold of the mirror lock: bounds invalidation latency */
#define EDU_NIC_BULK_BATCH	256

/*
 * The BAR run around page @i (at @phys): the neighbouring pages that are
 * not system memory and continue @phys, for the window to map at once.
 * Called with the mirror locked.
 */
static void edu_nic_mr_bar_run(struct edu_nic_mr *mr,
			       struct iommu_domain *domain, unsigned long i,
			       phys_addr_t phys, struct edu_nic_io_window *run)
{
	unsigned long first = i, last = i;

	while (first > 0 && !mr->ops->page_sysmem(mr, first - 1) &&
	       edu_nic_mr_phys(mr, domain, first - 1) ==
	       phys - ((phys_addr_t)(i - first + 1) << PAGE_SHIFT))
		first--;
	while (last + 1 < mr->npages && !mr->ops->page_sysmem(mr, last + 1) &&
	       edu_nic_mr_phys(mr, domain, last + 1) ==
	       phys + ((phys_addr_t)(last + 1 - i) << PAGE_SHIFT))
		last++;
	run->phys = phys - ((phys_addr_t)(i - first) << PAGE_SHIFT);
	run->len = (last - first + 1) << PAGE_SHIFT;
}

/* Map @run as the registration's window, replacing the old one */
static int edu_nic_mr_window_map(struct edu_nic_mr *mr,
				 const struct edu_nic_io_window *run)
{
	lockdep_assert_held(&mr->op_lock);

	if (mr->win.io)
		iounmap(mr->win.io);
	mr->win.io = ioremap_wc(run->phys, run->len);
	if (!mr->win.io)
		return -ENOMEM;
	mr->win.phys = run->phys;
	mr->win.len = run->len;
	return 0;
}

/*
 * struct edu_nic_bulk_dst - where one batch of a bulk read lands
 * @pages: room for the user pages of a batch, or NULL
 * @base: user address of @pages[0]
 * @npages: how many of @pages are pinned; 0: copy to user space instead
 *
 * Pinned before the mirror is locked, so that the copy cannot fault and
 * can read the BAR with drm_memcpy_from_wc(), as ttm_move_memcpy() reads
 * VRAM: copy_to_user() reads write-combined memory uncached. A buffer
 * that cannot be pinned (VM_PFNMAP) is copied to with faults disabled.
 */
struct edu_nic_bulk_dst {
	struct page **pages;
	unsigned long base;
	int npages;
};

/* Pin the user pages of [@ubuf, @ubuf + @len), all of them or none */
static void edu_nic_bulk_dst_pin(struct edu_nic_bulk_dst *dst,
				 char __user *ubuf, size_t len)
{
	unsigned long first = (unsigned long)ubuf & PAGE_MASK;
	int n = DIV_ROUND_UP(offset_in_page(ubuf) + len, PAGE_SIZE);
	int ret;

	dst->base = first;
	dst->npages = 0;
	if (!dst->pages)
		return;
	ret = pin_user_pages_fast(first, n, FOLL_WRITE, dst->pages);
	if (ret == n)
		dst->npages = n;
	else if (ret > 0)
		unpin_user_pages(dst->pages, ret);
}

static void edu_nic_bulk_dst_unpin(struct edu_nic_bulk_dst *dst)
{
	if (dst->npages)
		unpin_user_pages_dirty_lock(dst->pages, dst->npages, true);
	dst->npages = 0;
}

/*
 * Copy @len bytes from @src (a BAR window if @iomem) to @ubuf; returns
 * the number of bytes not copied, as __copy_to_user_inatomic() does.
 */
static size_t edu_nic_bulk_copy_out(const struct edu_nic_bulk_dst *dst,
				    char __user *ubuf, const void *src,
				    size_t len, bool iomem)
{
	unsigned long uaddr = (unsigned long)ubuf;
	struct iosys_map from;

	if (!dst->npages)
		return __copy_to_user_inatomic(ubuf, src, len);

	if (iomem)
		iosys_map_set_vaddr_iomem(&from, (void __iomem __force *)src);
	else
		iosys_map_set_vaddr(&from, (void *)src);
	while (len) {
		struct page *page = dst->pages[(uaddr - dst->base) >> PAGE_SHIFT];
		size_t pgoff = offset_in_page(uaddr);
		size_t n = min_t(size_t, len, PAGE_SIZE - pgoff);
		void *va = kmap_local_page(page);
		struct iosys_map to = IOSYS_MAP_INIT_VADDR(va + pgoff);

		drm_memcpy_from_wc(&to, &from, n);
		kunmap_local(va);
		iosys_map_incr(&from, n);
		uaddr += n;
		len -= n;
	}
	return 0;
}

/*
 * Copy between the mirror from *@off up to @end and *@ubuf, both advanced
 * past what was copied, with the mirror locked and page faults disabled.
 * Stops early at a BAR page outside the window (its run in @run), or at a
 * user page not present (*@left bytes not copied).
 */
static int edu_nic_mr_bulk_locked(struct edu_nic_mr *mr, u64 *off, u64 end,
				  char __user **ubuf, bool write,
				  const struct edu_nic_bulk_dst *dst,
				  struct edu_nic_io_window *run, size_t *left)
{
	struct iommu_domain *domain = edu_nic_dma_domain(mr->nic);
	struct device *dev = &mr->nic->pdev->dev;
	unsigned long last = (end - 1) >> PAGE_SHIFT;
	struct edu_nic_io_window *win = &mr->win;

	while (*off < end) {
		unsigned long i = *off >> PAGE_SHIFT, n;
		unsigned long pgoff = *off & ~PAGE_MASK;
		phys_addr_t phys = edu_nic_mr_phys(mr, domain, i);
		size_t len;

		if (!phys)
			return -EIO;	/* the IOMMU would fault this DMA */

		if (mr->ops->page_sysmem(mr, i)) {
			/* What the device would reach: one page, synced */
			enum dma_data_direction dir = mr->ops->sync_dir(mr, i);
			void *va;

			len = min_t(u64, end - *off, PAGE_SIZE - pgoff);
			if (dir != DMA_NONE)
				dma_sync_single_for_device(dev,
							   mr->ops->addr(mr, i),
							   PAGE_SIZE, dir);
			va = kmap_local_pfn(PHYS_PFN(phys));
			if (write)
				*left = __copy_from_user_inatomic(va + pgoff,
								  *ubuf, len);
			else
				*left = edu_nic_bulk_copy_out(dst, *ubuf,
							      va + pgoff, len,
							      false);
			kunmap_local(va);
			if (write && dir != DMA_NONE)
				dma_sync_single_for_cpu(dev, mr->ops->addr(mr, i),
							PAGE_SIZE, dir);
		} else {
			void *io;

			if (!win->io || phys < win->phys ||
			    phys + PAGE_SIZE > win->phys + win->len) {
				edu_nic_mr_bar_run(mr, domain, i, phys, run);
				return 0;
			}
			/* The pages after @i that continue it in the window */
			for (n = 1; i + n <= last; n++)
				if (mr->ops->page_sysmem(mr, i + n) ||
				    edu_nic_mr_phys(mr, domain, i + n) !=
				    phys + ((phys_addr_t)n << PAGE_SHIFT) ||
				    phys + ((phys_addr_t)(n + 1) << PAGE_SHIFT) >
				    win->phys + win->len)
					break;
			len = min_t(u64, end - *off, (n << PAGE_SHIFT) - pgoff);
			io = (void __force *)win->io + (phys - win->phys) +
			     pgoff;
			if (write)
				*left = __copy_from_user_inatomic(io, *ubuf,
								  len);
			else
				*left = edu_nic_bulk_copy_out(dst, *ubuf, io,
							      len, true);
		}
		edu_nic_mr_count(mr, bulk_bytes, len - *left);
		*off += len - *left;
		*ubuf += len - *left;
		if (*left)
			return 0;
	}
	return 0;
}

/*
 * The bulk mode: the CPU copies through the addresses the device would
 * use, EDU_NIC_BULK_BATCH pages per hold of the mirror lock. A user page
 * not present is faulted in after the lock is dropped, then the copy
 * resumes, as in i915's pread/pwrite fast paths. A read pins each batch's
 * user pages first (struct edu_nic_bulk_dst).
 */
static int edu_nic_mr_bulk(struct edu_nic_mr *mr,
			   const struct edu_nic_dma *req)
{
	bool write = req->direction == EDU_NIC_DMA_TO_MR;
	char __user *ubuf = u64_to_user_ptr(req->user_ptr);
	u64 off = req->offset, end = req->offset + req->length;
	struct edu_nic_bulk_dst dst = { };
	int ret = 0;

	lockdep_assert_held(&mr->op_lock);

	if (!access_ok(ubuf, req->length))
		return -EFAULT;
	/* A batch of user pages, one more if the buffer is not aligned */
	if (!write) {
		dst.pages = kmalloc_array(EDU_NIC_BULK_BATCH + 1,
					  sizeof(*dst.pages), GFP_KERNEL);
		if (!dst.pages)
			return -ENOMEM;
	}

	while (off < end) {
		u64 batch = min_t(u64, end, (off & PAGE_MASK) +
				  EDU_NIC_BULK_BATCH * PAGE_SIZE);
		struct edu_nic_io_window run = { };
		size_t left = 0, want;

		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		if (!write)
			edu_nic_bulk_dst_pin(&dst, ubuf, batch - off);
		ret = mr->ops->lock_mirror(mr, write);
		if (ret)
			break;
		pagefault_disable();
		ret = edu_nic_mr_bulk_locked(mr, &off, batch, &ubuf, write,
					     &dst, &run, &left);
		pagefault_enable();
		mr->ops->unlock_mirror(mr);
		edu_nic_bulk_dst_unpin(&dst);
		if (ret)
			break;

		if (left) {
			want = min_t(u64, end - off, PAGE_SIZE);
			if ((write ? fault_in_readable(ubuf, want) :
				     fault_in_writeable(ubuf, want)) == want) {
				ret = -EFAULT;
				break;
			}
		}
		if (run.len) {
			ret = edu_nic_mr_window_map(mr, &run);
			if (ret)
				break;
		}
		cond_resched();
	}
	edu_nic_bulk_dst_unpin(&dst);
	kfree(dst.pages);
	return ret;
}

/* The device mode: page by page through the edu engine; op_lock held */
static int edu_nic_mr_device(struct edu_nic_mr *mr,
			     const struct edu_nic_dma *req, void *buf)
{
	bool write = req->direction == EDU_NIC_DMA_TO_MR;
	char __user *ubuf = u64_to_user_ptr(req->user_ptr);
	u64 off = req->offset, end = req->offset + req->length;
	int ret;

	while (off < end) {
		unsigned long pgoff = off & ~PAGE_MASK;
		size_t len = min_t(u64, end - off, PAGE_SIZE - pgoff);
		unsigned long i = off >> PAGE_SHIFT;

		if (fatal_signal_pending(current))
			return -EINTR;
		if (write && copy_from_user(buf, ubuf, len))
			return -EFAULT;
		ret = edu_nic_mr_device_page(mr, i, pgoff, buf, len, write);
		if (ret)
			return ret;
		if (!write && copy_to_user(ubuf, buf, len))
			return -EFAULT;
		off += len;
		ubuf += len;
	}
	return 0;
}

/**
 * edu_nic_mr_transfer - EDU_NIC_IOCTL_DMA on a region
 * @mr: the region, referenced
 * @req: the validated request
 *
 * Return: 0 or a negative errno.
 */
int edu_nic_mr_transfer(struct edu_nic_mr *mr, const struct edu_nic_dma *req)
{
	bool device = req->mode == EDU_NIC_MODE_DEVICE;
	void *buf = NULL;
	int ret;

	if (device) {
		buf = kmalloc(PAGE_SIZE, GFP_KERNEL);
		if (!buf)
			return -ENOMEM;
	}

	ret = mutex_lock_killable(&mr->op_lock);
	if (ret)
		goto out_free;

	if (device)
		ret = edu_nic_mr_device(mr, req, buf);
	else
		ret = edu_nic_mr_bulk(mr, req);

	if (ret) {
		mutex_lock(mr->lock);
		edu_nic_mr_count(mr, errors, 1);
		mutex_unlock(mr->lock);
	}
	mutex_unlock(&mr->op_lock);
out_free:
	kfree(buf);
	return ret;
}

/* Every dma-buf registration's lock, and the priming one, in one class */
static struct lock_class_key edu_nic_mr_lock_key;

static void edu_nic_mr_lock_init(struct mutex *lock)
{
	__mutex_init(lock, "&mr->own_lock", &edu_nic_mr_lock_key);
}

/*
 * Record reclaim -> @lock, as i915_gem_shrinker_taints_mutex() does: tests
 * seldom reach reclaim, so an allocation under @lock would go unreported.
 */
void edu_nic_mr_lockdep_taint(struct mutex *lock)
{
	if (!IS_ENABLED(CONFIG_LOCKDEP))
		return;
	fs_reclaim_acquire(GFP_KERNEL);
	mutex_lock(lock);
	mutex_unlock(lock);
	fs_reclaim_release(GFP_KERNEL);
}

/*
 * Taint the dma-buf registrations' lock class at module load; a umem's
 * mutex is tainted in edu_nic_odp_create(). The mmu notifier's own lockdep
 * map is not exported to modules in 6.1.
 */
void edu_nic_mr_lockdep_prime(void)
{
	struct mutex lock;	/* of the class; held only here */

	edu_nic_mr_lock_init(&lock);
	edu_nic_mr_lockdep_taint(&lock);
	mutex_destroy(&lock);
}

/* A new, unpublished registration with one reference, or NULL */
struct edu_nic_mr *edu_nic_mr_alloc(struct edu_nic *nic, unsigned long start,
				    unsigned long length, u32 access,
				    enum edu_nic_mr_kind kind,
				    const struct edu_nic_mr_ops *ops)
{
	struct edu_nic_mr *mr;

	mr = kzalloc_obj(*mr, GFP_KERNEL);
	if (!mr)
		return NULL;
	mr->nic = nic;
	kref_init(&mr->kref);
	mr->kind = kind;
	mr->ops = ops;
	mr->start = start;
	mr->length = length;
	mr->npages = length >> PAGE_SHIFT;
	mr->access = access;
	mutex_init(&mr->op_lock);
	edu_nic_mr_lock_init(&mr->own_lock);
	mr->lock = &mr->own_lock;
	INIT_LIST_HEAD(&mr->node);
	return mr;
}

/* Free what edu_nic_mr_alloc() allocated, once the umem is released */
void edu_nic_mr_free(struct edu_nic_mr *mr)
{
	mutex_destroy(&mr->own_lock);
	mutex_destroy(&mr->op_lock);
	if (mr->win.io)
		iounmap(mr->win.io);
	kvfree(mr->sysmem);
	kvfree(mr->bus);
	kvfree(mr->dma_addrs);
	kfree(mr);
}

/**
 * edu_nic_mr_publish - put a new region on its device's list
 * @mr: the region, its key set: debugfs lists it from now on
 *
 * Return: 0, or -ENODEV if the device was unbound meanwhile.
 */
int edu_nic_mr_publish(struct edu_nic_mr *mr)
{
	struct edu_nic *nic = mr->nic;

	mutex_lock(&nic->mr_list_lock);
	if (nic->dead) {
		mutex_unlock(&nic->mr_list_lock);
		return -ENODEV;
	}
	list_add_tail(&mr->node, &nic->mr_list);
	atomic64_inc(&nic->stats.nr_mrs);
	mutex_unlock(&nic->mr_list_lock);
	return 0;
}

static void edu_nic_mr_release(struct kref *kref)
{
	struct edu_nic_mr *mr = container_of(kref, struct edu_nic_mr, kref);
	struct edu_nic *nic = mr->nic;

	/* Not on the list if it never got to user space. */
	mutex_lock(&nic->mr_list_lock);
	if (!list_empty(&mr->node)) {
		list_del(&mr->node);
		atomic64_dec(&nic->stats.nr_mrs);
	}
	mutex_unlock(&nic->mr_list_lock);

	mr->ops->release(mr);
	edu_nic_mr_free(mr);
}

/* Drop a reference; the last one unmaps and frees, and may sleep */
void edu_nic_mr_put(struct edu_nic_mr *mr)
{
	kref_put(&mr->kref, edu_nic_mr_release);
}

/* Read a region's state and counters into @out, except key and pad */
void edu_nic_mr_snapshot(struct edu_nic_mr *mr, struct edu_nic_mr_stats *out)
{
	mutex_lock(mr->lock);
	out->state = (mr->valid ? EDU_NIC_MR_MIRRORED : 0) |
		     (mr->writable ? EDU_NIC_MR_WRITABLE : 0) |
		     (mr->kind == EDU_NIC_KIND_DMABUF ? EDU_NIC_MR_DMABUF : 0);
	out->addr = mr->start;
	out->length = mr->length;
	out->access = mr->access;
	out->stats = mr->stats;
	mutex_unlock(mr->lock);
}

/**
 * edu_nic_mr_first_dma_addr - the device address of a region's first page
 * @mr: the region
 * @addr: set while a region of user memory is mirrored
 *
 * For debugfs: under an IOMMU, a raw DMA at an address the region no
 * longer maps must fault.
 *
 * Return: true if @addr was set; never for a dma-buf region.
 */
bool edu_nic_mr_first_dma_addr(struct edu_nic_mr *mr, dma_addr_t *addr)
{
	return mr->ops->first_dma_addr && mr->ops->first_dma_addr(mr, addr);
}

/* Tear down every mirror of a device being unbound, already marked dead */
void edu_nic_mr_kill_all(struct edu_nic *nic)
{
	struct edu_nic_mr *mr;

	mutex_lock(&nic->mr_list_lock);
	list_for_each_entry(mr, &nic->mr_list, node)
		mr->ops->kill(mr);
	mutex_unlock(&nic->mr_list_lock);
}
