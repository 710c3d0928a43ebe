// SPDX-License-Identifier: MIT
/*
 * Moves: forced moves within VRAM and to system memory, return to VRAM
 * on a CPU fault, compaction of fragmented VRAM, and eviction under VRAM
 * pressure. Contents must survive every move, through mappings that
 * existed before it.
 */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "vgem_p2p_common.h"

IGT_TEST_DESCRIPTION("vgem_p2p object moves, compaction and eviction");

/* Drop CAP_SYS_ADMIN from this process, keeping every other capability */
static void drop_sys_admin(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	igt_assert_eq(syscall(SYS_capget, &hdr, data), 0);
	data[CAP_TO_INDEX(CAP_SYS_ADMIN)].effective &=
		~CAP_TO_MASK(CAP_SYS_ADMIN);
	data[CAP_TO_INDEX(CAP_SYS_ADMIN)].permitted &=
		~CAP_TO_MASK(CAP_SYS_ADMIN);
	igt_assert_eq(syscall(SYS_capset, &hdr, data), 0);
}

/* One field of /proc/meminfo, in bytes */
static uint64_t meminfo(const char *field)
{
	char line[128];
	size_t len = strlen(field);
	FILE *f = fopen("/proc/meminfo", "r");
	bool found = false;
	uint64_t kb;

	igt_assert(f);
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, field, len) && line[len] == ':' &&
			sscanf(line + len + 1, "%" SCNu64, &kb) == 1;
	fclose(f);
	igt_assert_f(found, "no %s in /proc/meminfo\n", field);
	return kb * 1024;
}

/*
 * An importer's fence keeps what it mapped valid until it signals: a
 * move of the object waits for it. Nothing signals this fence but vgem's
 * own expiry, 10 s after the attach, so a move that waited returns with
 * it signalled, and one that did not finds it still pending.
 */
static void test_fence_waits_move(int fd)
{
	uint32_t h = vgem_p2p_create(fd, MiB, 0), fence = 0;
	uint32_t *p = vgem_p2p_mmap(fd, h, MiB, PROT_READ | PROT_WRITE);
	uint64_t moves = vgem_p2p_info(fd, h).moves;

	fill_pattern(p, MiB, 70);
	igt_assert_eq(vgem_p2p_fence_attach(fd, h, VGEM_FENCE_WRITE, &fence),
		      0);
	igt_assert_eq_u64(vgem_p2p_move(fd, h, VGEM_P2P_MOVE_SYSTEM, 0),
			  ~0ull);
	igt_assert_eq(vgem_p2p_fence_signal(fd, fence), -ETIMEDOUT);
	igt_assert_eq_u64(vgem_p2p_info(fd, h).moves, moves + 1);
	igt_assert(check_pattern(p, MiB, 70));
	munmap(p, MiB);
	gem_close(fd, h);
}

/*
 * A move waits for the object's fences (a vgem fence: 10 s) under the
 * object's reservation, and under mmap_lock when a CPU fault or an
 * importer's lookup moves it: the wait was uninterruptible, so SIGKILL
 * waited for the fence's expiry. A child MOVEs a fenced object; once it
 * is inside the ioctl it is killed: it is reaped with the fence still
 * pending, and the object has not moved.
 */
static void test_fenced_move_killable(int fd)
{
	uint32_t h = vgem_p2p_create(fd, MiB, 0), fence = 0;
	uint32_t *p = vgem_p2p_mmap(fd, h, MiB, PROT_READ | PROT_WRITE);
	struct drm_vgem_p2p_obj_info before;
	int i, status, signalled;
	bool inside = false;
	pid_t pid;

	fill_pattern(p, MiB, 72);
	before = vgem_p2p_info(fd, h);
	igt_assert_eq_u32(before.placement, VGEM_P2P_PLACEMENT_VRAM);
	igt_assert_eq(vgem_p2p_fence_attach(fd, h, VGEM_FENCE_WRITE, &fence),
		      0);
	pid = fork();
	igt_assert(pid >= 0);
	if (pid == 0) {
		uint64_t offset = 0;

		/* no igt_assert here: a child's failure must not run igt_main again */
		_exit(-__vgem_p2p_move(fd, h, VGEM_P2P_MOVE_SYSTEM, &offset));
	}
	for (i = 0; i < 60000 && !inside; i++) {
		usleep(1000);
		inside = in_ioctl(pid);
	}
	igt_assert_eq(kill(pid, SIGKILL), 0);
	igt_assert_eq(waitpid(pid, &status, 0), pid);
	signalled = vgem_p2p_fence_signal(fd, fence);
	igt_info("the child was %sseen in the ioctl; the fence %s when it was reaped\n",
		 inside ? "" : "not ", signalled ? "had expired" : "was pending");
	igt_assert(inside);
	igt_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	/* reaped before the fence's expiry: the kill ended the wait */
	igt_assert_eq(signalled, 0);
	igt_assert_eq_u32(vgem_p2p_info(fd, h).placement,
			  VGEM_P2P_PLACEMENT_VRAM);
	igt_assert_eq_u64(vgem_p2p_info(fd, h).moves, before.moves);
	igt_assert(check_pattern(p, MiB, 72));
	munmap(p, MiB);
	gem_close(fd, h);
}

/* A MOVE(VRAM) in a thread of its own, which may wait for fences */
struct mover {
	int fd;
	uint32_t handle;
	volatile pid_t tid;
	int err;
	volatile bool done;
};

