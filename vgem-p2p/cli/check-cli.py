#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# check-cli.py CLI MANPAGE [BENCH BENCH-SRC]: the CLI's contract that needs
# no device: every subcommand has --help and a man page section, takes
# every option and value its --help lists (and no other) with the
# defaults it states, --json output parses as JSON, and errors are one
# line with a non-zero exit: with --json also one JSON object {"error",
# "errno", "exit"} on stdout, on every error path; conflicting options
# and bad values are usage errors naming the option and the value; the
# hints name the commands that load the modules. In the guest, with the
# modules loaded, the JSON of every workload is checked too. With BENCH
# (vgem-p2p-bench) and its source directory: bad arguments are named,
# and --help lists every case the sources can report.
import glob
import json
import os
import re
import subprocess
import sys

cli, man = sys.argv[1], sys.argv[2]
bench, bench_src = (sys.argv[3], sys.argv[4]) if len(sys.argv) > 4 else \
    (None, None)
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
check(re.search(r"for a command's own$", top.stdout, re.M) is not None,
      '--help: the line on COMMAND --help is whole')


def json_error(args, status, errno, what):
    """--json ARGS fails with STATUS: one line on stderr, and stdout is one
    JSON object whose error is that line's message, with ERRNO (None: no
    call failed) and the exit status."""
    r = run('--json', *args)
    lines = r.stderr.strip().splitlines()
    try:
        d = json.loads(r.stdout)
    except ValueError as e:
        check(False, f'--json {what}: JSON error object ({e}): {r.stdout!r}')
        return r
    ok = (r.returncode == status and len(lines) == 1 and
          d.get('exit') == status and d.get('errno') == errno and
          isinstance(d.get('error'), str) and d['error'] and
          d['error'] in lines[0])
    check(ok, f'--json {what}: exit {status}, errno {errno}, the error '
          f'in JSON ({r.returncode}, {d}, {r.stderr.strip()!r})')
    return r


EINVAL = 22
# Usage errors, each with the option or value it must name.
USAGE = [
    (['frobnicate'], "'frobnicate'", 'unknown command'),
    ([], 'no command', 'no command'),
    (['--exporter', 'x', 'info'], "--exporter 'x'", 'bad --exporter'),
    (['info', '--importer', '-1'], "--importer '-1'", 'bad --importer'),
    (['--frob', 'info'], "'--frob'", 'unknown global option'),
    (['dma', '--frob'], "'--frob'", 'unknown command option'),
    (['dma', '-Z'], "'-Z'", 'unknown short option'),
    (['dma', '--size'], "'--size' requires an argument", 'missing value'),
    (['info', '--exporter'], "'--exporter' requires an argument",
     'missing global value'),
    (['dma', '--size', 'lots'], "--size 'lots'", 'bad --size'),
    (['dma', '--memory', 'gpu'], "--memory 'gpu'", 'bad --memory'),
    (['dma', '--mode', 'fast'], "--mode 'fast'", 'bad --mode'),
    (['dma', '--seed', ''], "--seed ''", 'empty --seed'),
    (['dma', '--seed', '5x'], "--seed '5x'", 'bad --seed'),
    (['dma', '--iterations', '0'], "--iterations '0'", 'bad --iterations'),
    (['dma', '--monitor', 'x'], "--monitor 'x'", 'bad --monitor'),
    (['register', '--access', 'x'], "--access 'x'", 'bad --access'),
    (['alloc', '--count', 'many'], "--count 'many'", 'bad --count'),
    (['alloc', '--free-every', '-1'], "--free-every '-1'",
     'bad --free-every'),
    (['move', '--target', 'moon'], "--target 'moon'", 'bad --target'),
    (['move', '--offset', 'x'], "--offset 'x'", 'bad --offset'),
    (['move', '--moves', '0'], "--moves '0'", 'bad --moves'),
    (['move', '--interval', 'x'], "--interval 'x'", 'bad --interval'),
    (['info', 'extra'], "'extra'", 'unexpected argument'),
    # conflicts
    (['stats', '--exporter-only', '--importer-only'],
     '--exporter-only and --importer-only conflict', 'stats -E -I'),
    (['--progress', '--quiet', 'info'], '--progress and --quiet conflict',
     '--progress --quiet'),
    (['info', '--quiet', '--progress'], '--progress and --quiet conflict',
     'info --quiet --progress'),
    (['dma', '--monitor', '3', '--write'], '--monitor and --write conflict',
     'dma --monitor --write'),
    (['dma', '--monitor', '3', '--iterations', '2'],
     '--monitor and --iterations conflict', 'dma --monitor --iterations'),
    (['dma', '--interval', '20'], '--interval needs --monitor',
     'dma --interval without --monitor'),
    (['move', '--offset', '4K'], '--offset needs --target vram-at',
     'move --offset without vram-at'),
    (['dma', '--memory', 'anon', '--read-only'],
     'object flags need --memory vram or system', 'anon --read-only'),
]
for args, named, what in USAGE:
    r = run(*args)
    check(r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and
          named in r.stderr,
          f'{what}: one line naming {named}, exit 2 ({r.returncode}, '
          f'{r.stderr.strip()!r})')
    json_error(args, 2, EINVAL, what)
