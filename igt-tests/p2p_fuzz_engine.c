// SPDX-License-Identifier: MIT
/*
 * p2p_fuzz's engine: the pools, the threads, the argument generators, the
 * counted calls and the invariants every call is held to (enum fz_rule).
 * Its users are above it: the operation tables (p2p_fuzz_vgem_p2p.c,
 * p2p_fuzz_edu_nic.c) call into it, and the test binary (p2p_fuzz.c)
 * hands fz_run() the tables; the engine calls no function of theirs but
 * through a table entry (an op's call, a driver's settle hook).
 *
 * Memory the kernel may write through a generated pointer is always ours
 * to lose: the threads' scratch buffers, the anonymous buffers and the
 * mapping slots, a region reserved PROT_NONE at start where object mmaps
 * come and go with MAP_FIXED, so that nothing else is ever placed there.
 *
 * With one thread a run is reproducible from its seed; with several, the
 * interleaving is not, but each thread's call sequence is.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "p2p_common.h"
#include "p2p_counts.h"
#include "p2p_fill.h"
#include "p2p_fuzz_engine.h"

/* The run's drivers, whose operations the threads pick from in order */
static const struct fz_driver *const *drivers;
static unsigned int nr_drivers;

static struct fz_pool pool;
static uint64_t base_seed;
static unsigned long total_calls;

static pthread_mutex_t violation_lock = PTHREAD_MUTEX_INITIALIZER;
static char violation[NR_RULES][512];

/* xorshift64*, seeded through splitmix64 */
static uint64_t splitmix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

uint64_t fz_rnd(struct fz_thread *t)
{
	t->rng ^= t->rng >> 12;
	t->rng ^= t->rng << 25;
	t->rng ^= t->rng >> 27;
	return t->rng * 2685821657736338717ull;
}

uint64_t fz_below(struct fz_thread *t, uint64_t n)
{
	return n ? fz_rnd(t) % n : 0;
}

/* True with probability 1/n */
bool fz_one_in(struct fz_thread *t, uint64_t n)
{
	return fz_below(t, n) == 0;
}

/* Values that break size, offset and length checks */
uint64_t fz_evil_u64(struct fz_thread *t)
{
	static const uint64_t v[] = {
		0, 1, PAGE - 1, PAGE + 1, ~0ull, ~0ull - PAGE + 1, ~0ull - PAGE,
		1ull << 63, 1ull << 47, (1ull << 47) - PAGE, 1ull << 44,
		0xffff888000000000ull, 0x7fffffff, 0x80000000, 0xffffffffull,
	};

	if (fz_one_in(t, 4))
		return fz_rnd(t);
	return v[fz_below(t, ARRAY_SIZE(v))];
}

/* A flags word: mostly valid bits, sometimes anything */
uint32_t fz_flags(struct fz_thread *t, uint32_t valid)
{
	if (fz_one_in(t, 8))
		return (uint32_t)fz_rnd(t) | (~valid & (1u << fz_below(t, 32)));
	return (uint32_t)fz_rnd(t) & valid;
}

/* A pad: zero, except sometimes */
uint32_t fz_pad(struct fz_thread *t)
{
	return fz_one_in(t, 16) ? (uint32_t)fz_rnd(t) | 1 : 0;
}

/* Keep the first breach of @rule, with where the seed replays it */
void fz_violation(struct fz_thread *t, enum fz_rule rule, const char *fmt,
		  ...)
{
	va_list ap;
	int n;

	pthread_mutex_lock(&violation_lock);
	if (!violation[rule][0]) {
		va_start(ap, fmt);
		n = vsnprintf(violation[rule], sizeof(violation[rule]), fmt, ap);
		va_end(ap);
		if (n >= 0 && n < (int)sizeof(violation[rule]))
			snprintf(violation[rule] + n,
				 sizeof(violation[rule]) - n,
				 " (thread %d, call %lu, seed %" PRIu64 ")",
				 t->id, t->calls, base_seed);
	}
	pthread_mutex_unlock(&violation_lock);
}

/*
 * Several threads share objects, slots and registrations, so what one
 * thread knows of them may be stale by the time its call runs: the rules
 * that depend on that state hold only with one thread.
 */
bool fz_one_thread(const struct fz_thread *t)
{
	return t->mode != MODE_BOTH;
}

/*
 * Whatever the errno, count it; remember the first undocumented one, and
 * the first EIO or ENODEV the op's kernel-doc gives no cause for here.
 */
