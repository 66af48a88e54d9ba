"""The ``fabric-health`` command: gather this node's records, run every check, print one line
per check (format in :mod:`fabrictest.parsers.health` and ``docs/parsers.md``)::

    HEALTH <node> <device>/<port> <check>: PASS|FAIL <detail>
    HEALTH summary: <N> checks, <M> failed

preceded by ``HEALTH <node> source: sysfs (<why>)`` when a tool was there but its view was lost
(``ibv_devinfo -v`` or ``ip -j link`` timed out, exited non-zero, printed no UTF-8).

Exit status: 0 every check passed, 1 a check failed, 2 no RDMA device on this node (one line
``HEALTH <node> no RDMA device: <reason>``), 64 bad command line.

``--nic NIC`` adds the fabric NIC's own checks (MAC, address, name both ways, LLDP neighbour
against the cabling, loopback rate; :mod:`fabrictest.health.stage1`), ``--mgmt`` the
management network, ``--no-rdma`` checks a fabric without RDMA ports by its netdevs, and
``--drain`` makes the command Slurm's health check (:mod:`fabrictest.health.slurm_drain`).

``fabric-health counters ...`` reads the link, error and congestion counters instead
(:mod:`fabrictest.counters.cli`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import socket
import sys
from pathlib import Path

from fabrictest.parsers.health import CheckResult
from fabrictest.parsers.ibv_devinfo import normalise_link_layer

from . import slurm_drain, stage1
from .checks import HealthExpectations, evaluate_arp_thresholds, evaluate_netdev, evaluate_port
from .gather import (
    SYSFS_INSTEAD,
    gather_gc_thresh,
    gather_netdevs,
    gather_ports,
    ping_peer,
    sysfs_instead,
)

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_NO_DEVICE = 2
EXIT_USAGE = 64


#: the MTUs an RDMA port can have (IBTA: 256 to 4096 bytes)
RDMA_MTUS = (256, 512, 1024, 2048, 4096)
MAX_RATE_GBPS = 10_000.0  # no port is faster (NDR is 400, XDR 800 per port)
NETDEV_MTU_RANGE = (68, 65536)  # IPv4's minimum to the largest an interface takes


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # usage errors must not look like "no device" (2)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def usage_problem(args: argparse.Namespace) -> str | None:
    """Why an option makes no sense, or None: checked before anything is read from the node,
    so a bad value is refused the same with or without an RDMA device."""
    if args.expect_mtu is not None and args.expect_mtu not in RDMA_MTUS:
        return (f"--expect-mtu {args.expect_mtu}: an RDMA MTU is one of "
                f"{', '.join(map(str, RDMA_MTUS))}")
    rate = args.expect_rate
    if rate is not None and not (math.isfinite(rate) and 0 < rate <= MAX_RATE_GBPS):
        return f"--expect-rate {rate:g}: a port rate is a number of Gb/s in (0, {MAX_RATE_GBPS:g}]"
    lo, hi = NETDEV_MTU_RANGE
    if args.netdev_mtu is not None and not lo <= args.netdev_mtu <= hi:
        return f"--netdev-mtu {args.netdev_mtu}: an interface MTU is {lo} to {hi} bytes"
    if args.link_layer is not None and normalise_link_layer(args.link_layer) not in (
            "Ethernet", "InfiniBand"):
        return f"--link-layer {args.link_layer!r}: Ethernet (RoCE) or InfiniBand"
    if args.port is not None and not 1 <= args.port <= 255:
        return f"--port {args.port}: an RDMA port number is 1 to 255"
    if (args.nodes is not None and args.nodes < 1) or args.nics_per_node < 1:
        return "--nodes and --nics-per-node must be >= 1"
    if any(not d.strip() for d in args.device or ()):
        return "--device needs a device name (e.g. mlx5_0)"
    if args.node_name is not None and not args.node_name.strip():
        return "--node-name is empty"
    if args.node_name is not None and not _HOST_NAME.fullmatch(args.node_name):
        # the name goes into the health line and to scontrol under --drain: only a host name
        return (f"--node-name {args.node_name!r} is not a host name (letters, digits, '-', "
                "'.', '_'; 1-253 characters)")
    return stage1.usage_problem(args)  # the fabric-NIC checks' options


#: a host name as Slurm's NodeName takes it (RFC 1123 labels; '_' as sites use it)
_HOST_NAME = re.compile(r"(?=.{1,253}\Z)[A-Za-z0-9](?:[A-Za-z0-9_-]*[A-Za-z0-9])?"
                        r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9_-]*[A-Za-z0-9])?)*")


def _env_nodes() -> int | None:
    for var in ("SLURM_JOB_NUM_NODES", "SLURM_NNODES"):
        value = os.environ.get(var, "")
        if value.isdigit():
            return int(value)
    return None


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="fabric-health",
        description="RDMA NIC pre-flight checks on this node; one 'HEALTH ...' line per check.",
        epilog="Exit: 0 all passed, 1 a check failed, 2 no RDMA device, 64 usage error. "
        "'fabric-health counters --help': the link, error and congestion counters.",
    )
    p.add_argument("--expect-mtu", type=int, help="minimum active RDMA MTU in bytes (e.g. 4096)")
    p.add_argument("--expect-rate", type=float, help="minimum port rate in Gb/s (e.g. 100)")
    p.add_argument(
        "--link-layer", help="Ethernet (RoCE) or InfiniBand; only ports of that layer are checked"
    )
    p.add_argument("--netdev-mtu", type=int, help="the MTU the port's netdev must have (e.g. 9000)")
    p.add_argument(
        "--nodes",
        type=int,
        default=None,
        help="cluster size for the ARP thresholds (default: $SLURM_JOB_NUM_NODES)",
    )
    p.add_argument(
        "--nics-per-node",
        type=int,
        default=1,
        help="NICs per node for the ARP thresholds (default 1)",
    )
    p.add_argument("--no-arp", action="store_true",
                   help="skip the ARP cache thresholds (a network namespace has none of its "
                        "own: the kernel shows gc_thresh in the initial namespace only)")
    p.add_argument("--device", action="append", help="check only this RDMA device (repeatable)")
    p.add_argument("--port", type=int, help="check only this port number")
    p.add_argument(
        "--no-rocev2", action="store_true", help="do not require a RoCE v2 GID on Ethernet ports"
    )
    p.add_argument(
        "--ping",
        default="",
        help="comma-separated peers (fabric addresses) to ping: one 'ping:<peer>' check each",
    )
    p.add_argument(
        "--node-name", default=None, help="name printed for this node (default: short hostname)"
    )
    p.add_argument("--sys-root", default="/sys", help=argparse.SUPPRESS)
    p.add_argument("--proc-root", default="/proc", help=argparse.SUPPRESS)
    p.add_argument("--no-ibv-devinfo", action="store_true", help="read sysfs only")
    p.add_argument("--json", action="store_true", help="print one JSON document instead of lines")
    p.add_argument("--drain", action="store_true",
                   help="Slurm's health check (HealthCheckProgram): drain this node with the "
                        "first failure as its reason, resume it when fabric-health drained it "
                        "and every check passes (docs/health.md)")
    stage1.add_options(p)
    return p


def run_checks(args: argparse.Namespace, node: str,
               declared: stage1.Declared | None = None) -> tuple[list[CheckResult] | None, str]:
    """All checks for this node; (None, reason) when it has no RDMA device."""
    sys_root, proc_root = Path(args.sys_root), Path(args.proc_root)
    declared = declared or stage1.Declared()
    if args.no_rdma:  # a fabric without RDMA ports: the --nic netdevs are the fabric's NICs
        return _netdev_fabric_checks(args, node, declared), "netdevs (--no-rdma)"
    hcas, source = gather_ports(sys_root, use_ibv_devinfo=not args.no_ibv_devinfo)
    ports = [p for h in hcas for p in h.ports]
    if not ports:
        reason = f"no device in ibv_devinfo or {sys_root}/class/infiniband"
        return None, reason + (f"; ports from {source}" if SYSFS_INSTEAD in source else "")
    expect = HealthExpectations(
        link_layer=args.link_layer,
        min_mtu=args.expect_mtu,
        min_rate_gbps=args.expect_rate,
        require_rocev2_gid=False if args.no_rocev2 else None,
        netdev_mtu=args.netdev_mtu,
    )
    if args.device:
        ports = [p for p in ports if p.device in args.device]
    if args.port is not None:
        ports = [p for p in ports if p.port == args.port]
    if expect.link_layer and not args.device:
        ports = [p for p in ports if p.link_layer == expect.link_layer]
    results: list[CheckResult] = []
    if not ports:
        wanted = ", ".join(
            filter(
                None,
                [
                    f"device {','.join(args.device)}" if args.device else None,
                    f"port {args.port}" if args.port is not None else None,
                    f"link layer {expect.link_layer}" if expect.link_layer else None,
                ],
            )
        )
        results.append(
            CheckResult(
                node, "-", "-", "rdma_port", False, f"no port matches {wanted} (source: {source})"
            )
        )
    netdevs, netdevs_lost = gather_netdevs(sys_root)
    if netdevs_lost:
        source += f"; netdevs from {sysfs_instead(netdevs_lost)}"
    for port in ports:
        results += evaluate_port(port, expect, node)
        state, mtu = netdevs.get(port.netdev, (None, None)) if port.netdev else (None, None)
        if port.netdev or port.link_layer == "Ethernet":
            results += evaluate_netdev(
                port.netdev, state, mtu, expect, node, port.device or "?", str(port.port)
            )
    results += _node_checks(args, node, proc_root)
    results += stage1.run(args, node, declared, ports)
    return results + _pings(args, node), source


def _node_checks(args: argparse.Namespace, node: str, proc_root: Path) -> list[CheckResult]:
    if args.no_arp:
        return []
    nodes = args.nodes if args.nodes is not None else _env_nodes()
    return evaluate_arp_thresholds(gather_gc_thresh(proc_root), nodes, args.nics_per_node, node)


def _pings(args: argparse.Namespace, node: str) -> list[CheckResult]:
    results = []
    for peer in [x.strip() for x in args.ping.split(",") if x.strip()]:
        ok, detail = ping_peer(peer)
        results.append(CheckResult(node, "-", "-", f"ping:{peer}", ok, detail))
    return results


def _netdev_fabric_checks(args: argparse.Namespace, node: str,
                          declared: stage1.Declared) -> list[CheckResult]:
    """``--no-rdma``: each --nic's state and MTU, the node's checks, the fabric-NIC checks."""
    expect = HealthExpectations(netdev_mtu=args.netdev_mtu)
    netdevs, _lost = gather_netdevs(Path(args.sys_root))  # a missing NIC fails its check
    results: list[CheckResult] = []
    for nic in stage1.nics(args):
        state, mtu = netdevs.get(nic, (None, None))
        results += evaluate_netdev(nic if nic in netdevs else None, state, mtu, expect, node,
                                   nic, "-")
    results += _node_checks(args, node, Path(args.proc_root))
    results += stage1.run(args, node, declared)
    return results + _pings(args, node)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["counters"]:  # the counters subcommand (its own options, docs/counters.md)
        from fabrictest.counters.cli import main as counters_main

        return counters_main(argv[1:])
    args = build_parser().parse_args(argv)
    problem = usage_problem(args)
    if problem:
        print(f"fabric-health: error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    declared, problem = stage1.read_declared(args)  # a site file that cannot be read: usage
    if problem:
        print(f"fabric-health: error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    node = args.node_name or socket.gethostname().split(".")[0]
    results, source = run_checks(args, node, declared)
    if results is None:
        if args.json:
            print(json.dumps({"node": node, "no_device": True, "reason": source}))
        else:
            print(f"HEALTH {node} no RDMA device: {source}")
        if args.drain:  # a node that lost its RDMA device is drained like a failed check
            line, _ = slurm_drain.apply(
                node, [CheckResult(node, "-", "-", "rdma_device", False, source)])
            print(line, file=sys.stderr if args.json else sys.stdout)
        return EXIT_NO_DEVICE
    failed = sum(1 for r in results if not r.ok)
    if args.json:
        doc = {
            "node": node,
            "source": source,
            "results": [r.as_dict() for r in results],
            "checks": len(results),
            "failed": failed,
        }
        print(json.dumps(doc, indent=1))
    else:
        if SYSFS_INSTEAD in source:  # a tool's view was lost: say why before sysfs's checks
            print(f"HEALTH {node} source: {source}")
        for r in results:
            print(r.line())
        print(f"HEALTH summary: {len(results)} checks, {failed} failed")
    if args.drain:  # Slurm's health check: drain on a failure, resume what we drained
        line, ok = slurm_drain.apply(node, results)
        print(line, file=sys.stderr if args.json else sys.stdout)
        if not ok:
            return EXIT_FAILED
    return EXIT_FAILED if failed else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
