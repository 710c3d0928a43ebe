// SPDX-License-Identifier: MIT
/*
 * What users of a real driver look at: vgem-p2p's debugfs (vram_map,
 * objects, counters), its tracepoints, and edu_nic's debugfs (stats,
 * mrs). Each is checked against the ioctls that report the same state.
 */
#include <ctype.h>
#include <stdlib.h>

#include "p2p_common.h"

IGT_TEST_DESCRIPTION("debugfs and tracepoints of both drivers agree with their ioctls.");

#define RW	(EDU_NIC_ACCESS_READ | EDU_NIC_ACCESS_WRITE)

/* "name value" lines: the value of @name, which must be there */
static uint64_t field(const char *text, const char *name)
{
	size_t len = strlen(name);
	const char *p;

	for (p = text; p; p = strchr(p, '\n')) {
		while (*p == '\n' || *p == ' ')
			p++;
		if (!strncmp(p, name, len) && isspace(p[len]))
			return strtoull(p + len, NULL, 0);
	}
	igt_assert_f(false, "no \"%s\" in:\n%s\n", name, text);
	return 0;
}

static char *dri_file(int vfd, const char *file)
{
	char path[128];

	vgem_p2p_debugfs_path(vfd, file, path, sizeof(path));
	return slurp(path);
}

static char *edu_file(const char *file)
{
	char path[128];

	edu_debugfs_path(path, sizeof(path), file);
	return slurp(path);
}

struct trace_counts {
	unsigned int invalidates;	/* of our object */
	unsigned int moves;		/* of our object */
	unsigned int unmaps;		/* of our object by our importer */
	unsigned int migrates;		/* of 2 pages to the device */
	unsigned int left;		/* invalidates, of any object, that
					 * left an importer mapping */
};

/*
 * The events in the vgem_p2p trace @text of the object that importer
 * @bdf mapped as pages 0+2 (its vgem_p2p_map event names it), and every
 * invalidate's count of mappings left, whatever its object.
 */
static struct trace_counts trace_object(const char *text, const char *bdf)
{
	struct trace_counts t = { 0 };
	char *copy = strdup(text), *line, *save, bo[32] = "", v[64];
	char importer[64];

	igt_assert(copy);
	snprintf(importer, sizeof(importer), "importer=%s ", bdf);
	for (line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		bool ours = trace_field(line, "bo=", v, sizeof(v)) &&
			    *bo && !strcmp(v, bo);

		if (strstr(line, "vgem_p2p_map:") && strstr(line, importer) &&
		    strstr(line, "pages=0+2 ") && !*bo)
			trace_field(line, "bo=", bo, sizeof(bo));
		else if (strstr(line, "vgem_p2p_invalidate:")) {
			igt_assert_f(trace_field(line, "left=", v, sizeof(v)),
				     "no left= in \"%s\"\n", line);
			if (strcmp(v, "0"))
				t.left++;
			t.invalidates += ours;
		} else if (strstr(line, "vgem_p2p_move:")) {
			t.moves += ours;
		} else if (strstr(line, "vgem_p2p_unmap:")) {
			t.unmaps += ours && strstr(line, importer);
		} else if (strstr(line, "vgem_p2p_migrate:") &&
			   strstr(line, "pages=2 to device")) {
			t.migrates++;
		}
	}
	free(copy);
	return t;
}

static void test_counters_match_stats(int vfd)
{
	struct drm_vgem_p2p_stats s;
	uint32_t h = vgem_p2p_create(vfd, 2 * EDU_PAGE, 0);
	char *text;

	/* Make some of them non-zero first */
	vgem_p2p_move(vfd, h, VGEM_P2P_MOVE_SYSTEM, 0);
	vgem_p2p_move(vfd, h, VGEM_P2P_MOVE_VRAM, 0);
	s = vgem_p2p_stats(vfd);
	text = dri_file(vfd, "counters");
#define CHECK(x) igt_assert_eq_u64(field(text, #x), s.x)
	CHECK(p2p_maps);
	CHECK(p2p_unmaps);
	CHECK(p2p_pages_bus);
	CHECK(p2p_pages_iova);
	CHECK(fallbacks);
	CHECK(moves);
	CHECK(evictions);
	CHECK(compactions);
	CHECK(invalidations);
	CHECK(bytes_copied);
	CHECK(bytes_bounced);
	CHECK(devmem_p2p_maps);
	CHECK(devmem_to_device);
	CHECK(devmem_to_ram);
#undef CHECK
	igt_assert(s.moves >= 2 && s.invalidations >= 2);
	free(text);
	gem_close(vfd, h);
}