# --version: a line of text, or with --json (before or after it) one
# JSON object, as every other --json output is
r = run('--version')
check(r.returncode == 0 and re.fullmatch(r'vgem-p2p \S+\n', r.stdout),
      f'--version: one line ({r.stdout!r})')
version = r.stdout.split()[-1] if r.stdout else None
for args in (['--json', '--version'], ['--version', '--json'],
             ['-j', '-V']):
    r = run(*args)
    try:
        d = json.loads(r.stdout)
    except ValueError as e:
        d = {'error': str(e)}
    check(r.returncode == 0 and d == {'program': 'vgem-p2p',
                                      'version': version},
          f'{" ".join(args)}: {{"program", "version"}} as JSON '
          f'({r.returncode}, {r.stdout!r})')
r = run('--json', 'dma', '--help')
check(r.returncode == 0 and r.stdout.startswith('usage:'),
      '--json dma --help: the help, exit 0')

# --dry-run: each command's settings, with dry_run true, and exit 0,
# opening no device; bad usage is still exit 2; it may follow the
# command, as the other global long options may.
for c in COMMANDS:
    for args in (['--json', '--dry-run', c], [c, '--dry-run', '--json']):
        r = run(*args)
        try:
            d = json.loads(r.stdout)
        except ValueError:
            d = {}
        check(r.returncode == 0 and d.get('dry_run') is True and
              not r.stderr, f'{" ".join(args)}: the settings, exit 0 '
              f'({r.returncode}, {r.stderr.strip()!r})')
r = run('--dry-run', 'dma', '--size', '8K', '--mode', 'bulk')
check(r.returncode == 0 and 'size: 8192' in r.stdout and
      'mode: bulk' in r.stdout, f'--dry-run dma: the settings as text '
      f'({r.stdout!r})')
for args, named in ((['dma', '--memory', 'anon', '--read-only'],
                     'object flags need'),
                    (['move', '--offset', '4K'], '--offset needs'),
                    (['info', 'extra'], "'extra'")):
    r = run('--dry-run', *args)
    check(r.returncode == 2 and named in r.stderr and not r.stdout,
          f'--dry-run {" ".join(args)}: bad usage still, exit 2 '
          f'({r.returncode}, {r.stderr.strip()!r})')

# Every option a command's --help lists is one it takes, with every value
# the help names, and no other; every default the help states is the one
# it uses. --dry-run checks the arguments as the command does and prints
# the settings, each under its option's long name ('_' for '-'), opening
# no device; without a device, the same arguments fail for the device
# (exit 1), not as usage (exit 2).
VALUES = {'memory': ['vram', 'system', 'anon', 'devmem'],
          'mode': ['device', 'bulk'],
          'target': ['vram', 'vram-at', 'system', 'cycle'],
          'access': ['r', 'w', 'rw']}
# a value of the kind the help's METAVAR names, and what it reads as
SAMPLE = {'SIZE': ('8K', 8192), 'OFF': ('8K', 8192), 'N': ('3', 3),
          'K': ('3', 3), 'MS': ('30', 30)}
# what an option needs beside it
NEEDS = {('move', 'offset'): ['--target', 'vram-at'],
         ('dma', 'interval'): ['--monitor', '3']}
no_device = not os.path.exists('/dev/edu_nic0') and \
    not glob.glob('/sys/bus/pci/drivers/vgem_p2p/0000:*')


def help_options(text):
    """{long: (METAVAR or None, description)} of a --help's option lines."""
    opts, last = {}, None
    for line in text.splitlines():
        m = re.match(r'  (?:-\w, |    )--([a-z][\w-]*)(?: ([A-Z]+))?\s+(.*)',
                     line)
        if m:
            last = m.group(1)
            opts[last] = [m.group(2), m.group(3)]
        elif last and re.match(r' {8,}\S', line):
            opts[last][1] += ' ' + line.strip()
        else:
            last = None
    return {k: tuple(v) for k, v in opts.items()}


