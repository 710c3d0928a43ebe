// SPDX-License-Identifier: GPL-2.0
/*
 * edu_nic: registrations of a range of the address space.
 *
 * An RDMA on-demand-paging umem, as mlx5's ODP MRs are: the RDMA core
 * faults the range with hmm_range_fault(), this device named as the p2p
 * importer, and system pages and exporters' BARs are mapped after its
 * sequence check (edu_nic_odp_map_dma_and_lock(): by the core on 6.1, by
 * us on 7.x). The mirror is all or nothing: one fault maps the whole
 * region, and any invalidation unmaps all of it.
 */
#include <linux/mm.h>
#include <linux/sched/signal.h>

#include <rdma/ib_umem_odp.h>

#include "edu_nic.h"

/*
 * Unmap every page and, on 6.1, give the exporters' leases back; never
 * sleeps.
 */
static void edu_nic_odp_unmap_all(struct ib_umem_odp *odp)
{
	ib_umem_odp_unmap_dma_pages(odp, ib_umem_start(odp), ib_umem_end(odp));
}

/*
 * Tear the mirror down. Unmap whatever is mapped even if it is not
 * installed, as mlx5_ib_invalidate_range() does: a map step that failed
 * part of the way dropped umem_mutex with what it had mapped still
 * mapped, until edu_nic_odp_fault() takes the lock again to unmap it, and
 * an invalidation in between must not let that outlive it.
 */
static void edu_nic_odp_unmap_locked(struct edu_nic_mr *mr)
{
	lockdep_assert_held(mr->lock);

	edu_nic_odp_unmap_all(mr->odp);
	if (mr->valid)
		edu_nic_mr_uninstalled(mr);
}

/*
 * hold_failed_fault: while set, a fault whose map step failed waits
 * before it takes umem_mutex again to unmap what that step mapped, so
 * that an invalidation can come in between; held_failed_fault counts them.
 */
static struct edu_nic_hold edu_nic_odp_hold_knob =
	EDU_NIC_HOLD_INIT(edu_nic_odp_hold_knob);

/* Create the hold_failed_fault knob and its count in <debugfs>/edu_nic */
void edu_nic_odp_hold_init(struct dentry *root)
{
	edu_nic_hold_create(root, "hold_failed_fault", "held_failed_fault",
			    &edu_nic_odp_hold_knob);
}

static bool edu_nic_odp_invalidate(struct mmu_interval_notifier *mni,
				   const struct mmu_notifier_range *range,
				   unsigned long cur_seq)
{
	struct ib_umem_odp *odp = container_of(mni, struct ib_umem_odp,
					       notifier);
	struct edu_nic_mr *mr;

	/* As mlx5_ib_invalidate_range(): this waits for the DMA in flight */
	if (mmu_notifier_range_blockable(range))
		mutex_lock(&odp->umem_mutex);
	else if (!mutex_trylock(&odp->umem_mutex))
		return false;

	mmu_interval_set_seq(mni, cur_seq);
	/* NULL until the registration is made: then nothing is mapped */
	mr = odp->private;
	if (mr) {
		bool installed = mr->valid;

		/* not installed: what a failed map step left, if anything */
		edu_nic_odp_unmap_locked(mr);
		/* while faulting, the core's sequence check fails: it retries */
		if (installed)
			edu_nic_mr_count(mr, invalidations, 1);
		else if (READ_ONCE(mr->faulting))
			edu_nic_mr_count(mr, fault_retries, 1);
	}

	mutex_unlock(&odp->umem_mutex);
	return true;
}

static const struct mmu_interval_notifier_ops edu_nic_odp_notifier_ops = {
	.invalidate = edu_nic_odp_invalidate,
};

/*
 * Count what edu_nic_odp_map_dma_and_lock() installed, all of it this
 * fault's: the mirror was wholly unmapped before.
 */
