#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# check-report.py TEST-REPORT: runs test-report (see test-report.c) into a
# temporary directory and checks that bench.json parses, keeps every
# string byte for byte, and has the keys scripts/bench-plot reads.
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
          doc['fits'][0]['slope_ns'] == 12.35,
          'numbers as the CSV has them')
    # No baseline (ratio NaN): no paired ratio either
    check(all(row[k] is None for k in
              ('paired_ratio', 'paired_ratio_q1', 'paired_ratio_q3',
               'paired_ratio_iqr')), 'paired ratio null without a ratio')
    rev = doc['results'][1]
    check(rev['ratio'] == 2 and rev['paired_ratio'] is None and
          rev['paired_ratio_iqr'] is None, 'paired ratio null if unpaired')
    mapfit, revfit = doc['fits']
    check(mapfit['per'] == 'page' and mapfit['size_bytes'] == 0 and
          mapfit['per_page_spread'] == 1.25 and mapfit['spread_sizes'] == 3,
          'map fit: per page, spread over sizes')
    check(revfit['bench'] == 'revoke' and revfit['per'] == 'registration'
          and revfit['size_bytes'] == 1 << 20 and revfit['slope_ns'] == 500
          and revfit['intercept_ns'] == 300 and revfit['r2'] == 0.99 and
          revfit['per_page_spread'] is None, 'revoke fit: per registration')
    # Row and fit 0 have line breaks in their names: the revoke ones
    csv = open(f'{d}/bench.csv').read().splitlines()
    hdr = csv[0].split(',')
    check(all(k in hdr for k in ('paired_ratio', 'paired_q1', 'paired_q3'))
          and [len(l.split(',')) for l in csv if l.startswith('revoke,')]
          == [len(hdr)], 'bench.csv: paired columns, a field each')
    fits = open(f'{d}/bench-fits.csv').read().splitlines()
    fhdr = fits[0].split(',')
    check('per_page_spread' in fhdr and
          [len(l.split(',')) for l in fits if l.startswith('revoke,')]
          == [len(fhdr)], 'bench-fits.csv: spread column, a field each')
    sc = doc['results'][2]
    check(sc['bench'] == 'scale' and sc['objects'] == 64 and
          sc['moves_per_object'] == 0.9844 and
          sc['invalidations_per_move'] == 1.25 and
          sc['counters']['moves'] == 64 and
          sc['counters']['obj_invalidations'] == 80 and
          sc['counters']['data_errors'] == 0 and
          sc['counters']['regs_in_move'] is None,
          'scale row: objects, moves per object, invalidations per move')
    check(row['objects'] == 0 and row['moves_per_object'] is None and
          row['invalidations_per_move'] is None,
          'no scale figures where they say nothing')
    check(all(k in hdr for k in ('objects', 'moves_per_object',
                                 'invalidations_per_move')) and
          [len(l.split(',')) for l in csv if l.startswith('scale,')]
          == [len(hdr)], 'bench.csv: scale columns, a field each')
    check(row['counters']['sysmem_bytes'] is None and
          row['counters']['pages_migrated'] == 0, 'counters, null if none')
    check(all(k in doc for k in ('tool', 'version', 'machine', 'config')),
          'top-level keys')
    check(all(k in doc['machine'] for k in
              ('kernel', 'kernel_debug', 'cpus', 'cpu_model', 'product',
               'mem_total', 'vram_bytes', 'devmem_bytes')), 'machine keys')

sys.exit(1 if failed else 0)
