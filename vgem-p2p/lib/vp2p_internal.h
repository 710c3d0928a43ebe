/* SPDX-License-Identifier: MIT */
/* libvgem-p2p internals, shared by its source files only. */
#ifndef VP2P_INTERNAL_H
#define VP2P_INTERNAL_H

/* "DDDD:BB:DD.F" and its NUL */
#define VP2P_PCI_NAME_LEN	13

/* Set by the build from meson's project version. */
#ifndef VP2P_VERSION
#define VP2P_VERSION		"0.0.0"
#endif

/* hidden: the version script exports vp2p_*, this one is private */
__attribute__((visibility("hidden")))
int vp2p_read_link_pci(const char *link, char *buf, size_t len);

#endif /* VP2P_INTERNAL_H */
