// SPDX-License-Identifier: GPL-2.0
/*
 * edu_nic: memory registrations and their mirrors.
 *
 * A registration names a range of the owner's address space. It is
 * mirrored the way lib/test_hmm.c and the RDMA on-demand-paging drivers
 * do it: an mmu_interval_notifier covers the range; hmm_range_fault()
 * inside an mmu_interval_read_begin()/mmu_interval_read_retry() section
 * resolves it, with this device named as the p2p importer. Exporters of
 * device vmas (vgem-p2p VRAM, TTM) and owners of device-private pages say
 * where the memory is: the pfns of a BAR, with the BAR's provider, or of
 * system pages. Everything is mapped here, after the sequence check and
 * under the lock the invalidation takes, so that no mapping exists for an
 * answer an invalidation overtook and none outlives the memory it maps.
 * The leases device vmas' exporters give go back when the mirror goes.
 *
 * The mirror is all or nothing: one fault maps the whole region, and any
 * invalidation that touches it tears all of it down, after waiting for
 * the DMA in flight (which runs under edu_nic_mr.lock). The next DMA
 * faults it again.
 */
#include <linux/debugfs.h>
#include <linux/highmem.h>
#include <linux/hmm.h>
#include <linux/io.h>
#include <linux/ioport.h>
#include <linux/iosys-map.h>
#include <linux/mm.h>
#include <linux/p2p_map.h>
#include <linux/pagemap.h>
#include <linux/pci-p2pdma.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <drm/drm_cache.h>

#include "edu_nic.h"

/*
 * The CPU keeps using the pages while they are mapped (they are the
 * process's memory), so syncing at map and unmap time means nothing: each
 * DMA syncs its page instead. This also tells DMA-API debugging that
 * several writable mappings of one page (two registrations over the same
 * memory) are intended.
 */
#define EDU_NIC_MAP_ATTRS	DMA_ATTR_SKIP_CPU_SYNC

enum dma_data_direction edu_nic_mr_dir(bool writable)
{
	return writable ? DMA_BIDIRECTIONAL : DMA_TO_DEVICE;
}

/*
 * Map pages [@i, @i + @n) of another driver's device memory, contiguous in
 * the BAR of provider mr->providers[@i]: a bus address or an IOVA, as the
 * PCI core decides for the provider and this device. The exporter said we
 * reach its BAR; an address beyond our DMA mask can still make it fail.
 */
static int edu_nic_mr_map_p2p(struct edu_nic_mr *mr, unsigned long i,
			      unsigned long n, enum dma_data_direction dir)
{
	struct device *dev = &mr->nic->pdev->dev;
	phys_addr_t phys = PFN_PHYS(mr->pfns[i] & ~HMM_PFN_FLAGS);
	dma_addr_t addr;
	unsigned long k;
	int type;

	type = pci_p2pdma_map_resource(mr->providers[i], dev, phys,
				       n << PAGE_SHIFT, dir, &addr);
	if (type < 0)
		return type;
	if (type == PCI_P2PDMA_MAP_NOT_SUPPORTED)
		return -EFAULT;
	for (k = 0; k < n; k++)
		mr->dma_addrs[i + k] = addr + (k << PAGE_SHIFT);
	mr->p2p_runs[i] = n;
	if (type == PCI_P2PDMA_MAP_BUS_ADDR) {
		bitmap_set(mr->bus_addr, i, n);
		edu_nic_mr_count(mr, pages_bus, n);
	} else {
		edu_nic_mr_count(mr, pages_iova, n);
	}
	return 0;
}

/* The length of the run of BAR from page @i that one mapping can cover */
static unsigned long edu_nic_mr_p2p_run(struct edu_nic_mr *mr,
					unsigned long i)
{
	unsigned long pfn = mr->pfns[i] & ~HMM_PFN_FLAGS, n;

	for (n = 1; i + n < mr->npages && n < U32_MAX; n++) {
		unsigned long entry = mr->pfns[i + n];

		if (!(entry & HMM_PFN_P2PDMA) ||
		    mr->providers[i + n] != mr->providers[i] ||
		    (entry & ~HMM_PFN_FLAGS) != pfn + n)
			break;
	}
	return n;
}

/*
 * Release our mappings of pages [0, @end): ordinary pages, and BAR runs,
 * one call per run: a mirror of a VRAM vma is one run, whatever its size.
 */
static void edu_nic_mr_unmap_own(struct edu_nic_mr *mr, unsigned long end,
				 enum dma_data_direction dir)
{
	struct device *dev = &mr->nic->pdev->dev;
	unsigned long i = 0;

