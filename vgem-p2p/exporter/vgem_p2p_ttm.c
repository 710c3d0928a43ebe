// SPDX-License-Identifier: GPL-2.0
/*
 * The TTM driver: placements and moves between VRAM (vgem_p2p_vram_mgr.c)
 * and TTM_PL_SYSTEM; no GART. In a move TTM zaps CPU mappings and so vma
 * importers; vgem_p2p_bo_move() tells dma-buf importers, waits for fences
 * and copies with ttm_bo_move_memcpy(), as drivers without a copy engine do.
 */
#include <linux/mm.h>
#include <linux/slab.h>

#include <drm/drm_drv.h>
#include <drm/ttm/ttm_tt.h>

#include "vgem_p2p_drv.h"
#include "vgem_p2p_trace.h"

/* A ttm_tt that knows its object, for the resident pages fdinfo shows */
struct vgem_p2p_tt {
	struct ttm_tt ttm;
	struct vgem_p2p_object *bo;
};

static const struct ttm_place vgem_p2p_sys_place = {
	.mem_type = TTM_PL_SYSTEM,
};

struct ttm_placement vgem_p2p_sys_placement = {
	.num_placement = 1,
	.placement = &vgem_p2p_sys_place,
#if LINUX_VERSION_CODE < KERNEL_VERSION(7, 0, 0)
	/* 6.1 retires: busy_placement, whose place is tried both ways on 7.2 */
	.num_busy_placement = 1,
	.busy_placement = &vgem_p2p_sys_place,
#endif
};

static struct ttm_tt *vgem_p2p_tt_create(struct ttm_buffer_object *tbo,
					 u32 page_flags)
{
	struct vgem_p2p_tt *tt = kzalloc(sizeof(*tt), GFP_KERNEL);

	if (!tt)
		return NULL;
	tt->bo = tbo_to_bo(tbo);
	/*
	 * TTM asks for zeroed pages unless a move from VRAM is to fill them:
	 * zeroing those too doubled the cost of an eviction.
	 */
	if (ttm_tt_init(&tt->ttm, tbo, page_flags, ttm_cached, 0)) {
		kfree(tt);
		return NULL;
	}
	return &tt->ttm;
}

/*
 * An object may be larger than RAM, as vgem's dumb buffers may. -ENOMEM
 * beats the OOM killer: at most half of RAM per object (ttm_pages_limit's
 * share for all), and __GFP_RETRY_MAYFAIL on every path, fault included.
 */
static int vgem_p2p_tt_populate(struct ttm_device *bdev, struct ttm_tt *ttm,
				struct ttm_operation_ctx *ctx)
{
	struct vgem_p2p_tt *tt = container_of(ttm, struct vgem_p2p_tt, ttm);
	struct ttm_operation_ctx mayfail = *ctx;
	int ret;

	if (ttm->num_pages > totalram_pages() / 2)
		return -ENOMEM;
	mayfail.gfp_retry_mayfail = true;
	ret = ttm_pool_alloc(&bdev->pool, ttm, &mayfail);
	if (!ret)
		WRITE_ONCE(tt->bo->nr_pages, ttm->num_pages);
	return ret;
}

static void vgem_p2p_tt_unpopulate(struct ttm_device *bdev, struct ttm_tt *ttm)
{
	struct vgem_p2p_tt *tt = container_of(ttm, struct vgem_p2p_tt, ttm);

	WRITE_ONCE(tt->bo->nr_pages, 0);
	ttm_pool_free(&bdev->pool, ttm);
}

static void vgem_p2p_tt_destroy(struct ttm_device *bdev, struct ttm_tt *ttm)
{
	ttm_tt_fini(ttm);
	kfree(container_of(ttm, struct vgem_p2p_tt, ttm));
}

static void vgem_p2p_evict_flags(struct ttm_buffer_object *tbo,
				 struct ttm_placement *placement)
{
	*placement = vgem_p2p_sys_placement;
}

/*
 * Busy objects are evicted last: their move waits for their fences. Only
 * when nothing idle makes room does vgem_p2p_evict_for() mark the places
 * VGEM_P2P_PL_FLAG_EVICT_BUSY. Never evicting them let anyone who holds a
 * handle keep an object in VRAM for good, one vgem fence after another.
 */
