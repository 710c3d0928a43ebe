/* SPDX-License-Identifier: GPL-2.0 */
/*
 * edu_nic: a simulated NIC on QEMU's edu device. Internal definitions.
 *
 * Lock order, outermost first:
 *   edu_nic_mr.op_lock > edu_nic.mr_list_lock > dma_resv of a dma-buf >
 *   the mirror lock (*edu_nic_mr.lock)
 *   edu_nic_mr.op_lock > edu_nic.dma_lock > the mirror lock
 *   edu_nic_mr.op_lock > edu_nic.fault_rwsem > mmap_lock > the mirror lock
 * Under edu_nic.dma_lock a dma-buf's dma_resv is only try-locked: a move
 * holds it across its fence wait and its copy, and the engine is shared.
 */
#ifndef _EDU_NIC_H
#define _EDU_NIC_H

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/dma-mapping.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/mmu_notifier.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/rwsem.h>
#include <linux/wait.h>
#include <linux/xarray.h>

#include <rdma/ib_verbs.h>

#include <uapi/linux/edu_nic.h>

#include "edu_nic_compat.h"

struct iommu_domain;
struct ib_umem_dmabuf;
struct ib_umem_odp;

/* The edu device's registers, in BAR0 */
#define EDU_REG_ID		0x00	/* 0xRRrr00ed: major, minor, 0xed */
#define EDU_REG_ALIVE		0x04	/* reads back the complement */
#define EDU_REG_IRQ_STATUS	0x24
#define EDU_REG_IRQ_ACK		0x64
#define EDU_REG_DMA_SRC		0x80
#define EDU_REG_DMA_DST		0x88
#define EDU_REG_DMA_COUNT	0x90
#define EDU_REG_DMA_CMD		0x98
#define   EDU_DMA_CMD_RUN	BIT(0)	/* start; reads 1 while busy */
#define   EDU_DMA_CMD_TO_PCI	BIT(1)	/* edu buffer -> bus; else bus -> buffer */
#define   EDU_DMA_CMD_IRQ	BIT(2)	/* raise EDU_IRQ_DMA when done */
#define EDU_IRQ_DMA		0x100

/* "edu_nic<id>" for any non-negative int id, with its NUL */
#define EDU_NIC_NAME_SIZE	sizeof("edu_nic2147483647")

/* The device's DMA buffer, as the engine addresses it */
#define EDU_BUF_ADDR		0x40000
#define EDU_BUF_SIZE		4096
/*
 * The largest transfer per command: half the buffer. QEMU before 8.0
 * aborts the VM when a transfer touches the buffer's last byte.
 */
#define EDU_XFER_MAX		2048

/*
 * struct edu_nic_dev_counters - the device-wide struct edu_nic_stats,
 * atomic since every registration adds to it
 */
struct edu_nic_dev_counters {
	atomic64_t pages_p2p;
	atomic64_t pages_system;
	atomic64_t cur_pages_p2p;
	atomic64_t cur_pages_system;
	atomic64_t faults;
	atomic64_t fault_retries;
	atomic64_t invalidations;
	atomic64_t remaps;
	atomic64_t p2p_maps;
	atomic64_t device_dma_bytes;
	atomic64_t device_dma_cmds;
	atomic64_t bulk_bytes;
	atomic64_t errors;
	atomic64_t pages_bus;
	atomic64_t pages_iova;
	atomic64_t nr_mrs;
};

