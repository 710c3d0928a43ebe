# SPDX-License-Identifier: MIT
# Shared paths and helpers for the qemu/ scripts. Sourced, never executed.
#
# Everything that is large or slow to rebuild (the kernel tree, its object
# directory, ccache) lives in VP2P_CACHE, outside the checkout. Everything
# the project itself produces (module objects, user space, logs, console
# captures) lives in VP2P_BUILD, which is git-ignored.

VP2P_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
VP2P_CACHE=${VP2P_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vgem-p2p}
VP2P_BUILD=${VP2P_BUILD:-$VP2P_TOP/build}
VP2P_JOBS=${VP2P_JOBS:-$(nproc)}

LOGDIR=$VP2P_BUILD/logs
export CCACHE_DIR=${CCACHE_DIR:-$VP2P_CACHE/ccache}

# Reproducible version strings keep ccache hits and avoid relinking
# vmlinux just because the clock moved.
export KBUILD_BUILD_TIMESTAMP='2024-01-01'
export KBUILD_BUILD_USER=vgem-p2p
export KBUILD_BUILD_HOST=qemu

_vp2p_t0=$(date +%s)

die()
{
	echo "vp2p: error: $*" >&2
	exit 1
}

# mmss SECONDS: "4m05s"
mmss()
{
	printf '%dm%02ds' $(($1 / 60)) $(($1 % 60))
}

# elapsed T0: the time since T0 (date +%s), as mmss prints it
elapsed()
{
	mmss $(($(date +%s) - $1))
}

# wait_ticking PID T0 TITLE [PROGRESS-CMD...]: wait for PID, printing a
# line a minute with the elapsed time and, if given, what PROGRESS-CMD
# prints. Returns PID's exit status.
wait_ticking()
{
	local pid=$1 t0=$2 title=$3 n=0 extra

	shift 3
	while kill -0 "$pid" 2>/dev/null; do
		sleep 1
		n=$((n + 1))
		[ $((n % 60)) -eq 0 ] && kill -0 "$pid" 2>/dev/null || continue
		extra=""
		[ $# -gt 0 ] && extra=": $("$@")"
		printf '  %-44s ... %s%s\n' "$title" "$(elapsed "$t0")" "$extra"
	done
	wait "$pid"
}

# step LOG TITLE CMD...: run a long step with its output in LOG, printing
# one line when it starts and one when it ends, so the terminal is never
# silent for minutes nor flooded with compiler output.
step()
{
	local log=$1 title=$2 t0 rc

	shift 2
	mkdir -p "$(dirname "$log")"
	t0=$(date +%s)
	printf '  %-44s ...\n' "$title"
	"$@" >"$log" 2>&1 &
	wait_ticking $! "$t0" "$title"
	rc=$?
	if [ $rc -ne 0 ]; then
		printf '  %-44s FAILED after %s (log: %s)\n' "$title" \
			"$(elapsed "$t0")" "$log"
		tail -n 25 "$log" | sed 's/^/    | /'
		return $rc
	fi
	printf '  %-44s done in %s\n' "$title" "$(elapsed "$t0")"
}

kmake()
{
	make -C "$KSRC" O="$KOBJ" -j"$VP2P_JOBS" CC="ccache gcc" \
		HOSTCC="ccache gcc" "$@"
}

# the kernel line: KSRC, KOBJ, the series, where the source comes from
source "$VP2P_TOP/qemu/lib/linux-source.sh"
