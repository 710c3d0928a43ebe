/* SPDX-License-Identifier: MIT */
/*
 * Declarations of the part of IGT's lib/igt_core.h (igt-gpu-tools 1.27.1)
 * that the vgem-p2p tests use. The code is Debian's libigt.so.0
 * (package intel-gpu-tools), which installs no headers: this file is
 * written for this project from the 1.27.1 API, and declares nothing
 * libigt does not export (igt-tests/lib/check-symbols verifies that).
 *
 * The control-flow macros must expand as IGT's do, since libigt's
 * functions longjmp back into them: they follow IGT's structure.
 * IGT 1.27 spells igt_main, igt_fixture and igt_subtest_group without
 * parentheses (IGT 2.x added "()"); so do we.
 */
#ifndef IGT_CORE_H
#define IGT_CORE_H

#include <assert.h>
#include <getopt.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#ifndef IGT_LOG_DOMAIN
#define IGT_LOG_DOMAIN (NULL)
#endif

#define __noreturn __attribute__((noreturn))
#define __maybe_unused __attribute__((unused))

/* Exit codes, as igt_runner reads them. */
#define IGT_EXIT_SUCCESS 0
#define IGT_EXIT_SKIP 77
#define IGT_EXIT_INVALID 79
#define IGT_EXIT_FAILURE 98
#define IGT_EXIT_ABORT 112

/* libigt reads it weakly: a test without a description still links. */
extern const char *__igt_test_description __attribute__((weak));
#define IGT_TEST_DESCRIPTION(str) const char *__igt_test_description = str

/* Unique identifiers for the macros' loop variables, per source line. */
#define __igt_tokencat2(x, y) x ## y
#define igt_tokencat(x, y) __igt_tokencat2(x, y)
#define igt_unique(prefix) \
	igt_tokencat(igt_tokencat(__igt_unique__, prefix), __LINE__)

/*
 * Where igt_skip(), igt_fail() and igt_success() jump to: the
 * sigsetjmp() in the condition of the current subtest or fixture loop.
 */
extern jmp_buf igt_subtest_jmpbuf;

typedef int (*igt_opt_handler_t)(int opt, int opt_index, void *data);
#define IGT_OPT_HANDLER_SUCCESS 0
#define IGT_OPT_HANDLER_ERROR -2
int igt_subtest_init_parse_opts(int *argc, char **argv,
				const char *extra_short_opts,
				const struct option *extra_long_opts,
				const char *help_str,
				igt_opt_handler_t extra_opt_handler,
				void *handler_data);
/* IGT's own definition ends in ';': a main() of our own may use it too. */
#define igt_subtest_init(argc, argv) \
	igt_subtest_init_parse_opts(&argc, argv, NULL, NULL, NULL, NULL, NULL);

bool __igt_fixture(void);
void __igt_fixture_complete(void);
__noreturn void __igt_fixture_end(void);
bool __igt_run_subtest(const char *subtest_name, const char *file,
		       const int line);
void __igt_subtest_group_save(int *save, int *desc);
void __igt_subtest_group_restore(int save, int desc);

/* The body runs once, unless only listing or an earlier fixture bailed. */
#define igt_fixture \
	for (volatile int igt_unique(__tmpint) = 0; \
	     igt_unique(__tmpint) < 1 && __igt_fixture() && \
	     (sigsetjmp(igt_subtest_jmpbuf, 1) == 0); \
	     igt_unique(__tmpint)++, __igt_fixture_complete())

/* A skip or failure longjmps into the condition, which ends the loop. */
#define igt_subtest(name) \
	for (; __igt_run_subtest((name), __FILE__, __LINE__) && \
	       (sigsetjmp(igt_subtest_jmpbuf, 1) == 0); \
	     igt_success())
#define __igt_subtest_f(tmp, ...) \
	for (char tmp[256]; \
	     snprintf(tmp, sizeof(tmp), __VA_ARGS__), \
	     __igt_run_subtest(tmp, __FILE__, __LINE__) && \
	     (sigsetjmp(igt_subtest_jmpbuf, 1) == 0); \
	     igt_success())
#define igt_subtest_f(...) __igt_subtest_f(igt_unique(__tmpchar), __VA_ARGS__)

extern jmp_buf igt_dynamic_jmpbuf;
bool __igt_enter_dynamic_container(void);
bool __igt_run_dynamic_subtest(const char *dynamic_subtest_name);

#define igt_subtest_with_dynamic(name) \
	for (; __igt_run_subtest((name), __FILE__, __LINE__) && \
	       __igt_enter_dynamic_container() && \
	       (sigsetjmp(igt_subtest_jmpbuf, 1) == 0); \
	     igt_success())