static bool vgem_p2p_eviction_valuable(struct ttm_buffer_object *tbo,
				       const struct ttm_place *place)
{
	return ((place->flags & VGEM_P2P_PL_FLAG_EVICT_BUSY) ||
		dma_resv_test_signaled(tbo->base.resv,
				       DMA_RESV_USAGE_BOOKKEEP)) &&
	       ttm_bo_eviction_valuable(tbo, place);
}

static void vgem_p2p_moved(struct vgem_p2p_object *bo, bool evict, u64 from,
			   u64 to)
{
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);

	WRITE_ONCE(bo->vram_offset, to);
	bo->moves++;
	atomic64_inc(&vdev->stats.moves);
	atomic64_add(bo->tbo.base.size, &vdev->stats.bytes_copied);
	/* callers of other moves set their own reason */
	if (evict)
		bo->reason = VGEM_P2P_REASON_EVICTED;
	/* every move out of VRAM counts as an eviction */
	if (to == VGEM_P2P_NOWHERE) {
		atomic64_inc(&vdev->stats.evictions);
		trace_vgem_p2p_evict(bo, from);
	} else {
		trace_vgem_p2p_move(bo, from, to);
	}
}

/*
 * Within VRAM, as a copy engine would (amdgpu_move_blit()), a page at a
 * time through the BAR's mapping: ttm_bo_move_memcpy() would ioremap()
 * both ranges and copy through 128-byte bounces. The two ranges are both
 * allocated, so they do not overlap. Return: false without a bounce page.
 */
static bool vgem_p2p_copy_in_vram(struct vgem_p2p_device *vdev, u64 from,
				  u64 to, u64 size)
{
	void *bounce = kmalloc(PAGE_SIZE, GFP_KERNEL);
	u64 off;

	if (!bounce)
		return false;
	for (off = 0; off < size; off += PAGE_SIZE) {
		memcpy_fromio(bounce, vdev->bar + from + off, PAGE_SIZE);
		memcpy_toio(vdev->bar + to + off, bounce, PAGE_SIZE);
		cond_resched();
	}
	kfree(bounce);
	return true;
}

/*
 * ttm_device_funcs.move. CPU mappings and vma importers are gone already;
 * dma-buf importers may use the old place until their fences signal.
 */
static int vgem_p2p_bo_move(struct ttm_buffer_object *tbo, bool evict,
			    struct ttm_operation_ctx *ctx,
			    struct ttm_resource *new_mem, struct ttm_place *hop)
{
	struct vgem_p2p_object *bo = tbo_to_bo(tbo);
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);
	struct ttm_resource *old_mem = tbo->resource;
	/*
	 * A new BO has no resource yet on 7.2 (ttm_bo_init_reserved() moves
	 * it into its first placement): nothing to copy, as from system
	 * memory without pages. 6.1 gave it a system resource first.
	 */
	bool from_vram = old_mem && old_mem->mem_type == TTM_PL_VRAM;
	bool to_vram = new_mem->mem_type == TTM_PL_VRAM;
	bool create = !bo->created;
	u64 from = from_vram ? (u64)old_mem->start << PAGE_SHIFT :
			       VGEM_P2P_NOWHERE;
	u64 to = to_vram ? (u64)new_mem->start << PAGE_SHIFT :
			   VGEM_P2P_NOWHERE;
	long lret;
	int ret;

	if (!from_vram && !to_vram) {
		ttm_bo_move_null(tbo, new_mem);
		return 0;
	}
	/*
	 * Left in VRAM when unbind closed it (its eviction failed): nothing
	 * to copy from, so the pages must be zeroed. It leaves VRAM all the
	 * same: the charge goes, and readers without the dma_resv see it go.
	 */
	if (from_vram && READ_ONCE(vdev->vram_closed)) {
		if (tbo->ttm)
			tbo->ttm->page_flags |= TTM_TT_FLAG_ZERO_ALLOC;
		ttm_bo_move_null(tbo, new_mem);
		vgem_p2p_vram_uncharge(bo);
		WRITE_ONCE(bo->vram_offset, VGEM_P2P_NOWHERE);
		return 0;
	}
	/* vgem_p2p_place_where() charged it, whoever asked */
	WARN_ON_ONCE(to_vram && !from_vram && !bo->vram_charge);
	if (!create) {
		atomic64_inc(&vdev->stats.invalidations);
		trace_vgem_p2p_invalidate(bo, READ_ONCE(bo->nr_maps));
		vgem_p2p_dmabuf_move_notify(bo);
	}
	lret = dma_resv_wait_timeout(tbo->base.resv, DMA_RESV_USAGE_BOOKKEEP,
				     ctx->interruptible, MAX_SCHEDULE_TIMEOUT);
	if (lret < 0)
		return lret;
	if (create)
		vgem_p2p_hold_wait(&vdev->hold_in_clear);
	else
		trace_vgem_p2p_move_begin(bo, from, to);
	if (from_vram && to_vram &&
	    vgem_p2p_copy_in_vram(vdev, from, to, tbo->base.size)) {
		ttm_bo_move_sync_cleanup(tbo, new_mem);
	} else {
		/* also clears new VRAM: a new object's, or one never written */
		ret = ttm_bo_move_memcpy(tbo, ctx, new_mem);
		if (ret)
			return ret;
	}

	if (from_vram && !to_vram)
		vgem_p2p_vram_uncharge(bo);
	if (create)
		WRITE_ONCE(bo->vram_offset, to);
	else
		vgem_p2p_moved(bo, evict, from, to);
	return 0;
}