def help_default(desc):
    """The default a description states: "(default X)", or the value
    right before a parenthesis that says "default"."""
    m = re.search(r'\(default ([^):]+)', desc)
    if m:
        return m.group(1).strip()
    m = re.search(r'([\w-]+)\s*\([^()]*\bdefault\b[^()]*\)', desc)
    return m.group(1) if m else None


def help_values(name, desc):
    """The values of VALUES[name] the description names, outside its
    parentheses."""
    outside = re.sub(r'\([^()]*\)', '', desc)
    return [v for v in VALUES.get(name, ()) if
            re.search(r'(?<![\w-])' + re.escape(v) + r'(?![\w-])', outside)]


def as_value(metavar, text):
    if metavar in ('SIZE', 'OFF'):
        n, suf = re.fullmatch(r'(\d+)([KMG]?)', text).groups()
        return int(n) << {'': 0, 'K': 10, 'M': 20, 'G': 30}[suf]
    if metavar in SAMPLE:
        return int(text)
    return text


def dry(c, *args):
    r = run('--json', '--dry-run', c, *args)
    try:
        d = json.loads(r.stdout)
    except ValueError:
        d = {}
    return r, d


listed = {c: help_options(run(c, '--help').stdout) for c in COMMANDS}
every = {}
for c in COMMANDS:
    for name, (metavar, _) in listed[c].items():
        every.setdefault(name, metavar)
# --dry-run opens no device, so this matrix says the same with devices
# as without: it runs where there are none (meson test, on the host),
# not again in every guest, where its 430 runs of the CLI cost minutes.
for c in (COMMANDS if no_device else []):
    d0 = dry(c)[1]
    for name, (metavar, desc) in listed[c].items():
        key = name.replace('-', '_')
        need = NEEDS.get((c, name), [])
        base = d0 if not need else dry(c, *need)[1]
        check(key in base, f'{c} --dry-run prints --{name} as {key}')
        if metavar is None:
            trials = [([], False)] if not need else []
            trials.append(([f'--{name}'], True))
        elif name in VALUES:
            values = help_values(name, desc)
            check(values, f'{c} --help: --{name} names its values ({desc!r})')
            trials = [([f'--{name}', v], v) for v in values]
            for v in VALUES[name]:
                if v in values:
                    continue
                r = run('--dry-run', c, *need, f'--{name}', v)
                check(r.returncode == 2 and f"'{v}'" in r.stderr,
                      f'{c} --{name} {v}: not in its --help, refused, '
                      f'exit 2 ({r.returncode}, {r.stderr.strip()!r})')
        else:
            check(metavar in SAMPLE, f'{c} --help: --{name} {metavar}: a '
                  f'value check-cli.py knows how to give')
            text, val = SAMPLE.get(metavar, ('1', 1))
            trials = [([f'--{name}', text], val)]
        for args, want in trials:
            r, d = dry(c, *need, *args)
            check(r.returncode == 0 and d.get(key) == want,
                  f'{c} {" ".join(need + args) or "(no options)"}: taken, '
                  f'{key} is {want!r} ({r.returncode}, {d.get(key)!r}, '
                  f'{r.stderr.strip()!r})')
            if no_device:
                r = run('--quiet', c, *need, *args)
                check(r.returncode == 1 and 'No such device' in r.stderr,
                      f'{c} {" ".join(need + args) or "(no options)"}: with no device, fails '
                      f'for the device, not as usage ({r.returncode}, '
                      f'{r.stderr.strip()!r})')
        default = help_default(desc)
        if default is not None:
            want = as_value(metavar, default) if name not in VALUES \
                else default
            check(base.get(key) == want,
                  f'{c} --help: --{name} defaults to {default}: '
                  f'{key} is {base.get(key)!r} with no --{name}')
    # an option another command takes, this one not: refused
    for name, metavar in sorted(every.items()):
        if name in listed[c]:
            continue
        arg = [] if metavar is None else \
            [VALUES[name][0] if name in VALUES else SAMPLE[metavar][0]]
        r = run('--dry-run', c, f'--{name}', *arg)
        check(r.returncode == 2 and f"'--{name}'" in r.stderr,
              f'{c} --{name}: not in its --help, refused as unknown, exit 2 '
              f'({r.returncode}, {r.stderr.strip()!r})')

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
    check('/dev/edu_nic15' in r.stderr and 'bound to' in r.stderr and
          "'vgem-p2p info'" in r.stderr,
          f'missing importer: names it, and how to list the others '
          f'({r.stderr.strip()!r})')
    json_error(['--importer', '15', 'dma'], 1, 19, 'missing importer')
    json_error(['--exporter', '15', 'stats', '--exporter-only'], 1, 19,
               'missing exporter')
