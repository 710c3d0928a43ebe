// SPDX-License-Identifier: MIT
/*
 * Minimal igt-gpu-tools compatible test core, see igt_core.h.
 * Control flow, messages and exit codes follow IGT's lib/igt_core.c.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <assert.h>
#include <ctype.h>
#include <signal.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>

#include "igt_core.h"
#include "igt_kmsg.h"

sigjmp_buf igt_subtest_jmpbuf;
enum igt_log_level igt_log_level = IGT_LOG_INFO;

static const char *command_str;
static bool list_subtests, plain_output;
static char *run_single_subtest;
static bool run_single_subtest_found;
static const char *in_subtest;
static bool in_fixture, test_child;
static enum { CONT = 0, SKIP, FAIL } skip_subtests_henceforth;
static bool skipped_one, succeeded_one, failed_one;
static int igt_exitcode = IGT_EXIT_SUCCESS;
static struct timespec subtest_time;
static pid_t *test_children;
static int num_test_children, test_children_sz;
/* Stored for the IGT API, not printed: --describe is not implemented. */
static char current_description[1024];

/* Log lines of the current subtest, dumped to stderr when it fails. */
static char *log_buffer[256];
static uint8_t log_start, log_end;

static void internal_assert(bool cond, const char *msg)
{
	if (cond)
		return;
	fprintf(stderr, "%splease refer to lib/igt_core documentation\n", msg);
	abort();
}

static double elapsed(const struct timespec *then)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - then->tv_sec) +
	       (now.tv_nsec - then->tv_nsec) * 1e-9;
}

static void log_buffer_append(char *line)
{
	free(log_buffer[log_end]);
	log_buffer[log_end++] = line;
	if (log_end == log_start)
		log_start++;
}

static void log_buffer_dump(void)
{
	uint8_t i = log_start;

	if (in_subtest)
		fprintf(stderr, "Subtest %s failed.\n", in_subtest);
	else
		fprintf(stderr, "Test %s failed.\n", command_str);
	if (log_start == log_end) {
		fprintf(stderr, "No log.\n");
		return;
	}
	fprintf(stderr, "**** DEBUG ****\n");
	do
		fputs(log_buffer[i++], stderr);
	while (i != log_start && i != log_end);
	fprintf(stderr, "****  END  ****\n");
	log_start = log_end = 0;
}

void igt_vlog(const char *domain, enum igt_log_level level,
	      const char *format, va_list args)
{
	static const char *const level_str[] = {
		"DEBUG", "INFO", "WARNING", "CRITICAL", "NONE"
	};
	static bool line_continuation;
	char *line, *formatted = NULL;
	FILE *file;
	int len;

	if (igt_only_list_subtests() && level <= IGT_LOG_WARN)
		return;
	len = vasprintf(&line, format, args);
	if (len < 0)
		return;
	if (line_continuation)
		formatted = strdup(line);
	else if (asprintf(&formatted, "(%s:%d) %s%s%s: %s",
			  program_invocation_short_name, getpid(),
			  domain ?: "", domain ? "-" : "", level_str[level],
			  line) < 0)
		formatted = NULL;
	line_continuation = len && line[len - 1] != '\n';
	if (formatted)
		log_buffer_append(formatted);

	if (igt_log_level <= level) {
		/* Only info goes to stdout undecorated, like IGT. */
		file = level >= IGT_LOG_WARN ? stderr : stdout;
		if (file == stderr)
			fflush(stdout);
		fputs(level == IGT_LOG_INFO || !formatted ? line : formatted,
		      file);
		fflush(file);
	}
	free(line);
}

void igt_log(const char *domain, enum igt_log_level level,
	     const char *format, ...)
{
	va_list args;

	va_start(args, format);
	igt_vlog(domain, level, format, args);
	va_end(args);
}

static void print_usage(FILE *f, const char *help_str)
{
	fprintf(f, "Usage: %s [OPTIONS]\n"
		"  --list-subtests\n"
		"  --run-subtest <pattern>\n"
		"  --debug[=log-domain]\n"
		"  --help|-h\n", command_str);
	if (help_str)
		fprintf(f, "%s\n", help_str);
}