	while (i < end) {
		if (test_bit(i, mr->sysmem)) {
			dma_unmap_page_attrs(dev, mr->dma_addrs[i], PAGE_SIZE,
					     dir, EDU_NIC_MAP_ATTRS);
			i++;
			continue;
		}
		pci_p2pdma_unmap_resource(dev, test_bit(i, mr->bus_addr) ?
					  PCI_P2PDMA_MAP_BUS_ADDR :
					  PCI_P2PDMA_MAP_THRU_HOST_BRIDGE,
					  mr->dma_addrs[i],
					  (size_t)mr->p2p_runs[i] << PAGE_SHIFT,
					  dir);
		i += mr->p2p_runs[i];
	}
}

/*
 * Tear the mirror down: unmap what we mapped, then give the exporters'
 * leases back. Callers have made sure no DMA uses the addresses: DMA runs
 * under mr->lock, which we hold.
 */
static void edu_nic_mr_unmap_locked(struct edu_nic_mr *mr)
{
	lockdep_assert_held(&mr->lock);

	if (!mr->valid)
		return;

	edu_nic_mr_unmap_own(mr, mr->npages, edu_nic_mr_dir(mr->writable));
	/* Never sleeps, as p2p_lease_release()'s contract promises. */
	p2p_lease_release_list(&mr->p2p_leases);

	edu_nic_mr_count(mr, cur_pages_p2p, -mr->stats.cur_pages_p2p);
	edu_nic_mr_count(mr, cur_pages_system, -mr->stats.cur_pages_system);
	mr->valid = false;
	mr->writable = false;
}

static bool edu_nic_mr_invalidate(struct mmu_interval_notifier *mni,
				  const struct mmu_notifier_range *range,
				  unsigned long cur_seq)
{
	struct edu_nic_mr *mr = container_of(mni, struct edu_nic_mr, notifier);

	/*
	 * Waiting for mr->lock is waiting for the DMA in flight: the device
	 * must be done with the addresses before they are released.
	 */
	if (mmu_notifier_range_blockable(range))
		mutex_lock(&mr->lock);
	else if (!mutex_trylock(&mr->lock))
		return false;

	mmu_interval_set_seq(mni, cur_seq);
	if (mr->valid) {
		edu_nic_mr_unmap_locked(mr);
		edu_nic_mr_count(mr, invalidations, 1);
	}

	mutex_unlock(&mr->lock);
	return true;
}

static const struct mmu_interval_notifier_ops edu_nic_mr_notifier_ops = {
	.invalidate = edu_nic_mr_invalidate,
};

/*
 * The physical address page @i's DMA reaches; @domain: edu_nic_dma_domain().
 * A bus address a switch routes never reaches the IOMMU, whatever
 * translates the device's other DMA: resolve it as the bus sees it.
 */
static phys_addr_t edu_nic_mr_phys(struct edu_nic_mr *mr,
				   struct iommu_domain *domain, unsigned long i)
{
	if (test_bit(i, mr->bus_addr))
		domain = NULL;
	return edu_nic_domain_to_phys(domain, mr->dma_addrs[i]) & PAGE_MASK;
}

/**
 * edu_nic_mr_classify - record which exporter addresses are system RAM
 * @mr: the region, its mirror being installed
 * @i: first page
 * @n: number of pages, with exporter addresses in mr->dma_addrs
 *
 * Sets the pages' bits in mr->sysmem when the device reaches system RAM
 * there (see edu_nic_mr_page_synced()). One walk of the iomem resource
 * tree (region_intersects(), as memremap() classifies a range) per
 * physically contiguous stretch, not a page_is_ram() per page: a VRAM
 * range is one stretch. A stretch that straddles RAM and something else
 * is classified page by page. An address the IOMMU cannot translate is
 * left unset: no DMA reaches it.
 */
void edu_nic_mr_classify(struct edu_nic_mr *mr, unsigned long i,
			 unsigned long n)
{
	struct iommu_domain *domain = edu_nic_dma_domain(mr->nic);
	unsigned long end = i + n, j, k;
	phys_addr_t phys;

	while (i < end) {
		phys = edu_nic_mr_phys(mr, domain, i);
		for (j = i + 1; j < end; j++)
			if (edu_nic_mr_phys(mr, domain, j) !=
			    phys + ((phys_addr_t)(j - i) << PAGE_SHIFT))
				break;
		if (!phys) {
			i = j;
			continue;
		}
		switch (region_intersects(phys, (j - i) << PAGE_SHIFT,
					  IORESOURCE_SYSTEM_RAM,
					  IORES_DESC_NONE)) {
		case REGION_INTERSECTS:
			bitmap_set(mr->sysmem, i, j - i);
			break;
		case REGION_MIXED:
			for (k = i; k < j; k++)
				if (page_is_ram(PHYS_PFN(phys) + k - i))
					__set_bit(k, mr->sysmem);
			break;
		}
		i = j;
	}
}

