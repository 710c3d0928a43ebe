#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check.sh BINARY: run igt_selftest, linked against libigt.so.0 through
# our declarations, with various arguments, and compare its exact output
# and exit codes with what the harness (qemu/guest/igt-results) relies
# on: the macros must drive libigt's control flow as IGT's own headers
# do. Timings, pids, build paths, stack traces and the version/seed
# banner are normalised first. Prints a PASS/FAIL line per check; exits
# non-zero if any check failed.
#
# A libigt test that runs (not --list-subtests) writes "[IGT] ..."
# records to /dev/kmsg, writes /proc/sys/kernel/ftrace_dump_on_oops and
# unbinds fbcon: on the host as root that would be the host's kernel.
# The binary then runs as nobody, who may do none of it.

BIN=${1:?usage: check.sh BINARY}
AS=
[ "$(id -u)" = 0 ] && AS="setpriv --reuid=65534 --regid=65534 --clear-groups"
prog=$(basename "$BIN")
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
failures=0

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1"; failures=$((failures + 1)); }

normalise() {
	sed -E -e '/^(IGT-Version: |Using IGT_SRANDOM=|Last errno: )/d' \
		-e '/^(Stack trace:|  #[0-9]+ )/d' \
		-e 's/__igt_unique____real_main[0-9]+/__real_mainN/' \
		-e 's/ \([0-9]+\.[0-9]{3}s\)$/ (T)/' \
		-e "s/^\\($prog:[0-9]+\\)/(PROG:PID)/" \
		-e "s/^Test $prog failed\\.\$/Test PROG failed./" \
		-e 's/file [^ ]*\/([^/ ]+):[0-9]+:$/file \1:L:/'
}

# run NAME EXPECTED_RC ARGS...: run the binary, keep its output.
run() {
	name=$1 want=$2
	shift 2
	$AS "$BIN" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -eq "$want" ]; then
		pass "$name: exit $want"
	else
		fail "$name: exit $rc, expected $want"
	fi
}

# expect out|err: compare normalised stdout/stderr with stdin.
expect() {
	normalise <"$tmp/$1" >"$tmp/got"
	cat >"$tmp/want"
	if cmp -s "$tmp/want" "$tmp/got"; then
		pass "$name: std$1"
	else
		fail "$name: std$1 differs"
		diff -u "$tmp/want" "$tmp/got" | sed 's/^/	/'
	fi
}

# grep_in out|err REGEX: a line of the raw output must match.
grep_in() {
	if grep -Eq -- "$2" "$tmp/$1"; then
		pass "$name: std$1 has /$2/"
	else
		fail "$name: std$1 lacks /$2/"
	fi
}

# Keep only the result lines of stdout.
only_results() {
	grep -E '^Subtest ' "$tmp/out" >"$tmp/sub"
	mv "$tmp/sub" "$tmp/out"
}

subtests="pass pass-fmt-7 skip skip-on fail fail-code fork-pass fork-fail
ioctl group-skipped group-failed after-groups"

run list-subtests 0 --list-subtests
printf '%s\n' $subtests | expect out
expect err </dev/null

run help 0 --help
grep_in out "^Usage: $prog \\[OPTIONS\\]\$"
grep_in out '^  --run-subtest <pattern>$'

run bad-option 79 --bogus
grep_in err "^Usage: $prog \\[OPTIONS\\]\$"

