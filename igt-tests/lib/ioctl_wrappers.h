/* SPDX-License-Identifier: MIT */
/*
 * Declarations of the part of IGT's lib/ioctl_wrappers.h
 * (igt-gpu-tools 1.27.1) that the vgem-p2p tests use, see igt_core.h.
 */
#ifndef IOCTL_WRAPPERS_H
#define IOCTL_WRAPPERS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>

/*
 * Every ioctl of do_ioctl() and the wrappers goes through this pointer,
 * drmIoctl() by default, so that a test can interpose on all of them.
 */
extern int (*igt_ioctl)(int fd, unsigned long request, void *arg);

/* DRM_IOCTL_GEM_CLOSE on @handle, asserting that it succeeds. */
void gem_close(int fd, uint32_t handle);

#endif /* IOCTL_WRAPPERS_H */