/* Freed in VRAM: the charge goes with it (the range is poisoned) */
static void vgem_p2p_delete_mem_notify(struct ttm_buffer_object *tbo)
{
	if (tbo->resource && tbo->resource->mem_type == TTM_PL_VRAM)
		vgem_p2p_vram_uncharge(tbo_to_bo(tbo));
}

/* Swapped out: the pages dma-buf importers map are going */
static void vgem_p2p_swap_notify(struct ttm_buffer_object *tbo)
{
	vgem_p2p_dmabuf_move_notify(tbo_to_bo(tbo));
}

static int vgem_p2p_io_mem_reserve(struct ttm_device *bdev,
				   struct ttm_resource *mem)
{
	switch (mem->mem_type) {
	case TTM_PL_SYSTEM:
		return 0;
	case TTM_PL_VRAM:
		mem->bus.offset = bdev_to_vdev(bdev)->bar_phys +
				  ((u64)mem->start << PAGE_SHIFT);
		mem->bus.is_iomem = true;
		mem->bus.caching = ttm_write_combined;
		return 0;
	default:
		return -EINVAL;
	}
}

struct ttm_device_funcs vgem_p2p_ttm_funcs = {
	.ttm_tt_create = vgem_p2p_tt_create,
	.ttm_tt_populate = vgem_p2p_tt_populate,
	.ttm_tt_unpopulate = vgem_p2p_tt_unpopulate,
	.ttm_tt_destroy = vgem_p2p_tt_destroy,
	.eviction_valuable = vgem_p2p_eviction_valuable,
	.evict_flags = vgem_p2p_evict_flags,
	.move = vgem_p2p_bo_move,
	.delete_mem_notify = vgem_p2p_delete_mem_notify,
	.swap_notify = vgem_p2p_swap_notify,
	.io_mem_reserve = vgem_p2p_io_mem_reserve,
#if LINUX_VERSION_CODE < KERNEL_VERSION(7, 0, 0)
	/* 6.1 retires: drm-patches/' TTM vma hook; B6 of series B on 7.2 */
	.p2p_access = vgem_p2p_ttm_p2p_access,
	.p2p_provider = vgem_p2p_ttm_p2p_provider,
	.p2p_unreachable = vgem_p2p_ttm_p2p_unreachable,
#endif
};

/*
 * A move waits for the object's fences (a vgem fence: up to 10 s), under
 * mmap_lock in a CPU fault or p2p_lookup: a signal ends the wait, with
 * -EINTR, which p2p_lookup's callers and the ioctls' document; TTM says
 * -ERESTARTSYS. Unbind's eviction has a context of its own, which waits.
 */
static int vgem_p2p_validate(struct vgem_p2p_object *bo,
			     struct ttm_placement *placement)
{
	struct ttm_operation_ctx ctx = { .interruptible = true };
	int ret;