static void *mover_thread(void *arg)
{
	struct mover *m = arg;
	uint64_t offset = 0;

	m->tid = syscall(SYS_gettid);
	m->err = __vgem_p2p_move(m->fd, m->handle, VGEM_P2P_MOVE_VRAM, &offset);
	m->done = true;
	return NULL;
}

/*
 * Eviction takes a busy object's VRAM last: with VRAM full of two halves,
 * the older one fenced, a third half evicts the younger one, which
 * eviction would otherwise leave in place (oldest first). With both
 * halves fenced, a fourth is the last resort: its MOVE(VRAM) waits for
 * a fenced object's fences and evicts it. It used to get ENOSPC: a
 * fence, renewed before it expires, kept an object in VRAM for good, for
 * anyone who had a handle to it. The fences are signalled once the move
 * waits in the ioctl; whenever they signal, the state after is the same.
 */
static void test_fence_skips_eviction(int fd)
{
	uint64_t half = vgem_p2p_stats(fd).vram_size / 2;
	uint32_t a = vgem_p2p_create(fd, half, 0);
	uint32_t c = vgem_p2p_create(fd, half, 0);
	struct drm_vgem_p2p_obj_info ia = vgem_p2p_info(fd, a), ia1;
	struct mover m = { .fd = fd };
	uint32_t b, d, fence = 0, fence_b = 0;
	unsigned int i, evicted = 0;
	uint32_t *p, *pb;
	pthread_t t;

	igt_assert_eq_u32(ia.placement, VGEM_P2P_PLACEMENT_VRAM);
	igt_assert_eq_u32(vgem_p2p_info(fd, c).placement,
			  VGEM_P2P_PLACEMENT_VRAM);
	p = vgem_p2p_mmap(fd, a, half, PROT_READ | PROT_WRITE);
	fill_sparse(p, half, 71);
	igt_assert_eq(vgem_p2p_fence_attach(fd, a, VGEM_FENCE_WRITE, &fence),
		      0);

	b = vgem_p2p_create(fd, half, 0);
	ia1 = vgem_p2p_info(fd, a);
	igt_assert_eq_u32(ia1.placement, VGEM_P2P_PLACEMENT_VRAM);
	igt_assert_eq_u64(ia1.vram_offset, ia.vram_offset);
	igt_assert_eq_u64(ia1.moves, ia.moves);
	igt_assert_eq_u32(vgem_p2p_info(fd, c).placement,
			  VGEM_P2P_PLACEMENT_SYSTEM);
	igt_assert_eq_u32(vgem_p2p_info(fd, b).placement,
			  VGEM_P2P_PLACEMENT_VRAM);
	/* pending all along: the creation ran while the object was busy */
	igt_assert_eq(vgem_p2p_fence_signal(fd, fence), 0);
	igt_assert(check_sparse(p, half, 71));

	/* both halves fenced: the last resort waits for one and evicts it */
	pb = vgem_p2p_mmap(fd, b, half, PROT_READ | PROT_WRITE);
	fill_sparse(pb, half, 73);
	igt_assert_eq(vgem_p2p_fence_attach(fd, a, VGEM_FENCE_WRITE, &fence),
		      0);
	igt_assert_eq(vgem_p2p_fence_attach(fd, b, VGEM_FENCE_WRITE,
					    &fence_b), 0);
	d = vgem_p2p_create(fd, half, VGEM_P2P_CREATE_SYSTEM);
	m.handle = d;
	igt_assert_eq(pthread_create(&t, NULL, mover_thread, &m), 0);
	for (i = 0; i < 10000 && !m.done && !(m.tid && in_ioctl(m.tid)); i++)
		usleep(1000);
	igt_info("the move was %s when the fences were signalled\n",
		 m.done ? "done" : "in the ioctl");
	/* 0, or -ETIMEDOUT past their 10 s: no timing is asserted */
	vgem_p2p_fence_signal(fd, fence);
	vgem_p2p_fence_signal(fd, fence_b);
	igt_assert_eq(pthread_join(t, NULL), 0);
	igt_assert_eq(m.err, 0);
	igt_assert_eq_u32(vgem_p2p_info(fd, d).placement,
			  VGEM_P2P_PLACEMENT_VRAM);
	evicted += vgem_p2p_info(fd, a).placement == VGEM_P2P_PLACEMENT_SYSTEM;
	evicted += vgem_p2p_info(fd, b).placement == VGEM_P2P_PLACEMENT_SYSTEM;
	igt_assert_eq_u32(evicted, 1);
	igt_assert(check_sparse(p, half, 71));
	igt_assert(check_sparse(pb, half, 73));
	munmap(pb, half);
	munmap(p, half);
	gem_close(fd, d);
	gem_close(fd, b);
	gem_close(fd, c);
	gem_close(fd, a);
}

static void test_move_vram(int fd)
{
	uint32_t h = vgem_p2p_create(fd, 2 * MiB, 0);
	uint32_t *p = vgem_p2p_mmap(fd, h, 2 * MiB, PROT_READ | PROT_WRITE);
	struct drm_vgem_p2p_stats s0 = vgem_p2p_stats(fd), s1;
	uint64_t old = vgem_p2p_info(fd, h).vram_offset, new;
	int i;

	fill_pattern(p, 2 * MiB, 20);
	for (i = 0; i < 4; i++) {
		new = vgem_p2p_move(fd, h, VGEM_P2P_MOVE_VRAM, 0);
		igt_assert(new != old);
		igt_assert_eq_u64(vgem_p2p_info(fd, h).vram_offset, new);
		/* the place it left reads poison, not its bytes */
		igt_assert(vgem_p2p_vram_poisoned(fd, old, 2 * MiB));
		igt_assert(check_pattern(p, 2 * MiB, 20 + i));
		fill_pattern(p, 2 * MiB, 21 + i);
		old = new;
	}
	s1 = vgem_p2p_stats(fd);
	igt_assert(s1.moves >= s0.moves + 4);
	igt_assert(s1.invalidations >= s0.invalidations + 4);
	igt_assert(s1.bytes_copied >= s0.bytes_copied + 8 * MiB);
	igt_assert(vgem_p2p_info(fd, h).moves >= 4);
	munmap(p, 2 * MiB);
	gem_close(fd, h);
}

