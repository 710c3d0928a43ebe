/* SPDX-License-Identifier: MIT */
/*
 * Minimal igt-gpu-tools compatible test core.
 *
 * Debian bookworm ships no IGT, so this implements the subset of
 * lib/igt_core.h our tests use, with the same macros, control flow
 * (setjmp/longjmp subtests), output lines and exit codes, so a test
 * written here builds unchanged inside IGT's tests/ directory.
 * It mirrors the classic API spelling: igt_main, igt_fixture and
 * igt_subtest_group take no parentheses (IGT 2.x later added "()").
 * Not implemented: dynamic subtests, --describe output, extra command
 * line options, /dev/kmsg markers and crash signal handlers.
 *
 * Deliberate extension (not in IGT): the IGT_SUBTEST_HOOK environment
 * variable. If it names an executable, it is run via system() as
 * "HOOK SUBTEST_NAME" after every subtest that actually ran, before the
 * result line is printed. A non-zero exit turns the result into FAIL
 * and prints "(hook reported failure)" on stderr. The guest runner uses
 * this to fail a subtest during which the kernel printed a splat.
 *
 * A second one, IGT_KMSG_PATTERNS, does the same in process and is what
 * the guest runner uses: it names a file of extended regular expressions,
 * and a kernel log record that matches one while a subtest runs fails the
 * subtest (igt_kmsg.c).
 */
#ifndef IGT_CORE_H
#define IGT_CORE_H

#include <errno.h>
#include <getopt.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef IGT_LOG_DOMAIN
#define IGT_LOG_DOMAIN (NULL)
#endif

#ifndef __noreturn
#define __noreturn __attribute__((noreturn))
#endif

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(arr) (sizeof(arr) / sizeof((arr)[0]))
#endif

#define IGT_EXIT_SUCCESS 0
#define IGT_EXIT_SKIP    77
#define IGT_EXIT_INVALID 79
#define IGT_EXIT_FAILURE 98

/* Weak so that tests without IGT_TEST_DESCRIPTION still link. */
extern const char *__igt_test_description __attribute__((weak));
#define IGT_TEST_DESCRIPTION(str) const char *__igt_test_description = str

#define __igt_tokencat2(x, y) x ## y
#define igt_tokencat(x, y) __igt_tokencat2(x, y)
#define igt_unique(prefix) \
	igt_tokencat(igt_tokencat(__igt_unique__, prefix), __LINE__)

extern sigjmp_buf igt_subtest_jmpbuf;

typedef int (*igt_opt_handler_t)(int opt, int opt_index, void *data);
int igt_subtest_init_parse_opts(int *argc, char **argv,
				const char *extra_short_opts,
				const struct option *extra_long_opts,
				const char *help_str,
				igt_opt_handler_t extra_opt_handler,
				void *handler_data);
#define igt_subtest_init(argc, argv) \
	igt_subtest_init_parse_opts(&(argc), argv, NULL, NULL, NULL, NULL, NULL)

bool __igt_fixture(void);
void __igt_fixture_complete(void);
__noreturn void __igt_fixture_end(void);
bool __igt_run_subtest(const char *name, const char *file, int line);
void __igt_subtest_group_save(int *save, int *desc);
void __igt_subtest_group_restore(int save, int desc);

/* Runs the body once, unless listing or an earlier fixture bailed out. */
#define igt_fixture \
	for (volatile int igt_unique(__tmpint) = 0; \
	     igt_unique(__tmpint) < 1 && __igt_fixture() && \
	     sigsetjmp(igt_subtest_jmpbuf, 1) == 0; \
	     igt_unique(__tmpint)++, __igt_fixture_complete())

/*
 * igt_skip/igt_fail/igt_success longjmp back into the loop condition,
 * which then ends the loop: the body never runs twice.
 */
#define igt_subtest(name) \
	for (; __igt_run_subtest((name), __FILE__, __LINE__) && \
	       sigsetjmp(igt_subtest_jmpbuf, 1) == 0; \
	     igt_success())
#define __igt_subtest_f(tmp, ...) \
	for (char tmp[256]; \
	     snprintf(tmp, sizeof(tmp), __VA_ARGS__), \
	     __igt_run_subtest(tmp, __FILE__, __LINE__) && \
	     sigsetjmp(igt_subtest_jmpbuf, 1) == 0; \
	     igt_success())
#define igt_subtest_f(...) __igt_subtest_f(igt_unique(__tmpchar), __VA_ARGS__)

/* A skip/fail in a fixture inside the group only affects the group. */
#define igt_subtest_group \
	for (int igt_unique(__tmpint) = 0, igt_unique(__save) = 0, \
	     igt_unique(__desc) = 0; \
	     igt_unique(__tmpint) < 1 && \
	     (__igt_subtest_group_save(&igt_unique(__save), \
				       &igt_unique(__desc)), true); \
	     igt_unique(__tmpint)++, \
	     __igt_subtest_group_restore(igt_unique(__save), \
					 igt_unique(__desc)))

