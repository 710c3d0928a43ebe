// SPDX-License-Identifier: MIT
/*
 * migrate: anonymous memory moved into device-private VRAM, read there by
 * the NIC (p2p, with no migration back where p2p works), then touched by
 * the CPU, which does migrate it back.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "workload.h"

static int migrate_run(struct ctx *c, int argc, char **argv)
{
	static const struct option opts[] = {
		WL_LONGOPTS,
		WL_LONGOPT_MODE,
		{ }
	};
	struct drm_vgem_p2p_stats e1, e2;
	uint8_t *buf = NULL;
	int64_t bad, cpu_bad;
	struct wl w;
	int ret;

	wl_init(&w, MEM_DEVMEM, MEM_BIT(MEM_DEVMEM), WL_MODE);
	if (!wl_args(&w, argc, argv, WL_SHORTOPTS WL_SHORTOPT_MODE, opts,
		     &ret))
		return ret;

	ret = wl_setup(c, &w, true);
	if (ret)
		goto out;
	w.access = EDU_NIC_ACCESS_READ;
	ret = wl_register(c, &w, 0);
	if (ret)
		goto out;
	buf = malloc(w.size);
	if (!buf) {
		ret = out_err(-ENOMEM, "buffer");
		goto out;
	}
	ret = dma_range(c, w.key, EDU_NIC_DMA_FROM_MR, w.mode, 0, buf, w.size,
			"NIC read");
	if (ret) {
		ret = out_err(ret, "NIC DMA from device-private memory");
		goto out;
	}
	bad = pattern_check(buf, w.size, 0, w.seed);
	vp2p_exporter_stats(c->efd, &e1);

	out_begin();
	out_u64("pages", w.size / 4096);
	out_bool("nic_data_ok", bad < 0);
	wl_report(c, &w);
	/* only now may the CPU look: its fault migrates the pages to RAM */
	cpu_bad = pattern_check(w.buf.ptr, w.size, 0, w.seed);
	vp2p_exporter_stats(c->efd, &e2);
	out_obj("cpu_touch");
	out_bool("data_ok", cpu_bad < 0);
	out_u64("devmem_to_ram", e2.devmem_to_ram - e1.devmem_to_ram);
	out_close();
	out_end();
	if (bad >= 0 || cpu_bad >= 0)
		ret = out_err(0, "data mismatch at offset %" PRId64,
			      bad >= 0 ? bad : cpu_bad);
out:
	free(buf);
	wl_teardown(c, &w);
	return ret;
}

const struct command cmd_migrate = {
	.name = "migrate",
	.summary = "anonymous memory to device-private VRAM, read by the NIC",
	.run = migrate_run,
	.help =
	"[OPTIONS]\n"
	"\n"
	"Fill anonymous memory, migrate it into the exporter's device-private\n"
	"memory, register it and let the NIC read it by DMA: where p2p works\n"
	"the exporter maps the device-private pages p2p and nothing migrates\n"
	"back (exporter.devmem_p2p_maps grows, exporter.devmem_to_ram stays 0);\n"
	"where it is refused the pages migrate to RAM first. Then the CPU\n"
	"checks the data, which migrates the pages back (cpu_touch).\n"
	"\n"
	"  -m, --memory KIND  devmem (the default, and the only kind: anonymous\n"
	"                     memory migrated to device memory)\n"
	WL_HELP
	WL_HELP_MODE,
};
