/* SPDX-License-Identifier: MIT */
/*
 * What p2p_e2e's subtests share: DMA reads checked against a reference,
 * in a thread or not, and what edu_nic0's debugfs, the DMA-API debugging,
 * the kernel log and swiotlb say about its mappings.
 */
#ifndef P2P_E2E_HELPERS_H
#define P2P_E2E_HELPERS_H

#include <stdbool.h>
#include <stdint.h>

#include "p2p_common.h"

/* Physical start of the exporter's VRAM BAR (BAR2), from sysfs. */
uint64_t vram_bar_phys(int card);

/*
 * A @mode DMA read of [@off, @off + @len) of the registration @key
 * reads the @len bytes at @want.
 */
void check_dma_read(int fd, uint32_t key, uint32_t mode, const char *want,
		    uint64_t off, uint64_t len);

/*
 * stream_thread()'s: device-mode DMA reads of [0, @len) of @key, each
 * held to @want, until @stop; the reads, the ones that differed, and
 * the error that ended them.
 */
struct stream {
	int fd;
	uint32_t key;
	uint64_t len;
	const char *want;
	volatile int stop;
	int iterations;
	int bad;
	int err;
};

/* A thread: a struct stream */
void *stream_thread(void *arg);

/* Live DMA-API debugging entries of edu_nic0, of every kind */
int edu_dma_debug_entries(void);

/*
 * held_read()'s: one device-mode DMA read of [0, @len) of @key into
 * @buf, and what it returned.
 */
struct held_read {
	int fd;
	uint32_t key;
	uint64_t len;
	char *buf;
	int ret;
};

/* A thread: a struct held_read */
void *held_read(void *arg);

/* edu_nic0's transfers queued for its engine */
long edu_dma_waiting(const void *unused);

/* The device address of a registration's first page, 0 if unmapped */
uint64_t edu_mr_dma_addr0(uint32_t key);

/* Kernel log records naming an IOMMU fault at @addr (DMAR or AMD-Vi) */
int kmsg_iommu_faults(uint64_t addr);

/*
 * edu_nic0's IOVAs that the IOMMU translates into [@phys, @phys + @len),
 * in pages, from debugfs' scan of where its IOVAs are allocated
 */
uint64_t edu_iova_pages_into(uint64_t phys, uint64_t len);

/* A raw DMA read (DMA_RAW) at the device address @addr: 0 or -errno */
int raw_read(int fd, uint64_t addr, char *buf, uint64_t len);

/* Does the kernel command line hold the word @word? */
bool cmdline_has(const char *word);

/* swiotlb's slots in use (debugfs io_tlb_used), as a count of mappings */
long swiotlb_used(const void *unused);

/* Does the file @path names exist? For wait_for_value() */
long path_exists(const void *path);

#endif /* P2P_E2E_HELPERS_H */