static void test_move_vram_at(int fd)
{
	struct drm_vgem_p2p_stats st = vgem_p2p_stats(fd);
	uint64_t at = st.vram_size - 4 * MiB;
	uint32_t h = vgem_p2p_create(fd, 1 * MiB, 0);
	uint32_t h2 = vgem_p2p_create(fd, 1 * MiB, 0);
	uint32_t *p = vgem_p2p_mmap(fd, h, 1 * MiB, PROT_READ | PROT_WRITE);
	uint64_t old = vgem_p2p_info(fd, h).vram_offset, off;
	uint32_t *ref = malloc(MiB);

	igt_assert(ref);
	fill_pattern(ref, MiB, 30);
	memcpy(p, ref, MiB);
	igt_assert_eq_u64(vgem_p2p_move(fd, h, VGEM_P2P_MOVE_VRAM_AT, at),
			  at);
	/* at the offset asked for, in the BAR itself, not by its word */
	igt_assert(vgem_p2p_bar_holds(fd, at, ref, MiB));
	igt_assert(vgem_p2p_vram_poisoned(fd, old, MiB));
	igt_assert(check_pattern(p, MiB, 30));
	/* taken: -EBUSY, and h2 stays where it was */
	off = at;
	igt_assert_eq(__vgem_p2p_move(fd, h2, VGEM_P2P_MOVE_VRAM_AT, &off),
		      -EBUSY);
	off = at + MiB / 2;
	igt_assert_eq(__vgem_p2p_move(fd, h2, VGEM_P2P_MOVE_VRAM_AT, &off),
		      -EBUSY);
	/* beyond the end of VRAM */
	off = st.vram_size - 4096;
	igt_assert_eq(__vgem_p2p_move(fd, h2, VGEM_P2P_MOVE_VRAM_AT, &off),
		      -EINVAL);
	munmap(p, MiB);
	free(ref);
	gem_close(fd, h);
	gem_close(fd, h2);
}

static void test_evict_and_return(int fd)
{
	uint32_t h = vgem_p2p_create(fd, 1 * MiB, 0);
	uint32_t *p = vgem_p2p_mmap(fd, h, 1 * MiB, PROT_READ | PROT_WRITE);
	struct drm_vgem_p2p_stats s0, s1;
	uint64_t old = vgem_p2p_info(fd, h).vram_offset;

	fill_pattern(p, MiB, 40);
	s0 = vgem_p2p_stats(fd);
	igt_assert_eq_u64(vgem_p2p_move(fd, h, VGEM_P2P_MOVE_SYSTEM, 0),
			  ~0ull);
	/* the VRAM it left reads poison, not its bytes */
	igt_assert(vgem_p2p_vram_poisoned(fd, old, MiB));
	s1 = vgem_p2p_stats(fd);
	igt_assert_eq_u64(s1.evictions, s0.evictions + 1);
	igt_assert_eq_u32(vgem_p2p_info(fd, h).placement,
			  VGEM_P2P_PLACEMENT_SYSTEM);
	/* to system again: a no-op */
	vgem_p2p_move(fd, h, VGEM_P2P_MOVE_SYSTEM, 0);
	igt_assert_eq_u64(vgem_p2p_stats(fd).evictions, s1.evictions);
	/* the CPU touches it: it comes back to VRAM, intact */
	igt_assert(check_pattern(p, MiB, 40));
	igt_assert_eq_u32(vgem_p2p_info(fd, h).placement,
			  VGEM_P2P_PLACEMENT_VRAM);
	/* and explicitly */
	old = vgem_p2p_info(fd, h).vram_offset;
	vgem_p2p_move(fd, h, VGEM_P2P_MOVE_SYSTEM, 0);
	igt_assert(vgem_p2p_vram_poisoned(fd, old, MiB));
	vgem_p2p_move(fd, h, VGEM_P2P_MOVE_VRAM, 0);
	igt_assert_eq_u32(vgem_p2p_info(fd, h).placement,
			  VGEM_P2P_PLACEMENT_VRAM);
	igt_assert(check_pattern(p, MiB, 40));
	munmap(p, MiB);
	gem_close(fd, h);
}

