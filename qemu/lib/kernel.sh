# SPDX-License-Identifier: MIT
# The kernel tree in VP2P_CACHE: extraction, the drm-patches series, the
# config, and the build. Sourced after common.sh and linux-source.sh.

# Config fragments, merged in order onto tinyconfig: a later fragment
# overrides an earlier one (the bench kernel adds kernel-bench.config).
# kernel-LINE.config holds what only that kernel line has.
KFRAGMENTS=${KFRAGMENTS:-$VP2P_TOP/qemu/kernel.config $VP2P_TOP/qemu/kernel-$VP2P_LINUX.config}

# The series is identified by its content, not by mtimes: a fresh clone
# has new mtimes but the same series, and must not re-apply it.
series_hash()
{
	cat /dev/null "$VP2P_SERIES"/*.patch 2>/dev/null |
		sha256sum | cut -c1-16
}

_extract_pristine()
{
	local tmp=$VP2P_CACHE/linux.extract

	rm -rf "$tmp"
	mkdir -p "$tmp"
	tar -C "$tmp" -xJf "$KTARBALL"
	mv "$tmp"/linux-source-"$VP2P_LINUX" "$KSRC"
	rmdir "$tmp"
	cd "$KSRC"
	git init -q -b pristine
	# Debian's .gitignore ignores the whole top level.
	git add -f -A
	git -c user.name=vgem-p2p -c user.email=vgem-p2p@invalid \
		commit -q -m "Debian linux-source-$VP2P_LINUX $(linux_source_version)"
	git tag pristine
	linux_source_version >.git/vp2p-debian-version
}

# The series is applied in a scratch worktree, and the tree then switches
# to the result with one checkout: only files whose content differs get a
# new mtime, so a changed series rebuilds what it changed, not every file
# that some patch touches.
_apply_series()
{
	local tmp=$VP2P_CACHE/series-apply head

	cd "$KSRC" || return 1
	# A fresh tree has nothing built yet: apply in place, which is faster.
	if [ "$(git rev-parse HEAD)" = "$(git rev-parse 'tags/pristine^{commit}')" ]; then
		local patches

		patches=$(ls "$VP2P_SERIES"/*.patch 2>/dev/null | grep -v /0000-)
		git checkout -q -B vp2p || return 1
		if [ -n "$patches" ]; then
			git -c user.name=vgem-p2p -c user.email=vgem-p2p@invalid \
				am -q --whitespace=nowarn $patches || return 1
		fi
		series_hash >.git/vp2p-series
		return
	fi
	rm -rf "$tmp"
	git worktree prune
	git worktree add -q --detach "$tmp" tags/pristine || return 1
	if ls "$VP2P_SERIES"/*.patch >/dev/null 2>&1; then
		git -C "$tmp" -c user.name=vgem-p2p -c user.email=vgem-p2p@invalid \
			am -q --whitespace=nowarn \
			$(ls "$VP2P_SERIES"/*.patch | grep -v /0000-) ||
			return 1
	fi
	head=$(git -C "$tmp" rev-parse HEAD)
	git worktree remove --force "$tmp"
	git checkout -q -f -B vp2p "$head" || return 1
	series_hash >.git/vp2p-series
}

# kernel_tree_current: the tree was extracted from KTARBALL's version.
# 6.1's trees predate the record, and bookworm's package is the only
# source they come from.
kernel_tree_current()
{
	[ -d "$KSRC/.git" ] || return 1
	[ "$VP2P_LINUX" = 6.1 ] && return 0
	[ "$(cat "$KSRC/.git/vp2p-debian-version" 2>/dev/null)" = "$(linux_source_version)" ]
}

kernel_prepare_tree()
{
	mkdir -p "$VP2P_CACHE"
	linux_source_fetch || exit 1
	if ! kernel_tree_current; then
		rm -rf "$KSRC"
		step "$LOGDIR/extract.log" "extract linux-source-$VP2P_LINUX $(linux_source_version)" \
			_extract_pristine || exit 1
	fi
	if [ "$(cat "$KSRC/.git/vp2p-series" 2>/dev/null)" != "$(series_hash)" ]; then
		step "$LOGDIR/series.log" "apply ${VP2P_SERIES#"$VP2P_TOP"/} ($(series_hash))" \
			_apply_series || exit 1
	fi
}

# The fragments as one: for each option, the line of the last fragment
# that names it.
_effective_fragment()
{
	cat $KFRAGMENTS | awk '
		/^CONFIG_[A-Za-z0-9_]*=/ { n = $0; sub(/=.*/, "", n) }
		/^# CONFIG_[A-Za-z0-9_]* is not set/ { n = $2 }
		n != "" { if (!(n in line)) order[++k] = n; line[n] = $0; n = "" }
		END { for (i = 1; i <= k; i++) print line[order[i]] }'
}

# Every option in the fragments must survive olddefconfig: a silently
# dropped option (unmet dependency) would make tests skip for no reason.
_check_config()
{
	local line name missing=0

	while read -r line; do
		case "$line" in
		CONFIG_*=*)
			grep -qx "$line" "$KOBJ/.config" && continue ;;
		'# CONFIG_'*' is not set')
			name=${line#\# }
			name=${name%% *}
			grep -q "^$name=" "$KOBJ/.config" || continue ;;
		*)
			continue ;;
		esac
		echo "config: '$line' did not stick (check its dependencies)"
		missing=1
	done < <(_effective_fragment)
	return $missing
}

_configure()
{
	kmake tinyconfig &&
	_effective_fragment >"$KOBJ/vp2p.fragment" &&
	"$KSRC"/scripts/kconfig/merge_config.sh -m -O "$KOBJ" \
		"$KOBJ/.config" "$KOBJ/vp2p.fragment" &&
	kmake olddefconfig &&
	_check_config
}

kernel_configure()
{
	local want

	want=$(cat $KFRAGMENTS "$KSRC/.git/vp2p-series" \
		"$KSRC/.git/vp2p-debian-version" 2>/dev/null | sha256sum | cut -c1-16)
	[ "$(cat "$KOBJ/.vp2p-config" 2>/dev/null)" = "$want" ] && return 0
	mkdir -p "$KOBJ"
	step "$LOGDIR/config.log" "configure (tinyconfig + $(cd "$VP2P_TOP" &&
		echo ${KFRAGMENTS//$VP2P_TOP\//}))" \
		_configure || exit 1
	echo "$want" >"$KOBJ/.vp2p-config"
}

kernel_build()
{
	kernel_prepare_tree
	kernel_configure
	command -v ccache >/dev/null || die "ccache missing"
	ccache -M 5G >/dev/null
	step "$LOGDIR/kernel.log" "build kernel (bzImage modules)" \
		kmake bzImage modules || exit 1
	step "$LOGDIR/modules-install.log" "install the kernel's modules" \
		_modules_install || exit 1
}

# The kernel's modules, installed with their modules.dep under
# $KOBJ/modroot, where the guest's modprobe looks (qemu/guest-init): it
# then loads a module and what it needs (ib_uverbs, ib_core) as on any
# system.
_modules_install()
{
	rm -rf "$KOBJ/modroot"
	kmake INSTALL_MOD_PATH="$KOBJ/modroot" modules_install
}

kernel_image()
{
	echo "$KOBJ/arch/x86/boot/bzImage"
}

kernel_release()
{
	cat "$KOBJ/include/config/kernel.release"
}
