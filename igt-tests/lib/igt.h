/* SPDX-License-Identifier: MIT */
/*
 * Umbrella header, as in IGT: tests only "#include "igt.h"".
 */
#ifndef IGT_H
#define IGT_H

#include "igt_core.h"
#include "ioctl_wrappers.h"

#endif /* IGT_H */