static void test_compaction(int fd)
{
	struct drm_vgem_p2p_stats st = vgem_p2p_stats(fd), s1;
	uint64_t chunk = 4 * MiB;
	unsigned int n = st.vram_size / chunk, i;
	uint32_t *h = calloc(n, sizeof(*h));
	uint32_t **p = calloc(n, sizeof(*p));
	/* per VRAM page: held by this test's objects at some point */
	uint8_t *held = calloc(st.vram_size / 4096, 1);
	struct drm_vgem_p2p_obj_info bi;
	uint64_t pg, end;
	uint32_t big;
	uint32_t *bp;

	igt_assert(n >= 4);
	/* fill VRAM, then free every other object: holes of 4 MiB */
	for (i = 0; i < n; i++) {
		h[i] = vgem_p2p_create(fd, chunk, 0);
		pg = vgem_p2p_info(fd, h[i]).vram_offset / 4096;
		memset(held + pg, 1, chunk / 4096);
		p[i] = vgem_p2p_mmap(fd, h[i], chunk,
				     PROT_READ | PROT_WRITE);
		fill_sparse(p[i], chunk, 100 + i);
	}
	for (i = 0; i < n; i += 2) {
		munmap(p[i], chunk);
		gem_close(fd, h[i]);
		h[i] = 0;
	}
	/* 8 MiB fits in no hole: VRAM must be compacted */
	big = vgem_p2p_create(fd, 2 * chunk, 0);
	s1 = vgem_p2p_stats(fd);
	igt_assert(s1.compactions > st.compactions);
	igt_assert_eq_u32(vgem_p2p_info(fd, big).placement,
			  VGEM_P2P_PLACEMENT_VRAM);
	/* compaction, not eviction, made the room */
	igt_assert_eq_u64(s1.evictions, st.evictions);
	for (i = 1; i < n; i += 2) {
		igt_assert_eq_u32(vgem_p2p_info(fd, h[i]).placement,
				  VGEM_P2P_PLACEMENT_VRAM);
		igt_assert(check_sparse(p[i], chunk, 100 + i));
	}
	/*
	 * What these objects held and no object holds now was freed (the
	 * closed ones, once vram_used says so) or moved out of (compacted
	 * ones, as their move returned): all of it reads poison.
	 */
	bi = vgem_p2p_info(fd, big);
	igt_assert(vgem_p2p_wait_vram_used(fd, (n / 2 + 2) * chunk));
	memset(held + bi.vram_offset / 4096, 0, 2 * chunk / 4096);
	for (i = 1; i < n; i += 2)
		memset(held + vgem_p2p_info(fd, h[i]).vram_offset / 4096, 0,
		       chunk / 4096);
	for (pg = 0; pg < st.vram_size / 4096; pg = end) {
		for (end = pg + 1; end < st.vram_size / 4096 &&
				   held[end] == held[pg]; end++)
			;
		if (held[pg])
			igt_assert(vgem_p2p_vram_poisoned(fd, pg * 4096,
							  (end - pg) * 4096));
	}
	bp = vgem_p2p_mmap(fd, big, 2 * chunk, PROT_READ);
	igt_assert_eq_u32(bp[0], 0);
	igt_assert_eq_u32(bp[(2 * chunk) / 4 - 1], 0);
	munmap(bp, 2 * chunk);
	gem_close(fd, big);
	for (i = 1; i < n; i += 2) {
		munmap(p[i], chunk);
		gem_close(fd, h[i]);
	}
	free(held);
	free(h);
	free(p);
}

static void test_eviction(int fd)
{
	struct drm_vgem_p2p_stats st = vgem_p2p_stats(fd), s1;
	uint64_t chunk = 8 * MiB;
	unsigned int n = st.vram_size / chunk + 2, i, in_sys = 0;
	uint32_t *h = calloc(n, sizeof(*h));
	uint32_t **p = calloc(n, sizeof(*p));

	/* more than fits: the oldest objects go to system memory */
	for (i = 0; i < n; i++) {
		h[i] = vgem_p2p_create(fd, chunk, 0);
		p[i] = vgem_p2p_mmap(fd, h[i], chunk,
				     PROT_READ | PROT_WRITE);
		fill_pattern(p[i], chunk, 200 + i);
	}
	s1 = vgem_p2p_stats(fd);
	igt_assert(s1.evictions >= st.evictions + 2);
	for (i = 0; i < n; i++)
		if (vgem_p2p_info(fd, h[i]).placement ==
		    VGEM_P2P_PLACEMENT_SYSTEM)
			in_sys++;
	igt_assert(in_sys >= 2);
	igt_assert_eq_u32(vgem_p2p_info(fd, h[0]).placement,
			  VGEM_P2P_PLACEMENT_SYSTEM);
	/* every byte survived: each word is compared */
	for (i = 0; i < n; i++)
		igt_assert_f(check_pattern(p[i], chunk, 200 + i),
			     "object %u (%s)\n", i,
			     vgem_p2p_info(fd, h[i]).placement ==
			     VGEM_P2P_PLACEMENT_SYSTEM ? "evicted" :
			     "in VRAM");
	for (i = 0; i < n; i++) {
		munmap(p[i], chunk);
		gem_close(fd, h[i]);
	}
	free(h);
	free(p);
}

/*
 * A move into VRAM is an allocation, as a creation is: without
 * CAP_SYS_ADMIN it still evicts other clients' objects, oldest first, as
 * any TTM driver's allocation does. Only picking the offset is refused.
 */