#define igt_main \
	static void igt_tokencat(__real_main, __LINE__)(void); \
	int main(int argc, char **argv) \
	{ \
		igt_subtest_init_parse_opts(&argc, argv, NULL, NULL, NULL, \
					    NULL, NULL); \
		igt_tokencat(__real_main, __LINE__)(); \
		igt_exit(); \
	} \
	static void igt_tokencat(__real_main, __LINE__)(void)

const char *igt_test_name(void);
const char *igt_subtest_name(void);
bool igt_only_list_subtests(void);
bool igt_can_fail(void);

void igt_describe_f(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
#define igt_describe(dsc) igt_describe_f("%s", dsc)

__noreturn void igt_skip(const char *f, ...)
	__attribute__((format(printf, 1, 2)));
__noreturn void __igt_skip_check(const char *file, int line, const char *func,
				 const char *check, const char *f, ...)
	__attribute__((format(printf, 5, 6)));
void igt_success(void);
__noreturn void igt_fail(int exitcode);
__noreturn void __igt_fail_assert(const char *domain, const char *file,
				  int line, const char *func,
				  const char *assertion, const char *f, ...)
	__attribute__((format(printf, 6, 7)));
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

/* "ncmp" is the negated operator, used to explain the failure. */
#define __igt_assert_cmp(type, pfmt, n1, cmp, ncmp, n2) do { \
	type __n1 = (n1), __n2 = (n2); \
	if (!(__n1 cmp __n2)) \
		__igt_fail_assert(IGT_LOG_DOMAIN, __FILE__, __LINE__, \
				  __func__, #n1 " " #cmp " " #n2, \
				  "error: " pfmt " " #ncmp " " pfmt "\n", \
				  __n1, __n2); \
} while (0)
#define igt_assert_cmpint(n1, cmp, ncmp, n2) \
	__igt_assert_cmp(int, "%d", n1, cmp, ncmp, n2)
#define igt_assert_cmpuint(n1, cmp, ncmp, n2) \
	__igt_assert_cmp(uint32_t, "%#x", n1, cmp, ncmp, n2)
#define igt_assert_cmpu64(n1, cmp, ncmp, n2) \
	__igt_assert_cmp(unsigned long long, "%#llx", n1, cmp, ncmp, n2)

#define igt_assert_eq(n1, n2) igt_assert_cmpint(n1, ==, !=, n2)
#define igt_assert_neq(n1, n2) igt_assert_cmpint(n1, !=, ==, n2)
#define igt_assert_neq_u64(n1, n2) igt_assert_cmpu64(n1, !=, ==, n2)
#define igt_assert_lt(n1, n2) igt_assert_cmpint(n1, <, >=, n2)
#define igt_assert_lte(n1, n2) igt_assert_cmpint(n1, <=, >, n2)
#define igt_assert_eq_u32(n1, n2) igt_assert_cmpuint(n1, ==, !=, n2)
#define igt_assert_eq_u64(n1, n2) igt_assert_cmpu64(n1, ==, !=, n2)
#define igt_assert_fd(fd) \
	igt_assert_f(fd >= 0, "file descriptor " #fd " failed\n")

#define igt_require(expr) do { \
	if (!(expr)) \
		__igt_skip_check(__FILE__, __LINE__, __func__, #expr, NULL); \
	else \
		igt_debug("Test requirement passed: %s\n", #expr); \
} while (0)
#define igt_require_f(expr, ...) do { \
	if (!(expr)) \
		__igt_skip_check(__FILE__, __LINE__, __func__, #expr, \
				 __VA_ARGS__); \
	else \
		igt_debug("Test requirement passed: %s\n", #expr); \
} while (0)
#define igt_skip_on(expr) do { \
	if ((expr)) \
		__igt_skip_check(__FILE__, __LINE__, __func__, \
				 "!(" #expr ")", NULL); \
	else \
		igt_debug("Test requirement passed: !(%s)\n", #expr); \
} while (0)

/* Children may assert; the first failing child fails the subtest. */
bool __igt_fork(void);
#define igt_fork(child, num_children) \
	for (int child = 0; child < (num_children); child++) \
		for (; __igt_fork(); exit(0))
int __igt_waitchildren(void);
void igt_waitchildren(void);

enum igt_log_level {
	IGT_LOG_DEBUG,
	IGT_LOG_INFO,
	IGT_LOG_WARN,
	IGT_LOG_CRITICAL,
	IGT_LOG_NONE,
};
extern enum igt_log_level igt_log_level;

void igt_log(const char *domain, enum igt_log_level level,
	     const char *format, ...) __attribute__((format(printf, 3, 4)));
void igt_vlog(const char *domain, enum igt_log_level level,
	      const char *format, va_list args)
	__attribute__((format(printf, 3, 0)));
#define igt_debug(...) igt_log(IGT_LOG_DOMAIN, IGT_LOG_DEBUG, __VA_ARGS__)
#define igt_info(...) igt_log(IGT_LOG_DOMAIN, IGT_LOG_INFO, __VA_ARGS__)
#define igt_warn(...) igt_log(IGT_LOG_DOMAIN, IGT_LOG_WARN, __VA_ARGS__)
#define igt_critical(...) \
	igt_log(IGT_LOG_DOMAIN, IGT_LOG_CRITICAL, __VA_ARGS__)

#endif /* IGT_CORE_H */