void fz_note(struct fz_thread *t, struct fz_op *op, int err)
{
	const int *a;

	__atomic_add_fetch(&op->calls, 1, __ATOMIC_RELAXED);
	t->calls++;
	if (err < 0 || err >= MAX_ERRNO)
		err = MAX_ERRNO - 1;
	__atomic_add_fetch(&op->err[err], 1, __ATOMIC_RELAXED);
	if (!err)
		return;
	if ((err == EIO && !t->may_eio) || (err == ENODEV && !t->may_enodev))
		fz_violation(t, RULE_EIO,
			     "%s returned %s with nothing unbound", op->name,
			     strerrorname_np(err));
	for (a = op->errnos; *a; a++)
		if (*a == err)
			return;
	fz_violation(t, RULE_ERRNO, "%s returned undocumented %s", op->name,
		     strerrorname_np(err) ?: "?");
}

/*
 * The ioctl, counted; 0 or a positive errno. Sometimes a bad arg pointer,
 * which the copy-in refuses before any rule on the struct's fields.
 */
int fz_ioctl(struct fz_thread *t, struct fz_op *op, int fd,
	     unsigned long req, void *arg)
{
	bool bad_arg = false;
	int ret;

	if (fz_one_in(t, 400)) {
		arg = fz_one_in(t, 2) ? NULL : (void *)t->pool->none;
		bad_arg = true;
	}
	ret = ioctl(fd, req, arg) ? errno : 0;
	fz_note(t, op, ret);
	if (t->must_einval && !bad_arg && ret != EINVAL)
		fz_violation(t, RULE_EINVAL,
			     "%s returned %s with a pad, an unknown flag or value set",
			     op->name, ret ? strerrorname_np(ret) ?: "?" : "0");
	t->must_einval = false;
	t->may_enodev = false;
	t->may_eio = false;
	return ret;
}

/* Pools: pick under the lock; an entry may be gone by the time it is used */

void fz_stale_push(struct fz_pool *p, uint32_t *ring, uint32_t v)
{
	ring[p->stale_next++ % NR_STALE] = v;
}

/*
 * An address range the kernel may read and write, or a bad one. @len is
 * in: the wanted length, out: what the range really has behind it.
 */
char *fz_range(struct fz_thread *t, uint64_t *len, bool aligned)
{
	struct fz_pool *p = t->pool;
	uint64_t pages;
	char *base;

	switch (fz_below(t, 8)) {
	case 0:
	case 1:
	case 2:
		base = p->anon[fz_below(t, NR_ANON)];
		pages = ANON_PAGES;
		break;
	case 3:
	case 4:
		/* one slot or several, mapped or not: cross-vma ranges */
		pages = fz_below(t, NR_SLOTS);
		base = p->slots_base + pages * SLOT_PAGES * PAGE;
		pages = (NR_SLOTS - pages) * SLOT_PAGES;
		break;
	case 5:
		base = p->ro;
		pages = 2;
		break;
	case 6:
		base = p->none;
		pages = 2;
		break;
	default:
		*len = fz_evil_u64(t);
		return (char *)(uintptr_t)(fz_evil_u64(t) &
					   (aligned ? ~(PAGE - 1) : ~0ull));
	}
	if (!*len || *len > pages * PAGE)
		*len = (1 + fz_below(t, pages)) * PAGE;
	if (aligned)
		base += fz_below(t, pages - *len / PAGE + 1) * PAGE;
	else
		base += fz_below(t, pages * PAGE - *len + 1);
	if (fz_one_in(t, 16))
		*len = fz_evil_u64(t);
	else if (fz_one_in(t, 16))
		*len += 1 + fz_below(t, PAGE - 1);
	return base;
}

/* A user buffer for DMA: scratch mostly, or anything fz_range() gives */
char *fz_buf(struct fz_thread *t, uint64_t len)
{
	uint64_t l = len;

	if (len <= (SCRATCH_PAGES - 1) * PAGE && !fz_one_in(t, 4))
		return t->scratch + fz_below(t, PAGE);
	return fz_range(t, &l, false);
}

/*
 * The region of the pool's own memory @addr lies in, as [*@start, *@end);
 * false where @addr is not the pool's (an evil address).
 */
