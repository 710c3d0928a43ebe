#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# check-out.py TEST-OUT: out.c's JSON parses and keeps every string (keys
# too) byte for byte whatever it holds, and the text mode is unchanged.
import json
import subprocess
import sys

NASTY = 'q"b\\s/\x01\x02\t\n\r\x1b\x1f\x7f\u00e9'
failed = 0


def check(ok, what):
    global failed
    print(('ok: ' if ok else 'FAIL: ') + what)
    failed += not ok


r = subprocess.run([sys.argv[1], '--json'], capture_output=True, text=True)
try:
    d = json.loads(r.stdout)
    check(True, 'JSON parses')
except ValueError as e:
    check(False, f'JSON parses ({e}): {r.stdout!r}')
    sys.exit(1)
check(list(d) == ['str', NASTY, 'u64', 'i64', 'hex', 'bool', 'arr', 'obj'],
      'keys in order')
check(d['str'] == NASTY and d[NASTY] == 'key', 'strings survive')
check(d['u64'] == 2**64 - 1 and d['i64'] == -2**63, '64-bit integers')
check(d['hex'] == '0xdeadbeefcafe' and d['bool'] is True, 'hex, bool')
check(d['arr'] == [NASTY, {'n': 1}, []] and d['obj'] == {'f': False},
      'nesting')

# bytes: text=True would turn the \r into a newline
r = subprocess.run([sys.argv[1]], capture_output=True)
want = ('str: ' + NASTY + '\n' + NASTY + ': key\n'
        'u64: 18446744073709551615\ni64: -9223372036854775808\n'
        'hex: 0xdeadbeefcafe\nbool: true\narr: \n  - ' + NASTY + '\n'
        '  - \n    n: 1\n  - \nobj: \n  f: false\n')
check(r.stdout == want.encode(), 'text mode: key: value, indented')
sys.exit(1 if failed else 0)