static void test_unprivileged_evicts(int fd)
{
	struct drm_vgem_p2p_stats st = vgem_p2p_stats(fd), s1;
	uint64_t chunk = 8 * MiB;
	unsigned int n = st.vram_size / chunk, i;
	uint32_t *h = calloc(n, sizeof(*h));

	/* another client fills VRAM */
	for (i = 0; i < n; i++) {
		h[i] = vgem_p2p_create(fd, chunk, 0);
		igt_assert_eq_u32(vgem_p2p_info(fd, h[i]).placement,
				  VGEM_P2P_PLACEMENT_VRAM);
	}
	s1 = vgem_p2p_stats(fd);

	igt_fork(child, 1) {
		int cfd = vgem_p2p_open();
		uint32_t mine = vgem_p2p_create(cfd, chunk,
						VGEM_P2P_CREATE_SYSTEM);
		uint32_t made;
		uint64_t off = 0;

		drop_sys_admin();
		igt_assert_eq(__vgem_p2p_move(cfd, mine,
					      VGEM_P2P_MOVE_VRAM_AT,
					      &off), -EPERM);
		igt_assert_eq_u32(vgem_p2p_info(cfd, mine).placement,
				  VGEM_P2P_PLACEMENT_SYSTEM);
		vgem_p2p_move(cfd, mine, VGEM_P2P_MOVE_VRAM, 0);
		igt_assert_eq_u32(vgem_p2p_info(cfd, mine).placement,
				  VGEM_P2P_PLACEMENT_VRAM);
		made = vgem_p2p_create(cfd, chunk, 0);
		igt_assert_eq_u32(vgem_p2p_info(cfd, made).placement,
				  VGEM_P2P_PLACEMENT_VRAM);
		gem_close(cfd, made);
		gem_close(cfd, mine);
		close(cfd);
	}
	igt_waitchildren();

	igt_assert_eq_u64(vgem_p2p_stats(fd).evictions, s1.evictions + 2);
	for (i = 0; i < n; i++) {
		igt_assert_eq_u32(vgem_p2p_info(fd, h[i]).placement,
				  i < 2 ? VGEM_P2P_PLACEMENT_SYSTEM :
					  VGEM_P2P_PLACEMENT_VRAM);
		gem_close(fd, h[i]);
	}
	free(h);
}

static uint32_t placement(int fd, uint32_t h)
{
	return vgem_p2p_info(fd, h).placement;
}

/*
 * vram_quota_pages bounds the VRAM one process moved objects into, on
 * every way into VRAM: a creation past it gets EDQUOT, a dumb buffer
 * starts in system memory, a move gets EDQUOT, and a CPU fault leaves an
 * evicted object where it is. Leaving VRAM gives the quota back. The
 * quota is the process's, not the file's: a second open of the node
 * finds it spent (each open had a quota of its own). Run in a child, a
 * process of its own: what this one's earlier subtests left in VRAM
 * would count against it.
 */
static void vram_quota_process(void)
{
	uint64_t chunk = 4 * MiB;
	int a = vgem_p2p_open(), b = vgem_p2p_open();
	struct drm_mode_create_dumb dumb = {
		.width = 512, .height = 512, .bpp = 32,
	};
	uint32_t h1, h2, s, x;
	uint64_t off = 0;
	uint32_t *p;

	h1 = vgem_p2p_create(a, chunk, 0);
	h2 = vgem_p2p_create(a, chunk, 0);
	igt_assert_eq_u32(placement(a, h1), VGEM_P2P_PLACEMENT_VRAM);
	igt_assert_eq_u32(placement(a, h2), VGEM_P2P_PLACEMENT_VRAM);
	igt_assert_eq(__vgem_p2p_create(a, 4096, 0, &x), -EDQUOT);
	/* another file of the same process: the same quota, spent */
	igt_assert_eq(__vgem_p2p_create(b, 4096, 0, &x), -EDQUOT);
	/* a system object needs no quota */
	s = vgem_p2p_create(a, MiB, VGEM_P2P_CREATE_SYSTEM);
	igt_assert_eq(__vgem_p2p_move(a, s, VGEM_P2P_MOVE_VRAM, &off),
		      -EDQUOT);
	igt_assert_eq_u32(placement(a, s), VGEM_P2P_PLACEMENT_SYSTEM);
	/* where vgem would succeed, a dumb buffer does, in system memory */
	do_ioctl(b, DRM_IOCTL_MODE_CREATE_DUMB, &dumb);
	igt_assert_eq_u32(placement(b, dumb.handle),
			  VGEM_P2P_PLACEMENT_SYSTEM);

	/* leaving VRAM gives the quota back, whichever file moves */
	vgem_p2p_move(a, h2, VGEM_P2P_MOVE_SYSTEM, 0);
	vgem_p2p_move(a, s, VGEM_P2P_MOVE_VRAM, 0);
	igt_assert_eq_u32(placement(a, s), VGEM_P2P_PLACEMENT_VRAM);

	/* the way back on a CPU fault is an allocation too */
	p = vgem_p2p_mmap(a, h2, chunk, PROT_READ | PROT_WRITE);
	p[0] = 1;
	igt_assert_eq_u32(placement(a, h2), VGEM_P2P_PLACEMENT_SYSTEM);
	vgem_p2p_move(a, s, VGEM_P2P_MOVE_SYSTEM, 0);
	p[chunk / sizeof(*p) - 1] = 2;
	igt_assert_eq_u32(placement(a, h2), VGEM_P2P_PLACEMENT_VRAM);
	igt_assert_eq_u32(p[0], 1);

	/* no limit again: the next object fits */
	vgem_p2p_set_vram_quota(0);
	vgem_p2p_move(a, s, VGEM_P2P_MOVE_VRAM, 0);
	igt_assert_eq_u32(placement(a, s), VGEM_P2P_PLACEMENT_VRAM);

	munmap(p, chunk);
	close(b);
	close(a);
}

static void test_vram_quota(void)
{
	igt_install_exit_handler(vgem_p2p_restore_vram_quota);
	vgem_p2p_set_vram_quota(2 * 4 * MiB / 4096);
	igt_fork(child, 1)
		vram_quota_process();
	igt_waitchildren();
}

/*
 * In a fork() child of the quota's process: MOVE(VRAM) of an object the
 * parent created is charged to this process, not to the creator, and
 * bounds this process as its own creations do. Only _exit() here.
 */
