# SPDX-License-Identifier: MIT
# Everything built against the kernel tree but outside it: the external
# modules, user space (meson), and the kernel's own hmm-tests.

MODBUILD=$VP2P_BUILD/modules$VP2P_LINUX_SUFFIX
MESONBUILD=$VP2P_BUILD/meson$VP2P_LINUX_SUFFIX

# Module directories in the repo. Kbuild writes objects next to the
# sources with M=, so each is mirrored into the build directory first;
# rsync keeps mtimes, so an untouched module is not rebuilt.
VP2P_MODULE_DIRS=${VP2P_MODULE_DIRS:-"vgem-p2p qemu/selftest"}

_modules_make()
{
	local d

	for d in $VP2P_MODULE_DIRS; do
		[ -f "$VP2P_TOP/$d/Kbuild" ] || continue
		mkdir -p "$MODBUILD/$d"
		rsync -a --delete --exclude='*.o' --exclude='*.ko' \
			--exclude='*.mod*' --exclude='.*.cmd' \
			--exclude=Module.symvers --exclude=modules.order \
			"$VP2P_TOP/$d/" "$MODBUILD/$d/" || return 1
		kmake M="$MODBUILD/$d" W=1 modules || return 1
	done
}

modules_build()
{
	step "$LOGDIR/modules.log" "build external modules (M=)" \
		_modules_make || exit 1
}

# module_path NAME: the .ko of an external module, for insmod in the guest.
module_path()
{
	find "$MODBUILD" -name "$1.ko" | head -n 1
}

_userspace_build()
{
	if [ ! -f "$MESONBUILD/build.ninja" ]; then
		meson setup "$MESONBUILD" "$VP2P_TOP" \
			-Dkernel_src="$KSRC" -Dkernel_obj="$KOBJ" || return 1
	elif [ "$(cat "$MESONBUILD/vp2p-kernel" 2>/dev/null)" != "$KSRC $KOBJ" ]; then
		# Another VP2P_CACHE: hmm-tests must match its test_hmm.ko.
		meson configure "$MESONBUILD" \
			-Dkernel_src="$KSRC" -Dkernel_obj="$KOBJ" || return 1
	fi
	echo "$KSRC $KOBJ" >"$MESONBUILD/vp2p-kernel"
	meson compile -C "$MESONBUILD"
}

userspace_build()
{
	step "$LOGDIR/userspace.log" "build user space (meson)" \
		_userspace_build || exit 1
}