else:
    r = run('dma')
    check(r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1,
          'no device: one line, exit 1')
    json_error(['dma'], 1, 19, 'no device')
    # the hint: the commands that load the module, as the suite does:
    # edu_nic needs the RDMA core, which insmod does not load
    check('edu_nic is not loaded: modprobe ib_uverbs && insmod ' in r.stderr
          and 'vgem-p2p/importer/edu_nic.ko dma_bits=64' in r.stderr,
          f'no device: the commands that load edu_nic ({r.stderr.strip()!r})')
    r = run('stats', '--exporter-only')
    check('vgem_p2p is not loaded: modprobe drm_ttm_helper && insmod '
          in r.stderr and
          'vgem-p2p/exporter/vgem_p2p.ko' in r.stderr,
          f'no exporter: the insmod that loads vgem_p2p ({r.stderr.strip()!r})')
    r = run('info')
    check(r.returncode == 0 and 'edu_nic' in r.stderr,
          'info without importers: says why on stderr')
    check('modprobe drm_ttm_helper && insmod ' in r.stderr and
          'modprobe ib_uverbs && insmod ' in r.stderr,
          'info without modules: the commands that load both')

# vgem-p2p-bench: a bad argument is one line naming it, exit 2; --help
# lists every case the benchmarks can report (read from their sources,
# bench_NAME*.c for benchmark NAME: the case-name tables and the names
# given to bench_row_add() and revoke_report()).
if bench:
    def brun(*args):
        return subprocess.run([bench, *args], capture_output=True,
                              text=True)

    for args, named in ((['--reps', 'x'], "--reps 'x'"),
                        (['-r', '0'], "--reps '0'"),
                        (['--reps'], "'--reps' requires an argument"),
                        (['--frob'], "'--frob'"),
                        (['-Z'], "'-Z'"),
                        (['--bench', 'map,foo'], "--bench 'map,foo'"),
                        (['--map-max', '3'], "--map-max '3'"),
                        (['--stream', 'big'], "--stream 'big'"),
                        (['--ttm-importer', '16'], "--ttm-importer '16'"),
                        (['--ttm-importer', 'x'], "--ttm-importer 'x'"),
                        (['--objs', '2'], "--objs '2'"),
                        (['--procs', '9'], "--procs '9'"),
                        (['extra'], "'extra'")):
        r = brun(*args)
        lines = r.stderr.strip().splitlines()
        check(r.returncode == 2 and len(lines) == 1 and named in lines[0] and
              not r.stdout,
              f'vgem-p2p-bench {" ".join(args)}: one line naming {named}, '
              f'exit 2 ({r.returncode}, {r.stderr.strip()!r})')
    h = brun('--help')
    check(h.returncode == 0, 'vgem-p2p-bench --help exits 0')
    cases = {}
    for f in sorted(glob.glob(os.path.join(bench_src, 'bench_*.c'))):
        src = open(f).read()
        # bench_scale_map.c is part of scale
        b = os.path.basename(f)[6:-2].split('_')[0]
        found = set()
        for m in re.finditer(r'\w*names\s*\[[^\]]*\]\s*=\s*\{([^}]*)\}', src):
            found |= set(re.findall(r'"([^"]+)"', m.group(1)))
        for m in re.finditer(r'(?:bench_row_add\(\s*b,\s*\w+,|'
                             r'revoke_report\(\s*b,)([^,]*(?:\?[^,:]*:[^,]*)?),',
                             src):
            found |= set(re.findall(r'"([^"]+)"', m.group(1)))
        if found:
            cases.setdefault(b, set()).update(found)
    check(len(cases) >= 6 and 'ttm-vram' in cases.get('map', ()) and
          'ttm-move' in cases.get('revoke', ()),
          f'vgem-p2p-bench sources: the cases found ({sorted(cases)})')
    table = h.stdout[h.stdout.find('The cases of each benchmark'):]
    for b, names in sorted(cases.items()):
        line = re.search(r'^  ' + re.escape(b) + r'\s.*(?:\n {10}.*)*',
                         table, re.M)
        listed = set(re.findall(r'[\w-]+', line.group(0))) if line else set()
        missing = sorted(names - listed)
        check(not missing, f'vgem-p2p-bench --help lists every case of {b}'
              f'{": missing " + ", ".join(missing) if missing else ""}')

sys.exit(1 if failed else 0)
