// SPDX-License-Identifier: MIT
/*
 * Can this importer reach that exporter's BAR peer-to-peer? The answer
 * is the kernel's (pci_p2pdma_distance()), re-derived from sysfs so that
 * "vgem-p2p info" can show it, and explain it, before any DMA is tried:
 *  - both devices below one PCI bridge: the bridge routes the TLPs, p2p;
 *  - the only common ancestor is the host bridge: p2p only when the CPU
 *    is an AMD Zen or the host bridge is on the kernel's whitelist;
 *  - different domains or root buses: never.
 * ACS redirection is not looked at: QEMU's switch ports do not enable it.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vgem_p2p.h"
#include "vp2p_internal.h"

/* A PCI function's name: "DDDD:BB:DD.F" */
static bool is_pci_name(const char *s)
{
	unsigned int d, b, dev, f;
	char end;

	return strlen(s) == VP2P_PCI_NAME_LEN - 1 &&
	       sscanf(s, "%4x:%2x:%2x.%1x%c", &d, &b, &dev, &f, &end) == 4;
}

int vp2p_read_link_pci(const char *link, char *buf, size_t len)
{
	char target[PATH_MAX];
	const char *base;
	ssize_t n;

	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return errno == ENOENT ? -ENODEV : -errno;
	target[n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (!is_pci_name(base))
		return -ENODEV;
	snprintf(buf, len, "%s", base);
	return 0;
}

int vp2p_pci_path(const char *pci, char *buf, size_t len)
{
	char link[64], real[PATH_MAX];

	if (!pci || !buf || !len || !is_pci_name(pci))
		return -EINVAL;
	snprintf(link, sizeof(link), "/sys/bus/pci/devices/%s", pci);
	if (!realpath(link, real))
		return errno == ENOENT ? -ENOENT : -errno;
	if (strlen(real) >= len)
		return -ENAMETOOLONG;
	strcpy(buf, real);
	return 0;
}

/*
 * Splits a sysfs device path into its PCI components, leaf last:
 * "/sys/devices/pci0000:00/0000:00:02.0/0000:01:00.0" gives the root
 * "pci0000:00" and { "0000:00:02.0", "0000:01:00.0" }.
 */
#define MAX_DEPTH 16
struct pci_chain {
	char root[32];
	char *node[MAX_DEPTH];
	int depth;
	char buf[PATH_MAX];
};

static int pci_chain(const char *pci, struct pci_chain *c)
{
	char *tok, *save;
	int ret;

	ret = vp2p_pci_path(pci, c->buf, sizeof(c->buf));
	if (ret)
		return ret;
	c->root[0] = '\0';
	c->depth = 0;
	for (tok = strtok_r(c->buf, "/", &save); tok;
	     tok = strtok_r(NULL, "/", &save)) {
		if (!strncmp(tok, "pci", 3) && !c->root[0])
			snprintf(c->root, sizeof(c->root), "%s", tok);
		else if (is_pci_name(tok) && c->depth < MAX_DEPTH)
			c->node[c->depth++] = tok;
	}
	return c->root[0] && c->depth ? 0 : -ENOENT;
}

static int read_hex(const char *path, unsigned int *val)
{
	FILE *f = fopen(path, "r");
	int ret;

	if (!f)
		return -errno;
	ret = fscanf(f, "%x", val) == 1 ? 0 : -EIO;
	fclose(f);
	return ret;
}

/* What the kernel's cpu_supports_p2pdma() checks: AMD, family 0x17+ */
static bool cpu_is_amd_zen(void)
{
	char line[256];
	bool amd = false;
	int family = 0;
	FILE *f;

	f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "vendor_id", 9))
			amd = strstr(line, "AuthenticAMD");
		else if (!strncmp(line, "cpu family", 10))
			sscanf(strchr(line, ':') + 1, "%d", &family);
		else if (line[0] == '\n')
			break;	/* the first CPU is enough */
	}
	fclose(f);
	return amd && family >= 0x17;
}

/* pci_p2pdma_whitelist[] of 6.1: Intel host bridges and Skylake roots */
static bool host_bridge_whitelisted(const char *leaf)
{
	static const unsigned int intel_ids[] = {
		0x3c00, 0x3c01, 0x2f00, 0x2f01, 0x2030, 0x2031, 0x2032,
		0x2033, 0x2020, 0x09a2,
	};
	unsigned int vendor, device, i;
	char path[96];

	/* the host bridge device is function 00.0 of the root bus */
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%.8s00.0/vendor",
		 leaf);
	if (read_hex(path, &vendor) || vendor != 0x8086)
		return false;
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%.8s00.0/device",
		 leaf);
	if (read_hex(path, &device))
		return false;
	for (i = 0; i < sizeof(intel_ids) / sizeof(intel_ids[0]); i++)
		if (device == intel_ids[i])
			return true;
	return false;
}

static bool has_iommu(const char *pci)
{
	char path[96];

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/iommu", pci);
	return access(path, F_OK) == 0;
}

int vp2p_pair_check(const char *exporter_pci, const char *importer_pci,
		    struct vp2p_pair *pair)
{
	struct pci_chain *e, *i;
	struct vp2p_pair p = { .distance = -1 };
	int ret, common;

	if (!exporter_pci || !importer_pci || !pair)
		return -EINVAL;
	/* two PATH_MAX buffers: too much for a library's caller's stack */
	e = malloc(sizeof(*e));
	i = malloc(sizeof(*i));
	if (!e || !i) {
		ret = -ENOMEM;
		goto out;
	}
	ret = pci_chain(exporter_pci, e);
	if (ret)
		goto out;
	ret = pci_chain(importer_pci, i);
	if (ret)
		goto out;

	p.iommu = has_iommu(importer_pci);
	if (strcmp(e->root, i->root)) {
		p.path = VP2P_PATH_OTHER_ROOT;
		goto done;
	}
	/* the deepest common component that is not either device itself */
	for (common = 0; common < e->depth - 1 && common < i->depth - 1; common++)
		if (strcmp(e->node[common], i->node[common]))
			break;
	if (common) {
		p.path = VP2P_PATH_SWITCH;
		p.distance = (e->depth - common) + (i->depth - common);
		snprintf(p.bridge, sizeof(p.bridge), "%s", e->node[common - 1]);
		p.p2p = true;
	} else {
		p.path = VP2P_PATH_HOST_BRIDGE;
		p.distance = e->depth + i->depth;
		p.whitelisted = cpu_is_amd_zen() ||
				host_bridge_whitelisted(e->node[0]);
		p.p2p = p.whitelisted;
	}
done:
	*pair = p;
	ret = 0;
out:
	free(e);
	free(i);
	return ret;
}

const char *vp2p_path_name(enum vp2p_path path)
{
	switch (path) {
	case VP2P_PATH_SWITCH:
		return "switch";
	case VP2P_PATH_HOST_BRIDGE:
		return "host-bridge";
	case VP2P_PATH_OTHER_ROOT:
		return "other-root";
	default:
		return "unknown";
	}
}