bool fz_pool_region(struct fz_pool *p, const char *addr, const char **start,
		    const char **end)
{
	int i;

	for (i = 0; i < NR_ANON; i++) {
		if (addr >= p->anon[i] &&
		    addr < p->anon[i] + ANON_PAGES * PAGE) {
			*start = p->anon[i];
			*end = p->anon[i] + ANON_PAGES * PAGE;
			return true;
		}
	}
	if (addr >= p->ro && addr < p->ro + 2 * PAGE) {
		*start = p->ro;
		*end = p->ro + 2 * PAGE;
		return true;
	}
	if (addr >= p->none && addr < p->none + 2 * PAGE) {
		*start = p->none;
		*end = p->none + 2 * PAGE;
		return true;
	}
	if (addr >= p->slots_base &&
	    addr < p->slots_base + NR_SLOTS * SLOT_PAGES * PAGE) {
		*start = p->slots_base;
		*end = p->slots_base + NR_SLOTS * SLOT_PAGES * PAGE;
		return true;
	}
	return false;
}

/* CPU mappings in the slots */

void fz_slot_reset(struct fz_slot *s)
{
	void *ret = mmap(s->ptr, SLOT_PAGES * PAGE, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);

	s->mapped = 0;
	s->flags = 0;
	s->size = 0;
	s->unknown = false;
	s->writable = false;
	if (ret == MAP_FAILED)
		s->mapped = errno;	/* noted by the caller */
}

/* CPU accesses that may fault */

__thread sigjmp_buf *volatile fz_sigbus_jmp;

/* What this thread's last caught SIGBUS hit, for fz_sigbus_what() */
static __thread void *fz_sigbus_addr;
static __thread int fz_sigbus_code;

/* Outside a catching access: back to the default, and it faults again */
static void fz_sigbus(int sig, siginfo_t *si, void *uc)
{
	if (!fz_sigbus_jmp) {
		signal(sig, SIG_DFL);
		return;
	}
	fz_sigbus_addr = si->si_addr;
	fz_sigbus_code = si->si_code;
	siglongjmp(*fz_sigbus_jmp, 1);
}

/*
 * What this thread's last caught SIGBUS hit, in @buf: the address and
 * si_code, the /proc/self/maps line of the mapping there, and the page's
 * /proc/self/pagemap entry (bit 63: present; bit 62: swap, or another
 * non-present entry such as a device-private page's). A breach then says
 * what the memory was when the kernel refused it, not only where.
 */
const char *fz_sigbus_what(char *buf, size_t len)
{
	uintptr_t addr = (uintptr_t)fz_sigbus_addr, start, end;
	uint64_t entry = 0;
	bool found = false;
	char line[256];
	FILE *maps;
	int fd;

	maps = fopen("/proc/self/maps", "r");
	while (maps && !found && fgets(line, sizeof(line), maps))
		found = sscanf(line, "%" SCNxPTR "-%" SCNxPTR, &start, &end) == 2 &&
			addr >= start && addr < end;
	if (maps)
		fclose(maps);
	if (found)
		line[strcspn(line, "\n")] = 0;
	else
		snprintf(line, sizeof(line), "not mapped");
	fd = open("/proc/self/pagemap", O_RDONLY);
	if (fd >= 0) {
		if (p2p_pagemap_entry(fd, fz_sigbus_addr, &entry))
			entry = 0;
		close(fd);
	}
	snprintf(buf, len, "fault at %p, si_code %d, in \"%s\", pagemap %#" PRIx64,
		 fz_sigbus_addr, fz_sigbus_code, line, entry);
	return buf;
}

/*
 * Whether [@addr, @addr + @len) lies in [@start, @start + @size), in
 * offsets, so that no pointer wraps: a generated pointer may be anything,
 * and one near the top of the address space (~0, say) plus a length
 * wraps past zero to below @start + @size while being above @start.
 */
bool fz_within(const char *addr, uint64_t len, const char *start,
	       uint64_t size)
{
	uintptr_t a = (uintptr_t)addr, b = (uintptr_t)start;

	return a >= b && a - b <= size && len <= size - (a - b);
}

/*
 * The slot that maps all of [@addr, @addr + @len) from the start of its
 * object, known to the pool; NULL if none. Under p->lock.
 */
static const struct fz_slot *known_slot(struct fz_pool *p, const char *addr,
					uint64_t len)
{
	const struct fz_slot *s;

	if (!fz_within(addr, len, p->slots_base, NR_SLOTS * SLOT_PAGES * PAGE))
		return NULL;
	s = &p->slots[(addr - p->slots_base) / (SLOT_PAGES * PAGE)];
	if (!s->mapped || s->unknown || !fz_within(addr, len, s->ptr, s->mapped))
		return NULL;
	return s;
}

