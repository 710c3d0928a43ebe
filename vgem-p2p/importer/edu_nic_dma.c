// SPDX-License-Identifier: GPL-2.0
/*
 * edu_nic: the edu DMA engine, one command at a time, completion by
 * interrupt. It moves data only between a bus address and its own buffer,
 * which the CPU cannot reach, so each chunk of a transfer is two commands
 * through a coherent bounce page: bus -> edu buffer -> bounce, or back.
 */
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/fault-inject.h>
#include <linux/interrupt.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/iommu.h>
#include <linux/random.h>
#include <linux/string.h>

#include <vgem_p2p_iommu.h>

#include "edu_nic.h"

/*
 * A command takes about 100 ms of the guest's virtual time; under TCG on
 * a loaded host that can be much more in wall-clock time.
 */
#define EDU_DMA_TIMEOUT		(10 * HZ)

#ifdef CONFIG_FAULT_INJECTION
/* fail_dma_timeout: a command that never ends, which QEMU cannot do */
static DECLARE_FAULT_ATTR(edu_nic_fail_dma_timeout);

/*
 * fail_dma_irq_late: a command's interrupt delivered only once the next
 * command has started, after the wait gave up and found the engine idle.
 */
static DECLARE_FAULT_ATTR(edu_nic_fail_dma_irq_late);

/*
 * Only when armed: should_fail() also answers a task's fail-nth, and a
 * wedged engine would stay wedged for every later test.
 */
static bool edu_nic_dma_inject_timeout(void)
{
	return READ_ONCE(edu_nic_fail_dma_timeout.probability) &&
	       should_fail(&edu_nic_fail_dma_timeout, 1);
}

static bool edu_nic_dma_inject_irq_late(void)
{
	return READ_ONCE(edu_nic_fail_dma_irq_late.probability) &&
	       should_fail(&edu_nic_fail_dma_irq_late, 1);
}

/* Create the fault-injection knobs in <debugfs>/edu_nic */
void edu_nic_dma_fault_init(struct dentry *root)
{
	fault_create_debugfs_attr("fail_dma_timeout", root,
				  &edu_nic_fail_dma_timeout);
	fault_create_debugfs_attr("fail_dma_irq_late", root,
				  &edu_nic_fail_dma_irq_late);
}
#else
static bool edu_nic_dma_inject_timeout(void)
{
	return false;
}

static bool edu_nic_dma_inject_irq_late(void)
{
	return false;
}

void edu_nic_dma_fault_init(struct dentry *root)
{
}
#endif

/*
 * hold_dma: while set, a transfer holding the engine waits before its
 * first command, so that others queue behind it; held_dma counts them.
 */
static struct edu_nic_hold edu_nic_dma_hold_knob =
	EDU_NIC_HOLD_INIT(edu_nic_dma_hold_knob);

static void edu_nic_dma_hold(void)
{
	/* a fatal signal ends the wait; the commands then run as always */
	edu_nic_hold_wait(&edu_nic_dma_hold_knob);
}

/* Create the hold_dma knob and its count in <debugfs>/edu_nic */
void edu_nic_dma_hold_init(struct dentry *root)
{
	edu_nic_hold_create(root, "hold_dma", "held_dma",
			    &edu_nic_dma_hold_knob);
}

static irqreturn_t edu_nic_irq(int irq, void *data)
{
	struct edu_nic *nic = data;
	u32 status = ioread32(nic->regs + EDU_REG_IRQ_STATUS);

	/* The line may be shared when MSI is not available. */
	if (!status)
		return IRQ_NONE;
	iowrite32(status, nic->regs + EDU_REG_IRQ_ACK);
	if (status & EDU_IRQ_DMA)
		complete(&nic->dma_done);
	return IRQ_HANDLED;
}

static bool edu_nic_dma_running(struct edu_nic *nic)
{
	return readq(nic->regs + EDU_REG_DMA_CMD) & EDU_DMA_CMD_RUN;
}

/*
 * Fault injection: wait for the command by polling, with its interrupt
 * held back behind the disabled line until the next command has started
 * (edu_nic_dma_release_irq()). Return: 0, as a timed-out wait does.
 */
