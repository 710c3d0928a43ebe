// SPDX-License-Identifier: GPL-2.0
/*
 * edu_nic: debugfs. <debugfs>/edu_nic/<pci name>/ has stats (the device's
 * counters), mrs (each live registration) and iovas (the device's IOMMU
 * mappings, as runs); <debugfs>/edu_nic/ has the test knobs (fail_dma_*,
 * hold_dma).
 */
#include <linux/debugfs.h>
#include <linux/iommu.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>

#include "edu_nic.h"

static struct dentry *edu_nic_debugfs_root;

/* Read a device's counters */
void edu_nic_dev_stats(struct edu_nic *nic, struct edu_nic_stats *out)
{
	struct edu_nic_dev_counters *c = &nic->stats;

	out->pages_p2p = atomic64_read(&c->pages_p2p);
	out->pages_system = atomic64_read(&c->pages_system);
	out->cur_pages_p2p = atomic64_read(&c->cur_pages_p2p);
	out->cur_pages_system = atomic64_read(&c->cur_pages_system);
	out->faults = atomic64_read(&c->faults);
	out->fault_retries = atomic64_read(&c->fault_retries);
	out->invalidations = atomic64_read(&c->invalidations);
	out->remaps = atomic64_read(&c->remaps);
	out->p2p_maps = atomic64_read(&c->p2p_maps);
	out->pages_bus = atomic64_read(&c->pages_bus);
	out->pages_iova = atomic64_read(&c->pages_iova);
	out->device_dma_bytes = atomic64_read(&c->device_dma_bytes);
	out->device_dma_cmds = atomic64_read(&c->device_dma_cmds);
	out->bulk_bytes = atomic64_read(&c->bulk_bytes);
	out->errors = atomic64_read(&c->errors);
	out->nr_mrs = atomic64_read(&c->nr_mrs);
}

static void edu_nic_show_stats(struct seq_file *m, const char *prefix,
			       const struct edu_nic_stats *s)
{
	seq_printf(m, "%spages_p2p %llu\n", prefix, s->pages_p2p);
	seq_printf(m, "%spages_system %llu\n", prefix, s->pages_system);
	seq_printf(m, "%scur_pages_p2p %llu\n", prefix, s->cur_pages_p2p);
	seq_printf(m, "%scur_pages_system %llu\n", prefix,
		   s->cur_pages_system);
	seq_printf(m, "%sfaults %llu\n", prefix, s->faults);
	seq_printf(m, "%sfault_retries %llu\n", prefix, s->fault_retries);
	seq_printf(m, "%sinvalidations %llu\n", prefix, s->invalidations);
	seq_printf(m, "%sremaps %llu\n", prefix, s->remaps);
	seq_printf(m, "%sp2p_maps %llu\n", prefix, s->p2p_maps);
	seq_printf(m, "%spages_bus %llu\n", prefix, s->pages_bus);
	seq_printf(m, "%spages_iova %llu\n", prefix, s->pages_iova);
	seq_printf(m, "%sdevice_dma_bytes %llu\n", prefix,
		   s->device_dma_bytes);
	seq_printf(m, "%sdevice_dma_cmds %llu\n", prefix, s->device_dma_cmds);
	/* Emulated: CPU copies, not device DMA. */
	seq_printf(m, "%sbulk_bytes %llu\n", prefix, s->bulk_bytes);
	seq_printf(m, "%serrors %llu\n", prefix, s->errors);
}

