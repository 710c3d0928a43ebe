// SPDX-License-Identifier: MIT
/*
 * Loading and unloading the modules under test, declared in
 * p2p_modules.h.
 */
#include "p2p_modules.h"

const char *const mod_name[NR_MODS] = {
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

const char *const mod_params[NR_MODS] = {
	"", "dma_bits=64", "", "", "",
};

bool mod_loaded(int m)
{
	char path[64];

	snprintf(path, sizeof(path), "/sys/module/%s", mod_name[m]);
	return access(path, F_OK) == 0;
}

int mod_unload(int m)
{
	if (syscall(SYS_delete_module, mod_name[m], O_NONBLOCK))
		return -errno;
	return 0;
}

int mod_load_params(int m, const char *params)
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

void reload_importer(const char *params)
{
	igt_assert_eq(mod_unload(IMPORTER), 0);
	igt_assert_eq(mod_load_params(IMPORTER, params), 0);
}