static unsigned long edu_nic_dma_wait_irq_late(struct edu_nic *nic)
{
	unsigned long deadline = jiffies + EDU_DMA_TIMEOUT;

	while (edu_nic_dma_running(nic) && time_before(jiffies, deadline))
		usleep_range(1000, 2000);
	return 0;
}

static void edu_nic_dma_release_irq(struct edu_nic *nic)
{
	if (nic->irq_held) {
		nic->irq_held = false;
		enable_irq(nic->irq);
	}
}

/* Run one command and wait for it. */
static int edu_nic_dma_cmd(struct edu_nic *nic, u64 src, u64 dst, u32 count,
			   u32 dir)
{
	unsigned long left;
	bool irq_late;

	lockdep_assert_held(&nic->dma_lock);

	if (nic->dead)
		return -ENODEV;
	if (nic->wedged)
		return -EIO;

	irq_late = !nic->irq_held && edu_nic_dma_inject_irq_late();
	reinit_completion(&nic->dma_done);
	if (irq_late)
		disable_irq(nic->irq);
	writeq(src, nic->regs + EDU_REG_DMA_SRC);
	writeq(dst, nic->regs + EDU_REG_DMA_DST);
	writeq(count, nic->regs + EDU_REG_DMA_COUNT);
	writeq(EDU_DMA_CMD_RUN | EDU_DMA_CMD_IRQ | dir,
	       nic->regs + EDU_REG_DMA_CMD);
	atomic64_inc(&nic->stats.device_dma_cmds);
	edu_nic_dma_release_irq(nic);

	if (irq_late) {
		left = edu_nic_dma_wait_irq_late(nic);
		nic->irq_held = true;
	} else {
		left = wait_for_completion_timeout(&nic->dma_done,
						   EDU_DMA_TIMEOUT);
	}
	if (edu_nic_dma_inject_timeout())
		goto timed_out;
	if (left)
		return 0;

	/* Lost interrupt, or a command still running? Ask the device. */
	if (!edu_nic_dma_running(nic)) {
		/*
		 * Done, its interrupt lost or late. Ack it and wait for a
		 * handler that already read it: else it would complete the
		 * next command's wait, and we would run behind the device.
		 */
		iowrite32(EDU_IRQ_DMA, nic->regs + EDU_REG_IRQ_ACK);
		synchronize_irq(nic->irq);
		dev_dbg(&nic->pdev->dev, "DMA done without its interrupt\n");
		return 0;
	}

timed_out:
	/*
	 * The engine cannot be aborted, and the caller is about to let the
	 * address go: cut the device off the bus, for good.
	 */
	nic->wedged = true;
	pci_clear_master(nic->pdev);
	dev_err(&nic->pdev->dev,
		"DMA command timed out, bus mastering disabled\n");
	return -EIO;
}

/* Did the read leave the edu buffer as the poison DMA filled it? */
static bool edu_nic_still_poisoned(const void *buf, size_t len, u32 poison)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (((const u8 *)buf)[i] != ((const u8 *)&poison)[i % 4])
			return false;
	return true;
}

/*
 * The one command of a chunk that uses @t's address: @len bytes between
 * byte @off of the transfer and the edu buffer, to the bus if @to_bus.
 */
static int edu_nic_dma_cmd_at(struct edu_nic *nic,
			      struct edu_nic_dma_target *t, size_t off,
			      size_t len, bool to_bus)
{
	dma_addr_t addr = t->addr + off;
	int ret;

	if (t->lock) {
		ret = t->lock(t, off, len, &addr);
		if (ret)
			return ret;
	}
	if (to_bus)
		ret = edu_nic_dma_cmd(nic, EDU_BUF_ADDR, addr, len,
				      EDU_DMA_CMD_TO_PCI);
	else
		ret = edu_nic_dma_cmd(nic, addr, EDU_BUF_ADDR, len, 0);
	if (t->unlock)
		t->unlock(t);
	return ret;
}