	ret = ttm_bo_validate(&bo->tbo, placement, &ctx);
	return ret == -ERESTARTSYS ? -EINTR : ret;
}

/*
 * TTM without a ww ticket only try-locks what it would evict, and says
 * -ENOMEM when what it skipped was reserved. Wait for that, killably, as
 * long as someone holds or frees what would make room; but two MOVEs
 * that each hold what the other would evict would wait for each other
 * for ever. So a MOVE of an object in VRAM, which others may be waiting
 * for, lets its reservation go when what it waits for is lower in a
 * fixed order (vgem_p2p_vram_busy()'s): -EDEADLK and *@backoff, for
 * vgem_p2p_move_ioctl() to wait on unreserved. Wait-die with an order
 * for age, as ww_mutex does, but TTM 6.1 cannot back off a ticket it
 * was given: it would try the next busy place with the one that died.
 * When only busy objects would make room, evict those too, as the last
 * resort (VGEM_P2P_PL_FLAG_EVICT_BUSY on @busy, @pl's busy places): the
 * eviction's move waits for their fences, interruptibly, as any move of
 * ours (vgem fences expire within 10 s).
 */
static int vgem_p2p_evict_for(struct vgem_p2p_object *bo,
			      struct ttm_placement *pl, struct ttm_place *busy,
			      struct vgem_p2p_object **backoff)
{
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);
	unsigned int again = 0, full = 0, i;
	int ret;

	for (;;) {
		struct vgem_p2p_object *held;

		ret = vgem_p2p_validate(bo, pl);
		if (ret != -ENOMEM)
			return ret;
		switch (vgem_p2p_vram_busy(vdev, bo, pl, &held)) {
		case VGEM_P2P_VRAM_FULL:
			/*
			 * Nothing in the way now: what TTM found reserved
			 * left meanwhile (freed, or evicted by another
			 * move). Full only if it still does not fit.
			 */
			if (++full > 1)
				return -ENOSPC;
			continue;
		case VGEM_P2P_VRAM_FENCED:
			/* @pl's places TTM evicts for are the first of @busy */
			for (i = 0; vgem_p2p_pl_evict_place(pl, i); i++)
				busy[i].flags |= VGEM_P2P_PL_FLAG_EVICT_BUSY;
			again = 0;
			full = 0;
			continue;
		case VGEM_P2P_VRAM_AGAIN:
			/* not for ever: TTM may fail to evict for want of RAM */
			if (++again > VGEM_P2P_EVICT_AGAIN)
				return -ENOSPC;
			full = 0;
			cond_resched();
			continue;
		case VGEM_P2P_VRAM_HELD:
			if (backoff && held < bo && vgem_p2p_resident_vram(bo)) {
				atomic64_inc(&vdev->stats.backoffs);
				*backoff = held;
				return -EDEADLK;
			}
			vgem_p2p_bo_put(&held->tbo);
			break;
		case VGEM_P2P_VRAM_FREEING:
			vgem_p2p_free_wq_flush();
			break;
		}
		again = 0;
		full = 0;
		schedule_timeout_killable(1);
		if (fatal_signal_pending(current))
			return -EINTR;
	}
}

static int vgem_p2p_place_in_vram(struct vgem_p2p_object *bo,
				  enum vgem_p2p_where where,
				  struct vgem_p2p_object **backoff)
{
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);
	struct ttm_resource *res = bo->tbo.resource;
	unsigned long npages = vgem_p2p_npages(bo);
	struct ttm_place places[2] = {
		{ .mem_type = TTM_PL_VRAM, .flags = VGEM_P2P_PL_NO_EVICT },
		{ .mem_type = TTM_PL_VRAM, .flags = VGEM_P2P_PL_NO_EVICT },
	};
	struct ttm_placement pl = { .num_placement = 1, .placement = places };
	int ret;

	if (vgem_p2p_resident_vram(bo) && where == VGEM_P2P_TO_VRAM_ELSEWHERE) {
		/*
		 * Wholly above or below it; no "below" range where it cannot
		 * fit (lpfn 0 means anywhere; TTM would evict in vain).
		 */
		places[0].fpfn = res->start + npages;
		if (res->start >= npages) {
			places[1] = places[0];
			places[0].fpfn = 0;
			places[0].lpfn = res->start;
			pl.num_placement = 2;
		}
	}

	ret = vgem_p2p_validate(bo, &pl);
	if (ret != -ENOMEM)
		return ret;
	if (vgem_p2p_vram_fragmented(vdev, bo->tbo.base.size)) {
		vgem_p2p_compact(vdev);
		ret = vgem_p2p_validate(bo, &pl);
		if (ret != -ENOMEM)
			return ret;
	}
	if (where == VGEM_P2P_RETURN_TO_VRAM)
		return -ENOSPC;
	vgem_p2p_pl_evict(&pl, places);
	return vgem_p2p_evict_for(bo, &pl, places, backoff);
}

