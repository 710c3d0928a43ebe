// SPDX-License-Identifier: GPL-2.0
/*
 * edu_nic: a simulated NIC on QEMU's edu device (1234:11e8), the importer
 * of the vgem-p2p project. Binds to the device and gives each one a
 * character device, /dev/edu_nic<N>.
 */
#include <linux/fs.h>
#include <linux/idr.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "edu_nic.h"

#define PCI_VENDOR_ID_QEMU_EDU	0x1234
#define PCI_DEVICE_ID_QEMU_EDU	0x11e8

static DEFINE_IDA(edu_nic_ida);

/*
 * QEMU's edu device reaches 28 bits of address by default (its dma_mask
 * property) and silently clamps anything above: a DMA past the mask
 * lands elsewhere in guest memory. Claim only what the device has.
 */
#define EDU_NIC_DMA_BITS_DEFAULT	28

static int edu_nic_dma_bits_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, EDU_NIC_DMA_BITS_DEFAULT, 64);
}

static const struct kernel_param_ops edu_nic_dma_bits_ops = {
	.set = edu_nic_dma_bits_set,
	.get = param_get_uint,
};

static unsigned int dma_bits = EDU_NIC_DMA_BITS_DEFAULT;
module_param_cb(dma_bits, &edu_nic_dma_bits_ops, &dma_bits, 0444);
MODULE_PARM_DESC(dma_bits,
		 "DMA address bits of the edu device, 28 (QEMU's default) to 64: match its dma_mask property");

static void edu_nic_free(struct kref *kref)
{
	struct edu_nic *nic = container_of(kref, struct edu_nic, kref);

	ida_free(&edu_nic_ida, nic->id);
	pci_dev_put(nic->pdev);
	/* @nic is the ib_device's allocation */
	ib_dealloc_device(&nic->ibdev);
}

/* Drop a reference; the last may be an open file's, after unbind */
void edu_nic_put(struct edu_nic *nic)
{
	kref_put(&nic->kref, edu_nic_free);
}

static int edu_nic_open(struct inode *inode, struct file *filp)
{
	struct edu_nic *nic = container_of(filp->private_data, struct edu_nic,
					   misc);
	struct edu_nic_file *f;

	/* Registrations name the opener's address space: it needs one. */
	if (!current->mm)
		return -EINVAL;

	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	kref_get(&nic->kref);
	f->nic = nic;
	f->mm = current->mm;
	mmgrab(f->mm);
	xa_init_flags(&f->mrs, XA_FLAGS_ALLOC1);
	filp->private_data = f;
	return 0;
}

/* Also the exit path: a process's exit closes its files. */
static int edu_nic_release(struct inode *inode, struct file *filp)
{
	struct edu_nic_file *f = filp->private_data;
	struct edu_nic_mr *mr;
	unsigned long key;

	xa_for_each(&f->mrs, key, mr) {
		xa_erase(&f->mrs, key);
		edu_nic_mr_put(mr);
	}
	xa_destroy(&f->mrs);
	mmdrop(f->mm);
	edu_nic_put(f->nic);
	kfree(f);
	return 0;
}

