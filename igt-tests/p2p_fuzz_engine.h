/* SPDX-License-Identifier: MIT */
/*
 * p2p_fuzz's engine (p2p_fuzz_engine.c), as its users see it: the pools
 * the threads share, each thread's random stream, the generators of
 * arguments, good and bad, the counted calls, the invariants of enum
 * fz_rule, and fz_run(), which runs threads over operation tables.
 *
 * The dependency goes one way: the operation tables (p2p_fuzz_vgem_p2p.c,
 * p2p_fuzz_edu_nic.c) call into the engine, and the test binary
 * (p2p_fuzz.c) hands it the tables to run; the engine calls neither, but
 * through a table. An operation is one entry of a driver's table, its
 * name, the errnos it may return, its weight in each subtest and the
 * function that makes one call. The errnos are each operation's only
 * list: the engine fails a run on any other. Beside them, the engine
 * holds every call to the invariants of enum fz_rule.
 */
#ifndef P2P_FUZZ_ENGINE_H
#define P2P_FUZZ_ENGINE_H

#include <pthread.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>

#include "edu_nic_helpers.h"
#include "vgem_p2p_common.h"

#define PAGE		4096ull
#define NR_THREADS	4
#define POOL_OBJS	24
#define POOL_MRS	16
#define POOL_BUFS	8
#define POOL_FENCES	16
#define NR_STALE	8
#define NR_ANON		4
#define ANON_PAGES	8
#define NR_SLOTS	8
#define SLOT_PAGES	16
#define SCRATCH_PAGES	4
#define OWN_PAGES	4
#define MAX_ERRNO	134

/* A documented errno set, 0-terminated; ERRS(0): none */
#define ERRS(...) ((const int []){ __VA_ARGS__, 0 })

/* The subtests, each with its own weights */
enum fz_mode { MODE_EXPORTER, MODE_IMPORTER, MODE_BOTH, NR_MODES };

struct fz_thread;

/*
 * What a run checks beside each op's errno list; the first breach of
 * each is kept and reported with the seed.
 */
enum fz_rule {
	RULE_ERRNO,	/* an errno the op's list lacks */
	RULE_EINVAL,	/* a pad, unknown flag or enum value not refused */
	RULE_EIO,	/* EIO or ENODEV, with nothing unbound */
	RULE_SIGBUS,	/* a touch SIGBUS the uAPI does not promise */
	RULE_DATA,	/* DMA bytes not where the op put them */
	NR_RULES
};

/*
 * Each ioctl's documented errnos: the uAPI headers' common rules (pads,
 * flags, handles, keys, -EFAULT for a bad argument pointer, -ENOMEM) plus
 * what each struct's comment lists; the DRM core's own ioctls as 6.1's
 * drm_gem.c, drm_prime.c and drm_dumb_buffers.c return them.
 */
struct fz_op {
	const char *name;
	const int *errnos;
	unsigned int weight[NR_MODES];	/* relative, per subtest */
	void (*call)(struct fz_thread *t);
	/*
	 * Runs with the calling thread's fences pending: it neither moves
	 * nor waits for an object (struct fz_driver's settle)
	 */
	bool under_fences;
	/* this subtest's calls, by errno (0: success) */
	unsigned long calls;
	unsigned long err[MAX_ERRNO];
};

/* One driver's operations, in the order the engine weighs them */
struct fz_driver {
	struct fz_op *ops;
	unsigned int nr_ops;
	/*
	 * Before each call of an op not marked under_fences, and at the
	 * thread's end: let go of whatever would make a move or a wait of
	 * this thread's wait for itself (vgem's fences it attached)
	 */
	void (*settle)(struct fz_thread *t);
};

struct fz_obj {
	uint32_t handle;
	uint64_t size;
	uint32_t flags;
};

struct fz_mr {
	uint32_t key;
	uint64_t length;
	char *addr;	/* of the range it mirrors */
};

/* A slot of the reserved region: PROT_NONE, or an object's mmap */
struct fz_slot {
	char *ptr;
	uint64_t mapped;	/* bytes of object mapped; 0: PROT_NONE */
	uint32_t flags;		/* the object's */
	uint64_t size;		/* the object's */
	bool unknown;		/* maps whatever object an offset hit */
	bool writable;
	bool shared;		/* MAP_SHARED: the CPU sees the object */
};

/*
 * What the threads share. @lock covers the pools' bookkeeping, and the
 * slots across a remap or a CPU touch of one; never an ioctl, so that a
 * slow one does not serialize the others.
 */
