// SPDX-License-Identifier: MIT
/* info: devices, PCI topology, p2p verdicts; stats: device counters. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define MAXDEV VP2P_MAX_DEVICES

static void out_node(int fd)
{
	char link[64], node[128];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, node, sizeof(node) - 1);
	node[n > 0 ? n : 0] = '\0';
	out_str("node", node);
}

static void out_pcipath(const char *pci)
{
	char path[512];

	if (!vp2p_pci_path(pci, path, sizeof(path)))
		out_str("sysfs", path);
}

/*
 * Empty lists are a valid answer, but the usual reason for them is a
 * module not loaded: say so on stderr, where it cannot break --json.
 */
static void info_hint(const char *module, const char *what)
{
	char hint[512];

	module_hint(module, hint, sizeof(hint));
	fprintf(stderr, "vgem-p2p: info: no %s: %s\n", what, hint);
}

static int info_run(struct ctx *c, int argc, char **argv)
{
	char epci[MAXDEV][16], ipci[MAXDEV][16];
	struct drm_vgem_p2p_stats es;
	struct edu_nic_dev_stats is;
	int ne, ni, e, i, fd, ret;

	if (argc > 1)
		return out_usage("unexpected argument '%s'", argv[1]);
	if (dry_run_begin()) {
		out_end();
		return 0;
	}
	ne = vp2p_exporter_count();
	if (ne < 0)
		return out_err(ne, "enumerate DRM devices");
	ni = vp2p_importer_count();

	out_begin();
	out_str("library", vp2p_version());
	out_arr("exporters");
	for (e = 0; e < ne && e < MAXDEV; e++) {
		epci[e][0] = '\0';
		fd = vp2p_exporter_open(e);
		out_obj(NULL);
		out_u64("index", e);
		if (fd < 0) {
			out_str("error", strerror(-fd));
			out_close();
			continue;
		}
		out_node(fd);
		if (!vp2p_exporter_pci(fd, epci[e], sizeof(epci[e]))) {
			out_str("pci", epci[e]);
			out_pcipath(epci[e]);
		}
		if (!vp2p_exporter_stats(fd, &es)) {
			out_u64("vram_size", es.vram_size);
			out_u64("vram_used", es.vram_used);
			out_u64("devmem_size", es.devmem_size);
			out_u64("devmem_used", es.devmem_used);
		}
		close(fd);
		out_close();
	}
	out_close();

	out_arr("importers");
	for (i = 0; i < ni && i < MAXDEV; i++) {
		char node[32];

		ipci[i][0] = '\0';
		out_obj(NULL);
		out_u64("index", i);
		snprintf(node, sizeof(node), "/dev/edu_nic%d", i);
		out_str("node", node);
		if (!vp2p_importer_pci(i, ipci[i], sizeof(ipci[i]))) {
			out_str("pci", ipci[i]);
			out_pcipath(ipci[i]);
		}
		fd = vp2p_importer_open(i);
		if (fd >= 0) {
			if (!vp2p_importer_stats(fd, &is))
				out_bool("iommu", is.caps & EDU_NIC_CAP_IOMMU);
			close(fd);
		}
		out_close();
	}
	out_close();

	out_arr("pairs");
	for (e = 0; e < ne && e < MAXDEV; e++) {
		fd = vp2p_exporter_open(e);
		for (i = 0; i < ni && i < MAXDEV; i++) {
			struct vp2p_peer k;
			struct vp2p_pair p;

			out_obj(NULL);
			out_u64("exporter", e);
			out_u64("importer", i);
			/* the verdict is the kernel's; sysfs explains it */
			ret = fd < 0 ? fd : vp2p_exporter_peer(fd, ipci[i], &k);
			if (!ret)
				ret = vp2p_pair_check(epci[e], ipci[i], &p);
			if (ret) {
				out_str("error", strerror(-ret));
				out_close();
				continue;
			}
			out_str("path", vp2p_path_name(p.path));
			out_i64("distance", p.distance);
			if (p.bridge[0])
				out_str("bridge", p.bridge);
			if (p.path == VP2P_PATH_HOST_BRIDGE)
				out_bool("whitelisted", p.whitelisted);
			out_bool("iommu", p.iommu);
			out_bool("reachable", k.reachable);
			out_bool("p2p", k.path != VGEM_P2P_PEER_NONE);
			out_str("addresses",
				k.path == VGEM_P2P_PEER_BUS ? "BAR bus addresses" :
				k.path == VGEM_P2P_PEER_MAPPED ?
				"dma_map_resource() (IOVAs behind an IOMMU)" :
				"system memory (fallback)");
			out_close();
		}
		if (fd >= 0)
			close(fd);
	}
	out_close();
	out_end();
	if (!ne)
		info_hint("vgem_p2p", "exporters");
	if (!ni)
		info_hint("edu_nic", "importers");
	return 0;
}

