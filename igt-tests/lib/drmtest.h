/* SPDX-License-Identifier: MIT */
/*
 * Declarations of the part of IGT's lib/drmtest.h (igt-gpu-tools 1.27.1)
 * that the vgem-p2p tests use, see igt_core.h.
 */
#ifndef DRMTEST_H
#define DRMTEST_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xf86drm.h>

#include "igt_core.h"

#define ARRAY_SIZE(arr) (sizeof(arr) / sizeof(arr[0]))

/* The ioctl succeeds. errno is reset so that later messages stay clear. */
#define do_ioctl(fd, ioc, ioc_data) do { \
	igt_assert_eq(igt_ioctl((fd), (ioc), (ioc_data)), 0); \
	errno = 0; \
} while (0)

/* The ioctl fails with errno @err. */
#define do_ioctl_err(fd, ioc, ioc_data, err) do { \
	igt_assert_eq(igt_ioctl((fd), (ioc), (ioc_data)), -1); \
	igt_assert_eq(errno, err); \
	errno = 0; \
} while (0)

#endif /* DRMTEST_H */
