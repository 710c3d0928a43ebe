# SPDX-License-Identifier: MIT
# Host packages, installed on demand with apt-get. Sourced after common.sh.

VP2P_PACKAGES="linux-source-6.1 qemu-system-x86 libdrm-dev meson ninja-build
ccache gcc libc6-dev make flex bison bc libelf-dev libssl-dev cpio kmod pciutils
python3 rsync xz-utils git pkg-config libjson-c-dev libtracefs-dev
libtraceevent-dev intel-gpu-tools"
# libtraceevent-dev: libtracefs.pc requires libtraceevent, but Debian 12's
# libtracefs-dev does not depend on it.
# intel-gpu-tools: libigt.so.0 (igt-gpu-tools 1.27.1), the IGT library the
# tests in igt-tests/ link against; it installs no headers, so
# igt-tests/lib declares the part of its API the tests use.

deps_install()
{
	local p missing=""

	for p in $VP2P_PACKAGES; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q "install ok installed" || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	[ "$(id -u)" = 0 ] || die "missing packages:$missing (run as root, or apt-get install them)"
	echo "vp2p: installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	step "$LOGDIR/apt.log" "apt-get update" apt-get update -q || exit 1
	# shellcheck disable=SC2086
	step "$LOGDIR/apt.log.install" "apt-get install ($(echo $missing | wc -w) packages)" \
		apt-get install -y -q --no-install-recommends $missing || exit 1
}
