#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# check-report.py TEST-REPORT: runs test-report (see test-report.c) into a
# temporary directory and checks that bench.json parses, keeps every
# string byte for byte, and has the keys qemu/bench-plot reads.
import json
import subprocess
import sys
import tempfile

NASTY = 'q"b\\s/\x01\x02\t\n\r\x1b\x1f\x7f\u00e9'
failed = 0


def check(ok, what):
    global failed
    print(('ok: ' if ok else 'FAIL: ') + what)
    failed += not ok


with tempfile.TemporaryDirectory() as d:
    r = subprocess.run([sys.argv[1], d])
    check(r.returncode == 0, 'test-report writes the files')
    try:
        doc = json.load(open(f'{d}/bench.json'))
    except ValueError as e:
        check(False, f'bench.json parses ({e})')
        sys.exit(1)
    check(True, 'bench.json parses')
    row = doc['results'][0]
    check(row['case'] == NASTY and row['ratio_to'] == NASTY,
          'row strings survive')
    check(doc['notes'] == [NASTY], 'notes survive')
    check(doc['fits'][0]['case'] == NASTY, 'fit strings survive')
    check(row['ratio'] is None, 'NaN is null')
    check(row['median_ns'] == 1500 and row['per_page_ns'] == 750 and
          doc['fits'][0]['slope_ns_per_page'] == 12.35,
          'numbers as the CSV has them')
    check(row['counters']['sysmem_bytes'] is None and
          row['counters']['pages_migrated'] == 0, 'counters, null if none')
    check(all(k in doc for k in ('tool', 'version', 'machine', 'config')),
          'top-level keys')
    check(all(k in doc['machine'] for k in
              ('kernel', 'kernel_debug', 'cpus', 'cpu_model', 'product',
               'mem_total', 'vram_bytes', 'devmem_bytes')), 'machine keys')

sys.exit(1 if failed else 0)