static void edu_nic_odp_installed(struct edu_nic_mr *mr, bool write)
{
	unsigned long i, p2p = 0, bus = 0;

	lockdep_assert_held(mr->lock);

	for (i = 0; i < mr->npages; i++) {
		if (edu_nic_odp_page_sysmem(mr, i))
			continue;
		p2p++;
		if (edu_nic_odp_bus_addr(mr, i))
			bus++;
	}
	edu_nic_mr_installed(mr, write, p2p, edu_nic_odp_nr_leases(mr));
	edu_nic_mr_count(mr, pages_bus, bus);
	edu_nic_mr_count(mr, pages_iova, p2p - bus);
}

/*
 * Mirror the whole region, which is not installed, as mlx5's page fault
 * handler maps a range. Returns 0 with mr->lock held and the mirror
 * installed, -EAGAIN to try again, or an error.
 */
static int edu_nic_odp_fault(struct edu_nic_mr *mr, bool write)
{
	struct ib_umem_odp *odp = mr->odp;
	int ret;

	lockdep_assert_held(&mr->op_lock);

	/* Unbind waits for this section: see edu_nic.fault_rwsem */
	down_read(&mr->nic->fault_rwsem);
	if (READ_ONCE(mr->nic->dead)) {
		ret = -ENODEV;
		goto out_unlock_fault;
	}
	WRITE_ONCE(mr->faulting, true);
	ret = edu_nic_odp_map_dma_and_lock(mr, write);
	WRITE_ONCE(mr->faulting, false);
	if (ret < 0) {
		edu_nic_hold_wait(&edu_nic_odp_hold_knob);
		mutex_lock(mr->lock);
		/* What the map step mapped before it failed: all or nothing */
		edu_nic_odp_unmap_all(odp);
		/* It walked into invalidations for a second: go on waiting */
		if (ret == -EBUSY) {
			edu_nic_mr_count(mr, fault_retries, 1);
			ret = -EAGAIN;
		}
		mutex_unlock(mr->lock);
		/* The registering process is gone: its memory is too */
		if (ret == -EINVAL)
			ret = -EFAULT;
		goto out_unlock_fault;
	}
	if (READ_ONCE(mr->nic->dead)) {
		edu_nic_odp_unmap_all(odp);
		mutex_unlock(mr->lock);
		ret = -ENODEV;
		goto out_unlock_fault;
	}
	edu_nic_odp_installed(mr, write);
	ret = 0;

out_unlock_fault:
	up_read(&mr->nic->fault_rwsem);
	return ret;
}

/* Is the mirror installed, and writable if @write? */
static bool edu_nic_odp_usable(struct edu_nic_mr *mr, bool write)
{
	lockdep_assert_held(mr->lock);
	return mr->valid && (mr->writable || !write);
}

/*
 * Return with mr->lock held and the mirror installed, writable if @write.
 * An invalidation racing with the fault (an exporter moving the memory) is
 * contention: retry, as users of hmm_range_fault() loop on -EBUSY. Each
 * retry waits in the exporter, so this does not spin. Only signals end
 * the wait: -EINTR for a fatal one, else -ERESTARTSYS.
 */
static int edu_nic_odp_lock_mirror(struct edu_nic_mr *mr, bool write)
{
	int ret;

	lockdep_assert_held(&mr->op_lock);

	for (;;) {
		mutex_lock(mr->lock);
		if (edu_nic_odp_usable(mr, write))
			return 0;
		/* A read-only mirror cannot serve a write: fault it again. */
		edu_nic_odp_unmap_locked(mr);
		mutex_unlock(mr->lock);

		if (fatal_signal_pending(current))
			return -EINTR;
		ret = edu_nic_odp_fault(mr, write);
		if (ret == -EAGAIN && signal_pending(current))
			return -ERESTARTSYS;
		/* An exporter's interrupted wait: EINTR only if fatal */
		if (ret == -EINTR && !fatal_signal_pending(current))
			return -ERESTARTSYS;
		if (ret != -EAGAIN)
			return ret;
		cond_resched();
	}
}

/* Lock the mirror if installed (writable if @write), else -EAGAIN */
static int edu_nic_odp_lock_installed(struct edu_nic_mr *mr, bool write)
{
	mutex_lock(mr->lock);
	if (edu_nic_odp_usable(mr, write))
		return 0;
	mutex_unlock(mr->lock);
	return -EAGAIN;
}