/*
 * Install what hmm_range_fault() returned, after the sequence check, so
 * that nothing is mapped for an answer an invalidation already overtook:
 * DMA-map the ordinary pages (an exporter's fallback among them) and the
 * BAR runs, and take over the exporters' leases. On failure everything is
 * released.
 */
static int edu_nic_mr_install_locked(struct edu_nic_mr *mr,
				     struct list_head *leases, bool write)
{
	struct device *dev = &mr->nic->pdev->dev;
	enum dma_data_direction dir = edu_nic_mr_dir(write);
	unsigned long i, p2p = 0, nleases = 0;
	struct list_head *pos;
	int ret;

	lockdep_assert_held(&mr->lock);

	bitmap_zero(mr->sysmem, mr->npages);
	bitmap_zero(mr->bus_addr, mr->npages);
	for (i = 0; i < mr->npages; i++) {
		unsigned long entry = mr->pfns[i];
		dma_addr_t addr;
		unsigned long n;

		if (WARN_ON_ONCE(!(entry & HMM_PFN_VALID))) {
			ret = -EFAULT;
			goto err_unmap_pages;
		}
		/* Device memory in a BAR: a VRAM vma, or device pages */
		if (entry & HMM_PFN_P2PDMA) {
			n = edu_nic_mr_p2p_run(mr, i);
			ret = edu_nic_mr_map_p2p(mr, i, n, dir);
			if (ret)
				goto err_unmap_pages;
			p2p += n;
			i += n - 1;
			continue;
		}
		addr = dma_map_page_attrs(dev, hmm_pfn_to_page(entry), 0,
					  PAGE_SIZE, dir, EDU_NIC_MAP_ATTRS);
		if (dma_mapping_error(dev, addr)) {
			ret = -ENOMEM;
			goto err_unmap_pages;
		}
		mr->dma_addrs[i] = addr;
		__set_bit(i, mr->sysmem);
	}

	list_for_each(pos, leases)
		nleases++;
	list_splice_tail_init(leases, &mr->p2p_leases);
	mr->valid = true;
	mr->writable = write;

	edu_nic_mr_count(mr, faults, 1);
	if (mr->ever_mapped)
		edu_nic_mr_count(mr, remaps, 1);
	mr->ever_mapped = true;
	edu_nic_mr_count(mr, p2p_maps, nleases);
	edu_nic_mr_count(mr, pages_p2p, p2p);
	edu_nic_mr_count(mr, pages_system, mr->npages - p2p);
	edu_nic_mr_count(mr, cur_pages_p2p, p2p);
	edu_nic_mr_count(mr, cur_pages_system, mr->npages - p2p);
	return 0;

err_unmap_pages:
	edu_nic_mr_unmap_own(mr, i, dir);
	p2p_lease_release_list(leases);
	return ret;
}

/*
 * A test's window between the walk and the sequence check: while
 * <debugfs>/edu_nic/hold_before_check is set, every mirroring waits there
 * (killably), counted in held_before_check, so that a test can move the
 * exporter's memory in the window and see that nothing was mapped for
 * the answer the move overtook. Clearing the knob lets them go.
 */
static struct edu_nic_hold edu_nic_mr_hold = EDU_NIC_HOLD_INIT(edu_nic_mr_hold);

static void edu_nic_mr_hold_before_check(void)
{
	/* a fatal signal ends the wait; the check then decides as always */
	edu_nic_hold_wait(&edu_nic_mr_hold);
}

/**
 * edu_nic_mr_hold_init - create the hold_before_check knob and its count
 * @root: <debugfs>/edu_nic
 */
void edu_nic_mr_hold_init(struct dentry *root)
{
	edu_nic_hold_create(root, "hold_before_check", "held_before_check",
			    &edu_nic_mr_hold);
}

/*
 * One attempt at mirroring the region, as dmirror_range_fault() does it.
 * Called with op_lock held and the mirror invalid, so @mr->pfns and
 * @mr->dma_addrs are ours to fill. Returns 0 with mr->lock held and the
 * mirror installed, -EAGAIN if an invalidation raced with us, or an error.
 */
