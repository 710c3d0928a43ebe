// SPDX-License-Identifier: MIT
/*
 * bench_scale(), the scale benchmarks' run: lay the objects out, fork
 * the streamers, compact, then map-*, then info-*; the helpers it and
 * the benchmarks share are scale.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "scale.h"

int bench_scale(struct bench *b)
{
	struct drm_vgem_p2p_stats st;
	struct scale_ctx s = {
		.b = b,
		.nobjs = b->scale_objs,
		.regs = b->scale_regs,
		.procs = b->scale_procs,
	};
	uint64_t avail, tail, move_size = b->scale_move;
	uint64_t busy = 0, errors = 0, reads = 0;
	struct vp2p_bo big = { };
	unsigned int i, k;
	void *p;
	int ret;

	ret = vp2p_exporter_stats(b->efd, &st);
	if (ret)
		return bench_fail(ret, "scale: exporter stats");
	avail = st.vram_size - st.vram_used;
	s.base_used = st.vram_used;
	/* The objects and their fillers take all of VRAM but a tail. */
	s.obj_size = avail / (2 * s.nobjs) / BENCH_PAGE * BENCH_PAGE;
	if (s.obj_size < BENCH_PAGE)
		return bench_fail(-ENOSPC, "scale: %u objects and as many holes in %llu MiB of free VRAM",
				  s.nobjs, (unsigned long long)(avail / MiB));
	if (s.obj_size > EDU_NIC_MR_MAX_LENGTH)
		s.obj_size = EDU_NIC_MR_MAX_LENGTH;
	tail = avail - 2 * s.nobjs * s.obj_size;
	/* Larger than any hole (the top one is a filler and the tail) */
	s.big_size = s.nobjs * s.obj_size / 2 / BENCH_PAGE * BENCH_PAGE;
	if (s.big_size <= s.obj_size + tail)
		bench_note(b, "scale: the %llu KiB object fits in a hole of %llu KiB: no compaction",
			   (unsigned long long)(s.big_size >> 10),
			   (unsigned long long)((s.obj_size + tail) >> 10));
	/* After the compaction part, the big mover needs that much room */
	if (move_size > avail - s.nobjs * s.obj_size - SCALE_UNRELATED) {
		move_size = (avail - s.nobjs * s.obj_size - SCALE_UNRELATED) /
			    MiB * MiB;
		bench_note(b, "scale: moves of %llu MiB, not %llu: the VRAM left beside the objects",
			   (unsigned long long)(move_size / MiB),
			   (unsigned long long)(b->scale_move / MiB));
	}

	s.sh = mmap(NULL, sizeof(*s.sh), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	s.objs = calloc(s.nobjs, sizeof(*s.objs));
	s.fillers = calloc(s.nobjs, sizeof(*s.fillers));
	if (s.sh == MAP_FAILED || !s.objs || !s.fillers) {
		ret = -ENOMEM;
		goto out_free;
	}
	memset(s.sh, 0, sizeof(*s.sh));
	s.sh->phase = PH_PARK;

	bench_progress(b, "scale: %u objects of %llu KiB, %u registrations each over %u processes",
		       s.nobjs, (unsigned long long)(s.obj_size >> 10),
		       s.regs, s.procs);
	ret = scale_layout(&s, true);
	for (i = 0; i < s.nobjs && !ret; i++) {
		ret = vp2p_bo_mmap(b->efd, &s.objs[i], PROT_READ | PROT_WRITE,
				   &p);
		if (ret)
			break;
		scale_fill(p, s.obj_size, i);
		vp2p_bo_munmap(&s.objs[i], p);
	}
	/* In system memory, populated, as it is for later repetitions */
	if (!ret)
		ret = vp2p_bo_create(b->efd, s.big_size,
				     VGEM_P2P_CREATE_SYSTEM, &big);
	if (!ret)
		ret = vp2p_bo_move(b->efd, &big, VGEM_P2P_MOVE_SYSTEM, NULL);
	if (!ret)
		ret = scale_fork(&s);
	if (!ret)
		ret = scale_compact(&s, &big);
	if (!ret)
		ret = scale_park(&s);
	if (big.handle)
		vp2p_bo_close(b->efd, &big);
	/* its VRAM free before the unrelated object takes its place */
	if (!ret)
		ret = scale_wait_vram(&s, s.nobjs * s.obj_size);
	if (!ret)
		ret = scale_map(&s, move_size);
	if (!ret)
		ret = scale_queue(&s);

	for (k = 0; k < s.procs; k++) {
		reads += LOAD(s.sh->reads[k]);
		errors += LOAD(s.sh->errors[k]);
		busy += LOAD(s.sh->busy[k]);
	}
	scale_reap(&s);
	if (busy)
		bench_note(b, "scale: %llu DMA reads got -EBUSY (edu_nic gave up waiting for a move) and were retried",
			   (unsigned long long)busy);
	if (!ret && errors) {
		bench_note(b, "scale: %llu of %llu DMA reads returned wrong data; first: object %llu page %llu read 0x%llx",
			   (unsigned long long)errors,
			   (unsigned long long)reads,
			   (unsigned long long)LOAD(s.sh->bad_obj),
			   (unsigned long long)LOAD(s.sh->bad_page),
			   (unsigned long long)LOAD(s.sh->bad_got));
		ret = bench_fail(-EIO, "scale: data errors");
	}
	for (i = 0; i < s.nobjs; i++)
		if (s.objs[i].handle)
			vp2p_bo_close(b->efd, &s.objs[i]);
out_free:
	free(s.fillers);
	free(s.objs);
	if (s.sh != MAP_FAILED)
		munmap(s.sh, sizeof(*s.sh));
	return ret;
}
