#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# check-cli.py CLI MANPAGE: the CLI's contract that needs no device:
# every subcommand has --help and a man page section, --json output parses
# as JSON, and errors are one line with a non-zero exit. In the guest,
# with the modules loaded, the JSON of every workload is checked too.
import json
import os
import subprocess
import sys

cli, man = sys.argv[1], sys.argv[2]
COMMANDS = ['info', 'alloc', 'register', 'dma', 'move', 'evict', 'migrate',
            'stats']
failed = 0


def check(ok, what):
    global failed
    print(('ok: ' if ok else 'FAIL: ') + what)
    failed += not ok


def run(*args):
    return subprocess.run([cli, *args], capture_output=True, text=True)


top = run('--help')
check(top.returncode == 0, '--help exits 0')
page = open(man).read()
for c in COMMANDS:
    check(c in top.stdout, f'--help lists {c}')
    r = run(c, '--help')
    check(r.returncode == 0 and r.stdout.startswith('usage:'),
          f'{c} --help')
    check(f'.SS {c}' in page, f'man page describes {c}')

r = run('--json', 'info')
try:
    d = json.loads(r.stdout)
    check(r.returncode == 0 and all(k in d for k in
                                    ('exporters', 'importers', 'pairs')),
          '--json info parses as JSON')
except ValueError as e:
    check(False, f'--json info parses as JSON ({e})')

r = run('frobnicate')
check(r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1,
      'unknown command: one line, exit 2')
check(r.stderr.startswith("vgem-p2p: unknown command 'frobnicate'") and
      "see 'vgem-p2p --help'" in r.stderr,
      'unknown command: one prefix, points at vgem-p2p --help')
r = run('info', '--json')
try:
    json.loads(r.stdout)
    check(r.returncode == 0, 'global option after the command: info --json')
except ValueError as e:
    check(False, f'global option after the command: info --json ({e})')
r = run('info', '--exporter')
check(r.returncode == 2 and 'requires an argument' in r.stderr,
      'global option after the command without its argument: exit 2')
r = run('dma', '--size', 'lots')
check(r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1,
      'bad option value: one line, exit 2')

# With devices: every workload's JSON parses, and a missing device is one
# clear line with exit 1.
if os.path.exists('/dev/edu_nic0'):
    for args in (['stats'], ['alloc', '--count', '4'],
                 ['register', '--memory', 'anon'],
                 ['dma', '--mode', 'bulk', '--size', '64K'],
                 ['evict', '--size', '4K'],
                 ['migrate', '--size', '8K'],
                 ['move', '--size', '4K', '--interval', '300']):
        r = run('--json', '--quiet', *args)
        try:
            json.loads(r.stdout)
            check(r.returncode == 0, f'--json {" ".join(args)}')
        except ValueError as e:
            check(False, f'--json {" ".join(args)} parses ({e}): {r.stderr}')
    r = run('--importer', '15', 'dma')
    check(r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1,
          'missing importer: one line, exit 1')
else:
    r = run('dma')
    check(r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1,
          'no device: one line, exit 1')
    r = run('info')
    check(r.returncode == 0 and 'edu_nic' in r.stderr,
          'info without importers: says why on stderr')

sys.exit(1 if failed else 0)