static void __attribute__((noreturn)) move_as_other_process(int fd,
							     uint32_t s,
							     uint64_t chunk)
{
	uint64_t offset = 0;
	uint32_t x, y;
	int bad = 0;

	if (__vgem_p2p_move(fd, s, VGEM_P2P_MOVE_VRAM, &offset))
		bad |= 1;
	if (__vgem_p2p_create(fd, chunk, 0, &x))
		bad |= 2;
	if (__vgem_p2p_create(fd, 4096, 0, &y) != -EDQUOT)
		bad |= 4;
	_exit(bad);
}

/*
 * The mover pays: with the creator of an object at its quota, another
 * process holding a handle to it (a fork() child, on the same file) moves
 * it into VRAM, charged to itself, and that charge bounds it: one more
 * object fits its quota, a page more does not. The charge goes back to
 * the mover whoever moves the object out: the creator, at its quota all
 * along, still cannot create. The creator runs in a child of the test,
 * as vram-quota does. Before, the creator's file was charged: the move
 * got EDQUOT.
 */
static void vram_quota_mover_process(void)
{
	uint64_t chunk = 4 * MiB;
	int a = vgem_p2p_open(), status;
	uint32_t h1, h2, h3, s, x;
	uint64_t off = 0;
	pid_t pid;

	h1 = vgem_p2p_create(a, chunk, 0);
	h2 = vgem_p2p_create(a, chunk, 0);
	s = vgem_p2p_create(a, chunk, VGEM_P2P_CREATE_SYSTEM);
	igt_assert_eq(__vgem_p2p_move(a, s, VGEM_P2P_MOVE_VRAM, &off),
		      -EDQUOT);

	pid = fork();
	igt_assert(pid >= 0);
	if (!pid)
		move_as_other_process(a, s, chunk);
	igt_assert_eq(waitpid(pid, &status, 0), pid);
	igt_assert_f(WIFEXITED(status) && !WEXITSTATUS(status),
		     "the other process's move or creations failed (%#x: 1 move, 2 creation, 4 creation past its quota)\n",
		     status);
	igt_assert_eq_u32(placement(a, s), VGEM_P2P_PLACEMENT_VRAM);
	igt_assert_eq_u32(placement(a, h1), VGEM_P2P_PLACEMENT_VRAM);
	igt_assert_eq_u32(placement(a, h2), VGEM_P2P_PLACEMENT_VRAM);

	/* the creator moves it out: the mover's charge goes, not its own */
	vgem_p2p_move(a, s, VGEM_P2P_MOVE_SYSTEM, 0);
	igt_assert_eq(__vgem_p2p_create(a, 4096, 0, &x), -EDQUOT);
	/* its own charge goes with its own objects */
	vgem_p2p_move(a, h2, VGEM_P2P_MOVE_SYSTEM, 0);
	h3 = vgem_p2p_create(a, chunk, 0);
	igt_assert_eq_u32(placement(a, h3), VGEM_P2P_PLACEMENT_VRAM);
	igt_assert_eq(__vgem_p2p_create(a, 4096, 0, &x), -EDQUOT);
	close(a);
}

static void test_vram_quota_charges_mover(void)
{
	igt_install_exit_handler(vgem_p2p_restore_vram_quota);
	vgem_p2p_set_vram_quota(2 * 4 * MiB / 4096);
	igt_fork(child, 1)
		vram_quota_mover_process();
	igt_waitchildren();
	vgem_p2p_set_vram_quota(0);
}

static void test_move_system_object(int fd)
{
	uint32_t h = vgem_p2p_create(fd, MiB, VGEM_P2P_CREATE_SYSTEM);
	uint32_t *p = vgem_p2p_mmap(fd, h, MiB, PROT_READ | PROT_WRITE);
	uint64_t off;

	fill_pattern(p, MiB, 50);
	off = vgem_p2p_move(fd, h, VGEM_P2P_MOVE_VRAM, 0);
	igt_assert_eq_u32(vgem_p2p_info(fd, h).placement,
			  VGEM_P2P_PLACEMENT_VRAM);
	igt_assert(check_pattern(p, MiB, 50));
	vgem_p2p_move(fd, h, VGEM_P2P_MOVE_SYSTEM, 0);
	/* the VRAM it visited reads poison, not its bytes */
	igt_assert(vgem_p2p_vram_poisoned(fd, off, MiB));
	igt_assert(check_pattern(p, MiB, 50));
	/* a system object does not come back on its own */
	igt_assert_eq_u32(vgem_p2p_info(fd, h).placement,
			  VGEM_P2P_PLACEMENT_SYSTEM);
	munmap(p, MiB);
	gem_close(fd, h);
}

/* The system memory @fd's objects hold, in MiB (fdinfo) */
static uint64_t resident_system_mib(int fd)
{
	return vgem_p2p_fdinfo_kib(fd, "drm-resident-system") >> 10;
}