SELFTEST_GROUP_FAIL=1 run full-run 98
grep_in out '^Subtest pass: SUCCESS \([0-9]+\.[0-9]{3}s\)$'
expect out <<'EOF'
fixture ran
Starting subtest: pass
Subtest pass: SUCCESS (T)
Starting subtest: pass-fmt-7
formatted name pass-fmt-7
Subtest pass-fmt-7: SUCCESS (T)
Starting subtest: skip
Test requirement not met in function __real_mainN, file igt_selftest.c:L:
Test requirement: 0
not today
Subtest skip: SKIP (T)
Starting subtest: skip-on
Test requirement not met in function __real_mainN, file igt_selftest.c:L:
Test requirement: !(1 + 1 == 2)
Subtest skip-on: SKIP (T)
Starting subtest: fail
Subtest fail: FAIL (T)
Starting subtest: fail-code
Subtest fail-code: FAIL (T)
Starting subtest: fork-pass
Subtest fork-pass: SUCCESS (T)
Starting subtest: fork-fail
child 1 failed with exit status 98
Subtest fork-fail: FAIL (T)
Starting subtest: ioctl
Subtest ioctl: SUCCESS (T)
Test requirement not met in function __real_mainN, file igt_selftest.c:L:
Test requirement: getenv("SELFTEST_NEVER_SET")
Subtest group-skipped: SKIP (T)
Subtest group-failed: FAIL (T)
Starting subtest: after-groups
group state was restored
Subtest after-groups: SUCCESS (T)
EOF
# IGT's assertion lines, and the log of the subtest dumped after them.
crit="^\\($prog:[0-9]+\\) CRITICAL: "
loc='file [^ ]*igt_selftest\.c:[0-9]+:$'
grep_in err "${crit}Test assertion failure function fail_eq, $loc"
grep_in err "${crit}Failed assertion: v == 2\$"
grep_in err "${crit}error: 1 != 2\$"
grep_in err "${crit}Failed assertion: child != 1\$"
grep_in err '^Subtest fail failed\.$'
grep_in err '^\*\*\*\* DEBUG \*\*\*\*$'

# As in IGT, fixtures run even when their group's subtests do not.
run run-pass 0 --run-subtest pass
expect out <<'EOF'
fixture ran
Starting subtest: pass
Subtest pass: SUCCESS (T)
Test requirement not met in function __real_mainN, file igt_selftest.c:L:
Test requirement: getenv("SELFTEST_NEVER_SET")
EOF
expect err </dev/null

run run-skip 77 --run-subtest skip
run run-fail 98 --run-subtest fail
run run-fork-fail 98 --run-subtest fork-fail
grep_in out '^child 1 failed with exit status 98$'
run run-ioctl 0 --run-subtest ioctl
run run-group-skip 77 --run-subtest group-skipped

run run-glob 0 --run-subtest 'pass*'
only_results
expect out <<'EOF'
Subtest pass: SUCCESS (T)
Subtest pass-fmt-7: SUCCESS (T)
EOF

run run-list 0 --run-subtest 'skip,pass,fork-*,!fork-fail'
only_results
expect out <<'EOF'
Subtest pass: SUCCESS (T)
Subtest skip: SKIP (T)
Subtest fork-pass: SUCCESS (T)
EOF

run run-unknown 79 --run-subtest nosuch
expect err <<'EOF'
(PROG:PID) igt_core-CRITICAL: Unknown subtest: nosuch
EOF

# A failing fixture fails the binary even if only other subtests run.
SELFTEST_GROUP_FAIL=1 run group-fixture-fail 98 --run-subtest pass
grep_in out '^Subtest pass: SUCCESS '

SELFTEST_SKIP_ALL=1 run fixture-skip 77
{
	echo 'fixture ran'
	echo 'Test requirement not met in function __real_mainN,' \
		'file igt_selftest.c:L:'
	echo 'Test requirement: !getenv("SELFTEST_SKIP_ALL")'
	echo 'skip all'
	printf 'Subtest %s: SKIP (T)\n' $subtests
} | expect out

SELFTEST_FAIL_ALL=1 run fixture-fail 98
{
	echo 'fixture ran'
	printf 'Subtest %s: FAIL (T)\n' $subtests
} | expect out
grep_in err 'CRITICAL: Failed assertion: !getenv\("SELFTEST_FAIL_ALL"\)$'

if [ "$failures" -ne 0 ]; then
	echo "$failures check(s) failed"
	exit 1
fi
echo "all checks passed"