static void test_vram_map(int vfd)
{
	uint64_t size = 7 * EDU_PAGE;
	uint32_t h = vgem_p2p_create(vfd, size, 0);
	struct drm_vgem_p2p_obj_info info = vgem_p2p_info(vfd, h);
	char line[96], *text;

	igt_assert_eq(info.placement, VGEM_P2P_PLACEMENT_VRAM);
	/* drm_mm_print()'s format */
	snprintf(line, sizeof(line), "0x%016llx-0x%016llx: %llu: used",
		 (unsigned long long)info.vram_offset,
		 (unsigned long long)(info.vram_offset + size),
		 (unsigned long long)size);
	text = dri_file(vfd, "vram_map");
	igt_assert_f(strstr(text, line), "no \"%s\" in:\n%s\n", line,
		     text);
	free(text);

	gem_close(vfd, h);
	/* Freed objects go through a worker: wait for it to catch up */
	for (int i = 0; i < 50; i++) {
		text = dri_file(vfd, "vram_map");
		if (!strstr(text, line))
			break;
		free(text);
		text = NULL;
		usleep(100 * 1000);
	}
	igt_assert_f(text, "%s still used after the object was closed\n",
		     line);
	free(text);
}

static void test_objects_importer_mappings(int vfd, int efd)
{
	uint64_t size = 3 * EDU_PAGE;
	uint32_t h, key;
	char bdf[32], want[160], *p, *text;
	struct drm_vgem_p2p_obj_info info;

	igt_require(efd >= 0);
	edu_bdf(bdf, sizeof(bdf));
	h = vgem_p2p_create(vfd, size, 0);
	p = vgem_p2p_mmap(vfd, h, size, PROT_READ | PROT_WRITE);
	key = edu_reg(efd, p, size, RW, EDU_NIC_REG_MR_PREFETCH);
	info = vgem_p2p_info(vfd, h);
	igt_assert_eq(info.mappings, 1);

	snprintf(want, sizeof(want), "size %llu vram 0x%llx",
		 (unsigned long long)size,
		 (unsigned long long)info.vram_offset);
	text = dri_file(vfd, "objects");
	igt_assert_f(strstr(text, want), "no \"%s\" in:\n%s\n", want,
		     text);
	snprintf(want, sizeof(want), "  importer %s pages 0+3 %s rw",
		 bdf, info.fallback_maps ? "system" :
		 edu_dev_stats(efd).caps & EDU_NIC_CAP_IOMMU ? "iova" :
		 "bus");
	igt_assert_f(strstr(text, want), "no \"%s\" in:\n%s\n", want,
		     text);
	free(text);

	igt_assert_eq(edu_dereg_err(efd, key), 0);
	text = dri_file(vfd, "objects");
	igt_assert_f(!strstr(text, want), "\"%s\" after dereg:\n%s\n",
		     want, text);
	free(text);
	munmap(p, size);
	gem_close(vfd, h);
}

static void test_tracepoints(int vfd, int efd)
{
	static const char *const events[] = {
		"vgem_p2p_map:", "vgem_p2p_invalidate:",
		"vgem_p2p_move:", "vgem_p2p_evict:", "vgem_p2p_unmap:",
		"vgem_p2p_migrate:",
	};
	uint64_t size = 2 * EDU_PAGE;
	struct drm_vgem_p2p_migrate m = {
		.size = size, .direction = VGEM_P2P_MIGRATE_TO_DEVICE,
	};
	char *anon = edu_anon(size), *p, *text, bdf[32];
	struct trace_counts t;
	uint32_t h, key;
	unsigned int i;

	igt_require(efd >= 0);
	/* vgem_p2p's own events, with CONFIG_FTRACE: qemu/kernel.config */
	igt_assert_f(access(TRACING "/events/vgem_p2p/enable", W_OK) == 0,
		     TRACING "/events/vgem_p2p/enable: %s\n", strerror(errno));
	edu_bdf(bdf, sizeof(bdf));
	write_file(TRACING "/tracing_on", "0");
	write_file(TRACING "/trace", "");
	write_file(TRACING "/events/vgem_p2p/enable", "1");
	write_file(TRACING "/tracing_on", "1");

	h = vgem_p2p_create(vfd, size, 0);
	p = vgem_p2p_mmap(vfd, h, size, PROT_READ | PROT_WRITE);
	key = edu_reg(efd, p, size, RW, EDU_NIC_REG_MR_PREFETCH);
	vgem_p2p_move(vfd, h, VGEM_P2P_MOVE_VRAM, 0);
	vgem_p2p_move(vfd, h, VGEM_P2P_MOVE_SYSTEM, 0);
	m.addr = (uintptr_t)anon;
	memset(anon, 1, size);
	do_ioctl(vfd, DRM_IOCTL_VGEM_P2P_MIGRATE, &m);

	write_file(TRACING "/tracing_on", "0");
	write_file(TRACING "/events/vgem_p2p/enable", "0");
	text = slurp(TRACING "/trace");
	for (i = 0; i < ARRAY_SIZE(events); i++)
		igt_assert_f(strstr(text, events[i]),
			     "no %s event in:\n%s\n", events[i], text);
	t = trace_object(text, bdf);
	igt_info("our object: %u invalidates, %u moves, %u unmaps; %u invalidates left mappings; migrate of 2 pages: %u\n",
		 t.invalidates, t.moves, t.unmaps, t.left, t.migrates);
	/* Every importer mapping was gone by the time each zap ended */
	igt_assert_f(!t.left, "a zap left an importer mapping:\n%s\n",
		     text);
	/* and the events are ours: our object, importer, pages */
	igt_assert_f(t.invalidates >= 1 && t.moves >= 1 &&
		     t.unmaps >= 1 && t.migrates == 1,
		     "events of our object missing:\n%s\n", text);
	free(text);
	write_file(TRACING "/trace", "");
	write_file(TRACING "/tracing_on", "1");

	igt_assert_eq(edu_dereg_err(efd, key), 0);
	munmap(p, size);
	munmap(anon, size);
	gem_close(vfd, h);
}

