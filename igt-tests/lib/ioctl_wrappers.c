// SPDX-License-Identifier: MIT
#include <sys/ioctl.h>

#include <xf86drm.h>

#include "ioctl_wrappers.h"

/* Same loop as libdrm's drmIoctl(), without depending on libdrm. */
static int igt_drm_ioctl(int fd, unsigned long request, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, request, arg);
	} while (ret == -1 && (errno == EINTR || errno == EAGAIN));
	return ret;
}

int (*igt_ioctl)(int fd, unsigned long request, void *arg) = igt_drm_ioctl;

void gem_close(int fd, uint32_t handle)
{
	struct drm_gem_close close_bo = { .handle = handle };

	do_ioctl(fd, DRM_IOCTL_GEM_CLOSE, &close_bo);
}