static int edu_nic_mr_fault(struct edu_nic_mr *mr, bool write)
{
	struct mm_struct *mm = mr->notifier.mm;
	LIST_HEAD(leases);
	struct hmm_range range = {
		.notifier = &mr->notifier,
		.start = mr->start,
		.end = mr->start + mr->length,
		.hmm_pfns = mr->pfns,
		.default_flags = HMM_PFN_REQ_FAULT |
				 (write ? HMM_PFN_REQ_WRITE : 0),
		/* Not an owner of device-private pages: ask for p2p. */
		.dev_private_owner = NULL,
		.p2p_importer = mr->no_p2p ? NULL : &mr->nic->pdev->dev,
		.p2p_providers = mr->providers,
		.p2p_leases = &leases,
	};
	int ret;

	lockdep_assert_held(&mr->op_lock);

	if (!mmget_not_zero(mm))
		return -EFAULT;
	range.notifier_seq = mmu_interval_read_begin(&mr->notifier);
	mmap_read_lock(mm);
	ret = hmm_range_fault(&range);
	mmap_read_unlock(mm);
	mmput(mm);
	/* A failed hmm_range_fault() leaves nothing on @leases. */
	if (ret == -EBUSY)
		ret = -EAGAIN;
	if (ret)
		goto err_count;

	edu_nic_mr_hold_before_check();
	mutex_lock(&mr->lock);
	if (mmu_interval_read_retry(&mr->notifier, range.notifier_seq)) {
		/* Nothing was mapped for this answer: give the leases back. */
		p2p_lease_release_list(&leases);
		mutex_unlock(&mr->lock);
		ret = -EAGAIN;
		goto err_count;
	}
	if (READ_ONCE(mr->nic->dead)) {
		p2p_lease_release_list(&leases);
		mutex_unlock(&mr->lock);
		return -ENODEV;
	}
	ret = edu_nic_mr_install_locked(mr, &leases, write);
	if (ret)
		mutex_unlock(&mr->lock);
	return ret;

err_count:
	if (ret == -EAGAIN) {
		mutex_lock(&mr->lock);
		edu_nic_mr_count(mr, fault_retries, 1);
		mutex_unlock(&mr->lock);
	}
	return ret;
}

/* Is the mirror installed, and writable if @write? Under mr->lock. */
static bool edu_nic_mr_usable(struct edu_nic_mr *mr, bool write)
{
	lockdep_assert_held(&mr->lock);
	return mr->valid && (mr->writable || !write);
}

/*
 * Return with mr->lock held and the mirror installed, writable if @write:
 * the state in which the device may use mr->dma_addrs.
 *
 * An invalidation racing with the mirroring (an exporter moving the
 * memory, say) is contention, not an error: retry until the mirror holds,
 * however long a move takes, as users of hmm_range_fault() loop on
 * -EBUSY. Each retry waits in the exporter (its p2p_lookup takes the
 * locks the move holds), so this does not spin. Only signals end the wait:
 * -EINTR for a fatal one, -ERESTARTSYS for one the caller's handler is
 * to see.
 */
static int edu_nic_mr_lock_vma(struct edu_nic_mr *mr, bool write)
{
	int ret;

	lockdep_assert_held(&mr->op_lock);

	for (;;) {
		mutex_lock(&mr->lock);
		if (edu_nic_mr_usable(mr, write))
			return 0;
		/* A read-only mirror cannot serve a write: fault it again. */
		edu_nic_mr_unmap_locked(mr);
		mutex_unlock(&mr->lock);

		if (fatal_signal_pending(current))
			return -EINTR;
		/* Unbound: do not even ask exporters for addresses. */
		if (READ_ONCE(mr->nic->dead))
			return -ENODEV;
		ret = edu_nic_mr_fault(mr, write);
		if (ret == -EAGAIN && signal_pending(current))
			return -ERESTARTSYS;
		/*
		 * An exporter's wait for a move, interrupted (TTM's is
		 * interruptible): only a fatal signal is the caller's EINTR.
		 */
		if (ret == -EINTR && !fatal_signal_pending(current))
			return -ERESTARTSYS;
		if (ret != -EAGAIN)
			return ret;
		cond_resched();
	}
}

/*
 * Return with the mirror installed (writable if @write) and locked against
 * invalidation: the state in which the device may use mr->dma_addrs.
 */
static int edu_nic_mr_lock_mirror(struct edu_nic_mr *mr, bool write)
{
	if (mr->kind == EDU_NIC_KIND_DMABUF)
		return edu_nic_dmabuf_lock_mirror(mr);
	return edu_nic_mr_lock_vma(mr, write);
}

static void edu_nic_mr_unlock_mirror(struct edu_nic_mr *mr)
{
	if (mr->kind == EDU_NIC_KIND_DMABUF)
		edu_nic_dmabuf_unlock_mirror(mr);
	else
		mutex_unlock(&mr->lock);
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
	ret = edu_nic_mr_lock_mirror(mr, mr->access & EDU_NIC_ACCESS_WRITE);
	if (!ret)
		edu_nic_mr_unlock_mirror(mr);
	mutex_unlock(&mr->op_lock);
	return ret;
}

/*
 * Does page @i of the mirror need a sync around each DMA? Whatever is
 * system memory mapped with the DMA API for us does: our dma_map_page()
 * of the process's pages (an exporter's fallback among them), and what a
 * dma-buf exporter mapped for us out of system memory. With swiotlb
 * (swiotlb=force, SEV/TDX, a small DMA mask) the device reaches a bounce
 * buffer, which only a sync fills from and copies back to the page. BAR
 * addresses (p2p) have no CPU copy, and were not mapped page by page:
 * they must not be synced. mr->sysmem tells, set when the mirror was
 * installed. Called with the mirror locked.
 */