static void edu_nic_odp_unlock_mirror(struct edu_nic_mr *mr)
{
	mutex_unlock(mr->lock);
}

static void edu_nic_odp_kill(struct edu_nic_mr *mr)
{
	mutex_lock(mr->lock);
	edu_nic_odp_unmap_locked(mr);
	mutex_unlock(mr->lock);
}

static void edu_nic_odp_release(struct edu_nic_mr *mr)
{
	edu_nic_odp_kill(mr);
	/* Removes the notifier: no callback runs after this */
	ib_umem_odp_release(mr->odp);
}

static bool edu_nic_odp_first_dma_addr(struct edu_nic_mr *mr,
				       dma_addr_t *addr)
{
	bool valid;

	mutex_lock(mr->lock);
	valid = mr->valid;
	if (valid)
		*addr = edu_nic_odp_addr(mr, 0);
	mutex_unlock(mr->lock);
	return valid;
}

static const struct edu_nic_mr_ops edu_nic_odp_ops = {
	.lock_mirror = edu_nic_odp_lock_mirror,
	.lock_installed = edu_nic_odp_lock_installed,
	.unlock_mirror = edu_nic_odp_unlock_mirror,
	.addr = edu_nic_odp_addr,
	.page_sysmem = edu_nic_odp_page_sysmem,
	.sync_dir = edu_nic_odp_sync_dir,
	.bus_addr = edu_nic_odp_bus_addr,
	.first_dma_addr = edu_nic_odp_first_dma_addr,
	.kill = edu_nic_odp_kill,
	.release = edu_nic_odp_release,
};

/*
 * Advisory, as the vmas may change later, but a bad range shows at once:
 * fully mapped, and writable for write access.
 */
static int edu_nic_odp_check_vmas(struct mm_struct *mm, unsigned long start,
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

/**
 * edu_nic_odp_create - make a registration of a range of the address space
 * @f: the open file; its mm is the caller's
 * @req: the validated request
 *
 * Return: the region with one reference, not yet published (the ioctl
 * publishes it once it has its key), or an ERR_PTR().
 */
struct edu_nic_mr *edu_nic_odp_create(struct edu_nic_file *f,
				      const struct edu_nic_reg_mr *req)
{
	bool write = req->access & EDU_NIC_ACCESS_WRITE;
	struct ib_umem_odp *odp;
	struct edu_nic_mr *mr;
	int ret;

	ret = edu_nic_odp_check_vmas(f->mm, req->addr, req->addr + req->length,
				     write);
	if (ret)
		return ERR_PTR(ret);

	mr = edu_nic_mr_alloc(f->nic, req->addr, req->length, req->access,
			      EDU_NIC_KIND_VMA, &edu_nic_odp_ops);
	if (!mr)
		return ERR_PTR(-ENOMEM);

	odp = ib_umem_odp_get(&f->nic->ibdev, mr->start, mr->length,
			      IB_ACCESS_ON_DEMAND |
			      (write ? IB_ACCESS_LOCAL_WRITE : 0),
			      &edu_nic_odp_notifier_ops);
	if (IS_ERR(odp)) {
		ret = PTR_ERR(odp);
		goto err_free_mr;
	}
	mr->odp = odp;
	ret = edu_nic_odp_map_init(mr);
	if (ret)
		goto err_release_odp;
	/* The core then walks as an importer without p2p support */
	if (req->flags & EDU_NIC_REG_MR_NO_P2P)
		odp->p2p_importer = NULL;
	mr->lock = &odp->umem_mutex;
	edu_nic_mr_lockdep_taint(mr->lock);

	/* The invalidate callback finds the region from now on */
	mutex_lock(mr->lock);
	odp->private = mr;
	mutex_unlock(mr->lock);
	return mr;

err_release_odp:
	ib_umem_odp_release(odp);
err_free_mr:
	edu_nic_mr_free(mr);
	return ERR_PTR(ret);
}