/*
 * On the way in, the caller's process is charged first, so that an object
 * over quota evicts nobody (vgem_p2p_vram_charge()); the charge goes back
 * if the object did not get there.
 */
static int vgem_p2p_place_where(struct vgem_p2p_object *bo,
				enum vgem_p2p_where where,
				struct vgem_p2p_object **backoff)
{
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);
	bool charged = false;
	int ret;

	dma_resv_assert_held(bo->tbo.base.resv);

	if (where == VGEM_P2P_TO_SYSTEM) {
		struct ttm_operation_ctx ctx = { .interruptible = false };

		ret = vgem_p2p_validate(bo, &vgem_p2p_sys_placement);
		return ret ?: ttm_bo_populate(&bo->tbo, &ctx);
	}
	if (bo->tbo.pin_count)
		return -EINVAL;
	if (bo->tbo.base.size > vdev->vram_size)
		return -ENOSPC;
	if (!vgem_p2p_resident_vram(bo)) {
		ret = vgem_p2p_vram_charge(bo);
		if (ret)
			return ret;
		charged = true;
	}
	ret = vgem_p2p_place_in_vram(bo, where, backoff);
	if (charged && !vgem_p2p_resident_vram(bo))
		vgem_p2p_vram_uncharge(bo);
	return ret;
}

/*
 * Into VRAM: where there is room, else after compacting, else (not for
 * RETURN_TO_VRAM) by evicting the oldest (TTM's LRU), waiting killably
 * for objects TTM skipped as reserved by others or being freed; without
 * busy placement TTM never evicts and says -ENOMEM. Into system memory
 * fully populated: whoever asks uses every page. @reason
 * (VGEM_P2P_REASON_*) is recorded if the object was in VRAM or is now: a
 * move between system pages is none.
 * Return: 0; -ENOSPC without room; -EDQUOT past the calling process's
 * quota; -EINVAL pinned; -ENOMEM for system memory; -EINTR if a signal
 * ended a wait for the object's fences, or a fatal one a wait for room.
 */
int vgem_p2p_place(struct vgem_p2p_object *bo, enum vgem_p2p_where where,
		   u32 reason)
{
	bool was_in_vram = vgem_p2p_resident_vram(bo);
	int ret = vgem_p2p_place_where(bo, where, NULL);

	if (!ret && (was_in_vram || vgem_p2p_resident_vram(bo)))
		bo->reason = reason;
	return ret;
}

/**
 * vgem_p2p_move_to_vram - into VRAM elsewhere, for MOVE
 * @bo: the object, reserved
 * @backoff: on -EDEADLK, a referenced object to wait for unreserved
 *
 * As vgem_p2p_place() with VGEM_P2P_TO_VRAM_ELSEWHERE, but may ask its
 * caller to let @bo's reservation go, wait for *@backoff's and start
 * over: see vgem_p2p_evict_for().
 *
 * Return: as vgem_p2p_place(); -EDEADLK to back off.
 */
int vgem_p2p_move_to_vram(struct vgem_p2p_object *bo,
			  struct vgem_p2p_object **backoff)
{
	int ret = vgem_p2p_place_where(bo, VGEM_P2P_TO_VRAM_ELSEWHERE,
				       backoff);

	if (!ret)
		bo->reason = VGEM_P2P_REASON_MOVE;
	return ret;
}