int igt_subtest_init_parse_opts(int *argc, char **argv,
				const char *extra_short_opts,
				const struct option *extra_long_opts,
				const char *help_str,
				igt_opt_handler_t extra_opt_handler,
				void *handler_data)
{
	enum { OPT_LIST = 500, OPT_RUN, OPT_DEBUG };
	static const struct option opts[] = {
		{ "list-subtests", no_argument, NULL, OPT_LIST },
		{ "run-subtest", required_argument, NULL, OPT_RUN },
		{ "debug", optional_argument, NULL, OPT_DEBUG },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *env = getenv("IGT_LOG_LEVEL");
	struct utsname uts;
	int c, i, seed;

	(void)handler_data;
	internal_assert(!extra_short_opts && !extra_long_opts &&
			!extra_opt_handler,
			"extra options are not supported by this subset\n");

	command_str = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1
					    : argv[0];
	plain_output = !isatty(STDOUT_FILENO) || getenv("IGT_PLAIN_OUTPUT");
	if (env && !strcmp(env, "debug"))
		igt_log_level = IGT_LOG_DEBUG;
	else if (env && !strcmp(env, "warn"))
		igt_log_level = IGT_LOG_WARN;
	else if (env && !strcmp(env, "none"))
		igt_log_level = IGT_LOG_NONE;

	igt_kmsg_watch_init();

	while ((c = getopt_long(*argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_LIST:
			/* First of --list-subtests/--run-subtest wins. */
			if (!run_single_subtest)
				list_subtests = true;
			break;
		case OPT_RUN:
			if (!list_subtests)
				run_single_subtest = strdup(optarg);
			break;
		case OPT_DEBUG:
			igt_log_level = IGT_LOG_DEBUG;
			break;
		case 'h':
			print_usage(stdout, help_str);
			exit(IGT_EXIT_SUCCESS);
		default:
			print_usage(stderr, help_str);
			exit(IGT_EXIT_INVALID);
		}
	}

	if (!igt_only_list_subtests()) {
		uname(&uts);
		igt_info("IGT-Version: 1.28-subset (%s) (%s: %s %s)\n",
			 uts.machine, uts.sysname, uts.release, uts.machine);
		env = getenv("IGT_SRANDOM");
		seed = env ? atoi(env) : time(NULL);
		srandom(seed);
		igt_info("Using IGT_SRANDOM=%d for randomisation\n", seed);
	}
	/* isatty() may have left ENOTTY behind for "Last errno:". */
	errno = 0;

	for (i = 0; optind + i < *argc; i++)
		argv[i + 1] = argv[optind + i];
	*argc = *argc - optind + 1;
	return 0;
}

const char *igt_test_name(void)
{
	return command_str;
}

const char *igt_subtest_name(void)
{
	return in_subtest;
}

bool igt_only_list_subtests(void)
{
	return list_subtests;
}

bool igt_can_fail(void)
{
	return in_fixture || in_subtest;
}

void igt_describe_f(const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	vsnprintf(current_description, sizeof(current_description), fmt,
		  args);
	va_end(args);
}

bool __igt_fixture(void)
{
	internal_assert(!in_fixture && !in_subtest,
			"igt_fixture cannot be nested\n");
	if (igt_only_list_subtests() || skip_subtests_henceforth)
		return false;
	in_fixture = true;
	return true;
}

void __igt_fixture_complete(void)
{
	in_fixture = false;
}

void __igt_fixture_end(void)
{
	assert(in_fixture);
	in_fixture = false;
	siglongjmp(igt_subtest_jmpbuf, 1);
}

void __igt_subtest_group_save(int *save, int *desc)
{
	current_description[0] = '\0';
	*desc = 0;
	*save = skip_subtests_henceforth;
}

void __igt_subtest_group_restore(int save, int desc)
{
	(void)desc;
	skip_subtests_henceforth = save;
}

/* uwildmat subset: comma separated globs, '!' negates, last match wins. */
static bool glob_match(const char *s, const char *p, size_t plen)
{
	if (!plen)
		return !*s;
	if (*p == '*') {
		do {
			if (glob_match(s, p + 1, plen - 1))
				return true;
		} while (*s++);
		return false;
	}
	if (!*s || (*p != '?' && *p != *s))
		return false;
	return glob_match(s + 1, p + 1, plen - 1);
}

static bool subtest_selected(const char *name, const char *pats)
{
	bool match = false;

	while (*pats) {
		const char *end = strchrnul(pats, ',');
		bool neg = *pats == '!';

		if (glob_match(name, pats + neg, end - pats - neg))
			match = !neg;
		pats = *end ? end + 1 : end;
	}
	return match;
}

static void result_message(const char *name, const char *result, double t)
{
	printf("%sSubtest %s: %s (%.3fs)%s\n", plain_output ? "" : "\x1b[1m",
	       name, result, t, plain_output ? "" : "\x1b[0m");
	fflush(stdout);
}

bool __igt_run_subtest(const char *name, const char *file, int line)
{
	int i;

	(void)file, (void)line;	/* only used by IGT's --describe */
	internal_assert(!igt_can_fail(), "igt_subtest can be nested only in "
			"igt_main or igt_subtest_group\n");
	for (i = 0; name[i]; i++) {
		if (name[i] != '_' && name[i] != '-' && !isalnum(name[i])) {
			igt_critical("Invalid subtest name \"%s\".\n", name);
			igt_exit();
		}
	}

	if (run_single_subtest) {
		if (!subtest_selected(name, run_single_subtest))
			return false;
		run_single_subtest_found = true;
	}
	current_description[0] = '\0';
	if (list_subtests) {
		printf("%s\n", name);
		return false;
	}
	if (skip_subtests_henceforth) {
		result_message(name, skip_subtests_henceforth == SKIP ?
			       "SKIP" : "FAIL", 0.0);
		return false;
	}

	igt_info("Starting subtest: %s\n", name);
	log_start = log_end = 0;
	clock_gettime(CLOCK_MONOTONIC, &subtest_time);
	in_subtest = name;
	return true;
}

static void mark_failed(int exitcode)
{
	if (!failed_one)
		igt_exitcode = exitcode;
	failed_one = true;
}

static void kill_children(void)
{
	for (int c = 0; c < num_test_children; c++) {
		kill(test_children[c], SIGKILL);
		waitpid(test_children[c], NULL, 0);
	}
	num_test_children = 0;
}

/* Our runner's per-subtest check, see IGT_SUBTEST_HOOK in igt_core.h. */
static bool hook_failed(const char *name)
{
	const char *hook = getenv("IGT_SUBTEST_HOOK");
	char *cmd, *p;
	int status;

	if (!hook || !*hook)
		return false;
	/* Quote the path for sh; subtest names are [A-Za-z0-9_-] only. */
	cmd = malloc(4 * strlen(hook) + strlen(name) + 4);
	if (!cmd)
		return true;
	p = cmd;
	*p++ = '\'';
	for (; *hook; hook++) {
		if (*hook == '\'')
			p = stpcpy(p, "'\\'");
		*p++ = *hook;
	}
	sprintf(p, "' %s", name);
	fflush(NULL);
	status = system(cmd);
	free(cmd);
	if (status == 0)
		return false;
	igt_critical("Subtest %s: (hook reported failure), %s status %d\n",
		     name, getenv("IGT_SUBTEST_HOOK"),
		     status == -1 ? -1 : WIFEXITED(status) ?
		     WEXITSTATUS(status) : 128 + WTERMSIG(status));
	return true;
}

static __noreturn void exit_subtest(const char *result)
{
	const char *name = in_subtest;
	double t = elapsed(&subtest_time);

	/* An aborted subtest may have left children behind. */
	kill_children();
	if ((igt_kmsg_splat(name) | hook_failed(name)) &&
	    strcmp(result, "FAIL")) {
		result = "FAIL";
		mark_failed(IGT_EXIT_FAILURE);
	}
	result_message(name, result, t);
	in_subtest = NULL;
	siglongjmp(igt_subtest_jmpbuf, 1);
}

void igt_skip(const char *f, ...)
{
	va_list args;

	skipped_one = true;
	internal_assert(!test_child, "skips are not allowed in forks\n");
	if (!igt_only_list_subtests()) {
		va_start(args, f);
		vprintf(f, args);
		va_end(args);
	}
	if (in_subtest)
		exit_subtest("SKIP");
	internal_assert(in_fixture, "skipping is allowed only in fixtures "
			"or subtests\n");
	skip_subtests_henceforth = SKIP;
	__igt_fixture_end();
}

void __igt_skip_check(const char *file, int line, const char *func,
		      const char *check, const char *f, ...)
{
	static char *buf;
	char err_str[128] = "";
	va_list args;

	if (errno)
		snprintf(err_str, sizeof(err_str), "Last errno: %i, %s\n",
			 errno, strerror(errno));
	/* igt_skip never returns, so free the previous message here. */
	free(buf);
	buf = NULL;
	if (f) {
		va_start(args, f);
		if (vasprintf(&buf, f, args) < 0)
			buf = NULL;
		va_end(args);
	}
	igt_skip("Test requirement not met in function %s, file %s:%i:\n"
		 "Test requirement: %s\n%s%s", func, file, line, check,
		 buf ?: "", err_str);
}

void igt_success(void)
{
	succeeded_one = true;
	if (in_subtest)
		exit_subtest("SUCCESS");
}

void igt_fail(int exitcode)
{
	assert(exitcode != IGT_EXIT_SUCCESS && exitcode != IGT_EXIT_SKIP);
	mark_failed(exitcode);
	/* Silent exit, the parent does the yelling in igt_waitchildren. */
	if (test_child)
		exit(exitcode);
	log_buffer_dump();
	if (in_subtest)
		exit_subtest("FAIL");
	internal_assert(igt_can_fail(), "failing test is only allowed in "
			"fixtures and subtests\n");
	skip_subtests_henceforth = FAIL;
	__igt_fixture_end();
}

void __igt_fail_assert(const char *domain, const char *file, int line,
		       const char *func, const char *assertion,
		       const char *f, ...)
{
	int err = errno;
	va_list args;

	igt_log(domain, IGT_LOG_CRITICAL,
		"Test assertion failure function %s, file %s:%i:\n",
		func, file, line);
	igt_log(domain, IGT_LOG_CRITICAL, "Failed assertion: %s\n",
		assertion);
	if (err)
		igt_log(domain, IGT_LOG_CRITICAL, "Last errno: %i, %s\n", err,
			strerror(err));
	if (f) {
		va_start(args, f);
		igt_vlog(domain, IGT_LOG_CRITICAL, f, args);
		va_end(args);
	}
	igt_fail(IGT_EXIT_FAILURE);
}

void igt_exit(void)
{
	if (run_single_subtest && !run_single_subtest_found) {
		igt_critical("Unknown subtest: %s\n", run_single_subtest);
		exit(IGT_EXIT_INVALID);
	}
	if (igt_only_list_subtests())
		exit(IGT_EXIT_SUCCESS);
	/* IGT asserts here when nothing ran; report that as a skip. */
	if (!failed_one)
		igt_exitcode = succeeded_one ? IGT_EXIT_SUCCESS : IGT_EXIT_SKIP;
	igt_debug("Exiting with status code %d\n", igt_exitcode);
	kill_children();
	exit(igt_exitcode);
}

bool __igt_fork(void)
{
	pid_t pid;

	internal_assert(in_subtest, "forking is only allowed in subtests\n");
	internal_assert(!test_child, "forking is not allowed from already "
			"forked children\n");
	if (num_test_children >= test_children_sz) {
		test_children_sz = test_children_sz ? 2 * test_children_sz : 4;
		test_children = realloc(test_children,
					test_children_sz * sizeof(pid_t));
		igt_assert(test_children);
	}
	/* Unflushed stdio would be printed twice, by parent and child. */
	fflush(NULL);
	pid = fork();
	igt_assert(pid != -1);
	if (pid == 0) {
		test_child = true;
		num_test_children = 0;
		return true;
	}
	test_children[num_test_children++] = pid;
	return false;
}

int __igt_waitchildren(void)
{
	int err = 0, count = 0;

	assert(!test_child);
	while (count < num_test_children) {
		int status = -1, c;
		pid_t pid = wait(&status);

		if (pid == -1) {
			if (errno == EINTR)
				continue;
			printf("wait(num_children:%d) failed with %m\n",
			       num_test_children - count);
			return IGT_EXIT_FAILURE;
		}
		for (c = 0; c < num_test_children; c++)
			if (pid == test_children[c])
				break;
		if (c == num_test_children)
			continue;

		if (err == 0 && status != 0) {
			if (WIFEXITED(status)) {
				printf("child %i failed with exit status %i\n",
				       c, WEXITSTATUS(status));
				err = WEXITSTATUS(status);
			} else if (WIFSIGNALED(status)) {
				printf("child %i died with signal %i, %s\n",
				       c, WTERMSIG(status),
				       strsignal(WTERMSIG(status)));
				err = 128 + WTERMSIG(status);
			} else {
				printf("Unhandled failure [%d] in child %i\n",
				       status, c);
				err = 256;
			}
			for (c = 0; c < num_test_children; c++)
				kill(test_children[c], SIGKILL);
		}
		count++;
	}
	num_test_children = 0;
	return err;
}

void igt_waitchildren(void)
{
	int err = __igt_waitchildren();

	if (err)
		igt_fail(err);
}