/**
 * struct edu_nic - one bound edu device
 * @ibdev: the RDMA device its registrations' umems belong to; first, as
 *	ib_alloc_device() wants.
 * @pdev: the PCI device.
 * @regs: BAR0.
 * @id: index in the device name, edu_nic<id>.
 * @misc: the character device.
 * @name: "edu_nic<id>".
 * @kref: the device outlives its unbinding while files are open.
 * @dma_lock: serializes the DMA engine: one transfer at a time.
 * @dma_waiting: transfers queued for @dma_lock (debugfs).
 * @dma_done: completed by the interrupt handler at the end of a command.
 * @bounce: coherent page the engine copies the edu buffer to and from.
 * @bounce_dma: its DMA address.
 * @dead: the device is unbound: no more commands, no more mirroring. Set
 *	under both @dma_lock and @mr_list_lock.
 * @wedged: a command timed out; bus mastering is off for good.
 * @irq: the device's interrupt, its one vector.
 * @irq_held: fail_dma_irq_late keeps the line disabled, a command's
 *	interrupt pending, until the next command has started. Under
 *	@dma_lock.
 * @fault_rwsem: read-held by a fault of a registration of user memory
 *	from its check of @dead until it has mapped and checked again, so
 *	that unbind, which write-locks it once @dead is set, does not tear
 *	the mirrors down while one is being mapped, as drm_dev_unplug()
 *	waits for drm_dev_enter() sections.
 * @mr_list_lock: protects @mr_list.
 * @mr_list: every live registration on this device, for debugfs and unbind.
 * @debugfs: the device's debugfs directory.
 * @stats: device-wide counters.
 */
struct edu_nic {
	struct ib_device ibdev;
	struct pci_dev *pdev;
	void __iomem *regs;
	int id;
	struct miscdevice misc;
	char name[EDU_NIC_NAME_SIZE];
	struct kref kref;

	struct mutex dma_lock;		/* the engine, @bounce */
	atomic_t dma_waiting;
	struct completion dma_done;
	void *bounce;
	dma_addr_t bounce_dma;
	bool dead;
	bool wedged;
	int irq;
	bool irq_held;

	struct rw_semaphore fault_rwsem;	/* faults against unbind */
	struct mutex mr_list_lock;	/* @mr_list */
	struct list_head mr_list;

	struct dentry *debugfs;
	struct edu_nic_dev_counters stats;
};

/**
 * struct edu_nic_file - one open file of an edu_nic device
 * @nic: the device, referenced.
 * @mm: the address space registrations name, mmgrab()ed at open.
 * @mrs: registrations by key, under the xarray's lock; one found there is
 *	used under a reference. A key being handed out is reserved
 *	(XA_ZERO_ENTRY), which lookups see as absent, until user space has it.
 * @next_key: cursor of xa_alloc_cyclic(), under the xarray's lock.
 */
struct edu_nic_file {
	struct edu_nic *nic;
	struct mm_struct *mm;
	struct xarray mrs;
	u32 next_key;
};

/*
 * struct edu_nic_io_window - the bulk mode's CPU mapping of a BAR run
 * @io: ioremap_wc() of [@phys, @phys + @len), or NULL.
 *
 * Kept across transfers, so that a stream maps the BAR once (an ioremap
 * costs a TLB flush on every CPU). It maps MMIO, not memory that can be
 * freed, and is used only where the locked mirror points into it: so an
 * invalidation leaves it (vunmap sleeps), and the next transfer or the
 * release replaces it.
 */
struct edu_nic_io_window {
	void __iomem *io;
	phys_addr_t phys;
	size_t len;
};

/* What a registration names */
enum edu_nic_mr_kind {
	EDU_NIC_KIND_VMA,	/* a range of the owner's address space */
	EDU_NIC_KIND_DMABUF,	/* a range of a dma-buf */
};

struct edu_nic_mr;

/**
 * struct edu_nic_mr_ops - what a kind of registration does for DMA
 * @lock_mirror: return 0 with the mirror installed (writable if asked)
 *	and locked, faulting or mapping it in as needed, waiting for the
 *	exporter's moves; op_lock is held. Or a negative errno, with nothing
 *	held; a signal ends the wait (-ERESTARTSYS, -EINTR if fatal).
 * @lock_installed: lock the mirror if it is installed (writable if asked),
 *	without calling or waiting for an exporter: the engine is held.
 *	-EAGAIN if not installed, or if locking it would wait (a dma-buf's
 *	dma_resv held by a move): the caller drops the engine and calls
 *	@lock_mirror, which waits.
 * @unlock_mirror: undo either.
 * @addr: the address the device uses for a page of the locked mirror.
 * @page_sysmem: does the page's address reach system memory? The bulk
 *	mode copies through the kernel's mapping of such a page.
 * @sync_dir: the direction such a page is mapped with, and synced with
 *	around each DMA; DMA_NONE if its mapping is coherent and never
 *	synced (hmm_dma_map's, ODP's on 7.x).
 * @bus_addr: optional: is the page's address one no IOMMU translates?
 * @first_dma_addr: optional, for debugfs: the first page's address, if
 *	the mirror is installed.
 * @kill: tear the mirror down for good: the device is being unbound.
 * @release: the last reference: tear down, release the umem.
 */
