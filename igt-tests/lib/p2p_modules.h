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

/* Their names, as /sys/module and delete_module() know them */
extern const char *const mod_name[NR_MODS];

/* Is module @m (EXPORTER ...) loaded? */
bool mod_loaded(int m);

/* Unload module @m, not waiting for its users: 0 or -errno */
int mod_unload(int m);

/*
 * The parameters the suite runner loads each module with: the topologies
 * give edu dma_mask=0xffffffffffffffff (qemu/guest/run-suite).
 */
extern const char *const mod_params[NR_MODS];

/* Load module @m from its tree ($VP2P_MODULES, $VP2P_KOBJ) with @params */
int mod_load_params(int m, const char *params);

/* Load module @m with the parameters the suite runner gives it */
static inline int mod_load(int m)
{
	return mod_load_params(m, mod_params[m]);
}

/* edu_nic again, with @params */
void reload_importer(const char *params);

#endif /* P2P_MODULES_H */
