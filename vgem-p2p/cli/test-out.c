// SPDX-License-Identifier: MIT
/*
 * test-out [--json]: the output tree of out.c with quotes, backslashes
 * and control characters in keys and values, for check-out.py.
 */
#include <string.h>

#include "out.h"

#define NASTY	"q\"b\\s/\x01\x02\t\n\r\x1b\x1f\x7f\xc3\xa9"

int main(int argc, char **argv)
{
	out_json = argc > 1 && !strcmp(argv[1], "--json");
	out_begin();
	out_str("str", NASTY);
	out_str(NASTY, "key");
	out_u64("u64", UINT64_MAX);
	out_i64("i64", INT64_MIN);
	out_hex("hex", 0xdeadbeefcafeull);
	out_bool("bool", true);
	out_arr("arr");
	out_str(NULL, NASTY);
	out_obj(NULL);
	out_u64("n", 1);
	out_close();
	out_arr("empty");
	out_close();
	out_close();
	out_obj("obj");
	out_bool("f", false);
	out_end();
	/* JSON: the document is printed here, at exit */
	return out_finish(0);
}