/*
 * Whether the CPU reads in [@addr, @addr + @len) what the device reaches
 * there, without a fault the uAPI allows: anonymous or read-only memory,
 * or one slot sharing an object that is not DEVICE_ONLY and small enough
 * to populate. Under p->lock, and true only with one thread: the pool's
 * idea of a slot is stale with several.
 */
bool fz_cpu_readable(struct fz_pool *p, const char *addr, uint64_t len)
{
	const struct fz_slot *s;
	int i;

	for (i = 0; i < NR_ANON; i++)
		if (fz_within(addr, len, p->anon[i], ANON_PAGES * PAGE))
			return true;
	if (fz_within(addr, len, p->ro, 2 * PAGE))
		return true;
	s = known_slot(p, addr, len);
	return s && s->shared &&
	       !(s->flags & VGEM_P2P_CREATE_DEVICE_ONLY) &&
	       s->size <= p->half_ram;
}

/* ... and may write them there: not read-only memory, nor object */
bool fz_cpu_writable(struct fz_pool *p, const char *addr, uint64_t len)
{
	const struct fz_slot *s;

	if (!fz_cpu_readable(p, addr, len) ||
	    fz_within(addr, len, p->ro, 2 * PAGE))
		return false;
	s = known_slot(p, addr, len);
	return !s || (s->writable &&
		      !(s->flags & VGEM_P2P_CREATE_READ_ONLY));
}

/*
 * Whether [@addr, @addr + @len) lies in @t's scratch buffer or its own
 * memory, which no other thread's op ever names, and no op maps, unmaps
 * or migrates: the bytes a DMA left there stay until @t looks.
 */
bool fz_thread_owns(const struct fz_thread *t, const char *addr,
		    uint64_t len)
{
	return fz_within(addr, len, t->scratch, SCRATCH_PAGES * PAGE) ||
	       fz_within(addr, len, t->own, OWN_PAGES * PAGE);
}

/*
 * Fill @len bytes at @addr with p2p_fill()'s pattern for @seed, through
 * whatever maps them: 0, or -1 on a SIGBUS.
 */
int fz_cpu_fill(char *addr, uint64_t len, uint32_t seed)
{
	sigjmp_buf jmp;

	if (sigsetjmp(jmp, 1)) {
		fz_sigbus_jmp = NULL;
		return -1;
	}
	fz_sigbus_jmp = &jmp;
	p2p_fill(addr, len, seed);
	fz_sigbus_jmp = NULL;
	return 0;
}

/*
 * Compare @len bytes, byte by byte (a mapping of VRAM may not take wider
 * reads than it must): 0 if equal, 1 with *@at the first that differs,
 * -1 on a SIGBUS.
 */
int fz_cpu_cmp(const char *a, const char *b, uint64_t len, uint64_t *at)
{
	const volatile char *va = a, *vb = b;
	sigjmp_buf jmp;
	uint64_t i;

	if (sigsetjmp(jmp, 1)) {
		fz_sigbus_jmp = NULL;
		return -1;
	}
	fz_sigbus_jmp = &jmp;
	for (i = 0; i < len && va[i] == vb[i]; i++)
		;
	fz_sigbus_jmp = NULL;
	*at = i;
	return i < len;
}

static struct fz_op *pick_op(struct fz_thread *t)
{
	unsigned int sum = 0, r, d, i;
	struct fz_op *op = NULL;

	for (d = 0; d < nr_drivers; d++)
		for (i = 0; i < drivers[d]->nr_ops; i++)
			sum += drivers[d]->ops[i].weight[t->mode];
	r = fz_below(t, sum);
	for (d = 0; d < nr_drivers; d++) {
		for (i = 0; i < drivers[d]->nr_ops; i++) {
			op = &drivers[d]->ops[i];
			if (r < op->weight[t->mode])
				return op;
			r -= op->weight[t->mode];
		}
	}
	return op;
}

/* Each driver's settle hook, if it has one */
static void settle(struct fz_thread *t)
{
	unsigned int d;

	for (d = 0; d < nr_drivers; d++)
		if (drivers[d]->settle)
			drivers[d]->settle(t);
}