const struct command cmd_info = {
	.name = "info",
	.summary = "devices, PCI topology, and which pairs can p2p",
	.run = info_run,
	.help =
	"\n\n"
	"List the vgem_p2p exporters (DRM node, PCI address, sysfs path, VRAM\n"
	"and device-private memory), the edu_nic importers (node, PCI address,\n"
	"IOMMU), and for every exporter/importer pair the kernel's verdict\n"
	"(DRM_IOCTL_VGEM_P2P_PEER: reachable, and whether the importer gets bus\n"
	"addresses, a dma_map_resource() mapping, or system memory through the\n"
	"fallback), explained by the PCI path read from sysfs: below a common\n"
	"switch or root port, or across the host bridge (whitelisted or not).\n",
};

static int stats_run(struct ctx *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "exporter-only", no_argument, NULL, 'E' },
		{ "importer-only", no_argument, NULL, 'I' },
		{ }
	};
	bool want_e = true, want_i = true;
	struct drm_vgem_p2p_stats es;
	struct edu_nic_dev_stats is;
	int opt, ret;

	while ((opt = getopt_long(argc, argv, ":EI", opts, NULL)) != -1) {
		switch (opt) {
		case 'E':
			want_i = false;
			break;
		case 'I':
			want_e = false;
			break;
		default:
			return out_badopt(opt, argv);
		}
	}
	if (optind < argc)
		return out_usage("unexpected argument '%s'", argv[optind]);
	if (!want_e && !want_i)
		return out_usage("--exporter-only and --importer-only conflict");
	if (dry_run_begin()) {
		out_bool("exporter_only", !want_i);
		out_bool("importer_only", !want_e);
		out_end();
		return 0;
	}
	if (want_e) {
		if (ctx_exporter(c) < 0)
			return 1;
		ret = vp2p_exporter_stats(c->efd, &es);
		if (ret)
			return out_err(ret, "exporter statistics");
	}
	if (want_i) {
		if (ctx_importer(c) < 0)
			return 1;
		ret = vp2p_importer_stats(c->ifd, &is);
		if (ret)
			return out_err(ret, "importer statistics");
	}
	out_begin();
	if (want_e)
		out_exporter_stats("exporter", &es);
	if (want_i) {
		out_obj("importer");
		out_bool("iommu", is.caps & EDU_NIC_CAP_IOMMU);
		out_close();
		out_importer_stats("importer_counters", &is.stats);
	}
	out_end();
	return 0;
}

const struct command cmd_stats = {
	.name = "stats",
	.summary = "exporter and importer device counters",
	.run = stats_run,
	.help =
	"[--exporter-only | --importer-only]\n"
	"\n"
	"Print the exporter's counters (p2p maps, pages handed out as bus\n"
	"addresses or IOVAs, fallbacks, moves, evictions, compactions,\n"
	"invalidations, bytes copied and bounced, device-private migrations,\n"
	"VRAM use) and the importer's (pages mirrored p2p or through system\n"
	"memory, faults, invalidations, re-maps, bytes by device and emulated\n"
	"DMA). Select devices with the global --exporter and --importer.\n"
	"\n"
	"  -E, --exporter-only  the exporter's counters only\n"
	"  -I, --importer-only  the importer's counters only\n",
};
