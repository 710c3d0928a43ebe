/* SPDX-License-Identifier: MIT */
/*
 * Umbrella header, as IGT's lib/igt.h: the tests only include "igt.h".
 * Declarations only; the library is Debian's libigt.so.0.
 */
#ifndef IGT_H
#define IGT_H

#include "drmtest.h"
#include "igt_core.h"
#include "ioctl_wrappers.h"

#endif /* IGT_H */