static void test_edu_debugfs(int efd)
{
	struct edu_nic_dev_stats s;
	char *p = edu_anon(2 * EDU_PAGE), buf[64], want[128], *text;
	uint32_t key;

	igt_require(efd >= 0);
	key = edu_reg(efd, p, 2 * EDU_PAGE, EDU_NIC_ACCESS_READ,
		      EDU_NIC_REG_MR_PREFETCH);
	edu_dma(efd, key, EDU_NIC_DMA_FROM_MR, EDU_NIC_MODE_BULK, 0,
		sizeof(buf), buf);
	s = edu_dev_stats(efd);
	text = edu_file("stats");
#define CHECK(x) igt_assert_eq_u64(field(text, #x), s.stats.x)
	CHECK(pages_p2p);
	CHECK(pages_system);
	CHECK(cur_pages_p2p);
	CHECK(cur_pages_system);
	CHECK(faults);
	CHECK(fault_retries);
	CHECK(invalidations);
	CHECK(remaps);
	CHECK(p2p_maps);
	CHECK(pages_bus);
	CHECK(pages_iova);
	CHECK(device_dma_bytes);
	CHECK(device_dma_cmds);
	CHECK(bulk_bytes);
	CHECK(errors);
	CHECK(nr_mrs);
#undef CHECK
	/* a gauge: nothing is queued for the engine now */
	igt_assert_eq_u64(field(text, "dma_waiting"), 0);
	igt_assert(strstr(text, s.caps & EDU_NIC_CAP_IOMMU ?
			  "iommu translated" : "iommu none"));
	free(text);

	snprintf(want, sizeof(want),
		 "mr %u addr %#llx length %#llx access r mirrored-ro",
		 key, (unsigned long long)(uintptr_t)p,
		 (unsigned long long)(2 * EDU_PAGE));
	text = edu_file("mrs");
	igt_assert_f(strstr(text, want), "no \"%s\" in:\n%s\n", want,
		     text);
	free(text);
	igt_assert_eq(edu_dereg_err(efd, key), 0);
	text = edu_file("mrs");
	igt_assert_f(!strstr(text, want), "\"%s\" after dereg\n", want);
	free(text);
	munmap(p, 2 * EDU_PAGE);
}

igt_main
{
	int vfd = -1, efd = -1;

	igt_fixture {
		vfd = vgem_p2p_open();
		efd = edu_open_nth(0);
	}

	igt_describe("debugfs counters equal DRM_IOCTL_VGEM_P2P_STATS, field by field.");
	igt_subtest("counters-match-stats")
		test_counters_match_stats(vfd);

	igt_describe("vram_map shows an object's node as used at the offset OBJ_INFO reports, and the range free once the object is gone.");
	igt_subtest("vram-map")
		test_vram_map(vfd);

	igt_describe("The objects file lists an importer's live mapping of an object (device, pages, kind, access) and drops it on deregistration.");
	igt_subtest("objects-importer-mappings")
		test_objects_importer_mappings(vfd, efd);

	igt_describe("Each tracepoint fires for its operation: map, invalidate, move, evict, unmap and migrate. The map names our importer and pages, that object's invalidate, move and unmap events follow, the migrate counts our 2 pages, and every invalidate, whatever its object, left no importer mapping.");
	igt_subtest("tracepoints")
		test_tracepoints(vfd, efd);

	igt_describe("edu_nic's debugfs stats equal EDU_NIC_IOCTL_DEV_STATS, and mrs lists a registration with its key, range, access and state.");
	igt_subtest("edu-debugfs")
		test_edu_debugfs(efd);

	igt_fixture {
		if (efd >= 0)
			close(efd);
		close(vfd);
	}
}