struct edu_nic_mr_ops {
	int (*lock_mirror)(struct edu_nic_mr *mr, bool write);
	int (*lock_installed)(struct edu_nic_mr *mr, bool write);
	void (*unlock_mirror)(struct edu_nic_mr *mr);
	dma_addr_t (*addr)(struct edu_nic_mr *mr, unsigned long i);
	bool (*page_sysmem)(struct edu_nic_mr *mr, unsigned long i);
	enum dma_data_direction (*sync_dir)(struct edu_nic_mr *mr,
					    unsigned long i);
	bool (*bus_addr)(struct edu_nic_mr *mr, unsigned long i);
	bool (*first_dma_addr)(struct edu_nic_mr *mr, dma_addr_t *addr);
	void (*kill)(struct edu_nic_mr *mr);
	void (*release)(struct edu_nic_mr *mr);
};

/**
 * struct edu_nic_mr - a registered memory region and its mirror
 * @nic: the device.
 * @kref: held by the file's xarray and by every ioctl using the region.
 * @key: the key user space names it by.
 * @kind: what it names.
 * @ops: how its mirror is locked and read, for the kind.
 * @start: first address; for a dma-buf, offset in it.
 * @length: length in bytes, a multiple of PAGE_SIZE.
 * @npages: @length in pages.
 * @access: EDU_NIC_ACCESS_* bits.
 * @odp: a range of the address space: its on-demand-paging umem (the mmu
 *	interval notifier, the pages' DMA mappings: on 6.1 the RDMA core's,
 *	with the exporters' leases, on 7.x the umem's struct hmm_dma_map
 *	that edu_nic maps). NULL for a dma-buf.
 * @node: on edu_nic.mr_list, under edu_nic.mr_list_lock, once @key is set
 *	(debugfs never lists a key-less region); empty before.
 * @op_lock: serializes faulting and DMA on this region. The notifier never
 *	takes it, so it may be held across sleeping and allocating.
 * @lock: the mirror lock: @odp's umem_mutex (mapping is under it), or
 *	@own_lock. Protects @valid, @writable, @stats and the addresses (the
 *	umem's, or @dma_addrs, @sysmem and @bus). Held around each DMA
 *	command that uses them, with the engine already taken: an
 *	invalidation waits for that command, never for the engine's queue.
 *	The notifier takes it, maybe under reclaim: nothing allocates with
 *	reclaim (GFP_KERNEL, ioremap) or faults on user memory under it; the
 *	bulk mode copies with page faults disabled.
 * @own_lock: @lock of a dma-buf registration; the exporter is never called
 *	under it.
 * @valid: the mirror is installed: every page mapped, for the device.
 * @writable: ... and was faulted for writing.
 * @ever_mapped: a mirror was installed before (the next one is a re-map).
 * @faulting: ib_umem_odp_map_dma_and_lock() runs for us: an invalidation
 *	now makes the core walk the range again (counted as a fault retry).
 * @dma_addrs: per page, the address the exporter mapped (a dma-buf's), or
 *	that hmm_dma_map_pfn() gave (an ODP registration's on 7.x).
 * @sysmem: a dma-buf's: per page, the address reaches system RAM: each
 *	DMA syncs it, and the bulk mode copies through the kernel mapping.
 * @bus: a dma-buf's: per page, the exporter marked the address a bus
 *	address (sg_dma_mark_bus_address()): a switch routes it, no IOMMU
 *	translates it.
 * @win: the bulk mode's BAR window, under @op_lock.
 * @stats: counters, see struct edu_nic_stats; nr_mrs is unused.
 * @umem_dmabuf: a dma-buf registration's umem: the dma-buf, our dynamic
 *	(or pinned) attachment and the exporter's mapping. The mapping is
 *	made, dropped (the exporter's invalidation, or on 7.x its revocation
 *	of a pinned one) and used by each DMA command under the dma_resv, so
 *	a DMA never overlaps a move.
 */