/*
 * A move waits for the object's fences (the dma-buf contract), and only
 * vgem's 10 s expiry would signal one its own thread attached while
 * that thread waits: so a thread settles (signals its fences) before
 * any call that may move or wait for an object. Other threads' calls
 * still run under them, and wait until the thread's next such call.
 */
static void *fz_thread_main(void *arg)
{
	struct fz_thread *t = arg;
	struct fz_op *op;

	while (t->calls < t->ncalls) {
		op = pick_op(t);
		if (!op->under_fences)
			settle(t);
		op->call(t);
	}
	settle(t);
	return NULL;
}

/* Setup and teardown */

static uint64_t vram_bus_addr(int vfd)
{
	uint64_t start, end;
	struct stat st;
	char dev[96];

	if (fstat(vfd, &st))
		return 0;
	snprintf(dev, sizeof(dev), "/sys/dev/char/%u:%u/device",
		 major(st.st_rdev), minor(st.st_rdev));
	return pci_bar_range(dev, 2, &start, &end) ? start : 0;
}

static void *map_anon(size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	igt_assert(p != MAP_FAILED);
	return p;
}

static void pool_init(struct fz_pool *p, bool importer)
{
	struct drm_vgem_p2p_stats s = {};
	int i;

	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->lock, NULL);
	p->vfd = vgem_p2p_open_nth(0);
	igt_require_f(p->vfd >= 0, "no vgem_p2p device\n");
	p->efd = -1;
	if (importer) {
		p->efd = edu_open_nth(0);
		igt_require_f(p->efd >= 0, "no /dev/edu_nic0\n");
	}
	do_ioctl(p->vfd, DRM_IOCTL_VGEM_P2P_STATS, &s);
	p->vram_size = s.vram_size;
	p->has_devmem = s.devmem_size;
	p->vram_bus = vram_bus_addr(p->vfd);
	/* vgem_p2p_tt_populate(): no object gets more than half of RAM */
	p->half_ram = (uint64_t)sysconf(_SC_PHYS_PAGES) / 2 * PAGE;

	for (i = 0; i < NR_ANON; i++) {
		p->anon[i] = map_anon(ANON_PAGES * PAGE,
				      PROT_READ | PROT_WRITE);
		memset(p->anon[i], i + 1, ANON_PAGES * PAGE);
	}
	p->ro = map_anon(2 * PAGE, PROT_READ);
	p->none = map_anon(2 * PAGE, PROT_NONE);
	p->slots_base = map_anon(NR_SLOTS * SLOT_PAGES * PAGE, PROT_NONE);
	for (i = 0; i < NR_SLOTS; i++)
		p->slots[i].ptr = p->slots_base + i * SLOT_PAGES * PAGE;
	p->memfd = memfd_create("p2p_fuzz", MFD_CLOEXEC);
	igt_assert_fd(p->memfd);
	for (i = 0; i < NR_STALE; i++) {
		p->stale_handles[i] = i + 1;
		p->stale_keys[i] = i + 1;
		p->stale_fds[i] = -1;
	}
}

/* Held to their start values once the pool is freed (p2p_counts.h) */
static struct p2p_counts_src counts_src;
static struct p2p_counts start_counts;

/* Release everything; the drivers' counts must be back where they were */
static void pool_fini(struct fz_pool *p)
{
	int i;

	for (i = 0; i < NR_SLOTS; i++)
		fz_slot_reset(&p->slots[i]);
	if (p->efd >= 0) {
		/*
		 * Registrations whose DEREG_MR failed (a bad pad, say) were
		 * forgotten by the pool: closing the file releases them.
		 */
		for (i = 0; i < p->nmrs; i++)
			edu_dereg_err(p->efd, p->mrs[i].key);
		close(p->efd);
	}
	for (i = 0; i < p->nbufs; i++)
		close(p->bufs[i]);
	close(p->vfd);
	close(p->memfd);
	for (i = 0; i < NR_ANON; i++)
		munmap(p->anon[i], ANON_PAGES * PAGE);
	munmap(p->ro, 2 * PAGE);
	munmap(p->none, 2 * PAGE);
	munmap(p->slots_base, NR_SLOTS * SLOT_PAGES * PAGE);
}