static bool edu_nic_mr_page_synced(struct edu_nic_mr *mr, unsigned long i)
{
	/* Set when the mirror was installed, see above */
	return test_bit(i, mr->sysmem);
}

/*
 * Lock the mirror if it is installed (writable if @write), without
 * faulting it in: what a DMA command needs once the engine is ours, where
 * an exporter must not be called. -EAGAIN if an invalidation came first.
 */
static int edu_nic_mr_lock_installed(struct edu_nic_mr *mr, bool write)
{
	if (mr->kind == EDU_NIC_KIND_DMABUF)
		return edu_nic_dmabuf_lock_installed(mr);
	mutex_lock(&mr->lock);
	if (edu_nic_mr_usable(mr, write))
		return 0;
	mutex_unlock(&mr->lock);
	return -EAGAIN;
}

/*
 * struct edu_nic_mr_page_target - a page of the mirror as the engine's
 * target: locked around each command that uses its address
 * @base: what the engine calls
 * @mr: the region
 * @i: the page
 * @pgoff: where in it the transfer starts
 * @len: the transfer's length
 * @write: the device writes it
 * @sync: set by the lock: the page is system memory, synced before the
 *	transfer's first command and, for a write, after its last
 * @last: set by the lock: this command ends the transfer
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

	ret = edu_nic_mr_lock_installed(mr, pt->write);
	if (ret)
		return ret;
	pt->sync = edu_nic_mr_page_synced(mr, pt->i);
	pt->last = off + len == pt->len;
	/*
	 * The whole page, with the direction it was mapped with: DMA-API
	 * debugging matches a sync to one of several mappings of a page (the
	 * zero page, two registrations) only when both agree. Once per
	 * transfer, not per command: between two commands the mirror stays
	 * installed (an invalidation ends the transfer, and its unmap syncs
	 * what the device wrote).
	 */
	if (pt->sync && !off)
		dma_sync_single_for_device(&mr->nic->pdev->dev,
					   mr->dma_addrs[pt->i], PAGE_SIZE,
					   edu_nic_mr_dir(mr->writable));
	*addr = mr->dma_addrs[pt->i] + pt->pgoff + off;
	return 0;
}

static void edu_nic_mr_page_unlock(struct edu_nic_dma_target *t)
{
	struct edu_nic_mr_page_target *pt =
		container_of(t, struct edu_nic_mr_page_target, base);
	struct edu_nic_mr *mr = pt->mr;

	if (pt->sync && pt->write && pt->last)
		dma_sync_single_for_cpu(&mr->nic->pdev->dev,
					mr->dma_addrs[pt->i], PAGE_SIZE,
					edu_nic_mr_dir(mr->writable));
	edu_nic_mr_unlock_mirror(mr);
}

/*
 * One page or less with the edu engine. The mirror is faulted in first,
 * then the engine taken, and the mirror locked only around the commands
 * that use the page's address (struct edu_nic_mr_page_target): a
 * registration queued for the shared engine holds nothing an
 * invalidation waits for. An invalidation between two of the page's
 * commands ends the transfer with -EAGAIN; it is then made again, whole,
 * on the new mirror.
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
		ret = edu_nic_mr_lock_mirror(mr, write);
		if (ret)
			return ret;
		edu_nic_mr_unlock_mirror(mr);
		if (write)
			ret = edu_nic_dma_to_bus(mr->nic, &pt.base, buf, len);
		else
			ret = edu_nic_dma_from_bus(mr->nic, &pt.base, buf, len,
						   false);
	} while (ret == -EAGAIN);
	if (ret)
		return ret;

	/* The device-wide count is kept by the engine, which sees all DMA */
	mutex_lock(&mr->lock);
	mr->stats.device_dma_bytes += len;
	mutex_unlock(&mr->lock);
	return 0;
}

/* Pages copied per hold of the mirror lock: bounds invalidation latency */
#define EDU_NIC_BULK_BATCH	256

/*
 * The BAR run of the mirror around page @i, whose physical address is
 * @phys: the pages on either side that are not system memory and whose
 * addresses continue @phys. What the window maps, so that a stream over
 * the run maps it once. Called with the mirror locked.
 */