static const struct file_operations edu_nic_fops = {
	.owner = THIS_MODULE,
	.open = edu_nic_open,
	.release = edu_nic_release,
	.unlocked_ioctl = edu_nic_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

/* Is it really an edu, and alive? */
static int edu_nic_check_device(struct edu_nic *nic)
{
	u32 id = ioread32(nic->regs + EDU_REG_ID);

	if ((id & 0xff) != 0xed)
		return -ENODEV;
	iowrite32(0x12345678, nic->regs + EDU_REG_ALIVE);
	if (ioread32(nic->regs + EDU_REG_ALIVE) != ~0x12345678u)
		return -ENODEV;
	dev_info(&nic->pdev->dev, "edu %u.%u\n", id >> 24, (id >> 16) & 0xff);
	return 0;
}

static int edu_nic_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct edu_nic *nic;
	int ret;

	nic = ib_alloc_device(edu_nic, ibdev);
	if (!nic)
		return -ENOMEM;
	kref_init(&nic->kref);
	nic->pdev = pci_dev_get(pdev);
	init_rwsem(&nic->fault_rwsem);
	mutex_init(&nic->mr_list_lock);
	INIT_LIST_HEAD(&nic->mr_list);

	ret = ida_alloc(&edu_nic_ida, GFP_KERNEL);
	if (ret < 0)
		goto err_free_nic;
	nic->id = ret;
	snprintf(nic->name, sizeof(nic->name), "edu_nic%d", nic->id);

	ret = pcim_enable_device(pdev);
	if (ret)
		goto err_put_nic;
	ret = pcim_iomap_regions(pdev, BIT(0), KBUILD_MODNAME);
	if (ret)
		goto err_put_nic;
	nic->regs = pcim_iomap_table(pdev)[0];
	ret = edu_nic_check_device(nic);
	if (ret)
		goto err_put_nic;

	/*
	 * The mask is also what exporters check before handing us a bus
	 * address: memory above it reaches us through system memory.
	 */
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(dma_bits));
	if (ret) {
		/*
		 * Without an IOMMU, and without ZONE_DMA, dma-direct takes a
		 * mask below 32 bits only if all memory lies under it.
		 */
		dev_err(&pdev->dev,
			"no DMA with a %u-bit mask here; dma_bits must match the device's dma_mask\n",
			dma_bits);
		goto err_put_nic;
	}
	pci_set_master(pdev);

	ret = edu_nic_dma_init(nic);
	if (ret)
		goto err_put_nic;

	ret = edu_nic_ib_register(nic);
	if (ret)
		goto err_dma_fini;

	nic->misc.minor = MISC_DYNAMIC_MINOR;
	nic->misc.name = nic->name;
	nic->misc.fops = &edu_nic_fops;
	nic->misc.parent = &pdev->dev;
	nic->misc.mode = 0600;
	ret = misc_register(&nic->misc);
	if (ret)
		goto err_ib_unregister;

	pci_set_drvdata(pdev, nic);
	edu_nic_debugfs_init(nic);
	dev_info(&pdev->dev, "%s%s\n", nic->name,
		 edu_nic_iommu_translated(nic) ? ", DMA translated by IOMMU" :
		 "");
	return 0;

err_ib_unregister:
	edu_nic_ib_unregister(nic);
err_dma_fini:
	edu_nic_dma_kill(nic);
	pci_clear_master(pdev);
	edu_nic_dma_fini(nic);
err_put_nic:
	edu_nic_put(nic);
	return ret;

err_free_nic:
	pci_dev_put(pdev);
	ib_dealloc_device(&nic->ibdev);
	return ret;
}

/* Open files keep the struct edu_nic, but every mirror goes for good */
static void edu_nic_remove(struct pci_dev *pdev)
{
	struct edu_nic *nic = pci_get_drvdata(pdev);

	edu_nic_debugfs_fini(nic);
	misc_deregister(&nic->misc);

	mutex_lock(&nic->mr_list_lock);
	WRITE_ONCE(nic->dead, true);
	mutex_unlock(&nic->mr_list_lock);
	/*
	 * Wait for faults in flight, of registrations on the list and of
	 * those being made (PREFETCH comes before the list): each finds
	 * @dead once it has mapped and unmaps, and later ones map nothing.
	 */
	down_write(&nic->fault_rwsem);
	up_write(&nic->fault_rwsem);
	/*
	 * Off the bus before anything it could still write goes away (the
	 * mirrors, the bounce page): a timed-out command may still run.
	 */
	edu_nic_dma_kill(nic);
	pci_clear_master(pdev);
	edu_nic_mr_kill_all(nic);
	edu_nic_ib_unregister(nic);
	edu_nic_dma_fini(nic);
	edu_nic_put(nic);
}

static const struct pci_device_id edu_nic_ids[] = {
	{ PCI_DEVICE(PCI_VENDOR_ID_QEMU_EDU, PCI_DEVICE_ID_QEMU_EDU) },
	{ }
};
MODULE_DEVICE_TABLE(pci, edu_nic_ids);

static struct pci_driver edu_nic_driver = {
	.name = KBUILD_MODNAME,
	.id_table = edu_nic_ids,
	.probe = edu_nic_probe,
	.remove = edu_nic_remove,
};

static int __init edu_nic_init(void)
{
	int ret;

	edu_nic_mr_lockdep_prime();
	edu_nic_debugfs_module_init();
	ret = pci_register_driver(&edu_nic_driver);
	if (ret)
		edu_nic_debugfs_module_exit();
	return ret;
}
module_init(edu_nic_init);

static void __exit edu_nic_exit(void)
{
	pci_unregister_driver(&edu_nic_driver);
	edu_nic_debugfs_module_exit();
}
module_exit(edu_nic_exit);

MODULE_DESCRIPTION("Simulated NIC on QEMU's edu device: a p2p importer");
MODULE_LICENSE("GPL");
