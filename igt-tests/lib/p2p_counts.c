// SPDX-License-Identifier: MIT
/*
 * The drivers' counts that must come back to their start values,
 * declared in p2p_counts.h.
 */
#include "p2p_counts.h"

void p2p_counts_src_init(struct p2p_counts_src *src, int vfd)
{
	char link[256];
	struct stat st;
	ssize_t n;

	src->vfd = vfd;
	igt_assert_eq(fstat(vfd, &st), 0);
	snprintf(src->dri_dir, sizeof(src->dri_dir),
		 "/sys/kernel/debug/dri/%u", minor(st.st_rdev));
	src->edu_dir[0] = '\0';
	n = readlink("/sys/class/misc/edu_nic0/device", link,
		     sizeof(link) - 1);
	if (n > 0) {
		link[n] = '\0';
		snprintf(src->edu_dir, sizeof(src->edu_dir),
			 "/sys/kernel/debug/edu_nic/%s",
			 strrchr(link, '/') + 1);
	}
}

static long p2p_counts_value(const char *dir, const char *file, const char *key)
{
	char path[192];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return edu_read_value(path, key);
}

struct p2p_counts p2p_counts_read(const struct p2p_counts_src *src)
{
	struct drm_vgem_p2p_stats s = vgem_p2p_stats(src->vfd);
	struct p2p_counts c = {};
	char path[96], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/objects", src->dri_dir);
	f = fopen(path, "r");
	igt_assert_f(f, "%s\n", path);
	while (fgets(line, sizeof(line), f)) {
		if (line[0] != ' ')
			c.objects++;
		else if (strstr(line, "importer"))
			c.maps++;
	}
	fclose(f);
	c.live_p2p = p2p_counts_value(src->dri_dir, "counters", "p2p_maps") -
		     p2p_counts_value(src->dri_dir, "counters", "p2p_unmaps");
	c.vram_used = s.vram_used;
	c.devmem_used = s.devmem_used;
	c.dmabuf_attachments = s.dmabuf_attachments;
	if (src->edu_dir[0]) {
		c.nr_mrs = p2p_counts_value(src->edu_dir, "stats", "nr_mrs");
		c.cur_pages_p2p = p2p_counts_value(src->edu_dir, "stats",
						   "cur_pages_p2p");
		c.cur_pages_system = p2p_counts_value(src->edu_dir, "stats",
						      "cur_pages_system");
	}
	return c;
}

struct p2p_counts_wait {
	const struct p2p_counts_src *src;
	const struct p2p_counts *start;
	struct p2p_counts now;
};

static long p2p_counts_at_start(const void *arg)
{
	struct p2p_counts_wait *w = (struct p2p_counts_wait *)arg;

	w->now = p2p_counts_read(w->src);
	return !memcmp(&w->now, w->start, sizeof(w->now));
}

const char *p2p_counts_check(const struct p2p_counts_src *src,
			     const struct p2p_counts *start,
			     char *buf, size_t size)
{
	struct p2p_counts_wait w = { .src = src, .start = start };
	const struct p2p_counts *c = &w.now;

	buf[0] = '\0';
	if (wait_for_value(p2p_counts_at_start, &w, 1))
		return buf;
	snprintf(buf, size,
		 "objects %ld/%ld maps %ld/%ld live p2p %ld/%ld vram %" PRIu64 "/%" PRIu64 " devmem %" PRIu64 "/%" PRIu64 " dma-buf attachments %" PRIu64 "/%" PRIu64 " mrs %ld/%ld mirrored pages p2p %ld/%ld system %ld/%ld (now/start)",
		 c->objects, start->objects, c->maps, start->maps,
		 c->live_p2p, start->live_p2p, c->vram_used, start->vram_used,
		 c->devmem_used, start->devmem_used, c->dmabuf_attachments,
		 start->dmabuf_attachments, c->nr_mrs, start->nr_mrs,
		 c->cur_pages_p2p, start->cur_pages_p2p, c->cur_pages_system,
		 start->cur_pages_system);
	return buf;
}
