// SPDX-License-Identifier: GPL-2.0
/*
 * edu_nic: the ioctls. Argument checking lives here, the work in
 * edu_nic_mr.c and edu_nic_dma.c. See include/uapi/linux/edu_nic.h.
 */
#include <linux/capability.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "edu_nic.h"

/*
 * Give a new, unpublished registration its key and copy @req (@size bytes,
 * its key at @keyp) back to @argp. The key is reserved empty and the
 * registration stored only once user space has it, so a failed copy takes
 * back a registration nobody else holds, as iommufd_object_finalize() does.
 * On success the xarray owns the caller's reference (a DEREG_MR may free
 * @mr at once); on failure the caller still owns it.
 */
static int edu_nic_mr_install_key(struct edu_nic_file *f,
				  struct edu_nic_mr *mr, void __user *argp,
				  u32 *keyp, const void *req, size_t size)
{
	void *old;
	u32 key;
	int ret;

	/* Cyclic, so that a stale key does not soon name a new region. */
	ret = xa_alloc_cyclic(&f->mrs, &key, NULL, xa_limit_32b,
			      &f->next_key, GFP_KERNEL);
	if (ret < 0)
		return ret;
	mr->key = key;

	/* With its key set, debugfs may list it. */
	ret = edu_nic_mr_publish(mr);
	if (ret)
		goto err_release_key;

	*keyp = key;
	if (copy_to_user(argp, req, size)) {
		/* Nobody learnt the key: take the registration back. */
		ret = -EFAULT;
		goto err_release_key;
	}

	/* The slot exists: storing into it allocates nothing. */
	old = xa_store(&f->mrs, key, mr, GFP_KERNEL);
	WARN_ON_ONCE(old);
	return 0;

err_release_key:
	xa_erase(&f->mrs, key);
	return ret;
}

static int edu_nic_ioctl_reg_mr(struct edu_nic_file *f, void __user *argp)
{
	struct edu_nic_reg_mr req;
	struct edu_nic_mr *mr;
	int ret;

	if (copy_from_user(&req, argp, sizeof(req)))
		return -EFAULT;
	if (req.pad || req.key || (req.flags & ~EDU_NIC_REG_MR_FLAGS))
		return -EINVAL;
	if (!req.access || (req.access & ~EDU_NIC_ACCESS_MASK))
		return -EINVAL;
	if (!req.length || req.length > EDU_NIC_MR_MAX_LENGTH ||
	    !PAGE_ALIGNED(req.addr) || !PAGE_ALIGNED(req.length) ||
	    req.addr + req.length < req.addr ||
	    req.addr + req.length > TASK_SIZE)
		return -EINVAL;

	mr = edu_nic_odp_create(f, &req);
	if (IS_ERR(mr))
		return PTR_ERR(mr);

	if (req.flags & EDU_NIC_REG_MR_PREFETCH) {
		ret = edu_nic_mr_prefetch(mr);
		if (ret)
			goto err_put_mr;
	}

	ret = edu_nic_mr_install_key(f, mr, argp, &req.key, &req,
				     sizeof(req));
	if (ret)
		goto err_put_mr;
	return 0;

err_put_mr:
	edu_nic_mr_put(mr);
	return ret;
}

static int edu_nic_ioctl_reg_dmabuf(struct edu_nic_file *f, void __user *argp)
{
	struct edu_nic_reg_dmabuf req;
	struct edu_nic_mr *mr;
	int ret;

	if (copy_from_user(&req, argp, sizeof(req)))
		return -EFAULT;
	if ((req.flags & ~EDU_NIC_REG_DMABUF_FLAGS) || req.key)
		return -EINVAL;
	if (!req.access || (req.access & ~EDU_NIC_ACCESS_MASK))
		return -EINVAL;
	if (!req.length || req.length > EDU_NIC_MR_MAX_LENGTH ||
	    !PAGE_ALIGNED(req.offset) || !PAGE_ALIGNED(req.length) ||
	    req.offset + req.length < req.offset)
		return -EINVAL;
	/* dma_buf_get() takes an int; a "negative" fd is no file */
	if (req.fd > INT_MAX)
		return -EBADF;

	mr = edu_nic_dmabuf_create(f->nic, &req);
	if (IS_ERR(mr))
		return PTR_ERR(mr);

	ret = edu_nic_mr_install_key(f, mr, argp, &req.key, &req,
				     sizeof(req));
	if (ret)
		goto err_put_mr;
	return 0;

err_put_mr:
	edu_nic_mr_put(mr);
	return ret;
}

static int edu_nic_ioctl_dereg_mr(struct edu_nic_file *f, void __user *argp)
{
	struct edu_nic_dereg_mr req;
	struct edu_nic_mr *mr;

	if (copy_from_user(&req, argp, sizeof(req)))
		return -EFAULT;
	if (req.pad)
		return -EINVAL;

	/* A key still being handed out loads as absent: not ours to erase */
	xa_lock(&f->mrs);
	mr = xa_load(&f->mrs, req.key);
	if (mr)
		__xa_erase(&f->mrs, req.key);
	xa_unlock(&f->mrs);
	if (!mr)
		return -ENOENT;
	/* A DMA ioctl of another thread may hold the last reference */
	edu_nic_mr_put(mr);
	return 0;
}

/* Look a key up and take a reference; a reserved key loads as NULL */
static struct edu_nic_mr *edu_nic_mr_get(struct edu_nic_file *f, u32 key)
{
	struct edu_nic_mr *mr;

