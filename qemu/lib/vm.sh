# SPDX-License-Identifier: MIT
# Booting a guest: the test kernel, the host root over virtio-9p read-only,
# a writable per-run share, and one command. Sourced after kernel.sh and
# topologies.sh.

SPLAT_PATTERNS=$VP2P_TOP/qemu/splat-patterns
VP2P_VM_MEM=${VP2P_VM_MEM:-2G}
VP2P_VM_CPUS=${VP2P_VM_CPUS:-2}

_qemu_cmd()	# _qemu_cmd TOPOLOGY OUTDIR EXTRA-CMDLINE
{
	local accel=tcg,thread=multi

	# Nested KVM on these machines is far slower than TCG; opt-in only.
	[ "${VP2P_KVM:-0}" = 1 ] && accel=kvm
	# 6.1 mounts a nodev root by root= minus its "/dev/" prefix, so the
	# tag for root=/dev/root is "root"; newer kernels take "/dev/root".
	local roottag=root

	[ "$VP2P_LINUX" = 6.1 ] || roottag=/dev/root
	echo qemu-system-x86_64 -accel $accel -smp "$VP2P_VM_CPUS" \
		-m "$VP2P_VM_MEM" -no-reboot -nodefaults \
		-kernel "$(kernel_image)" \
		-fsdev local,id=root,path=/,security_model=none,readonly=on,multidevs=remap \
		-device virtio-9p-pci,fsdev=root,mount_tag=$roottag \
		-fsdev local,id=out,path="$2",security_model=none \
		-device virtio-9p-pci,fsdev=out,mount_tag=vp2pout \
		$(topology_qemu_args "$1")
	echo -append
	# no_timer_check: under TCG on a loaded host, the IO-APIC timer
	# check's calibration loop can miss ticks and panic the boot.
	echo "no_timer_check console=ttyS0 root=/dev/root rootfstype=9p ro" \
		"rootflags=trans=virtio,version=9p2000.L,msize=262144,cache=loose" \
		"init=$VP2P_TOP/qemu/guest-init panic=-1 8250.nr_uarts=1" \
		"transparent_hugepage=madvise $(topology_cmdline "$1") $3" \
		"VP2P_KEEP=$VP2P_TOP:$VP2P_CACHE:$VP2P_BUILD" \
		"VP2P_MODROOT=$KOBJ/modroot"
}

# kernel_lines LOG: the kernel's lines in a console log, from their
# timestamp on, wherever it starts (a test's output on the same console
# can come before it on the line), and the console's own note of
# records it dropped, which has no timestamp. Only these count, so test
# output cannot fake a splat.
kernel_lines()
{
	grep -aoE '\[ *[0-9]+\.[0-9]+\] .*|\*\* [0-9]+ printk messages dropped \*\*' "$1"
}

# splat_scan LOG: print the kernel splat lines in a console log, if any;
# fails if there are none. The KCSAN reports of unpatched 6.1 that
# qemu/kcsan-known-races lists are not splats (qemu/splat-filter);
# splat_scan_known prints those.
splat_scan()
{
	local s

	s=$(kernel_lines "$1" | grep -aEf "$SPLAT_PATTERNS" |
		"$VP2P_TOP/qemu/splat-filter")
	[ -n "$s" ] && printf '%s\n' "$s"
}

splat_scan_known()
{
	kernel_lines "$1" | grep -aEf "$SPLAT_PATTERNS" |
		"$VP2P_TOP/qemu/splat-filter" -k
}

# vm_run TOPOLOGY OUTDIR TIMEOUT SCRIPT: run SCRIPT (shell text) in a guest.
# Returns the script's exit status; 124 on timeout; 125 when the guest did
# not report one; 126 when the kernel splatted. The console is in
# OUTDIR/console.log.
vm_run()
{
	local topo=$1 out=$2 tmo=$3 script=$4 rc t0 args

	rm -rf "$out"
	mkdir -p "$out"
	printf '%s\n' "$script" >"$out/cmd"
	echo "$topo" >"$out/title"
	t0=$(date +%s)
	mapfile -t args < <(_qemu_cmd "$topo" "$out" "${VP2P_VM_CMDLINE:-}")
	# shellcheck disable=SC2086
	timeout -k 10 "$tmo" ${args[0]} -display none -monitor none \
		-serial file:"$out/console.log" -append "${args[2]}" \
		</dev/null >"$out/qemu.log" 2>&1
	rc=$?
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		echo "  guest [$topo] timed out after $(elapsed "$t0")" >&2
		return 124
	fi
	if [ ! -s "$out/status" ]; then
		echo "  guest [$topo] exited without a status (qemu rc $rc, log: $out)" >&2
		tail -n 5 "$out/qemu.log" "$out/console.log" 2>/dev/null | sed 's/^/    | /' >&2
		return 125
	fi
	splat_scan_known "$out/console.log" >"$out/splats-known"
	[ -s "$out/splats-known" ] || rm -f "$out/splats-known"
	if splat_scan "$out/console.log" >"$out/splats"; then
		echo "  guest [$topo] kernel splat (console: $out/console.log):" >&2
		head -n 5 "$out/splats" | sed 's/^/    | /' >&2
		return 126
	fi
	return "$(cat "$out/status")"
}

# vm_shell TOPOLOGY: an interactive shell in the guest on this terminal.
vm_shell()
{
	local out=$VP2P_BUILD/runs/shell-$1 args

	rm -rf "$out"
	mkdir -p "$out"
	echo "$1 (shell)" >"$out/title"
	mapfile -t args < <(_qemu_cmd "$1" "$out" "VP2P_SHELL=1")
	echo "vp2p: shell on '$1'; exit the shell to power off"
	# shellcheck disable=SC2086
	${args[0]} -nographic -append "${args[2]}"
}