#define igt_dynamic(name) \
	for (; __igt_run_dynamic_subtest((name)) && \
	       (sigsetjmp(igt_dynamic_jmpbuf, 1) == 0); \
	     igt_success())

/* A fixture's skip or failure inside the group only affects the group. */
#define igt_subtest_group \
	for (int igt_unique(__tmpint) = 0, igt_unique(__save) = 0, \
	     igt_unique(__desc) = 0; \
	     igt_unique(__tmpint) < 1 && \
	     (__igt_subtest_group_save(&igt_unique(__save), \
				       &igt_unique(__desc)), true); \
	     igt_unique(__tmpint)++, \
	     __igt_subtest_group_restore(igt_unique(__save), \
					 igt_unique(__desc)))

#define igt_main_args(short_opts, long_opts, help_str, handler, data) \
	static void igt_unique(__real_main)(void); \
	int main(int argc, char **argv) \
	{ \
		igt_subtest_init_parse_opts(&argc, argv, short_opts, \
					    long_opts, help_str, handler, \
					    data); \
		igt_unique(__real_main)(); \
		igt_exit(); \
	} \
	static void igt_unique(__real_main)(void)
#define igt_main igt_main_args(NULL, NULL, NULL, NULL, NULL)

const char *igt_test_name(void);
const char *igt_subtest_name(void);
bool igt_only_list_subtests(void);
bool igt_can_fail(void);

__attribute__((format(printf, 1, 2)))
void igt_describe_f(const char *fmt, ...);
#define igt_describe(dsc) igt_describe_f("%s", dsc)

__noreturn __attribute__((format(printf, 1, 2)))
void igt_skip(const char *f, ...);
__noreturn __attribute__((format(printf, 5, 6)))
void __igt_skip_check(const char *file, const int line, const char *func,
		      const char *check, const char *format, ...);
#define igt_skip_check(E, ...) \
	__igt_skip_check(__FILE__, __LINE__, __func__, E, __VA_ARGS__)
void igt_success(void);
__noreturn void igt_fail(int exitcode);
__noreturn __attribute__((format(printf, 6, 7)))
void __igt_fail_assert(const char *domain, const char *file, const int line,
		       const char *func, const char *assertion,
		       const char *format, ...);
__noreturn void igt_exit(void);

#define igt_assert(expr) do { \
	if (!(expr)) \
		__igt_fail_assert(IGT_LOG_DOMAIN, __FILE__, __LINE__, \
				  __func__, #expr, NULL); \
} while (0)
#define igt_assert_f(expr, ...) do { \
	if (!(expr)) \
		__igt_fail_assert(IGT_LOG_DOMAIN, __FILE__, __LINE__, \
				  __func__, #expr, __VA_ARGS__); \
} while (0)
#define igt_fail_on(expr) igt_assert(!(expr))
#define igt_fail_on_f(expr, ...) igt_assert_f(!(expr), __VA_ARGS__)

/*
 * The comparisons: @cmp is the operator, @ncmp its negation, printed
 * when it does not hold ("error: 1 != 2"). Types and formats as IGT's.
 */
#define igt_assert_cmpint(n1, cmp, ncmp, n2) do { \
	int __n1 = (n1), __n2 = (n2); \
	if (__n1 cmp __n2) \
		; \
	else \
		__igt_fail_assert(IGT_LOG_DOMAIN, __FILE__, __LINE__, \
				  __func__, #n1 " " #cmp " " #n2, \
				  "error: %d " #ncmp " %d\n", __n1, __n2); \
} while (0)
#define igt_assert_cmpuint(n1, cmp, ncmp, n2) do { \
	uint32_t __n1 = (n1), __n2 = (n2); \
	if (__n1 cmp __n2) \
		; \
	else \
		__igt_fail_assert(IGT_LOG_DOMAIN, __FILE__, __LINE__, \
				  __func__, #n1 " " #cmp " " #n2, \
				  "error: %#x " #ncmp " %#x\n", __n1, __n2); \
} while (0)
#define igt_assert_cmpu64(n1, cmp, ncmp, n2) do { \
	uint64_t __n1 = (n1), __n2 = (n2); \
	if (__n1 cmp __n2) \
		; \
	else \
		__igt_fail_assert(IGT_LOG_DOMAIN, __FILE__, __LINE__, \
				  __func__, #n1 " " #cmp " " #n2, \
				  "error: %#llx " #ncmp " %#llx\n", \
				  (long long)__n1, (long long)__n2); \
} while (0)
#define igt_assert_cmps64(n1, cmp, ncmp, n2) do { \
	int64_t __n1 = (n1), __n2 = (n2); \
	if (__n1 cmp __n2) \
		; \
	else \
		__igt_fail_assert(IGT_LOG_DOMAIN, __FILE__, __LINE__, \
				  __func__, #n1 " " #cmp " " #n2, \
				  "error: %lld " #ncmp " %lld\n", \
				  (long long)__n1, (long long)__n2); \
} while (0)

