// SPDX-License-Identifier: MIT
/*
 * See out.h. The nesting state is a small stack: whether the current
 * container is an array (its members have no keys) and, for JSON, the
 * json-c container that takes the members.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

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
/*
 * JSON: json-c builds the document, printed whole by out_end(), so stdout
 * holds either one complete document or, after an error, nothing.
 * Text: printed as it comes (it is not JSON, so json-c has nothing to do
 * there), so that a long workload's results show before it ends; a line
 * per value, "- " for array members.
 */
static struct {
	struct json_object *obj;	/* JSON: the container */
	bool array;
} stack[MAX_NEST];
static int depth;

/* Text: indentation and key (or "- "). */
static void text_member(const char *key)
{
	int i;

	for (i = 0; i < depth; i++)
		fputs("  ", stdout);
	if (stack[depth].array)
		fputs("- ", stdout);
	else
		printf("%s: ", key);
}

/*
 * JSON: the finished document, kept for out_finish(), and the first error
 * (message and errno, 0 for none) to put in it.
 */
static struct json_object *json_doc;
static char err_msg[512];
static int err_errno;
static bool err_set;

/* JSON: @val (owned by the tree from now on) into the current container. */
static void json_member(const char *key, struct json_object *val)
{
	if (stack[depth].array)
		json_object_array_add(stack[depth].obj, val);
	else
		json_object_object_add(stack[depth].obj, key, val);
}

void out_begin(void)
{
	depth = 0;
	stack[0].array = false;
	stack[0].obj = out_json ? json_object_new_object() : NULL;
}

/* JSON: the document is printed by out_finish(), with any error in it */
void out_end(void)
{
	while (depth > 0)
		out_close();
	if (out_json && stack[0].obj && !json_doc) {
		json_doc = stack[0].obj;
		stack[0].obj = NULL;
	}
	fflush(stdout);
}

int out_finish(int status)
{
	struct json_object *doc;

	if (!out_json)
		return status;
	out_end();
	if (status && !err_set) {
		snprintf(err_msg, sizeof(err_msg), "exit status %d", status);
		err_errno = 0;
		err_set = true;
	}
	if (!json_doc && !err_set)
		return status;
	doc = json_doc ?: json_object_new_object();
	if (err_set) {
		json_object_object_add(doc, "error",
				       json_object_new_string(err_msg));
		json_object_object_add(doc, "errno", err_errno ?
				       json_object_new_int(err_errno) : NULL);
		json_object_object_add(doc, "exit",
				       json_object_new_int(status));
	}
	puts(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY |
		JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(doc);
	json_doc = NULL;
	fflush(stdout);
	return status;
}

static void open_container(const char *key, bool array)
{
	struct json_object *obj = NULL;

	if (out_json) {
		obj = array ? json_object_new_array() :
			      json_object_new_object();
		json_member(key, obj);
	} else {
		text_member(key);
		putchar('\n');
	}
	if (depth + 1 < MAX_NEST)
		depth++;
	stack[depth].array = array;
	stack[depth].obj = obj;
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
	if (depth)
		depth--;
}

void out_u64(const char *key, uint64_t val)
{
	if (out_json) {
		json_member(key, json_object_new_uint64(val));
		return;
	}
	text_member(key);
	printf("%llu\n", (unsigned long long)val);
}

void out_i64(const char *key, int64_t val)
{
	if (out_json) {
		json_member(key, json_object_new_int64(val));
		return;
	}
	text_member(key);
	printf("%lld\n", (long long)val);
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
	if (out_json) {
		json_member(key, json_object_new_string(val));
		return;
	}
	text_member(key);
	printf("%s\n", val);
}

void out_bool(const char *key, bool val)
{
	if (out_json) {
		json_member(key, json_object_new_boolean(val));
		return;
	}
	text_member(key);
	printf("%s\n", val ? "true" : "false");
}

/* Keep the first error for the JSON document; @err is an errno or 0. */
static void record(int err, const char *msg)
{
	size_t n;

	if (err_set)
		return;
	n = out_cmd ? (size_t)snprintf(err_msg, sizeof(err_msg), "%s: ",
				       out_cmd) : 0;
	if (n >= sizeof(err_msg))
		n = 0;
	snprintf(err_msg + n, sizeof(err_msg) - n, "%s", msg);
	err_errno = err;
	err_set = true;
}

int out_err(int err, const char *fmt, ...)
{
	char msg[sizeof(err_msg)];
	va_list ap;
	size_t n;

	if (err < 0)
		err = -err;
	progress_done();
	fflush(stdout);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	n = strlen(msg);
	if (err)
		snprintf(msg + n, sizeof(msg) - n, ": %s", strerror(err));
	out_prefix();
	fprintf(stderr, "%s\n", msg);
	record(err, msg);
	return 1;
}

int out_usage(const char *fmt, ...)
{
	char msg[sizeof(err_msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	out_prefix();
	fprintf(stderr, "%s (see 'vgem-p2p%s%s --help')\n", msg,
		out_cmd ? " " : "", out_cmd ?: "");
	record(EINVAL, msg);
	return 2;
}

int out_badopt(int opt, char **argv)
{
	const char *arg = argv[optind - 1];
	size_t len = strcspn(arg, "=");

	/* a short option inside a cluster ("-xq"): name the letter */
	if (optopt && arg[0] == '-' && arg[1] != '-')
		return out_usage(opt == ':' ?
				 "option '-%c' requires an argument" :
				 "unknown option '-%c'", optopt);
	if (opt == ':')
		return out_usage("option '%.*s' requires an argument",
				 (int)len, arg);
	if (opt == '?')
		return out_usage("unknown option '%.*s'", (int)len, arg);
	/* an option getopt knows that this command does not handle */
	return out_usage("option '%.*s' does not apply here", (int)len, arg);
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
