# SPDX-License-Identifier: MIT
# Which kernel the suite builds, and where its source comes from: a
# Debian package, never a tree in the checkout.
#
# VP2P_LINUX picks the kernel line:
#   6.1  bookworm's own linux-source-6.1, installed with apt-get like any
#        other package (deps.sh), with the series in drm-patches/;
#   7.2  linux-source-7.2 from Debian's archive (trixie-backports), with
#        the series being ported to it in drm-patches-7.2/ (issue 49).
#        The package is fetched with a private apt configuration in
#        VP2P_CACHE: the machine's own apt sources stay as they are.
# Each line has a tree, objects and module and meson builds of its own
# (named with VP2P_LINUX_SUFFIX), so switching between them rebuilds
# nothing; ccache is shared. Sourced by common.sh.

VP2P_LINUX=${VP2P_LINUX:-6.1}
VP2P_LINUX_SUFFIX=

# The Debian version the 7.2 series applies to. Debian drops a version
# from the archive when it supersedes it; linux_source_fetch then says
# so and takes the newest 7.2.y it can get.
LINUX_72_PIN=7.2.12-1~bpo13+1
LINUX_72_SUITE=trixie-backports
LINUX_APT=$VP2P_CACHE/apt-7.2

case $VP2P_LINUX in
6.1)
	KTARBALL=${KTARBALL:-/usr/src/linux-source-6.1.tar.xz}
	VP2P_SERIES=$VP2P_TOP/drm-patches
	;;
7.2)
	KTARBALL=${KTARBALL:-$VP2P_CACHE/linux-source-7.2/usr/src/linux-source-7.2.tar.xz}
	VP2P_SERIES=$VP2P_TOP/drm-patches-7.2
	VP2P_LINUX_SUFFIX=-7.2
	# Until the drivers are ported (issue 49), 7.2 builds only the
	# self-test modules: enough for hmm-tests and the runner's checks.
	VP2P_MODULE_DIRS=${VP2P_MODULE_DIRS:-qemu/selftest}
	;;
*)
	die "VP2P_LINUX=$VP2P_LINUX: unknown kernel line (6.1 or 7.2)"
	;;
esac
KSRC=$VP2P_CACHE/linux$VP2P_LINUX_SUFFIX	# git tree: pristine commit + series
KOBJ=$VP2P_CACHE/kbuild$VP2P_LINUX_SUFFIX	# O= object directory

# hmm-tests' verdicts on this line's kernel (qemu/guest/run-suite)
HMM_BASELINE=$VP2P_TOP/qemu/hmm-tests.baseline
[ "$VP2P_LINUX" = 6.1 ] || HMM_BASELINE=$VP2P_TOP/qemu/hmm-tests-$VP2P_LINUX.baseline

_linux_apt()
{
	apt-get -c "$LINUX_APT/apt.conf" -q "$@"
}

# An apt configuration of its own, reading only LINUX_72_SUITE and
# verifying it with the keyring every Debian system has (bookworm's
# debian-archive-keyring carries trixie's keys).
_linux_apt_setup()
{
	local d

	for d in etc/apt.conf.d etc/preferences.d etc/sources.list.d \
		 state/lists/partial cache/archives/partial log; do
		mkdir -p "$LINUX_APT/$d" || return 1
	done
	touch "$LINUX_APT/state/status"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $LINUX_72_SUITE main" \
		>"$LINUX_APT/etc/sources.list"
	cat >"$LINUX_APT/apt.conf" <<EOF
Dir::Etc "$LINUX_APT/etc";
Dir::Etc::SourceList "$LINUX_APT/etc/sources.list";
Dir::Etc::SourceParts "$LINUX_APT/etc/sources.list.d";
Dir::Etc::Preferences "$LINUX_APT/etc/preferences";
Dir::Etc::PreferencesParts "$LINUX_APT/etc/preferences.d";
Dir::Etc::Parts "$LINUX_APT/etc/apt.conf.d";
Dir::State "$LINUX_APT/state";
Dir::State::status "$LINUX_APT/state/status";
Dir::Cache "$LINUX_APT/cache";
Dir::Log "$LINUX_APT/log";
APT::Architecture "amd64";
APT::Architectures { "amd64"; };
Acquire::Languages "none";
APT::Sandbox::User "root";
EOF
}

# The pinned version if the archive has it, else the newest 7.2.y, with
# one line saying so.
_linux_72_pick()
{
	local versions newest

	versions=$(apt-cache -c "$LINUX_APT/apt.conf" madison linux-source-7.2 2>/dev/null |
		   awk -F'|' '{ gsub(/ /, "", $2); print $2 }')
	if printf '%s\n' "$versions" | grep -qxF "$LINUX_72_PIN"; then
		echo "$LINUX_72_PIN"
		return
	fi
	newest=$(printf '%s\n' "$versions" | grep . |
		 sort -V | tail -n 1)
	[ -n "$newest" ] || {
		echo "vp2p: error: $LINUX_72_SUITE has no linux-source-7.2 (README, \"Troubleshooting\")" >&2
		return 1
	}
	echo "vp2p: Debian no longer has linux-source-7.2 $LINUX_72_PIN; trying $newest (README, \"Troubleshooting\")" >&2
	echo "$newest"
}

_linux_72_refresh()
{
	_linux_apt_setup && _linux_apt update
}

_linux_72_download()	# _linux_72_download VERSION
{
	local deb tmp=$VP2P_CACHE/linux-source-7.2.new

	rm -f "$LINUX_APT"/cache/archives/*.deb
	(cd "$LINUX_APT/cache/archives" &&
		_linux_apt download "linux-source-7.2=$1") || return 1
	deb=$(ls "$LINUX_APT"/cache/archives/linux-source-7.2_*_all.deb 2>/dev/null |
	      head -n 1)
	[ -n "$deb" ] || { echo "no .deb for linux-source-7.2 $1"; return 1; }
	rm -rf "$tmp"
	dpkg-deb -x "$deb" "$tmp" || return 1
	echo "$1" >"$tmp/vp2p-version"
	rm -rf "$VP2P_CACHE/linux-source-7.2"
	mv "$tmp" "$VP2P_CACHE/linux-source-7.2"
	# unpacked: the .deb would only double the cache
	rm -f "$deb"
}

# linux_source_version: the Debian version of the source in KTARBALL
linux_source_version()
{
	case $VP2P_LINUX in
	6.1)	dpkg-query -W -f='${Version}' linux-source-6.1 ;;
	*)	cat "$VP2P_CACHE/linux-source-$VP2P_LINUX/vp2p-version" 2>/dev/null ;;
	esac
}

# linux_source_fetch: make KTARBALL the source to build: for 6.1 the
# installed package (deps.sh), for 7.2 the pinned version, or the newest
# 7.2.y once Debian has dropped it.
linux_source_fetch()
{
	local ver

	if [ "$VP2P_LINUX" = 6.1 ]; then
		[ -r "$KTARBALL" ] ||
			die "$KTARBALL missing (apt-get install linux-source-6.1)"
		return 0
	fi
	[ -r "$KTARBALL" ] && [ "$(linux_source_version)" = "$LINUX_72_PIN" ] &&
		return 0
	step "$LOGDIR/linux-source.log" "apt-get update ($LINUX_72_SUITE, private)" \
		_linux_72_refresh || return 1
	ver=$(_linux_72_pick) || return 1
	[ -r "$KTARBALL" ] && [ "$(linux_source_version)" = "$ver" ] && return 0
	step "$LOGDIR/linux-source.log.download" "fetch linux-source-7.2 $ver" \
		_linux_72_download "$ver"
}