static void edu_nic_mr_bar_run(struct edu_nic_mr *mr,
			       struct iommu_domain *domain, unsigned long i,
			       phys_addr_t phys, struct edu_nic_io_window *run)
{
	unsigned long first = i, last = i;

	while (first > 0 && !test_bit(first - 1, mr->sysmem) &&
	       edu_nic_mr_phys(mr, domain, first - 1) ==
	       phys - ((phys_addr_t)(i - first + 1) << PAGE_SHIFT))
		first--;
	while (last + 1 < mr->npages && !test_bit(last + 1, mr->sysmem) &&
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
 * The user pages a batch covers are pinned before the mirror lock is
 * taken, so that the copy under it writes them through the kernel
 * mapping and cannot fault, and so that it can read the BAR with
 * drm_memcpy_from_wc(): the streaming-load copy TTM reads VRAM with
 * (ttm_move_memcpy()), where copy_to_user() has only the string
 * instructions, which read write-combined memory uncached. A buffer that
 * cannot be pinned (a VM_PFNMAP mapping, say) is copied to in user space
 * with page faults disabled, as before.
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
 * Copy between the mirror's pages from @off on and @ubuf (for a read, as
 * @dst says), at most up to @end, with the mirror locked and page faults
 * disabled. Stops early when page @i is a BAR page outside the window
 * (its run in @run), or a user page is not present (*@left bytes not
 * copied). Returns 0 or a negative errno; *@off and *@ubuf advance past
 * what was copied.
 */
static int edu_nic_mr_bulk_locked(struct edu_nic_mr *mr, u64 *off, u64 end,
				  char __user **ubuf, bool write,
				  const struct edu_nic_bulk_dst *dst,
				  struct edu_nic_io_window *run, size_t *left)
{
	struct iommu_domain *domain = edu_nic_dma_domain(mr->nic);
	struct device *dev = &mr->nic->pdev->dev;
	enum dma_data_direction dir = edu_nic_mr_dir(mr->writable);
	unsigned long last = (end - 1) >> PAGE_SHIFT;
	struct edu_nic_io_window *win = &mr->win;

	while (*off < end) {
		unsigned long i = *off >> PAGE_SHIFT, n;
		unsigned long pgoff = *off & ~PAGE_MASK;
		phys_addr_t phys = edu_nic_mr_phys(mr, domain, i);
		size_t len;

		if (!phys)
			return -EIO;	/* the IOMMU would fault this DMA */

		if (test_bit(i, mr->sysmem)) {
			/* What the device would reach: one page, synced */
			void *va;

			len = min_t(u64, end - *off, PAGE_SIZE - pgoff);
			dma_sync_single_for_device(dev, mr->dma_addrs[i],
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
			if (write)
				dma_sync_single_for_cpu(dev, mr->dma_addrs[i],
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
				if (test_bit(i + n, mr->sysmem) ||
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
 * use, straight between them and the user buffer, up to
 * EDU_NIC_BULK_BATCH pages per hold of the mirror lock. A fault on user
 * memory under that lock could deadlock with an invalidation of the same
 * mm, which waits for it; so the copy runs with page faults disabled, and
 * a page that is not present is faulted in after the lock is dropped,
 * then the copy resumes: the pattern of i915's pread/pwrite fast paths
 * (__copy_to_user_inatomic() from an io_mapping) and of
 * generic_perform_write() (fault_in_iov_iter_readable()). A read pins
 * each batch's user pages before it locks the mirror instead, as
 * process_vm_readv() pins the pages it copies to, and writes them through
 * the kernel mapping (struct edu_nic_bulk_dst). Called with op_lock held.
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
		ret = edu_nic_mr_lock_mirror(mr, write);
		if (ret)
			break;
		pagefault_disable();
		ret = edu_nic_mr_bulk_locked(mr, &off, batch, &ubuf, write,
					     &dst, &run, &left);
		pagefault_enable();
		edu_nic_mr_unlock_mirror(mr);
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
			/* ioremap allocates: outside mr->lock */
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

/*
 * The device mode: page by page through the edu engine, which copies
 * through its own buffer and ours. The lock that invalidation waits for
 * is held only while the device uses the page's address; user memory is
 * touched outside it. Called with op_lock held.
 */
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
 * The mirror is (re)made as needed; see edu_nic_mr_device() and
 * edu_nic_mr_bulk() for how each mode holds the lock that invalidation
 * waits for.
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
		mutex_lock(&mr->lock);
		edu_nic_mr_count(mr, errors, 1);
		mutex_unlock(&mr->lock);
	}
	mutex_unlock(&mr->op_lock);
out_free:
	kfree(buf);
	return ret;
}

/*
 * Registration-time checks of the vmas: advisory, since they can change
 * at any time afterwards, but they let user space see a bad range at
 * once. The range must be fully mapped, and writable for write access.
 */
static int edu_nic_mr_check_vmas(struct mm_struct *mm, unsigned long start,
				 unsigned long end, bool write)
{
	struct vm_area_struct *vma;
	unsigned long addr = start;
	int ret = 0;

	mmap_read_lock(mm);
	while (addr < end) {
		vma = vma_lookup(mm, addr);
		if (!vma) {
			ret = -EFAULT;
			break;
		}
		if (write && !(vma->vm_flags & VM_WRITE)) {
			ret = -EPERM;
			break;
		}
		addr = vma->vm_end;
	}
	mmap_read_unlock(mm);
	return ret;
}

/* Every mr->lock, and the priming one, in one lockdep class */
static struct lock_class_key edu_nic_mr_lock_key;

static void edu_nic_mr_lock_init(struct mutex *lock)
{
	__mutex_init(lock, "&mr->lock", &edu_nic_mr_lock_key);
}

/**
 * edu_nic_mr_lockdep_prime - tell lockdep where mr->lock sits, up front
 *
 * The invalidate callback takes mr->lock from reclaim, but reclaim that
 * reaches a mirrored range is rare in a test run, so lockdep would seldom
 * see that, and an allocation under mr->lock (a deadlock under memory
 * pressure) would go unreported. Record reclaim -> mr->lock once, at
 * module load, as dma_resv_lockdep() and i915_gem_shrinker_taints_mutex()
 * do for their locks: from then on any GFP_KERNEL allocation under
 * mr->lock is reported at once. The mmu notifier's own lockdep map
 * (__mmu_notifier_invalidate_range_start_map, which dma_resv_lockdep()
 * also primes) is not exported to modules in 6.1, so that edge is left
 * to the invalidations the tests cause.
 */
void edu_nic_mr_lockdep_prime(void)
{
	struct mutex lock;

	if (!IS_ENABLED(CONFIG_LOCKDEP))
		return;
	edu_nic_mr_lock_init(&lock);
	fs_reclaim_acquire(GFP_KERNEL);
	mutex_lock(&lock);
	mutex_unlock(&lock);
	fs_reclaim_release(GFP_KERNEL);
	mutex_destroy(&lock);
}

/**
 * edu_nic_mr_alloc - a new, unpublished registration
 * @nic: the device
 * @start: first address, or offset in a dma-buf
 * @length: page-aligned length
 * @access: EDU_NIC_ACCESS_* bits
 * @kind: what it names
 *
 * Return: the region with one reference, or NULL.
 */
struct edu_nic_mr *edu_nic_mr_alloc(struct edu_nic *nic, unsigned long start,
				    unsigned long length, u32 access,
				    enum edu_nic_mr_kind kind)
{
	struct edu_nic_mr *mr;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return NULL;
	mr->nic = nic;
	kref_init(&mr->kref);
	mr->kind = kind;
	mr->start = start;
	mr->length = length;
	mr->npages = length >> PAGE_SHIFT;
	mr->access = access;
	mutex_init(&mr->op_lock);
	edu_nic_mr_lock_init(&mr->lock);
	INIT_LIST_HEAD(&mr->p2p_leases);
	INIT_LIST_HEAD(&mr->node);

	/*
	 * hmm_range_fault() output, and our mappings of other drivers'
	 * device memory: vma registrations only. Allocated here, not at
	 * fault time, where mr->lock, which invalidations take, is held.
	 * The providers and run heads are read only where written (an
	 * HMM_PFN_P2PDMA entry, a run we mapped): not zeroed, which under
	 * TCG cost a 256 MiB registration a fifth of its time.
	 */
	if (kind == EDU_NIC_KIND_VMA) {
		mr->pfns = kvcalloc(mr->npages, sizeof(*mr->pfns), GFP_KERNEL);
		if (!mr->pfns)
			goto err_free_mr;
		mr->providers = kvmalloc_array(mr->npages,
					       sizeof(*mr->providers),
					       GFP_KERNEL);
		if (!mr->providers)
			goto err_free_pfns;
		mr->p2p_runs = kvmalloc_array(mr->npages, sizeof(*mr->p2p_runs),
					      GFP_KERNEL);
		if (!mr->p2p_runs)
			goto err_free_pfns;
	}
	mr->dma_addrs = kvcalloc(mr->npages, sizeof(*mr->dma_addrs),
				 GFP_KERNEL);
	if (!mr->dma_addrs)
		goto err_free_pfns;
	mr->sysmem = kvcalloc(BITS_TO_LONGS(mr->npages), sizeof(long),
			      GFP_KERNEL);
	if (!mr->sysmem)
		goto err_free_dma_addrs;
	mr->bus_addr = kvcalloc(BITS_TO_LONGS(mr->npages), sizeof(long),
				GFP_KERNEL);
	if (!mr->bus_addr)
		goto err_free_sysmem;
	return mr;

err_free_sysmem:
	kvfree(mr->sysmem);
err_free_dma_addrs:
	kvfree(mr->dma_addrs);
err_free_pfns:
	kvfree(mr->p2p_runs);
	kvfree(mr->providers);
	kvfree(mr->pfns);
err_free_mr:
	kfree(mr);
	return NULL;
}

/**
 * edu_nic_mr_free - free what edu_nic_mr_alloc() allocated
 * @mr: the region, torn down
 */
void edu_nic_mr_free(struct edu_nic_mr *mr)
{
	mutex_destroy(&mr->lock);
	mutex_destroy(&mr->op_lock);
	if (mr->win.io)
		iounmap(mr->win.io);
	kvfree(mr->bus_addr);
	kvfree(mr->sysmem);
	kvfree(mr->dma_addrs);
	kvfree(mr->p2p_runs);
	kvfree(mr->providers);
	kvfree(mr->pfns);
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

/**
 * edu_nic_mr_create - make a registration of a range of the address space
 * @f: the open file; its mm is the caller's
 * @req: the validated request
 *
 * Return: the region with one reference, not yet published (the ioctl
 * publishes it once it has its key), or an ERR_PTR().
 */
struct edu_nic_mr *edu_nic_mr_create(struct edu_nic_file *f,
				     const struct edu_nic_reg_mr *req)
{
	struct edu_nic_mr *mr;
	int ret;

	ret = edu_nic_mr_check_vmas(f->mm, req->addr, req->addr + req->length,
				    req->access & EDU_NIC_ACCESS_WRITE);
	if (ret)
		return ERR_PTR(ret);

	mr = edu_nic_mr_alloc(f->nic, req->addr, req->length, req->access,
			      EDU_NIC_KIND_VMA);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->no_p2p = req->flags & EDU_NIC_REG_MR_NO_P2P;

	ret = mmu_interval_notifier_insert(&mr->notifier, f->mm, mr->start,
					   mr->length,
					   &edu_nic_mr_notifier_ops);
	if (ret)
		goto err_free_mr;
	return mr;

err_free_mr:
	edu_nic_mr_free(mr);
	return ERR_PTR(ret);
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

	if (mr->kind == EDU_NIC_KIND_DMABUF) {
		edu_nic_dmabuf_release(mr);
	} else {
		/* No callback runs after this; then nothing else can map. */
		mmu_interval_notifier_remove(&mr->notifier);
		mutex_lock(&mr->lock);
		edu_nic_mr_unmap_locked(mr);
		mutex_unlock(&mr->lock);
	}
	edu_nic_mr_free(mr);
}

/**
 * edu_nic_mr_put - drop a reference; the last one unmaps and frees
 * @mr: the region
 *
 * Context: process context; may sleep.
 */
void edu_nic_mr_put(struct edu_nic_mr *mr)
{
	kref_put(&mr->kref, edu_nic_mr_release);
}

/**
 * edu_nic_mr_snapshot - read a region's state and counters
 * @mr: the region
 * @out: filled in, except @out->key and @out->pad
 */
void edu_nic_mr_snapshot(struct edu_nic_mr *mr, struct edu_nic_mr_stats *out)
{
	mutex_lock(&mr->lock);
	out->state = (mr->valid ? EDU_NIC_MR_MIRRORED : 0) |
		     (mr->writable ? EDU_NIC_MR_WRITABLE : 0) |
		     (mr->kind == EDU_NIC_KIND_DMABUF ? EDU_NIC_MR_DMABUF : 0);
	out->addr = mr->start;
	out->length = mr->length;
	out->access = mr->access;
	out->stats = mr->stats;
	mutex_unlock(&mr->lock);
}

/**
 * edu_nic_mr_first_dma_addr - the device address of a region's first page
 * @mr: the region
 * @addr: set while a region of user memory is mirrored
 *
 * For debugfs: under an IOMMU, a test's raw DMA at an address the region
 * no longer maps must fault.
 *
 * Return: true if @addr was set; false for a dma-buf region, whose mirror
 * the dma_resv guards.
 */
bool edu_nic_mr_first_dma_addr(struct edu_nic_mr *mr, dma_addr_t *addr)
{
	bool valid;

	if (mr->kind == EDU_NIC_KIND_DMABUF)
		return false;
	mutex_lock(&mr->lock);
	valid = mr->valid;
	if (valid)
		*addr = mr->dma_addrs[0];
	mutex_unlock(&mr->lock);
	return valid;
}

/**
 * edu_nic_mr_kill_all - tear down every mirror of a device being unbound
 * @nic: the device, already marked dead so that nothing maps again
 */
void edu_nic_mr_kill_all(struct edu_nic *nic)
{
	struct edu_nic_mr *mr;

	mutex_lock(&nic->mr_list_lock);
	list_for_each_entry(mr, &nic->mr_list, node) {
		if (mr->kind == EDU_NIC_KIND_DMABUF) {
			edu_nic_dmabuf_kill(mr);
			continue;
		}
		mutex_lock(&mr->lock);
		edu_nic_mr_unmap_locked(mr);
		mutex_unlock(&mr->lock);
	}
	mutex_unlock(&nic->mr_list_lock);
}
