// SPDX-License-Identifier: MIT
/*
 * Kernel timestamps of vgem_p2p's tracepoints, read from tracefs. The
 * revocation benchmark needs the moment the last importer mapping went
 * (vgem_p2p_unmap, fired by p2p_unmap() from the importer's notifier),
 * which user space cannot see: the move ioctl returns only after copying.
 * The "mono" trace clock is CLOCK_MONOTONIC, so the timestamps compare
 * with bench_now_ns().
 *
 * All of it happens in a tracing instance of our own (libtracefs), with
 * its own buffer, events and clock: the global set_event, trace_clock and
 * buffer, which the user may be using, are never touched.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <tracefs.h>

#include "bench.h"

static struct tracefs_instance *trace_inst;

/*
 * Record, with CLOCK_MONOTONIC timestamps, the events of an importer
 * releasing a mapping: vgem_p2p_unmap (vma path) and, where the exporter
 * has it, vgem_p2p_dmabuf_unmap (dma-buf path).
 */
int bench_trace_start(void)
{
	char name[64];
	int ret;

	/* libtracefs mounts tracefs if needed */
	snprintf(name, sizeof(name), "vgem-p2p-bench-%d", getpid());
	trace_inst = tracefs_instance_create(name);
	if (!trace_inst)
		return errno ? -errno : -ENOENT;
	/* a new instance traces nothing until told: no set_event to clear */
	ret = tracefs_instance_file_write(trace_inst, "trace_clock", "mono");
	if (ret >= 0)
		ret = tracefs_event_enable(trace_inst, "vgem_p2p",
					   "vgem_p2p_unmap");
	if (ret >= 0) {
		/* older exporters have no dma-buf path, nor its event */
		tracefs_event_enable(trace_inst, "vgem_p2p",
				     "vgem_p2p_dmabuf_unmap");
		ret = tracefs_trace_on(trace_inst);
	}
	if (ret < 0) {
		ret = errno ? -errno : -EIO;
		bench_trace_stop();
		return ret;
	}
	bench_trace_clear();
	return 0;
}

void bench_trace_clear(void)
{
	tracefs_instance_file_clear(trace_inst, "trace");
}

/*
 * The latest timestamp of @event in the buffer, and how many there are.
 * Lines look like
 *   vgem-p2p-bench-81 [001] .....   123.456789: vgem_p2p_unmap: bo=...
 * Hand-parsed text rather than tracefs_iterate_raw_events(): that needs
 * libtraceevent to load the event formats and consumes the buffer, for a
 * timestamp the text has in the microseconds the benchmark reports.
 */
int bench_trace_last(const char *event, uint64_t *last_ns,
		     unsigned int *count)
{
	char line[512], tag[64];
	FILE *f;
	int fd;

	snprintf(tag, sizeof(tag), ": %s:", event);
	fd = tracefs_instance_file_open(trace_inst, "trace", O_RDONLY);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -errno;
	}
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

/* Removing the instance drops its events, clock and buffer with it. */
void bench_trace_stop(void)
{
	if (!trace_inst)
		return;
	tracefs_instance_destroy(trace_inst);
	tracefs_instance_free(trace_inst);
	trace_inst = NULL;
}
