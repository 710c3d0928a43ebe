// SPDX-License-Identifier: MIT
/*
 * What p2p saves: a stream of VRAM into the importer (EDU_NIC_MODE_BULK,
 * the CPU copying through the very addresses the device would use), from
 * an object p2p may reach and from one whose export flags deny it
 * (VGEM_P2P_CREATE_NO_P2P), which the exporter serves from system memory
 * after moving it there: the fallback a topology without p2p gets.
 *  - *-cold: register (prefetch) and stream, as a first transfer does;
 *  - *-warm: stream again over the mirror that is now in place;
 *  - memcpy-bar: the CPU copying the same amount out of a VRAM mmap, the
 *    practical limit of anything reading the BAR in this guest.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bench.h"

#define STREAM_CHUNK	MiB

enum stream_case {
	ST_MEMCPY, ST_P2P_COLD, ST_P2P_WARM, ST_FB_COLD, ST_FB_WARM,
	NR_STREAM_CASES,
};

static const char *const stream_names[NR_STREAM_CASES] = {
	"memcpy-bar", "p2p-cold", "p2p-warm", "fallback-cold",
	"fallback-warm",
};

/* The ratio each case is reported against. */
static const char *const stream_base[NR_STREAM_CASES] = {
	"p2p-warm", NULL, NULL, "p2p-cold", "p2p-warm",
};

struct stream_ctx {
	struct bench *b;
	uint64_t size;
	char *buf;
	double ns[NR_STREAM_CASES][99];
	int64_t cnt[NR_STREAM_CASES][99][NR_COUNTERS];
	unsigned int busy[NR_STREAM_CASES];
};

/* The whole region into the user buffer, a chunk per DMA ioctl. */
static int stream_read(struct stream_ctx *s, uint32_t key)
{
	uint64_t off;
	int ret;

	for (off = 0; off < s->size; off += STREAM_CHUNK) {
		ret = vp2p_dma(s->b->ifd, key, EDU_NIC_DMA_FROM_MR,
			       EDU_NIC_MODE_BULK, off, s->buf, STREAM_CHUNK);
		if (ret)
			return ret;
	}
	/* The last chunk's first page: did the data come from the object? */
	if (*(uint64_t *)s->buf != (s->size - STREAM_CHUNK) / BENCH_PAGE + 7)
		return -EIO;
	return 0;
}

/* A fresh object, cold then warm stream; @cold and @warm: the cases. */
static int stream_object(struct stream_ctx *s, uint32_t flags,
			 unsigned int r, enum stream_case cold,
			 enum stream_case warm)
{
	struct bench *b = s->b;
	struct bench_snap s0, s1, s2;
	uint64_t t0, t1, t2;
	struct vp2p_bo bo;
	uint32_t key;
	void *p;
	int ret;

	ret = vp2p_bo_create(b->efd, s->size, flags, &bo);
	if (ret)
		return bench_fail(ret, "stream: object");
	ret = vp2p_bo_mmap(b->efd, &bo, PROT_READ | PROT_WRITE, &p);
	if (ret)
		goto out_close;
	bench_touch(p, s->size, 7);

	ret = bench_snap(b, &s0);
	if (ret)
		goto out_munmap;
	t0 = bench_now_ns();
	/* The fallback's move may take retries: see bench_register(). */
	ret = bench_register(b, p, s->size, 0, &key, &s->busy[cold]);
	if (ret)
		goto out_munmap;
	ret = stream_read(s, key);
	t1 = bench_now_ns();
	if (!ret)
		ret = bench_snap(b, &s1);
	if (!ret)
		ret = stream_read(s, key);
	t2 = bench_now_ns();
	if (!ret)
		ret = bench_snap(b, &s2);
	vp2p_mr_deregister(b->ifd, key);
	if (ret)
		goto out_munmap;

	s->ns[cold][r] = t1 - t0;
	s->ns[warm][r] = t2 - t1;
	bench_delta(&s0, &s1, s->cnt[cold][r]);
	bench_delta(&s1, &s2, s->cnt[warm][r]);
out_munmap:
	vp2p_bo_munmap(&bo, p);
out_close:
	vp2p_bo_close(b->efd, &bo);
	if (ret)
		bench_fail(ret, "stream: %s", stream_names[cold]);
	return ret;
}

static int stream_memcpy(struct stream_ctx *s, char *bar, unsigned int r)
{
	uint64_t t0, off;

	t0 = bench_now_ns();
	for (off = 0; off < s->size; off += STREAM_CHUNK)
		memcpy(s->buf, bar + off, STREAM_CHUNK);
	s->ns[ST_MEMCPY][r] = bench_now_ns() - t0;
	return 0;
}

int bench_stream(struct bench *b)
{
	struct stream_ctx *s;
	struct bench_row *row;
	struct vp2p_bo bar_bo;
	unsigned int r, c;
	void *bar = NULL;
	int ret;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->b = b;
	s->size = b->stream_size < STREAM_CHUNK ? STREAM_CHUNK :
		  b->stream_size / STREAM_CHUNK * STREAM_CHUNK;
	if (s->size * 2 > b->vinfo.vram_size) {
		s->size = b->vinfo.vram_size / 2 / STREAM_CHUNK * STREAM_CHUNK;
		bench_note(b, "stream: capped at %llu MiB (half the VRAM)",
			   (unsigned long long)(s->size / MiB));
	}
	s->buf = bench_anon(STREAM_CHUNK);
	ret = -ENOMEM;
	if (!s->buf)
		goto out_free;
	bench_touch(s->buf, STREAM_CHUNK, 0);

	ret = vp2p_bo_create(b->efd, s->size, 0, &bar_bo);
	if (ret)
		goto out_unmap_buf;
	ret = vp2p_bo_mmap(b->efd, &bar_bo, PROT_READ | PROT_WRITE, &bar);
	if (ret)
		goto out_close;
	bench_touch(bar, s->size, 7);

	for (r = 0; r < b->reps; r++) {
		bench_progress(b, "stream: %llu MiB, repetition %u",
			       (unsigned long long)(s->size / MiB), r + 1);
		ret = stream_memcpy(s, bar, r);
		if (!ret)
			ret = stream_object(s, 0, r, ST_P2P_COLD, ST_P2P_WARM);
		if (!ret)
			ret = stream_object(s, VGEM_P2P_CREATE_NO_P2P, r,
					    ST_FB_COLD, ST_FB_WARM);
		if (ret)
			goto out_munmap;
	}

	for (c = 0; c < NR_STREAM_CASES; c++)
		if (s->busy[c])
			bench_note(b, "stream: %s: registration got -EBUSY %u times in %u repetitions (edu_nic waits for a racing move: this is a bug); retried, on the clock",
				   stream_names[c], s->busy[c], b->reps);

	/* Baselines first, so that the ratios find them. */
	for (c = ST_P2P_COLD; c < NR_STREAM_CASES + 1; c++) {
		enum stream_case sc = c % NR_STREAM_CASES;

		row = bench_row_add(b, BENCH_STREAM, stream_names[sc],
				    s->size, 1);
		if (!row)
			break;
		bench_row_times(row, s->ns[sc], b->reps,
				sc == ST_MEMCPY ? NULL : s->cnt[sc]);
		if (stream_base[sc])
			bench_ratio(b, row, stream_base[sc]);
	}
out_munmap:
	vp2p_bo_munmap(&bar_bo, bar);
out_close:
	vp2p_bo_close(b->efd, &bar_bo);
out_unmap_buf:
	munmap(s->buf, STREAM_CHUNK);
out_free:
	free(s);
	return ret;
}
