# SPDX-License-Identifier: MIT
# The boots of a test run and how they share the machine: which boots a
# run needs (igt-tests/topologies), their budget (qemu/budget), and up
# to VP2P_GUESTS of them at once, longest first. Sourced after common.sh.
#
# Two guests at once: the test binaries are mostly single-threaded, so
# one guest under TCG keeps about 1.2 of 2 cores busy; a second guest
# uses the rest (docs/testing.md, "How long it takes").

VP2P_GUESTS=${VP2P_GUESTS:-2}
SUITE_LIST=$VP2P_TOP/igt-tests/topologies
BUDGET=$VP2P_TOP/qemu/budget

# boot_tests BOOT: the tests igt-tests/topologies gives BOOT.
boot_tests()
{
	awk -v b="$1" '!/^#/ && $2 == b { print $1 }' "$SUITE_LIST"
}

# boot_wanted BOOT: VP2P_ONLY picks at least one of BOOT's tests, by the
# rules of run-suite's wanted() (a test, a binary's subtests, or the
# boot's topology check), so that a boot with nothing to run is not
# booted.
boot_wanted()
{
	local t

	[ -n "${VP2P_ONLY:-}" ] || return 0
	# shellcheck disable=SC2053
	[[ topology-$1 == $VP2P_ONLY ]] && return 0
	for t in $(boot_tests "$1"); do
		# shellcheck disable=SC2053
		[[ $t == $VP2P_ONLY || $t* == $VP2P_ONLY ||
		   $VP2P_ONLY == "$t/"* ]] && return 0
	done
	return 1
}

# suite_boots TOPOLOGY...: the boots of these topologies, in
# igt-tests/topologies' order: each topology, and its TOPOLOGY.N boots.
suite_boots()
{
	local topo b

	for topo in "$@"; do
		echo "$topo"
		awk '!/^#/ && NF >= 2 { print $2 }' "$SUITE_LIST" |
			awk '!seen[$0]++' | while read -r b; do
				[ "${b%%.*}" = "$topo" ] && [ "$b" != "$topo" ] &&
					echo "$b"
			done
	done
}

# boot_budget BOOT: its budget in seconds (qemu/budget), 0 if it has none.
boot_budget()
{
	awk -v b="$1" '!/^#/ && $1 == b { print $2; found = 1 }
		       END { if (!found) print 0 }' "$BUDGET"
}

# by_budget JOB...: the jobs, longest budget first (the longest-first
# rule keeps the last boot to finish short).
by_budget()
{
	local j

	for j in "$@"; do
		echo "$(boot_budget "$j") $j"
	done | sort -k1,1nr -s | awk '{ print $2 }'
}

# run_jobs PROGRESS-CMD JOB...: run each JOB (a boot, or "selftest") as
# "run_job JOB" in the background, up to VP2P_GUESTS at once, in the
# order given. Prints a line a minute per running job, with what
# "PROGRESS-CMD JOB" prints.
run_jobs()
{
	local progress=$1 pending j n=0 pid
	local -A pids=() t0s=()

	shift
	pending=("$@")
	while [ ${#pending[@]} -gt 0 ] || [ ${#pids[@]} -gt 0 ]; do
		while [ ${#pending[@]} -gt 0 ] &&
		      [ ${#pids[@]} -lt "$VP2P_GUESTS" ]; do
			j=${pending[0]}
			pending=("${pending[@]:1}")
			t0s[$j]=$(date +%s)
			run_job "$j" &
			pids[$j]=$!
		done
		sleep 1
		n=$((n + 1))
		for j in "${!pids[@]}"; do
			pid=${pids[$j]}
			if ! kill -0 "$pid" 2>/dev/null; then
				wait "$pid"
				unset "pids[$j]"
			elif [ $((n % 60)) -eq 0 ]; then
				printf '  %-44s ... %s: %s\n' "boot $j" \
					"$(elapsed "${t0s[$j]}")" "$("$progress" "$j")"
			fi
		done
	done
}

# expected_results RUNDIR BOOT...: "FAIL BOOT/TEST (no result)" for each
# test igt-tests/topologies gives a boot that has no result line in the
# boot's results: a binary that did not run fails, whatever else ran
# (the whole suite only: VP2P_ONLY leaves tests out on purpose).
expected_results()
{
	local dir=$1 b t

	shift
	[ -z "${VP2P_ONLY:-}" ] || return 0
	for b in "$@"; do
		for t in $(boot_tests "$b"); do
			grep -qE "^(PASS|FAIL|SKIP) $t([/ ]|\$)" "$dir/$b.results" ||
				echo "FAIL $b/$t (no result: igt-tests/topologies runs it there)"
		done
	done
}

# skip_baseline RESULTS BOOT BASELINE: the IGT subtests that skipped on
# BOOT against BASELINE (igt-tests/skips: "BOOT BINARY/SUBTEST WHY"):
# "FAIL BOOT/BINARY/SUBTEST skipped, not in BASELINE" for a skip it does
# not list, so that a skip cannot hide a failure; and, on stderr, a note
# for each listed skip that passed instead, to take off the list. Only
# IGT lines (BINARY/SUBTEST of a binary the suite list gives BOOT) are
# judged: hmm-tests has a baseline of its own.
skip_baseline()
{
	local results=$1 boot=$2 baseline=$3 name bin tests

	tests=$(boot_tests "$boot")
	while read -r _ name _; do
		bin=${name%%/*}
		grep -qxF -- "$bin" <<<"$tests" || continue
		[ "$bin" = hmm-tests ] && continue
		awk -v b="$boot" -v n="$name" '$1 == b && $2 == n { f = 1 }
			END { exit !f }' "$baseline" ||
			echo "FAIL $boot/$name skipped, not in ${baseline#"$VP2P_TOP"/}"
	done < <(grep -E '^SKIP [^ /]+/' "$results")
	awk -v b="$boot" '!/^#/ && $1 == b { print $2 }' "$baseline" |
		while read -r name; do
			grep -qx "PASS $name" "$results" &&
				echo "vp2p: $boot: $name passed: take it off ${baseline#"$VP2P_TOP"/}" >&2
		done
	return 0
}

# budget_report RUNDIR JOB...: each job's time against its budget, and
# the boots' wall time against the budget's total. A budget is a figure
# to keep, not a test: going over it prints why to look, and fails
# nothing (timing is measured, never asserted).
budget_report()
{
	local dir=$1 j s b total wall over=''

	shift
	echo "vp2p: each boot's time against qemu/budget (two guests at once):"
	for j in "$@"; do
		s=$(cat "$dir/$j.seconds" 2>/dev/null) || continue
		b=$(boot_budget "$j")
		printf '  %-12s %7s  budget %7s%s\n' "$j" "$(mmss "$s")" \
			"$(mmss "$b")" "$( [ "$s" -gt "$b" ] && echo '  over')"
		[ "$s" -gt "$b" ] && over="$over $j"
	done
	wall=$(cat "$dir/boots.seconds")
	total=$(boot_budget total)
	printf '  %-12s %7s  budget %7s%s\n' "all boots" "$(mmss "$wall")" \
		"$(mmss "$total")" "$( [ "$wall" -gt "$total" ] && echo '  over')"
	[ -z "$over" ] ||
		echo "vp2p: over budget:$over (a loaded machine, or a test that grew: see docs/testing.md)"
}
