// SPDX-License-Identifier: GPL-2.0
/*
 * edu_nic: the RDMA device its registrations belong to. The RDMA core maps
 * a umem for umem->ibdev->dma_device, which only ib_register_device() sets,
 * so each bound edu registers an ib_device, as rxe and siw do. It offers
 * no verbs: without alloc_ucontext, ib_uverbs gives it no character device.
 */
#include <rdma/ib_verbs.h>

#include "edu_nic.h"

static int edu_nic_ib_query_device(struct ib_device *ibdev,
				   struct ib_device_attr *attr,
				   struct ib_udata *udata)
{
	/* setup_device() zeroed @attr: no queues, no verbs */
	return 0;
}

static int edu_nic_ib_query_port(struct ib_device *ibdev, u32 port,
				 struct ib_port_attr *attr)
{
	return 0;
}

static int edu_nic_ib_get_port_immutable(struct ib_device *ibdev, u32 port,
					 struct ib_port_immutable *immutable)
{
	/* No GIDs, no P_Keys, no MADs: the core sets up no cache for them */
	return 0;
}

static const struct ib_device_ops edu_nic_ib_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,

	.query_device = edu_nic_ib_query_device,
	.query_port = edu_nic_ib_query_port,
	.get_port_immutable = edu_nic_ib_get_port_immutable,
};

/* Register the ib_device, once the name is set and the DMA mask chosen */
int edu_nic_ib_register(struct edu_nic *nic)
{
	struct ib_device *ibdev = &nic->ibdev;

	ibdev->node_type = RDMA_NODE_UNSPECIFIED;
	ibdev->phys_port_cnt = 1;
	ibdev->dev.parent = &nic->pdev->dev;
	ib_set_device_ops(ibdev, &edu_nic_ib_ops);
	return ib_register_device(ibdev, nic->name, &nic->pdev->dev);
}

/*
 * At unbind. The ib_device stays allocated, with struct edu_nic around it,
 * until the last open file goes: its registrations' umems point at it.
 */
void edu_nic_ib_unregister(struct edu_nic *nic)
{
	ib_unregister_device(&nic->ibdev);
}