struct fz_pool {
	pthread_mutex_t lock;
	int vfd, efd;
	uint64_t vram_size;
	uint64_t vram_bus;	/* the BAR as the edu device may see it */
	bool has_devmem;
	uint64_t half_ram;	/* larger objects never populate: SIGBUS */

	struct fz_obj objs[POOL_OBJS];
	int nobjs;
	struct fz_mr mrs[POOL_MRS];
	int nmrs;
	int bufs[POOL_BUFS];
	int nbufs;
	uint32_t fences[POOL_FENCES];
	int nfences;
	uint32_t stale_handles[NR_STALE], stale_keys[NR_STALE];
	int stale_fds[NR_STALE];
	unsigned int stale_next;

	char *anon[NR_ANON];
	char *ro;		/* private, read-only */
	char *none;		/* PROT_NONE, never mapped */
	char *slots_base;
	struct fz_slot slots[NR_SLOTS];
	int memfd;
};

struct fz_thread {
	struct fz_pool *pool;
	enum fz_mode mode;
	int id;
	uint64_t rng;
	unsigned long calls, ncalls;
	/*
	 * Memory no other thread's op names, nor any op maps, unmaps or
	 * migrates: @scratch (SCRATCH_PAGES), the user buffer of most DMAs,
	 * and @own (OWN_PAGES), which no generator gives at all, for the
	 * thread's own registrations
	 */
	char *scratch;
	char *own;
	pthread_t tid;
	/* fences this thread attached and has not settled */
	uint32_t fences[POOL_FENCES];
	unsigned int nfences;
	/*
	 * What the op's next fz_ioctl() must or may return beyond its list's
	 * rules; fz_ioctl() clears them. @must_einval: a pad, an unknown flag
	 * or enum value is set, which the driver checks before anything
	 * else. @may_enodev, @may_eio: the op's kernel-doc gives them a
	 * cause other than an unbind, which p2p_fuzz never does.
	 */
	bool must_einval, may_enodev, may_eio;
};

/*
 * A CPU access that may get SIGBUS runs with fz_sigbus_jmp pointing at
 * a sigsetjmp() buffer (and a SIGBUS longjmps there); outside one, SIGBUS
 * is fatal again. fz_engine_init() installs the catcher.
 */
extern __thread sigjmp_buf *volatile fz_sigbus_jmp;
const char *fz_sigbus_what(char *buf, size_t len);

/* Random numbers, argument generators, counted calls */
uint64_t fz_rnd(struct fz_thread *t);
uint64_t fz_below(struct fz_thread *t, uint64_t n);
bool fz_one_in(struct fz_thread *t, uint64_t n);
uint64_t fz_evil_u64(struct fz_thread *t);
uint32_t fz_flags(struct fz_thread *t, uint32_t valid);
uint32_t fz_pad(struct fz_thread *t);
char *fz_range(struct fz_thread *t, uint64_t *len, bool aligned);
char *fz_buf(struct fz_thread *t, uint64_t len);
void fz_note(struct fz_thread *t, struct fz_op *op, int err);
void fz_violation(struct fz_thread *t, enum fz_rule rule, const char *fmt,
		  ...) __attribute__((format(printf, 3, 4)));
bool fz_one_thread(const struct fz_thread *t);
bool fz_pool_region(struct fz_pool *p, const char *addr, const char **start,
		    const char **end);
int fz_ioctl(struct fz_thread *t, struct fz_op *op, int fd,
	     unsigned long req, void *arg);
void fz_stale_push(struct fz_pool *p, uint32_t *ring, uint32_t v);
void fz_slot_reset(struct fz_slot *s);

/* [addr, addr + len) in [start, start + size), no pointer wrapping */
bool fz_within(const char *addr, uint64_t len, const char *start,
	       uint64_t size);

/* What the CPU may do to the pool's memory without a fault (p->lock) */
bool fz_cpu_readable(struct fz_pool *p, const char *addr, uint64_t len);
bool fz_cpu_writable(struct fz_pool *p, const char *addr, uint64_t len);
bool fz_thread_owns(const struct fz_thread *t, const char *addr,
		    uint64_t len);
int fz_cpu_fill(char *addr, uint64_t len, uint32_t seed);
int fz_cpu_cmp(const char *a, const char *b, uint64_t len, uint64_t *at);

/* The test binary's side: install the engine, run one subtest */
void fz_engine_init(void);
void fz_run(const struct fz_driver *const *drivers, unsigned int nr_drivers,
	    enum fz_mode mode, int nthreads, unsigned long calls,
	    uint64_t seed);

#endif /* P2P_FUZZ_ENGINE_H */
