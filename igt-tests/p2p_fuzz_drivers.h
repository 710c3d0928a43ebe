/* SPDX-License-Identifier: MIT */
/*
 * p2p_fuzz's operation tables, one per driver, which the test binary
 * (p2p_fuzz.c) hands to the engine's fz_run(): p2p_fuzz_vgem_p2p.c and
 * p2p_fuzz_edu_nic.c define them, on top of p2p_fuzz_engine.h.
 */
#ifndef P2P_FUZZ_DRIVERS_H
#define P2P_FUZZ_DRIVERS_H

#include "p2p_fuzz_engine.h"

/* Every vgem_p2p and DRM core ioctl, mmaps, CPU touches, dma-buf closes */
extern const struct fz_driver fz_vgem_p2p;
/* Every edu_nic ioctl */
extern const struct fz_driver fz_edu_nic;

#endif /* P2P_FUZZ_DRIVERS_H */