static void test_system_populated_on_use(void)
{
	int fd = vgem_p2p_open();
	uint32_t big, h, v, *p, *q;
	uint64_t avail0;

	/* 1 GiB of a 2 GiB guest: nothing is allocated at creation */
	avail0 = meminfo("MemAvailable");
	big = vgem_p2p_create(fd, 1024 * MiB, VGEM_P2P_CREATE_SYSTEM);
	igt_info("1 GiB SYSTEM object: MemAvailable -%" PRId64 " MiB\n",
		 (int64_t)(avail0 - meminfo("MemAvailable")) / (int64_t)MiB);
	igt_assert(meminfo("MemAvailable") + 64 * MiB > avail0);
	igt_assert_eq_u64(resident_system_mib(fd), 0);

	/* the first touch populates all of it, zeroed */
	h = vgem_p2p_create(fd, 16 * MiB, VGEM_P2P_CREATE_SYSTEM);
	p = vgem_p2p_mmap(fd, h, 16 * MiB, PROT_READ | PROT_WRITE);
	igt_assert_eq_u32(p[0], 0);
	igt_assert_eq_u64(resident_system_mib(fd), 16);
	fill_pattern(p, 16 * MiB, 60);

	/* eviction populates the object's pages; the way back frees them */
	v = vgem_p2p_create(fd, 8 * MiB, 0);
	q = vgem_p2p_mmap(fd, v, 8 * MiB, PROT_READ | PROT_WRITE);
	fill_pattern(q, 8 * MiB, 61);
	igt_assert_eq_u64(resident_system_mib(fd), 16);
	vgem_p2p_move(fd, v, VGEM_P2P_MOVE_SYSTEM, 0);
	igt_assert_eq_u64(resident_system_mib(fd), 24);
	igt_assert(check_pattern(q, 8 * MiB, 61));
	vgem_p2p_move(fd, v, VGEM_P2P_MOVE_VRAM, 0);
	igt_assert_eq_u64(resident_system_mib(fd), 16);
	igt_assert(check_pattern(q, 8 * MiB, 61));

	igt_assert(check_pattern(p, 16 * MiB, 60));
	munmap(q, 8 * MiB);
	munmap(p, 16 * MiB);
	gem_close(fd, v);
	gem_close(fd, h);
	gem_close(fd, big);
	close(fd);
}

/*
 * Two threads each MOVE(VRAM) an object of half of VRAM over and over,
 * so that each move must evict the other object while the other thread
 * holds its reservation, and a third thread creates and closes objects
 * of half of VRAM. The two moves used to spin on each other for ever,
 * unkillably, and everything behind them hung. Each move must succeed
 * (contention is not an error), each creation too, and the whole must
 * end.
 */
struct contender {
	int fd;
	uint32_t handle;	/* 0: create and close instead */
	uint64_t size;
	unsigned int rounds;	/* 0: until killed */
	int err;		/* the first failure's -errno */
};

static void *contender_thread(void *arg)
{
	struct contender *c = arg;
	unsigned int i;

	for (i = 0; !c->rounds || i < c->rounds; i++) {
		uint64_t offset = 0;
		uint32_t h = 0;

		if (c->handle) {
			c->err = __vgem_p2p_move(c->fd, c->handle,
						 VGEM_P2P_MOVE_VRAM, &offset);
		} else {
			struct drm_gem_close close = {};

			c->err = __vgem_p2p_create(c->fd, c->size, 0, &h);
			close.handle = h;
			if (!c->err && drmIoctl(c->fd, DRM_IOCTL_GEM_CLOSE,
						&close))
				c->err = -errno;
		}
		if (c->err)
			break;
	}
	return NULL;
}

/*
 * In a child of its own: a move the kernel cannot end must not take the
 * test, the device and the suite with it. Returns the child's pid. The
 * child exits 0 when every thread's every round succeeded.
 */
static pid_t contend(int fd, uint32_t a, uint32_t b, uint64_t half,
		     unsigned int rounds)
{
	struct contender c[3] = {
		{ .fd = fd, .handle = a, .rounds = rounds },
		{ .fd = fd, .handle = b, .rounds = rounds },
		{ .fd = fd, .size = half, .rounds = rounds },
	};
	pthread_t t[3];
	pid_t pid = fork();
	int i, bad = 0;

	igt_assert(pid >= 0);
	if (pid)
		return pid;
	/* no igt_assert here: a child's failure must not run igt_main again */
	for (i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, contender_thread, &c[i]))
			_exit(2);
	for (i = 0; i < 3; i++) {
		pthread_join(t[i], NULL);
		if (c[i].err) {
			fprintf(stderr, "%s: %s\n", i < 2 ? "MOVE" : "CREATE",
				strerror(-c[i].err));
			bad = 1;
		}
	}
	_exit(bad);
}

static void test_concurrent_moves_full_vram(int fd)
{
	uint64_t half = vgem_p2p_stats(fd).vram_size / 2;
	uint32_t a = vgem_p2p_create(fd, half, 0);
	uint32_t b = vgem_p2p_create(fd, half, 0);
	uint32_t *pa = vgem_p2p_mmap(fd, a, half, PROT_READ | PROT_WRITE);
	uint32_t *pb = vgem_p2p_mmap(fd, b, half, PROT_READ | PROT_WRITE);
	int status;
	pid_t pid;

	fill_sparse(pa, half, 81);
	fill_sparse(pb, half, 82);

	/* six rounds each: both end, every move and creation succeeded */
	pid = contend(fd, a, b, half, 6);
	status = reap_within(pid, 120 * 1000);
	if (status < 0) {
		kill(pid, SIGKILL);
		igt_assert_f(false, "the moves did not end in 120 s, and %s SIGKILL\n",
			     reap_within(pid, 10 * 1000) < 0 ? "not even after" :
							      "only after");
	}
	igt_assert_f(WIFEXITED(status) && !WEXITSTATUS(status),
		     "a move or a creation failed (status %#x)\n", status);

	/* without end: SIGKILL ends them, and promptly */
	pid = contend(fd, a, b, half, 0);
	usleep(2 * 1000 * 1000);
	igt_assert_eq(kill(pid, SIGKILL), 0);
	status = reap_within(pid, 10 * 1000);
	igt_assert_f(status >= 0, "moving threads live 10 s after SIGKILL\n");
	igt_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

	/* nothing was left held: both still move, with their bytes */
	vgem_p2p_move(fd, a, VGEM_P2P_MOVE_VRAM, 0);
	vgem_p2p_move(fd, b, VGEM_P2P_MOVE_VRAM, 0);
	igt_assert(check_sparse(pa, half, 81));
	igt_assert(check_sparse(pb, half, 82));
	munmap(pb, half);
	munmap(pa, half);
	gem_close(fd, b);
	gem_close(fd, a);
}