/* One chunk, @t's bus address + @off -> edu buffer -> bounce + @off. */
static int edu_nic_dma_chunk_in(struct edu_nic *nic,
				struct edu_nic_dma_target *t, size_t off,
				size_t len, bool check_poison)
{
	u32 poison = 0;
	int ret;

	lockdep_assert_held(&nic->dma_lock);

	if (check_poison) {
		/* A pattern nobody can predict, so no real data matches it. */
		do {
			poison = get_random_u32();
		} while (!poison || poison == ~0u);
		memset32(nic->bounce + off, poison, DIV_ROUND_UP(len, 4));
		ret = edu_nic_dma_cmd(nic, nic->bounce_dma + off, EDU_BUF_ADDR,
				      len, 0);
		if (ret)
			return ret;
		memset(nic->bounce + off, 0, len);
	}
	ret = edu_nic_dma_cmd_at(nic, t, off, len, false);
	if (ret)
		return ret;
	ret = edu_nic_dma_cmd(nic, EDU_BUF_ADDR, nic->bounce_dma + off, len,
			      EDU_DMA_CMD_TO_PCI);
	if (ret)
		return ret;
	if (check_poison && edu_nic_still_poisoned(nic->bounce + off, len,
						   poison))
		return -EIO;
	return 0;
}

/* Take the engine for one transfer; counted in dma_waiting while queued */
static int edu_nic_dma_lock(struct edu_nic *nic)
{
	atomic_inc(&nic->dma_waiting);
	mutex_lock(&nic->dma_lock);
	atomic_dec(&nic->dma_waiting);
	/* After unbinding, the bounce page is gone too. */
	if (nic->dead) {
		mutex_unlock(&nic->dma_lock);
		return -ENODEV;
	}
	edu_nic_dma_hold();
	return 0;
}

/**
 * edu_nic_dma_from_bus - read from a bus address with the edu engine
 * @nic: the device
 * @t: the bus address as the device sees it, and how to keep it valid
 * @buf: kernel buffer receiving @len bytes
 * @len: 1 to EDU_BUF_SIZE bytes
 * @check_poison: fill the edu buffer with a random pattern before each
 *	command, and fail with -EIO if the read left it there
 *
 * Context: process context, may sleep; holding none of @t's locks.
 * Return: 0 or a negative errno; -EAGAIN from @t's lock (the address went
 * away between two commands, or keeping it would wait for its exporter)
 * ends the transfer, for the caller to retry without the engine.
 */
int edu_nic_dma_from_bus(struct edu_nic *nic, struct edu_nic_dma_target *t,
			 void *buf, size_t len, bool check_poison)
{
	size_t off, n;
	int ret;

	if (WARN_ON_ONCE(!len || len > EDU_BUF_SIZE))
		return -EINVAL;

	ret = edu_nic_dma_lock(nic);
	if (ret)
		return ret;
	for (off = 0; off < len; off += n) {
		n = min_t(size_t, len - off, EDU_XFER_MAX);
		ret = edu_nic_dma_chunk_in(nic, t, off, n, check_poison);
		if (ret)
			break;
	}
	if (!ret) {
		memcpy(buf, nic->bounce, len);
		atomic64_add(len, &nic->stats.device_dma_bytes);
	}
	mutex_unlock(&nic->dma_lock);
	return ret;
}

/**
 * edu_nic_dma_to_bus - write to a bus address with the edu engine
 * @nic: the device
 * @t: the bus address, as for edu_nic_dma_from_bus()
 * @buf: @len bytes to write
 * @len: 1 to EDU_BUF_SIZE bytes
 *
 * Context: as edu_nic_dma_from_bus().
 * Return: as edu_nic_dma_from_bus().
 */
int edu_nic_dma_to_bus(struct edu_nic *nic, struct edu_nic_dma_target *t,
		       const void *buf, size_t len)
{
	size_t off, n;
	int ret;

	if (WARN_ON_ONCE(!len || len > EDU_BUF_SIZE))
		return -EINVAL;

	ret = edu_nic_dma_lock(nic);
	if (ret)
		return ret;
	memcpy(nic->bounce, buf, len);
	for (off = 0; off < len; off += n) {
		n = min_t(size_t, len - off, EDU_XFER_MAX);
		ret = edu_nic_dma_cmd(nic, nic->bounce_dma + off, EDU_BUF_ADDR,
				      n, 0);
		if (ret)
			break;
		ret = edu_nic_dma_cmd_at(nic, t, off, n, true);
		if (ret)
			break;
	}
	if (!ret)
		atomic64_add(len, &nic->stats.device_dma_bytes);
	mutex_unlock(&nic->dma_lock);
	return ret;
}

