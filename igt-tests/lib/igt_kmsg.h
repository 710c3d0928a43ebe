/* SPDX-License-Identifier: MIT */
/* Kernel log watching for IGT_KMSG_PATTERNS, see igt_kmsg.c */
#ifndef IGT_KMSG_H
#define IGT_KMSG_H

#include <stdbool.h>

void igt_kmsg_watch_init(void);
bool igt_kmsg_splat(const char *subtest);

#endif /* IGT_KMSG_H */