#define igt_assert_eq(n1, n2) igt_assert_cmpint(n1, ==, !=, n2)
#define igt_assert_neq(n1, n2) igt_assert_cmpint(n1, !=, ==, n2)
#define igt_assert_lt(n1, n2) igt_assert_cmpint(n1, <, >=, n2)
#define igt_assert_lte(n1, n2) igt_assert_cmpint(n1, <=, >, n2)
#define igt_assert_eq_u32(n1, n2) igt_assert_cmpuint(n1, ==, !=, n2)
#define igt_assert_neq_u32(n1, n2) igt_assert_cmpuint(n1, !=, ==, n2)
#define igt_assert_eq_u64(n1, n2) igt_assert_cmpu64(n1, ==, !=, n2)
#define igt_assert_neq_u64(n1, n2) igt_assert_cmpu64(n1, !=, ==, n2)
#define igt_assert_lt_u64(n1, n2) igt_assert_cmpu64(n1, <, >=, n2)
#define igt_assert_lte_u64(n1, n2) igt_assert_cmpu64(n1, <=, >, n2)
#define igt_assert_eq_s64(n1, n2) igt_assert_cmps64(n1, ==, !=, n2)
/* Ends in ';' in IGT: "if (x) igt_assert_fd(fd); else" breaks there too. */
#define igt_assert_fd(fd) \
	igt_assert_f(fd >= 0, "file descriptor " #fd " failed\n");

#define igt_require(expr) do { \
	if (!(expr)) \
		igt_skip_check(#expr, NULL); \
	else \
		igt_debug("Test requirement passed: %s\n", #expr); \
} while (0)
#define igt_require_f(expr, ...) do { \
	if (!(expr)) \
		igt_skip_check(#expr, __VA_ARGS__); \
	else \
		igt_debug("Test requirement passed: %s\n", #expr); \
} while (0)
#define igt_skip_on(expr) do { \
	if ((expr)) \
		igt_skip_check("!(" #expr ")", NULL); \
	else \
		igt_debug("Test requirement passed: !(%s)\n", #expr); \
} while (0)
#define igt_skip_on_f(expr, ...) do { \
	if ((expr)) \
		igt_skip_check("!(" #expr ")", __VA_ARGS__); \
	else \
		igt_debug("Test requirement passed: !(%s)\n", #expr); \
} while (0)

/* Children may assert; the first one failing fails the subtest. */
bool __igt_fork(void);
#define igt_fork(child, num_children) \
	for (int child = 0; child < (num_children); child++) \
		for (; __igt_fork(); exit(0))
int __igt_waitchildren(void);
void igt_waitchildren(void);
void igt_kill_children(int signal);

/*
 * Run at the process's exit, and on a fatal signal where possible (IGT:
 * "reliable atexit helpers"); SIG is the signal, 0 at a normal exit.
 */
typedef void (*igt_exit_handler_t)(int sig);
void igt_install_exit_handler(igt_exit_handler_t fn);

enum igt_log_level {
	IGT_LOG_DEBUG,
	IGT_LOG_INFO,
	IGT_LOG_WARN,
	IGT_LOG_CRITICAL,
	IGT_LOG_NONE,
};
extern enum igt_log_level igt_log_level;

__attribute__((format(printf, 3, 4)))
void igt_log(const char *domain, enum igt_log_level level,
	     const char *format, ...);
__attribute__((format(printf, 3, 0)))
void igt_vlog(const char *domain, enum igt_log_level level,
	      const char *format, va_list args);
#define igt_debug(...) igt_log(IGT_LOG_DOMAIN, IGT_LOG_DEBUG, __VA_ARGS__)
#define igt_info(...) igt_log(IGT_LOG_DOMAIN, IGT_LOG_INFO, __VA_ARGS__)
#define igt_warn(...) igt_log(IGT_LOG_DOMAIN, IGT_LOG_WARN, __VA_ARGS__)
#define igt_critical(...) \
	igt_log(IGT_LOG_DOMAIN, IGT_LOG_CRITICAL, __VA_ARGS__)

/*
 * Writes one record to /dev/kmsg. libigt itself writes
 * "[IGT] <binary>: executing", "starting subtest <name>" and
 * "exiting, ret=<code>" there, which is what the runners split a kernel
 * log by.
 */
__attribute__((format(printf, 1, 2)))
void igt_kmsg(const char *format, ...);
#define KMSG_WARNING "<4>[IGT] "
#define KMSG_INFO "<6>[IGT] "
#define KMSG_DEBUG "<7>[IGT] "

#endif /* IGT_CORE_H */