/* Set up the engine's bounce page and interrupt; BAR0 is mapped */
int edu_nic_dma_init(struct edu_nic *nic)
{
	struct pci_dev *pdev = nic->pdev;
	int ret;

	mutex_init(&nic->dma_lock);
	init_completion(&nic->dma_done);

	nic->bounce = dma_alloc_coherent(&pdev->dev, EDU_BUF_SIZE,
					 &nic->bounce_dma, GFP_KERNEL);
	if (!nic->bounce)
		return -ENOMEM;

	ret = pci_alloc_irq_vectors(pdev, 1, 1, PCI_IRQ_ALL_TYPES);
	if (ret < 0)
		goto err_free_bounce;

	/* Nothing pending from a previous owner of the device. */
	iowrite32(ioread32(nic->regs + EDU_REG_IRQ_STATUS),
		  nic->regs + EDU_REG_IRQ_ACK);

	/*
	 * Looked up once: the command path needs it under dma_lock, and
	 * pci_irq_vector() takes the MSI descriptors' mutex, which may
	 * allocate.
	 */
	nic->irq = pci_irq_vector(pdev, 0);
	ret = request_irq(nic->irq, edu_nic_irq, IRQF_SHARED, nic->name, nic);
	if (ret)
		goto err_free_vectors;
	return 0;

err_free_vectors:
	pci_free_irq_vectors(pdev);
err_free_bounce:
	dma_free_coherent(&pdev->dev, EDU_BUF_SIZE, nic->bounce,
			  nic->bounce_dma);
	return ret;
}

/*
 * Stop issuing commands, waiting for the one running: the caller may then
 * clear bus mastering and free what DMA used.
 */
void edu_nic_dma_kill(struct edu_nic *nic)
{
	mutex_lock(&nic->dma_lock);
	nic->dead = true;
	mutex_unlock(&nic->dma_lock);
}

/* Undo edu_nic_dma_init(), after edu_nic_dma_kill() */
void edu_nic_dma_fini(struct edu_nic *nic)
{
	struct pci_dev *pdev = nic->pdev;

	/* A fault injection's held interrupt: the line is shareable. */
	edu_nic_dma_release_irq(nic);
	free_irq(nic->irq, nic);
	pci_free_irq_vectors(pdev);
	dma_free_coherent(&pdev->dev, EDU_BUF_SIZE, nic->bounce,
			  nic->bounce_dma);
}

/* Is the device's DMA translated? The exporter asks the same helper. */
bool edu_nic_iommu_translated(struct edu_nic *nic)
{
	return vgem_p2p_dma_translated(&nic->pdev->dev);
}

/**
 * edu_nic_dma_domain - the IOMMU domain that translates the device's DMA
 * @nic: the device
 *
 * Looked up once by callers that resolve many addresses: it walks the
 * device's IOMMU group.
 *
 * Return: the domain, or NULL if the device's DMA is not translated.
 */
struct iommu_domain *edu_nic_dma_domain(struct edu_nic *nic)
{
	struct device *dev = &nic->pdev->dev;

	if (!vgem_p2p_dma_translated(dev))
		return NULL;
	return iommu_get_domain_for_dev(dev);
}

/**
 * edu_nic_domain_to_phys - the physical address a DMA of the device reaches
 * @domain: what edu_nic_dma_domain() returned
 * @addr: a bus address as the device uses it
 *
 * Return: the physical address (no bus offset on the platforms we run
 * on), or 0 if the IOMMU has no translation: the device's DMA would fault.
 */
phys_addr_t edu_nic_domain_to_phys(struct iommu_domain *domain,
				   dma_addr_t addr)
{
	return domain ? iommu_iova_to_phys(domain, addr) : addr;
}

/* edu_nic_domain_to_phys() for one address */
phys_addr_t edu_nic_bus_to_phys(struct edu_nic *nic, dma_addr_t addr)
{
	return edu_nic_domain_to_phys(edu_nic_dma_domain(nic), addr);
}
