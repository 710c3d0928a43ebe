// SPDX-License-Identifier: MIT
/*
 * The in-process form of IGT_SUBTEST_HOOK's use in our runner: with
 * IGT_KMSG_PATTERNS naming a file of extended regular expressions, one
 * per line, every kernel log record printed while a subtest ran is
 * matched against them, and a match fails the subtest. Reading /dev/kmsg
 * here costs nothing next to running a hook script after each subtest,
 * which took seconds a subtest on a TCG guest with a debug kernel.
 */
#include <fcntl.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "igt_core.h"
#include "igt_kmsg.h"

#define MAX_PATTERNS 64

static regex_t patterns[MAX_PATTERNS];
static int nr_patterns;
static int kmsg_fd = -1;

void igt_kmsg_watch_init(void)
{
	const char *path = getenv("IGT_KMSG_PATTERNS");
	char line[256];
	FILE *f;

	if (!path || !*path || kmsg_fd >= 0)
		return;
	f = fopen(path, "r");
	if (!f) {
		igt_warn("IGT_KMSG_PATTERNS: %s: %s\n", path, strerror(errno));
		return;
	}
	while (nr_patterns < MAX_PATTERNS && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!*line)
			continue;
		if (!regcomp(&patterns[nr_patterns], line,
			     REG_EXTENDED | REG_NOSUB))
			nr_patterns++;
		else
			igt_warn("IGT_KMSG_PATTERNS: bad pattern \"%s\"\n",
				 line);
	}
	fclose(f);

	kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (kmsg_fd < 0) {
		igt_warn("/dev/kmsg: %s\n", strerror(errno));
		return;
	}
	/* Only what is printed from now on is ours to judge */
	lseek(kmsg_fd, 0, SEEK_END);
}

bool igt_kmsg_splat(const char *subtest)
{
	char rec[8192];
	bool found = false;

	if (kmsg_fd < 0)
		return false;
	for (;;) {
		ssize_t n = read(kmsg_fd, rec, sizeof(rec) - 1);
		char *msg, *end;
		int i;

		if (n < 0 && errno == EPIPE)	/* records overwritten */
			continue;
		if (n <= 0)
			break;
		rec[n] = 0;
		/* "prio,seq,usec,flags;message\n" then " KEY=value" lines */
		msg = strchr(rec, ';');
		if (!msg)
			continue;
		msg++;
		end = strchr(msg, '\n');
		if (end)
			*end = 0;
		for (i = 0; i < nr_patterns && !found; i++) {
			if (regexec(&patterns[i], msg, 0, NULL, 0))
				continue;
			igt_critical("kernel splat during %s: %s\n", subtest,
				     msg);
			found = true;
		}
	}
	return found;
}
