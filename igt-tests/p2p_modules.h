/* SPDX-License-Identifier: MIT */
/*
 * Loading and unloading the modules under test from inside a test, with
 * the parameters the suite runner gives them, or others.
 */
#ifndef P2P_MODULES_H
#define P2P_MODULES_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "igt.h"

/*
 * vgem_p2p and edu_nic, the pair; bochs, the other exporter; the RDMA
 * core edu_nic's registrations are umems of (ib_uverbs holds them)
 */
enum { EXPORTER, IMPORTER, BOCHS, IB_CORE, IB_UVERBS, NR_MODS };

static const char *const mod_name[] = {
	"vgem_p2p", "edu_nic", "bochs", "ib_core", "ib_uverbs",
};

static const char *const mod_path[] = {
	"vgem-p2p/exporter/vgem_p2p.ko", "vgem-p2p/importer/edu_nic.ko",
	"drivers/gpu/drm/tiny/bochs.ko", "drivers/infiniband/core/ib_core.ko",
	"drivers/infiniband/core/ib_uverbs.ko",
};

/* The tree each is in: the project's modules, or the kernel's objects */
static const char *const mod_env[] = {
	"VP2P_MODULES", "VP2P_MODULES", "VP2P_KOBJ", "VP2P_KOBJ", "VP2P_KOBJ",
};

static inline bool mod_loaded(int m)
{
	char path[64];

	snprintf(path, sizeof(path), "/sys/module/%s", mod_name[m]);
	return access(path, F_OK) == 0;
}

static inline int mod_unload(int m)
{
	if (syscall(SYS_delete_module, mod_name[m], O_NONBLOCK))
		return -errno;
	return 0;
}

/*
 * The parameters the suite runner loads each module with: the topologies
 * give edu dma_mask=0xffffffffffffffff (qemu/guest/run-suite).
 */
static const char *const mod_params[NR_MODS] = {
	"", "dma_bits=64", "", "", "",
};

static inline int mod_load_params(int m, const char *params)
{
	const char *dir = getenv(mod_env[m]);
	char path[512];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, mod_path[m]);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (syscall(SYS_finit_module, fd, params, 0))
		ret = -errno;
	close(fd);
	return ret;
}

static inline int mod_load(int m)
{
	return mod_load_params(m, mod_params[m]);
}

/* edu_nic again, with @params */
static inline void reload_importer(const char *params)
{
	igt_assert_eq(mod_unload(IMPORTER), 0);
	igt_assert_eq(mod_load_params(IMPORTER, params), 0);
}

#endif /* P2P_MODULES_H */
