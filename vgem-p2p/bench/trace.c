// SPDX-License-Identifier: MIT
/*
 * Kernel timestamps of vgem_p2p's tracepoints, read from tracefs. The
 * revocation benchmark needs the moment the last importer mapping went
 * (vgem_p2p_unmap, fired by p2p_unmap() from the importer's notifier),
 * which user space cannot see: the move ioctl returns only after copying.
 * The "mono" trace clock is CLOCK_MONOTONIC, so the timestamps compare
 * with bench_now_ns().
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"

static char trace_dir[64];

static int trace_write(const char *file, const char *val)
{
	char path[128];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s", trace_dir, file);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static int trace_find(void)
{
	static const char *const dirs[] = {
		"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
	};
	struct stat st;
	char path[96];
	unsigned int i;

	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/trace", dirs[i]);
		if (!stat(path, &st)) {
			snprintf(trace_dir, sizeof(trace_dir), "%s", dirs[i]);
			return 0;
		}
	}
	if (mount("tracefs", dirs[0], "tracefs", 0, NULL))
		return -errno;
	snprintf(trace_dir, sizeof(trace_dir), "%s", dirs[0]);
	return 0;
}

/*
 * Record, with CLOCK_MONOTONIC timestamps, the events of an importer
 * releasing a mapping: vgem_p2p_unmap (vma path) and, where the exporter
 * has it, vgem_p2p_dmabuf_unmap (dma-buf path).
 */
int bench_trace_start(void)
{
	int ret;

	ret = trace_find();
	if (ret)
		return ret;
	ret = trace_write("trace_clock", "mono");
	if (!ret)
		ret = trace_write("set_event", "");
	if (!ret)
		ret = trace_write("events/vgem_p2p/vgem_p2p_unmap/enable", "1");
	if (!ret)
		trace_write("events/vgem_p2p/vgem_p2p_dmabuf_unmap/enable",
			    "1");
	if (!ret)
		ret = trace_write("tracing_on", "1");
	if (!ret)
		bench_trace_clear();
	return ret;
}

void bench_trace_clear(void)
{
	trace_write("trace", "");
}

/*
 * The latest timestamp of @event in the buffer, and how many there are.
 * Lines look like
 *   vgem-p2p-bench-81 [001] .....   123.456789: vgem_p2p_unmap: bo=...
 */
int bench_trace_last(const char *event, uint64_t *last_ns,
		     unsigned int *count)
{
	char path[128], line[512], tag[64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/trace", trace_dir);
	snprintf(tag, sizeof(tag), ": %s:", event);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	*last_ns = 0;
	*count = 0;
	while (fgets(line, sizeof(line), f)) {
		char *hit = strstr(line, tag), *ts;
		unsigned long sec, usec;

		if (!hit || line[0] == '#')
			continue;
		*hit = '\0';
		ts = strrchr(line, ' ');
		if (!ts || sscanf(ts + 1, "%lu.%lu", &sec, &usec) != 2)
			continue;
		if (sec * 1000000000ull + usec * 1000ull > *last_ns)
			*last_ns = sec * 1000000000ull + usec * 1000ull;
		(*count)++;
	}
	fclose(f);
	return 0;
}

void bench_trace_stop(void)
{
	trace_write("set_event", "");
	bench_trace_clear();
	trace_write("trace_clock", "local");
}
