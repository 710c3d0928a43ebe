# SPDX-License-Identifier: MIT
# The named QEMU topologies, defined here and nowhere else.
#
# Devices:
#   ivshmem-plain (1af4:1110): the exporter's VRAM, BAR2 backed by host RAM.
#   edu (1234:11e8): the importer, a bus-master DMA engine. dma_mask is all
#   ones so that 64-bit BAR addresses and IOVAs reach it unmasked.
#   bochs-display (1234:1111): the real TTM exporter. bochs maps its VRAM,
#   BAR 0, through drm_gem_vram_helper and TTM's vm_ops. Placed beside the
#   others in switch, split and iommu rather than in boots of its own.
#
# The PCIe ids below (rpN, upN, dnN) are what the topology smoke test
# checks for, through the bus numbers they produce in the guest.

VP2P_TOPOLOGIES="switch split iommu multi epyc"
# Booted by `qemu/vp2p bench` (and `run`, `shell`), never by `test`.
VP2P_BENCH_TOPOLOGIES="bench"
VRAM_SIZE=${VRAM_SIZE:-128M}

_vram()		# _vram N PARENT-BUS
{
	echo "-object memory-backend-memfd,id=vram$1,size=$VRAM_SIZE,share=on"
	echo "-device ivshmem-plain,id=exporter$1,memdev=vram$1,bus=$2"
}

_edu()		# _edu N PARENT-BUS
{
	echo "-device edu,id=importer$1,bus=$2,dma_mask=0xffffffffffffffff"
}

# 64 MiB of VRAM: room for a 1024x768 scanout and the buffers that the
# eviction test fills it with.
_bochs()	# _bochs PARENT-BUS
{
	echo "-device bochs-display,id=bochs0,bus=$1,vgamem=64M"
}

_root_port()	# _root_port N
{
	echo "-device pcie-root-port,id=rp$1,bus=pcie.0,chassis=$1,slot=$1"
}

# _switch N PORTS: root port rpN, upstream port upN, downstream dnN.0...
_switch()
{
	local i

	_root_port "$1"
	echo "-device x3130-upstream,id=up$1,bus=rp$1"
	for ((i = 0; i < $2; i++)); do
		echo "-device xio3130-downstream,id=dn$1.$i,bus=up$1,chassis=$((10 * $1 + i + 10)),slot=$i"
	done
}

# check_topologies NAME...: die, in the calling shell, on a name that is
# not a topology, so that a typo fails before minutes of building rather
# than inside the subshell that assembles QEMU's arguments.
check_topologies()
{
	local t

	for t in "$@"; do
		case " $VP2P_TOPOLOGIES $VP2P_BENCH_TOPOLOGIES " in
		*" $t "*) ;;
		*) die "unknown topology '$t' (one of: $VP2P_TOPOLOGIES $VP2P_BENCH_TOPOLOGIES)" ;;
		esac
	done
}

# topology_qemu_args NAME: QEMU arguments for the machine and devices.
#
# la57=off: with 5-level paging, the debug kernel intermittently reported
# a KASAN wild-memory-access in rcu_is_watching() from an interrupt taken
# during identify_cpu() early in boot (2 boots of about 20); the tests
# need nothing from 5-level paging.
topology_qemu_args()
{
	local machine="-machine q35" cpu="-cpu max,la57=off"

	case "$1" in
	switch)
		_switch 1 3; _vram 0 dn1.0; _edu 0 dn1.1; _bochs dn1.2 ;;
	split)
		_root_port 1; _root_port 2; _root_port 3
		_vram 0 rp1; _edu 0 rp2; _bochs rp3 ;;
	epyc)
		_root_port 1; _root_port 2; _vram 0 rp1; _edu 0 rp2
		cpu="-cpu EPYC" ;;
	iommu)
		# Root ports, whose ACS redirect Linux turns on with the IOMMU,
		# and a host bridge that routes p2p (AMD Zen): the traffic goes
		# through the vIOMMU, as QEMU translates it. QEMU's xio3130
		# downstream ports have no ACS, so behind a switch Linux would
		# rightly hand out bus addresses that QEMU's vIOMMU, unlike a
		# real switch, would translate.
		machine="-machine q35,kernel-irqchip=split"
		cpu="-cpu EPYC"
		# The vIOMMU must exist before the devices it translates.
		# bochs, a second edu and a second ivshmem share a switch:
		# the kernel hands edu1 bus addresses for bochs' VRAM and for
		# vgem_p2p1's, which only the bulk mode (CPU copies) can use
		# here, QEMU translating what a real switch routes; edu0
		# reaches both through the host bridge.
		echo "-device intel-iommu,intremap=on"
		_root_port 1; _root_port 2
		_vram 0 rp1; _edu 0 rp2
		_switch 3 3; _bochs dn3.0; _edu 1 dn3.1; _vram 1 dn3.2 ;;
	bench)
		# switch's p2p paths, with room for a VRAM BAR above 256 MiB.
		# In switch, the ivshmem BAR (64-bit) and bochs-display's VRAM
		# (32-bit, prefetchable) share rp1's prefetchable window, which
		# SeaBIOS must then place below 4 GiB: 512 MiB + 64 MiB rounds
		# up to 1 GiB, more than q35's 32-bit hole, and SeaBIOS halts
		# ("PCI: out of 32bit address space"). Here bochs sits behind
		# a switch of its own, with the importer that maps it (edu1,
		# so edu_nic1), so rp1's window holds 64-bit BARs only and
		# SeaBIOS moves it above 4 GiB; each importer still reaches
		# its exporter through a switch, as in switch.
		_switch 1 2; _vram 0 dn1.0; _edu 0 dn1.1
		_switch 2 2; _bochs dn2.0; _edu 1 dn2.1 ;;
	multi)
		# Also the mixed layout of a real server: edu2 on a root port
		# of its own reaches neither exporter p2p (a host bridge of
		# cpu max is not whitelisted), while edu0 and edu1 do. It
		# comes last, so edu_nic0 and edu_nic1 stay behind the switch.
		_switch 1 4
		_vram 0 dn1.0; _vram 1 dn1.1; _edu 0 dn1.2; _edu 1 dn1.3
		_root_port 2; _edu 2 rp2 ;;
	*)
		die "unknown topology '$1' (one of: $VP2P_TOPOLOGIES $VP2P_BENCH_TOPOLOGIES)" ;;
	esac
	echo "$machine"
	echo "$cpu"
}

# topology_cmdline NAME: extra kernel command line.
topology_cmdline()
{
	case "$1" in
	iommu) echo "intel_iommu=on" ;;
	# Everything is the fallback here: bounce every DMA (as SEV/TDX or a
	# small DMA mask would), so a missing sync loses data.
	split) echo "swiotlb=force" ;;
	*) echo "" ;;
	esac
}