static void print_histograms(void)
{
	unsigned int d, i;
	char line[1024];
	int e, n;

	for (d = 0; d < nr_drivers; d++) {
		for (i = 0; i < drivers[d]->nr_ops; i++) {
			const struct fz_op *op = &drivers[d]->ops[i];

			if (!op->calls)
				continue;
			n = snprintf(line, sizeof(line),
				     "  %-20s %7lu calls: ok %lu", op->name,
				     op->calls, op->err[0]);
			for (e = 1; e < MAX_ERRNO &&
			     n < (int)sizeof(line) - 32; e++)
				if (op->err[e])
					n += snprintf(line + n,
						      sizeof(line) - n,
						      ", %s %lu",
						      strerrorname_np(e) ?: "?",
						      op->err[e]);
			igt_info("%s\n", line);
		}
	}
}

/* The engine's set-up, once: the SIGBUS catcher of fz_cpu_*() */
void fz_engine_init(void)
{
	struct sigaction sa = {
		.sa_sigaction = fz_sigbus,
		.sa_flags = SA_SIGINFO,
	};

	sigaction(SIGBUS, &sa, NULL);
}

/*
 * One subtest: @nthreads threads, each making @calls calls of @drivers'
 * operations weighed for @mode, from streams seeded by @seed; then the
 * pool freed, and the run failed on the first breach of each rule.
 */
void fz_run(const struct fz_driver *const *drv, unsigned int nr_drv,
	    enum fz_mode mode, int nthreads, unsigned long calls,
	    uint64_t seed)
{
	struct fz_thread threads[NR_THREADS] = {};
	unsigned long sum = 0;
	char report[NR_RULES * 520 + 512], counts[384];
	int counts_fd, n = 0, r;
	time_t start = time(NULL);
	unsigned int d;
	int i;

	drivers = drv;
	nr_drivers = nr_drv;
	base_seed = seed;
	for (d = 0; d < nr_drivers; d++) {
		for (i = 0; i < (int)drivers[d]->nr_ops; i++) {
			drivers[d]->ops[i].calls = 0;
			memset(drivers[d]->ops[i].err, 0,
			       sizeof(drivers[d]->ops[i].err));
		}
	}
	memset(violation, 0, sizeof(violation));
	p2p_kmsg("[IGT] p2p_fuzz: %s, seed %" PRIu64 "\n", igt_subtest_name(),
	     base_seed);
	counts_fd = vgem_p2p_open_nth(0);
	igt_require_f(counts_fd >= 0, "no vgem_p2p device\n");
	p2p_counts_src_init(&counts_src, counts_fd);
	start_counts = p2p_counts_read(&counts_src);
	pool_init(&pool, mode != MODE_EXPORTER);

	for (i = 0; i < nthreads; i++) {
		struct fz_thread *t = &threads[i];

		t->pool = &pool;
		t->mode = mode;
		t->id = i;
		t->rng = splitmix(base_seed ^ splitmix(mode * 16 + i + 1)) | 1;
		t->ncalls = calls;
		t->scratch = map_anon(SCRATCH_PAGES * PAGE,
				      PROT_READ | PROT_WRITE);
		t->own = map_anon(OWN_PAGES * PAGE, PROT_READ | PROT_WRITE);
		igt_assert_eq(pthread_create(&t->tid, NULL, fz_thread_main, t),
			      0);
	}
	for (i = 0; i < nthreads; i++) {
		pthread_join(threads[i].tid, NULL);
		munmap(threads[i].scratch, SCRATCH_PAGES * PAGE);
		munmap(threads[i].own, OWN_PAGES * PAGE);
		sum += threads[i].calls;
	}
	pool_fini(&pool);

	total_calls += sum;
	p2p_kmsg("[IGT] p2p_fuzz: %s, %lu calls in %ld s\n", igt_subtest_name(),
	     sum, (long)(time(NULL) - start));
	igt_info("%lu calls in %ld s, seed %" PRIu64 "; %lu in this run so far\n",
		 sum, (long)(time(NULL) - start), base_seed, total_calls);
	print_histograms();
	/* every rule's first breach, so that one run shows them all */
	n = 0;
	if (*p2p_counts_check(&counts_src, &start_counts, counts, sizeof(counts)))
		n = snprintf(report, sizeof(report),
			     "counts not back after the pool was freed (seed %" PRIu64 "): %s",
			     base_seed, counts);
	for (r = 0; r < NR_RULES; r++)
		if (violation[r][0])
			n += snprintf(report + n, sizeof(report) - n, "%s%s",
				      n ? "; " : "", violation[r]);
	close(counts_fd);
	igt_assert_f(!n, "%s\n", report);
}
