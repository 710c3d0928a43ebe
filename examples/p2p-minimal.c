// SPDX-License-Identifier: MIT
/*
 * p2p-minimal: the smallest complete use of libvgem-p2p. A buffer object
 * in the exporter's VRAM is mapped into the process, filled by the CPU,
 * registered with the NIC like any other memory (as RDMA on-demand paging
 * registers a range of the address space), read back by the NIC's own
 * bus-master DMA, and checked. The counters then say whether the NIC
 * reached VRAM peer-to-peer or the exporter fell back to system memory.
 *
 * Build:  cc p2p-minimal.c $(pkg-config --cflags --libs libvgem-p2p)
 * Exit:   0 the NIC read what the CPU wrote, 1 otherwise, 77 no device.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <vgem_p2p.h>

#define SIZE	4096	/* one page: real edu DMA takes ~0.2 s a page */

static unsigned char pattern(size_t i)
{
	return (unsigned char)(i * 7 + 0x5a);
}

int main(void)
{
	struct drm_vgem_p2p_obj_info info;
	struct edu_nic_mr_stats mr;
	static unsigned char buf[SIZE];
	struct vp2p_bo bo;
	unsigned char *p;
	uint32_t key = 0;
	int gpu, nic, ret;
	size_t i;

	gpu = vp2p_exporter_open(0);	/* the first vgem_p2p device */
	if (gpu < 0) {
		fprintf(stderr, "no vgem_p2p device: %s\n", strerror(-gpu));
		return 77;
	}
	nic = vp2p_importer_open(0);	/* /dev/edu_nic0 */
	if (nic < 0) {
		fprintf(stderr, "no edu_nic device: %s\n", strerror(-nic));
		/* loaded, yet no device: edu_nic refused the edu's DMA mask */
		if (!access("/sys/module/edu_nic", F_OK))
			fprintf(stderr, "edu_nic is loaded but bound to no device: it may have refused to bind (dmesg: \"dma_bits must match the device's dma_mask\"); load it with dma_bits=64, the mask of the project's edu\n");
		close(gpu);
		return 77;
	}

	ret = vp2p_bo_create(gpu, SIZE, 0, &bo);	/* flags 0: VRAM */
	if (ret)
		goto err_close;
	ret = vp2p_bo_mmap(gpu, &bo, PROT_READ | PROT_WRITE, (void **)&p);
	if (ret)
		goto err_bo;

	for (i = 0; i < SIZE; i++)
		p[i] = pattern(i);

	/* ibv_reg_mr(pd, p, size, IBV_ACCESS_ON_DEMAND | ...) in verbs */
	ret = vp2p_mr_register(nic, p, SIZE, EDU_NIC_ACCESS_READ, 0, &key);
	if (ret)
		goto err_unmap;
	/* The NIC's DMA engine reads the region into buf. */
	ret = vp2p_dma(nic, key, EDU_NIC_DMA_FROM_MR, EDU_NIC_MODE_DEVICE,
		       0, buf, SIZE);
	if (ret)
		goto err_dereg;

	for (i = 0; i < SIZE; i++) {
		if (buf[i] != pattern(i)) {
			fprintf(stderr, "byte %zu: NIC read 0x%02x, CPU wrote 0x%02x\n",
				i, buf[i], pattern(i));
			ret = -EIO;
			goto err_dereg;
		}
	}

	ret = vp2p_mr_stats(nic, key, &mr);
	if (!ret)
		ret = vp2p_bo_info(gpu, &bo, &info);
	if (ret)
		goto err_dereg;
	/*
	 * The exporter decided, per mapping: p2p when the NIC can reach its
	 * BAR, system memory otherwise; the data is the same either way.
	 * The importer counts every address an exporter handed it as p2p,
	 * the fallback's system pages too: only the exporter knows which.
	 */
	printf("data: ok (%d bytes)\n", SIZE);
	printf("importer: %llu pages p2p, %llu pages system\n",
	       (unsigned long long)mr.stats.pages_p2p,
	       (unsigned long long)mr.stats.pages_system);
	printf("exporter: %llu mappings, %llu from system memory\n",
	       (unsigned long long)info.p2p_maps,
	       (unsigned long long)info.fallback_maps);
	printf("path: %s\n", info.fallback_maps ? "fallback" : "p2p");

err_dereg:
	vp2p_mr_deregister(nic, key);
err_unmap:
	vp2p_bo_munmap(&bo, p);
err_bo:
	vp2p_bo_close(gpu, &bo);
err_close:
	close(nic);
	close(gpu);
	if (ret) {
		fprintf(stderr, "p2p-minimal: %s\n", strerror(-ret));
		return 1;
	}
	return 0;
}