struct edu_nic_mr {
	struct edu_nic *nic;
	struct kref kref;
	u32 key;
	enum edu_nic_mr_kind kind;
	const struct edu_nic_mr_ops *ops;
	unsigned long start;
	unsigned long length;
	unsigned long npages;
	u32 access;
	struct ib_umem_odp *odp;
	struct list_head node;

	struct mutex op_lock;		/* one fault or DMA at a time */

	struct mutex *lock;		/* the mirror */
	struct mutex own_lock;
	bool valid;
	bool writable;
	bool ever_mapped;
	bool faulting;
	dma_addr_t *dma_addrs;
	unsigned long *sysmem;
	unsigned long *bus;
	struct edu_nic_stats stats;

	struct edu_nic_io_window win;

	struct ib_umem_dmabuf *umem_dmabuf;
};

/**
 * struct edu_nic_dma_target - the bus address a transfer reads or writes
 * @addr: the address, if @lock is NULL (it needs no lock: raw DMA).
 * @lock: called with the engine held before each command that uses the
 *	address, for @len bytes from byte @off of the transfer: stores their
 *	address in *@addr and returns 0, holding what keeps it valid until
 *	@unlock; or -EAGAIN if it went away or keeping it valid would wait
 *	with the engine held, which ends the transfer.
 * @unlock: called once that command has finished.
 */
struct edu_nic_dma_target {
	dma_addr_t addr;
	int (*lock)(struct edu_nic_dma_target *t, size_t off, size_t len,
		    dma_addr_t *addr);
	void (*unlock)(struct edu_nic_dma_target *t);
};

/**
 * struct edu_nic_hold - a test knob that holds threads at one point
 * @on: set through debugfs: while it is, edu_nic_hold_wait() waits.
 * @held: how many wait (debugfs).
 * @wq: where they wait.
 */
struct edu_nic_hold {
	u32 on;
	atomic_t held;
	wait_queue_head_t wq;
};

#define EDU_NIC_HOLD_INIT(name) {					\
	.held = ATOMIC_INIT(0),						\
	.wq = __WAIT_QUEUE_HEAD_INITIALIZER((name).wq),			\
}

/* edu_nic_drv.c */
void edu_nic_put(struct edu_nic *nic);

/* edu_nic_dma.c */
bool edu_nic_iommu_translated(struct edu_nic *nic);
struct iommu_domain *edu_nic_dma_domain(struct edu_nic *nic);
phys_addr_t edu_nic_domain_to_phys(struct iommu_domain *domain,
				   dma_addr_t addr);
phys_addr_t edu_nic_bus_to_phys(struct edu_nic *nic, dma_addr_t addr);
void edu_nic_dma_fault_init(struct dentry *root);
int edu_nic_dma_init(struct edu_nic *nic);
void edu_nic_dma_fini(struct edu_nic *nic);
void edu_nic_dma_kill(struct edu_nic *nic);
void edu_nic_dma_hold_init(struct dentry *root);
int edu_nic_dma_from_bus(struct edu_nic *nic, struct edu_nic_dma_target *t,
			 void *buf, size_t len, bool check_poison);
int edu_nic_dma_to_bus(struct edu_nic *nic, struct edu_nic_dma_target *t,
		       const void *buf, size_t len);

/* edu_nic_mr.c */
phys_addr_t edu_nic_mr_phys(struct edu_nic_mr *mr, struct iommu_domain *domain,
			    unsigned long i);