static int edu_nic_stats_show(struct seq_file *m, void *unused)
{
	struct edu_nic *nic = m->private;
	struct edu_nic_stats s;

	edu_nic_dev_stats(nic, &s);
	seq_printf(m, "iommu %s\n",
		   edu_nic_iommu_translated(nic) ? "translated" : "none");
	/* The dma_bits module parameter, as the DMA API holds it */
	seq_printf(m, "dma_mask %#llx\n", dma_get_mask(&nic->pdev->dev));
	edu_nic_show_stats(m, "", &s);
	seq_printf(m, "nr_mrs %llu\n", s.nr_mrs);
	/* Not a counter: transfers queued for the engine right now */
	seq_printf(m, "dma_waiting %d\n", atomic_read(&nic->dma_waiting));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(edu_nic_stats);

static int edu_nic_mrs_show(struct seq_file *m, void *unused)
{
	struct edu_nic *nic = m->private;
	struct edu_nic_mr_stats st;
	struct edu_nic_mr *mr;
	dma_addr_t addr;

	mutex_lock(&nic->mr_list_lock);
	list_for_each_entry(mr, &nic->mr_list, node) {
		edu_nic_mr_snapshot(mr, &st);
		seq_printf(m, "mr %u %s %#llx length %#llx access %s%s %s\n",
			   mr->key,
			   mr->kind == EDU_NIC_KIND_DMABUF ? "dmabuf-offset" :
			   "addr", st.addr, st.length,
			   st.access & EDU_NIC_ACCESS_READ ? "r" : "",
			   st.access & EDU_NIC_ACCESS_WRITE ? "w" : "",
			   !(st.state & EDU_NIC_MR_MIRRORED) ? "unmirrored" :
			   st.state & EDU_NIC_MR_WRITABLE ? "mirrored-rw" :
			   "mirrored-ro");
		edu_nic_show_stats(m, "  ", &st.stats);
		if (edu_nic_mr_first_dma_addr(mr, &addr))
			seq_printf(m, "  dma_addr0 %pad\n", &addr);
	}
	mutex_unlock(&nic->mr_list_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(edu_nic_mrs);

/*
 * Where the IOMMU's DMA allocator hands out a PCI device's IOVAs: down
 * from the top of the 32-bit space. A test asks which of them translate
 * into an exporter's BAR; a scan of this window is 16384 lookups.
 */
#define EDU_NIC_IOVA_SCAN_START	(SZ_4G - SZ_64M)
#define EDU_NIC_IOVA_SCAN_END	SZ_4G

static int edu_nic_iovas_show(struct seq_file *m, void *unused)
{
	struct edu_nic *nic = m->private;
	struct iommu_domain *domain = edu_nic_dma_domain(nic);
	u64 iova, run = 0, len = 0;
	phys_addr_t phys, run_phys = 0;

	if (!domain)
		return 0;
	for (iova = EDU_NIC_IOVA_SCAN_START; iova < EDU_NIC_IOVA_SCAN_END;
	     iova += PAGE_SIZE) {
		phys = iommu_iova_to_phys(domain, iova);
		if (len && phys == run_phys + len) {
			len += PAGE_SIZE;
			continue;
		}
		if (len)
			seq_printf(m, "%#llx %#llx %pa\n", run, len, &run_phys);
		run = iova;
		run_phys = phys;
		len = phys ? PAGE_SIZE : 0;
		cond_resched();
	}
	if (len)
		seq_printf(m, "%#llx %#llx %pa\n", run, len, &run_phys);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(edu_nic_iovas);

/* Wait, counted, while a hold knob is set; a fatal signal ends the wait */
void edu_nic_hold_wait(struct edu_nic_hold *h)
{
	if (!READ_ONCE(h->on))
		return;
	atomic_inc(&h->held);
	wait_event_killable(h->wq, !READ_ONCE(h->on));
	atomic_dec(&h->held);
}

static int edu_nic_hold_get(void *data, u64 *val)
{
	struct edu_nic_hold *h = data;

	*val = READ_ONCE(h->on);
	return 0;
}

static int edu_nic_hold_set(void *data, u64 val)
{
	struct edu_nic_hold *h = data;

	WRITE_ONCE(h->on, !!val);
	if (!val)
		wake_up_all(&h->wq);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(edu_nic_hold_fops, edu_nic_hold_get,
			 edu_nic_hold_set, "%llu\n");

/* Create a hold knob (write 1 to hold, 0 to let go) and its count */
void edu_nic_hold_create(struct dentry *root, const char *knob,
			 const char *count, struct edu_nic_hold *h)
{
	debugfs_create_file_unsafe(knob, 0600, root, h, &edu_nic_hold_fops);
	debugfs_create_atomic_t(count, 0400, root, &h->held);
}

/* Create a device's debugfs directory */
void edu_nic_debugfs_init(struct edu_nic *nic)
{
	nic->debugfs = debugfs_create_dir(pci_name(nic->pdev),
					  edu_nic_debugfs_root);
	debugfs_create_file("stats", 0400, nic->debugfs, nic,
			    &edu_nic_stats_fops);
	debugfs_create_file("mrs", 0400, nic->debugfs, nic,
			    &edu_nic_mrs_fops);
	debugfs_create_file("iovas", 0400, nic->debugfs, nic,
			    &edu_nic_iovas_fops);
}

/* Remove it; waits for readers */
void edu_nic_debugfs_fini(struct edu_nic *nic)
{
	debugfs_remove_recursive(nic->debugfs);
}

/* Create <debugfs>/edu_nic */
void edu_nic_debugfs_module_init(void)
{
	edu_nic_debugfs_root = debugfs_create_dir(KBUILD_MODNAME, NULL);
	edu_nic_dma_fault_init(edu_nic_debugfs_root);
	edu_nic_dma_hold_init(edu_nic_debugfs_root);
	edu_nic_odp_hold_init(edu_nic_debugfs_root);
}

/* Remove it */
void edu_nic_debugfs_module_exit(void)
{
	debugfs_remove_recursive(edu_nic_debugfs_root);
}
