#!/usr/bin/env bash
# soft-RoCE (the kernel's rdma_rxe) on a real Linux host, to run txrx --method rdma on a NIC-less
# machine for real before acceptance day.
#
#   scripts/soft-roce.sh up NETDEV     create rxe_NETDEV over NETDEV, check ibv_devices, print the
#                                      txrx and ReFrame commands that then run over it
#   scripts/soft-roce.sh down NETDEV   remove rxe_NETDEV
#
# Needs root (or CAP_NET_ADMIN), iproute2's `rdma`, `ibv_devices` (ibverbs-utils) and a kernel
# with the rdma_rxe module. Every refusal is one line on stderr: 2 for usage, 1 otherwise.
set -uo pipefail

die() { echo "ERROR: soft-roce: $1" >&2; exit "${2:-1}"; }

[ $# -eq 2 ] && { [ "$1" = up ] || [ "$1" = down ]; } \
    || die "usage: scripts/soft-roce.sh up|down NETDEV" 2
action=$1 netdev=$2 dev="rxe_$2"
[ -d "/sys/class/net/$netdev" ] || die "no network interface $netdev on $(hostname) (see: ip link)" 2
for tool in rdma ibv_devices; do
    command -v "$tool" >/dev/null || die "$tool not found: install iproute2 and ibverbs-utils"
done

has_device() { ibv_devices 2>/dev/null | awk 'NR > 2 {print $1}' | grep -qx "$dev"; }

if [ "$action" = down ]; then
    if ! rdma link show "$dev/1" >/dev/null 2>&1; then
        echo "soft-roce: $dev does not exist: nothing to remove"
        exit 0
    fi
    out=$(rdma link delete "$dev" 2>&1) || die "rdma link delete $dev failed: ${out//$'\n'/ }"
    has_device && die "$dev is still listed by ibv_devices after rdma link delete"
    echo "soft-roce: $dev removed"
    exit 0
fi

if [ ! -d /sys/module/rdma_rxe ]; then
    err=$(modprobe rdma_rxe 2>&1) || die "kernel $(uname -r) on $(hostname) has no rdma_rxe module\
 (modprobe rdma_rxe: ${err:-failed}): use a host whose kernel has soft-RoCE; without one,\
 FABRICTEST_VERBS=sim runs txrx's rdma path over the simulated verbs provider"
fi
if ! rdma link show "$dev/1" >/dev/null 2>&1; then
    out=$(rdma link add "$dev" type rxe netdev "$netdev" 2>&1) \
        || die "rdma link add $dev type rxe netdev $netdev failed: ${out//$'\n'/ }"
fi
has_device || die "$dev was created but ibv_devices does not list it"
state=$(rdma link show "$dev/1" 2>/dev/null)
echo "soft-roce: $dev is up over $netdev: $state"
cat <<EOT

Run the rdma path for real over it (RoCE v2 GID of $netdev's IP address picked automatically):

  mpirun -np 2 txrx --method rdma --device $dev --msg-size 65536 --num-blks 10 --num-cmsgs 100 --nmsg 100_000
  mpirun -np 2 txrx --method rdma --device $dev --transport rc --test increment --nmsg 100_000
  mpirun -np 3 txrx --method rdma --device $dev --nrx 1 --nlink 2 --nmsg 100_000

and the ReFrame tx/rx test on a system whose partition has the +rdma feature (extras
rdma_device: $dev), e.g.:

  reframe -c reframe_tests -r --system SYSTEM -n 'TxRxTest %scenario=paired %span=one %method=rdma'

soft-RoCE runs the real verbs stack and kernel path on the CPU: its rates are not NIC rates.
Remove it with: scripts/soft-roce.sh down $netdev
EOT