	xa_lock(&f->mrs);
	mr = xa_load(&f->mrs, key);
	if (mr)
		kref_get(&mr->kref);
	xa_unlock(&f->mrs);
	return mr;
}

static int edu_nic_ioctl_dma(struct edu_nic_file *f, void __user *argp)
{
	struct edu_nic_dma req;
	struct edu_nic_mr *mr;
	u32 need;
	int ret;

	if (copy_from_user(&req, argp, sizeof(req)))
		return -EFAULT;
	if (req.flags || req.direction > EDU_NIC_DMA_TO_MR ||
	    req.mode > EDU_NIC_MODE_BULK)
		return -EINVAL;

	mr = edu_nic_mr_get(f, req.key);
	if (!mr)
		return -ENOENT;

	ret = -EINVAL;
	if (!req.length || req.offset + req.length < req.offset ||
	    req.offset + req.length > mr->length)
		goto out_put;

	need = req.direction == EDU_NIC_DMA_TO_MR ? EDU_NIC_ACCESS_WRITE :
						    EDU_NIC_ACCESS_READ;
	ret = -EPERM;
	if (!(mr->access & need))
		goto out_put;

	ret = edu_nic_mr_transfer(mr, &req);
out_put:
	edu_nic_mr_put(mr);
	return ret;
}

static int edu_nic_ioctl_mr_stats(struct edu_nic_file *f, void __user *argp)
{
	struct edu_nic_mr_stats req;
	struct edu_nic_mr *mr;

	if (copy_from_user(&req, argp, sizeof(req)))
		return -EFAULT;
	if (req.pad)
		return -EINVAL;

	mr = edu_nic_mr_get(f, req.key);
	if (!mr)
		return -ENOENT;
	edu_nic_mr_snapshot(mr, &req);
	edu_nic_mr_put(mr);

	if (copy_to_user(argp, &req, sizeof(req)))
		return -EFAULT;
	return 0;
}

static int edu_nic_ioctl_dev_stats(struct edu_nic_file *f, void __user *argp)
{
	struct edu_nic_dev_stats req;

	if (copy_from_user(&req, argp, sizeof(req)))
		return -EFAULT;
	if (req.flags)
		return -EINVAL;

	req.caps = 0;
	if (!READ_ONCE(f->nic->dead) && edu_nic_iommu_translated(f->nic))
		req.caps |= EDU_NIC_CAP_IOMMU;
	edu_nic_dev_stats(f->nic, &req.stats);

	if (copy_to_user(argp, &req, sizeof(req)))
		return -EFAULT;
	return 0;
}

static int edu_nic_ioctl_dma_raw(struct edu_nic_file *f, void __user *argp)
{
	struct edu_nic *nic = f->nic;
	struct edu_nic_dma_target target = { };
	struct edu_nic_dma_raw req;
	void *buf;
	u64 page;
	int ret;

	if (!capable(CAP_SYS_RAWIO))
		return -EPERM;
	if (copy_from_user(&req, argp, sizeof(req)))
		return -EFAULT;
	if (req.flags || req.pad || !req.length ||
	    req.length > EDU_NIC_DMA_RAW_MAX ||
	    req.bus_addr + req.length < req.bus_addr)
		return -EINVAL;

	buf = kmalloc(EDU_NIC_DMA_RAW_MAX, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;

	/* Nothing keeps a raw address valid: that is the point of it. */
	target.addr = req.bus_addr;
	ret = edu_nic_dma_from_bus(nic, &target, buf, req.length, true);
	if (ret)
		goto out_free;

	/*
	 * QEMU answers a DMA read the IOMMU faulted with zeros, which the
	 * poison check cannot tell from data; the IOMMU's own tables can.
	 */
	if (edu_nic_iommu_translated(nic)) {
		u64 last = req.bus_addr + req.length - 1;

		for (page = req.bus_addr & PAGE_MASK; page <= last;
		     page += PAGE_SIZE) {
			if (!edu_nic_bus_to_phys(nic, page)) {
				dev_info_ratelimited(&nic->pdev->dev,
						     "raw DMA at %#llx faulted\n",
						     page);
				ret = -EIO;
				goto out_free;
			}
		}
	}

	if (copy_to_user(u64_to_user_ptr(req.user_ptr), buf, req.length))
		ret = -EFAULT;
out_free:
	kfree(buf);
	return ret;
}

/* The device file's ioctls; errnos as the uAPI header documents them */
long edu_nic_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct edu_nic_file *f = filp->private_data;
	void __user *argp = (void __user *)arg;

	/* Only the opener's address space: no DMA into another process. */
	if (current->mm != f->mm)
		return -EACCES;

	switch (cmd) {
	case EDU_NIC_IOCTL_REG_MR:
		return edu_nic_ioctl_reg_mr(f, argp);
	case EDU_NIC_IOCTL_REG_DMABUF:
		return edu_nic_ioctl_reg_dmabuf(f, argp);
	case EDU_NIC_IOCTL_DEREG_MR:
		return edu_nic_ioctl_dereg_mr(f, argp);
	case EDU_NIC_IOCTL_DMA:
		return edu_nic_ioctl_dma(f, argp);
	case EDU_NIC_IOCTL_MR_STATS:
		return edu_nic_ioctl_mr_stats(f, argp);
	case EDU_NIC_IOCTL_DEV_STATS:
		return edu_nic_ioctl_dev_stats(f, argp);
	case EDU_NIC_IOCTL_DMA_RAW:
		return edu_nic_ioctl_dma_raw(f, argp);
	default:
		return -ENOTTY;
	}
}
