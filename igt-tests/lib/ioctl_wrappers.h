/* SPDX-License-Identifier: MIT */
/*
 * ioctl helpers mirroring IGT's lib/ioctl_wrappers.h and drmtest.h.
 */
#ifndef IOCTL_WRAPPERS_H
#define IOCTL_WRAPPERS_H

#include <errno.h>
#include <stdint.h>

#include "igt_core.h"

/*
 * Like IGT, a pointer so tests can interpose on every ioctl; it defaults
 * to a drmIoctl() equivalent that restarts on EINTR and EAGAIN.
 */
extern int (*igt_ioctl)(int fd, unsigned long request, void *arg);

/* Asserts that the ioctl succeeds. */
#define do_ioctl(fd, ioc, ioc_data) do { \
	igt_assert_eq(igt_ioctl((fd), (ioc), (ioc_data)), 0); \
	errno = 0; \
} while (0)

/* Asserts that the ioctl fails with errno == err. */
#define do_ioctl_err(fd, ioc, ioc_data, err) do { \
	igt_assert_eq(igt_ioctl((fd), (ioc), (ioc_data)), -1); \
	igt_assert_eq(errno, err); \
	errno = 0; \
} while (0)

/* IGT's gem_close(): closes @handle on @fd, asserting success. */
void gem_close(int fd, uint32_t handle);

#endif /* IOCTL_WRAPPERS_H */
