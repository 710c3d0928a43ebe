/* SPDX-License-Identifier: MIT */
/*
 * Output for the vgem-p2p CLI: one tree of keys and values, printed either
 * as indented "key: value" text or, with --json, as one JSON document, so
 * the two can never disagree. Errors are one line on stderr; progress
 * goes to stderr, so that stdout stays parseable.
 */
#ifndef VP2P_CLI_OUT_H
#define VP2P_CLI_OUT_H

#include <stdbool.h>
#include <stdint.h>

extern bool out_json;
extern bool out_progress;
extern const char *out_cmd;

void out_begin(void);
void out_end(void);
void out_obj(const char *key);
void out_arr(const char *key);
void out_close(void);
void out_u64(const char *key, uint64_t val);
void out_i64(const char *key, int64_t val);
void out_hex(const char *key, uint64_t val);
void out_str(const char *key, const char *val);
void out_bool(const char *key, bool val);

/*
 * "vgem-p2p: CMD: what: strerror" on stderr; returns 1, the exit code.
 * @err is a negative errno, or 0 when no call failed (a data check).
 * With --json the first error also goes into the document out_finish()
 * prints: "error" (the message), "errno" (a number, or null for 0).
 */
int out_err(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* usage errors: exit code 2, errno EINVAL in the JSON */
int out_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * getopt_long() (with opterr 0 and a leading ':' in the short options)
 * returned @opt, '?' or ':': a usage error naming the option.
 */
int out_badopt(int opt, char **argv);
/*
 * At exit, with the exit status: with --json, prints the document, with
 * the error recorded if any; an error with no document is printed as a
 * document of its own. Returns @status.
 */
int out_finish(int status);

void progress(const char *what, uint64_t done, uint64_t total);
void progress_done(void);

#endif /* VP2P_CLI_OUT_H */