/* Add to a counter of the region and of its device. */
#define edu_nic_mr_count(mr, field, n) do {				\
	struct edu_nic_mr *__mr = (mr);					\
	u64 __n = (n);							\
									\
	lockdep_assert_held(__mr->lock);				\
	__mr->stats.field += __n;					\
	atomic64_add(__n, &__mr->nic->stats.field);			\
} while (0)

void edu_nic_mr_lockdep_taint(struct mutex *lock);
void edu_nic_mr_lockdep_prime(void);
struct edu_nic_mr *edu_nic_mr_alloc(struct edu_nic *nic, unsigned long start,
				    unsigned long length, u32 access,
				    enum edu_nic_mr_kind kind,
				    const struct edu_nic_mr_ops *ops);
void edu_nic_mr_free(struct edu_nic_mr *mr);
int edu_nic_mr_publish(struct edu_nic_mr *mr);
void edu_nic_mr_installed(struct edu_nic_mr *mr, bool write,
			  unsigned long p2p, unsigned long p2p_maps);
void edu_nic_mr_uninstalled(struct edu_nic_mr *mr);
int edu_nic_mr_prefetch(struct edu_nic_mr *mr);
void edu_nic_mr_put(struct edu_nic_mr *mr);
int edu_nic_mr_transfer(struct edu_nic_mr *mr, const struct edu_nic_dma *req);
void edu_nic_mr_snapshot(struct edu_nic_mr *mr, struct edu_nic_mr_stats *out);
bool edu_nic_mr_first_dma_addr(struct edu_nic_mr *mr, dma_addr_t *addr);
void edu_nic_mr_kill_all(struct edu_nic *nic);

/* edu_nic_odp.c */
void edu_nic_odp_hold_init(struct dentry *root);
struct edu_nic_mr *edu_nic_odp_create(struct edu_nic_file *f,
				      const struct edu_nic_reg_mr *req);

/*
 * How an ODP registration's pages are DMA mapped, and read back: by the
 * RDMA core into its dma_list on 6.1 (edu_nic_odp_dma_list.c), by edu_nic
 * from the core's struct hmm_dma_map on 7.x (edu_nic_odp_hmm_dma.c). Per
 * page @i, under the mirror lock, of an installed mirror.
 */
int edu_nic_odp_map_init(struct edu_nic_mr *mr);
int edu_nic_odp_map_dma_and_lock(struct edu_nic_mr *mr, bool write);
dma_addr_t edu_nic_odp_addr(struct edu_nic_mr *mr, unsigned long i);
bool edu_nic_odp_page_sysmem(struct edu_nic_mr *mr, unsigned long i);
enum dma_data_direction edu_nic_odp_sync_dir(struct edu_nic_mr *mr,
					     unsigned long i);
bool edu_nic_odp_bus_addr(struct edu_nic_mr *mr, unsigned long i);
unsigned long edu_nic_odp_nr_leases(struct edu_nic_mr *mr);

/* edu_nic_dmabuf.c */
struct edu_nic_mr *edu_nic_dmabuf_create(struct edu_nic *nic,
					 const struct edu_nic_reg_dmabuf *req);

/* edu_nic_ib.c */
int edu_nic_ib_register(struct edu_nic *nic);
void edu_nic_ib_unregister(struct edu_nic *nic);

/* edu_nic_ioctl.c */
long edu_nic_ioctl(struct file *filp, unsigned int cmd, unsigned long arg);

/* edu_nic_debugfs.c */
void edu_nic_debugfs_init(struct edu_nic *nic);
void edu_nic_debugfs_fini(struct edu_nic *nic);
void edu_nic_debugfs_module_init(void);
void edu_nic_debugfs_module_exit(void);
void edu_nic_dev_stats(struct edu_nic *nic, struct edu_nic_stats *out);
void edu_nic_hold_wait(struct edu_nic_hold *h);
void edu_nic_hold_create(struct dentry *root, const char *knob,
			 const char *count, struct edu_nic_hold *h);

#endif /* _EDU_NIC_H */