/*
 * Into VRAM at @offset, evicting and compacting nothing, for MOVE.
 * Return: 0; -EBUSY
 * if any of the range is allocated, to this object too; -EDQUOT; -EINVAL
 * pinned.
 */
int vgem_p2p_place_at(struct vgem_p2p_object *bo, u64 offset)
{
	struct ttm_resource *res = bo->tbo.resource;
	struct ttm_place place = {
		.mem_type = TTM_PL_VRAM,
		.fpfn = offset >> PAGE_SHIFT,
		.lpfn = (offset >> PAGE_SHIFT) + vgem_p2p_npages(bo),
		.flags = VGEM_P2P_PL_NO_EVICT,
	};
	struct ttm_placement pl = { .num_placement = 1, .placement = &place };
	bool charged = false;
	int ret;

	dma_resv_assert_held(bo->tbo.base.resv);

	if (bo->tbo.pin_count)
		return -EINVAL;
	if (vgem_p2p_resident_vram(bo)) {
		if (res->start < place.lpfn &&
		    place.fpfn < res->start + vgem_p2p_npages(bo))
			return -EBUSY;
	} else {
		ret = vgem_p2p_vram_charge(bo);
		if (ret)
			return ret;
		charged = true;
	}
	ret = vgem_p2p_validate(bo, &pl);
	if (charged && !vgem_p2p_resident_vram(bo))
		vgem_p2p_vram_uncharge(bo);
	if (ret)
		return ret == -ENOMEM ? -EBUSY : ret;
	bo->reason = VGEM_P2P_REASON_MOVE;
	return 0;
}

/**
 * vgem_p2p_save_from_vram - after unplug, what unbind's eviction would do
 * @bo: the object, reserved
 *
 * drm_dev_unplug() zaps every mapping before vgem_p2p_evict_all() saves
 * VRAM to system memory; whoever needs @bo's data meanwhile (a CPU fault)
 * moves it there itself. Unbind closes VRAM, and returns, only after the
 * copy: the BAR is mapped until then.
 *
 * Return: 0 if @bo is in system memory now; -ENODEV if it was lost with
 * VRAM (its eviction failed); or what the move failed with.
 */
int vgem_p2p_save_from_vram(struct vgem_p2p_object *bo)
{
	struct vgem_p2p_device *vdev = obj_to_vdev(bo);
	int ret = -ENODEV;

	dma_resv_assert_held(bo->tbo.base.resv);

	if (!vgem_p2p_resident_vram(bo))
		return 0;
	down_read(&vdev->vram_close_lock);
	if (!vdev->vram_closed)
		ret = vgem_p2p_place(bo, VGEM_P2P_TO_SYSTEM,
				     VGEM_P2P_REASON_EVICTED);
	up_read(&vdev->vram_close_lock);
	return ret;
}

/*
 * Must @bo stay in system memory, lest an importer without the BAR bounce it
 * back? As amdgpu_dma_buf_pin() does for dma-buf attachments without p2p.
 */
bool vgem_p2p_held_in_system(struct vgem_p2p_object *bo)
{
	return READ_ONCE(bo->nr_refused_maps) ||
	       atomic_read(&bo->nr_system_attachments);
}

/* Why @bo is where it is: VGEM_P2P_REASON_* */
u32 vgem_p2p_placement_reason(struct vgem_p2p_object *bo)
{
	dma_resv_assert_held(bo->tbo.base.resv);

	if (!vgem_p2p_in_vram(bo) && bo->tbo.pin_count)
		return VGEM_P2P_REASON_PINNED;
	if (!vgem_p2p_in_vram(bo) && vgem_p2p_held_in_system(bo))
		return VGEM_P2P_REASON_NO_P2P_IMPORTER;
	return bo->reason;
}

/* A use (fault, p2p lookup, dma-buf map) brings evicted @bo back, if it fits */
void vgem_p2p_return(struct vgem_p2p_object *bo)
{
	if (!(bo->flags & VGEM_P2P_CREATE_SYSTEM) && !bo->tbo.pin_count &&
	    !vgem_p2p_resident_vram(bo) && !vgem_p2p_held_in_system(bo))
		vgem_p2p_place(bo, VGEM_P2P_RETURN_TO_VRAM,
			       VGEM_P2P_REASON_RETURNED);
}