igt_main
{
	int fd = -1;

	igt_fixture
		fd = vgem_p2p_open();

	igt_describe("Four moves within VRAM, each to a new offset that OBJ_INFO reports: the range each move left reads poison (0x6b) through the BAR (sysfs resource2), the object's bytes follow it through the CPU mapping, new bytes written after each move too, and the moves, invalidations and bytes copied are counted.");
	igt_subtest("move-vram")
		test_move_vram(fd);

	igt_describe("MOVE_VRAM_AT puts an object at the offset asked for, with its bytes, both read from the BAR there, and the range it left reads poison (0x6b) through the BAR; an offset taken by another object, even in part, gets EBUSY, and one past the end of VRAM EINVAL.");
	igt_subtest("move-vram-at")
		test_move_vram_at(fd);

	igt_describe("Moving an object to system memory counts one eviction (a second move there is a no-op) and the VRAM range it left reads poison (0x6b) through the BAR; a CPU touch brings it back to VRAM, as does an explicit move, its bytes intact each time.");
	igt_subtest("evict-and-return")
		test_evict_and_return(fd);

	igt_describe("With VRAM full of 4 MiB objects and every other one freed, an 8 MiB object fits in no hole: creating it compacts VRAM (no eviction), it lands in VRAM, and the objects that stay keep their data (sampled one word in 64) through the moves; every range the objects held that none holds now (freed, once vram_used says so, or compacted away) reads poison (0x6b) through the BAR.");
	igt_subtest("compaction")
		test_compaction(fd);

	igt_describe("Creating more 8 MiB objects than VRAM holds evicts the oldest to system memory, and every byte of every object, evicted or not, is what the CPU wrote.");
	igt_subtest("eviction")
		test_eviction(fd);

	igt_describe("Without CAP_SYS_ADMIN, MOVE_VRAM_AT is refused with EPERM, but MOVE_VRAM and CREATE into full VRAM are allocations as in any TTM driver: each evicts another client's oldest object.");
	igt_subtest("unprivileged-evicts")
		test_unprivileged_evicts(fd);

	igt_subtest_group {
		igt_describe("vram_quota_pages bounds the VRAM one process moved objects into, through all its files: a creation past it gets EDQUOT, also on a second open of the node, a dumb buffer starts in system memory, MOVE_VRAM gets EDQUOT and a CPU fault leaves an evicted object in system memory; leaving VRAM gives quota back.");
		igt_subtest("vram-quota")
			test_vram_quota();

		igt_describe("MOVE_VRAM is charged to the process that moves, not to the object's creator: with the creator at its quota, a fork() child moves the creator's object into VRAM, one more object fits the child's quota and a page more gets EDQUOT; the creator moving the object out gives the child's charge back, not its own.");
		igt_subtest("vram-quota-charges-mover")
			test_vram_quota_charges_mover();

		/* failed or not, the subtests after it run with no quota */
		igt_fixture
			vgem_p2p_set_vram_quota(0);
	}

	igt_describe("An object created in system memory moves to VRAM and back with its bytes, the VRAM range it left reads poison (0x6b) through the BAR, and it does not come back to VRAM on its own.");
	igt_subtest("move-system-object")
		test_move_system_object(fd);

	igt_describe("A system object holds no pages at creation, and gets all of them, zeroed, on its first use, as a TTM BO's ttm_tt is populated (fdinfo's drm-resident-system); an evicted VRAM object's bytes go to system pages, which its return to VRAM frees, intact.");
	igt_subtest("system-populated-on-use")
		test_system_populated_on_use();

	igt_describe("A move of an object with an unsignalled fence (VGEM_FENCE_ATTACH) waits for the fence before it copies and gives the old place up: the move returns with the fence signalled (by its 10 s expiry), one move counted, and the bytes intact.");
	igt_subtest("fence-waits-move")
		test_fence_waits_move(fd);

	igt_describe("A MOVE waiting for an object's unsignalled fence is killable: a child killed inside the ioctl is reaped while the fence is still pending (not at its 10 s expiry), and the object stays in VRAM, unmoved, with its bytes.");
	igt_subtest("fenced-move-killable")
		test_fenced_move_killable(fd);

	igt_describe("Eviction takes an object with an unsignalled fence last: with VRAM full of two halves and the older fenced, creating a third evicts the younger, and the fenced one keeps its offset, its move count and its bytes while its fence is still pending; with both halves fenced, a MOVE_VRAM of a fourth waits for one's fences and evicts it, both keeping their bytes.");
	igt_subtest("fence-skips-eviction")
		test_fence_skips_eviction(fd);

	igt_describe("Two threads each moving an object of half of VRAM elsewhere in VRAM, over and over, so that each move must evict the object the other thread holds reserved, and a third creating and closing such objects: every move and creation succeeds and all of it ends (one move lets its reservation go, not a spin on each other), a SIGKILL ends it promptly, and both objects still move afterwards with their bytes.");
	igt_subtest("concurrent-moves-full-vram")
		test_concurrent_moves_full_vram(fd);

	igt_fixture
		close(fd);
}
