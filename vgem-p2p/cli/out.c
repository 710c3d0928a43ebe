// SPDX-License-Identifier: MIT
/*
 * See out.h. The nesting state is a small stack: whether the current
 * container is an array (its members have no keys) and whether it has a
 * member yet (JSON needs the comma).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "out.h"

bool out_json;
bool out_progress;
/* The command being run; NULL until one is recognised. */
const char *out_cmd;

/* "vgem-p2p: " or "vgem-p2p: COMMAND: " */
static void out_prefix(void)
{
	if (out_cmd)
		fprintf(stderr, "vgem-p2p: %s: ", out_cmd);
	else
		fputs("vgem-p2p: ", stderr);
}

#define MAX_NEST 8
static struct {
	bool array;
	bool has_member;
} stack[MAX_NEST];
static int depth;

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

/* Starts a member: comma, newline, indentation and key, as needed. */
static void member(const char *key)
{
	int i;

	if (out_json) {
		if (stack[depth].has_member)
			putchar(',');
		putchar('\n');
		for (i = 0; i < depth + 1; i++)
			fputs("  ", stdout);
		if (!stack[depth].array) {
			json_str(key);
			fputs(": ", stdout);
		}
	} else {
		for (i = 0; i < depth; i++)
			fputs("  ", stdout);
		if (stack[depth].array)
			fputs("- ", stdout);
		else
			printf("%s: ", key);
	}
	stack[depth].has_member = true;
}

void out_begin(void)
{
	depth = 0;
	stack[0].array = false;
	stack[0].has_member = false;
	if (out_json)
		putchar('{');
}

void out_end(void)
{
	while (depth > 0)
		out_close();
	if (out_json)
		puts("\n}");
	fflush(stdout);
}

static void open_container(const char *key, bool array)
{
	member(key);
	if (out_json)
		putchar(array ? '[' : '{');
	else
		putchar('\n');
	if (depth + 1 < MAX_NEST)
		depth++;
	stack[depth].array = array;
	stack[depth].has_member = false;
}

void out_obj(const char *key)
{
	open_container(key, false);
}

void out_arr(const char *key)
{
	open_container(key, true);
}

void out_close(void)
{
	int i;

	if (!depth)
		return;
	if (out_json) {
		if (stack[depth].has_member) {
			putchar('\n');
			for (i = 0; i < depth; i++)
				fputs("  ", stdout);
		}
		putchar(stack[depth].array ? ']' : '}');
	}
	depth--;
}

void out_u64(const char *key, uint64_t val)
{
	member(key);
	printf(out_json ? "%llu" : "%llu\n", (unsigned long long)val);
}

void out_i64(const char *key, int64_t val)
{
	member(key);
	printf(out_json ? "%lld" : "%lld\n", (long long)val);
}

/* JSON has no hex: a string there, so that 64-bit addresses survive */
void out_hex(const char *key, uint64_t val)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)val);
	out_str(key, buf);
}

void out_str(const char *key, const char *val)
{
	member(key);
	if (out_json)
		json_str(val);
	else
		printf("%s\n", val);
}

void out_bool(const char *key, bool val)
{
	member(key);
	printf(out_json ? "%s" : "%s\n", val ? "true" : "false");
}

int out_err(int err, const char *fmt, ...)
{
	va_list ap;

	progress_done();
	fflush(stdout);
	out_prefix();
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (err)
		fprintf(stderr, ": %s", strerror(err < 0 ? -err : err));
	fputc('\n', stderr);
	return 1;
}

int out_usage(const char *fmt, ...)
{
	va_list ap;

	out_prefix();
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see 'vgem-p2p%s%s --help')\n", out_cmd ? " " : "",
		out_cmd ?: "");
	return 2;
}

/*
 * On a terminal, one line rewritten in place; with --progress and no
 * terminal (a log), a line at most every second, so logs stay short.
 */
static bool progress_shown;
static time_t progress_last;

void progress(const char *what, uint64_t done, uint64_t total)
{
	bool tty = isatty(STDERR_FILENO);
	time_t now = time(NULL);

	if (!out_progress)
		return;
	if (!tty && now == progress_last && done != total)
		return;
	progress_last = now;
	fprintf(stderr, "%s%s: %s %llu/%llu (%llu%%)%s", tty ? "\r" : "",
		out_cmd ?: "vgem-p2p", what, (unsigned long long)done,
		(unsigned long long)total,
		total ? (unsigned long long)(done * 100 / total) : 100ull,
		tty ? "\033[K" : "\n");
	progress_shown = tty;
}

void progress_done(void)
{
	if (progress_shown)
		fputc('\n', stderr);
	progress_shown = false;
}
