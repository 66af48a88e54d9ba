"""NIC pre-flight health checks (seed 003's checklist, as far as a node can check itself).

Per node: every RDMA port ACTIVE with its link up, the expected link layer, an active MTU and
rate at least the expected ones, a RoCE v2 GID (Ethernet ports), the port's netdev up with the
expected MTU, and ARP cache thresholds (``net.ipv4.neigh.default.gc_thresh{1,2,3}``) large
enough for the cluster. Across nodes: :func:`unreachable_pairs` of a ping matrix.

The checks are pure functions of parsed records (:mod:`fabrictest.parsers`); :func:`main`
(the ``fabric-health`` command) gathers the records on the node it runs on and prints one
line per check (format in :mod:`fabrictest.parsers.health` and ``docs/parsers.md``)::

    HEALTH <node> <device>/<port> <check>: PASS|FAIL <detail>
    HEALTH summary: <N> checks, <M> failed

Exit status: 0 every check passed, 1 a check failed, 2 no RDMA device on this node (one line
``HEALTH <node> no RDMA device: <reason>``), 64 bad command line.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from .parsers import ParseError
from .parsers.health import CheckResult
from .parsers.ibv_devinfo import (
    HcaInfo,
    PortInfo,
    infer_mofed_gid_kinds,
    normalise_link_layer,
    parse_ibv_devinfo,
)
from .parsers.ibv_devinfo import missing as devinfo_missing
from .sysinfo import read_hcas_from_sysfs, read_netdevs

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_NO_DEVICE = 2
EXIT_USAGE = 64

GC_KEYS = ("gc_thresh1", "gc_thresh2", "gc_thresh3")


@dataclass(frozen=True)
class Problem:
    node: str
    device: str
    port: str
    check: str
    message: str


@dataclass
class HealthExpectations:
    """What a healthy port looks like; None means "not checked" (the value is still shown).

    ``require_rocev2_gid`` None means: required on Ethernet (RoCE) ports, not on InfiniBand.
    ``min_gc_thresh`` is (gc_thresh1, gc_thresh2, gc_thresh3) minima, see
    :func:`gc_thresh_requirements` and :meth:`for_cluster`.
    """

    link_layer: str | None = None
    min_mtu: int | None = None
    min_rate_gbps: float | None = None
    require_rocev2_gid: bool | None = None
    netdev_mtu: int | None = None
    min_gc_thresh: tuple[int, int, int] | None = None

    def __post_init__(self) -> None:
        self.link_layer = normalise_link_layer(self.link_layer)

    @classmethod
    def for_cluster(cls, nodes: int, nics_per_node: int = 1, **kwargs) -> HealthExpectations:
        return cls(min_gc_thresh=gc_thresh_requirements(nodes, nics_per_node), **kwargs)


def gc_thresh_requirements(nodes: int, nics_per_node: int = 1) -> tuple[int, int, int]:
    """ARP cache minima for ``nodes`` nodes with ``nics_per_node`` NICs each.

    HPE's CSM "ARP cache tuning" guide (Slingshot systems): ``gc_thresh1 = nodes x NICs^2``,
    ``gc_thresh2 = 1.5 x gc_thresh1``, ``gc_thresh3 = 2 x gc_thresh2``. Linux defaults
    (128/512/1024) pass for small clusters.
    """
    if nodes < 1 or nics_per_node < 1:
        raise ValueError("nodes and nics_per_node must be >= 1")
    t1 = nodes * nics_per_node**2
    t2 = math.ceil(1.5 * t1)
    return t1, t2, 2 * t2


def _result(node: str, port: PortInfo, check: str, ok: bool, detail: str) -> CheckResult:
    return CheckResult(node, port.device or "?", str(port.port), check, ok, detail)


def _at_least(value, shown: str, minimum, minimum_shown: str) -> tuple[bool, str]:
    """A figure against its expected minimum: missing fails only when a minimum is set."""
    if value is None:
        return minimum is None, "not reported"
    if minimum is None:
        return True, f"{shown} (no minimum set)"
    ok = value >= minimum
    return ok, f"{shown} {'>=' if ok else '<'} {minimum_shown}"


def evaluate_port(port: PortInfo, expect: HealthExpectations, node: str = "-") -> list[CheckResult]:
    """Every port check, passed or not, in a fixed order."""
    out = [
        _result(
            node, port, "port_state", port.state == "PORT_ACTIVE", str(port.state or "not reported")
        ),
    ]
    if port.phys_state is None:
        out.append(
            _result(node, port, "phys_state", False, "not reported (use ibv_devinfo -v or sysfs)")
        )
    else:
        out.append(_result(node, port, "phys_state", port.phys_state == "LINK_UP", port.phys_state))
    layer = port.link_layer or "not reported"
    if expect.link_layer is None:
        out.append(_result(node, port, "link_layer", port.link_layer is not None, layer))
    else:
        ok = port.link_layer == expect.link_layer
        out.append(_result(node, port, "link_layer", ok, f"{layer} (expected {expect.link_layer})"))
    mtu_ok, mtu_detail = _at_least(
        port.active_mtu, str(port.active_mtu), expect.min_mtu, str(expect.min_mtu)
    )
    out.append(_result(node, port, "active_mtu", mtu_ok, mtu_detail))
    rate = f"{port.rate_gbps:g} Gb/s" if port.rate_gbps is not None else ""
    if port.active_width and port.active_speed_gbps:
        rate += f" ({port.active_width}X {port.active_speed_gbps:g})"
    min_rate = expect.min_rate_gbps
    rate_ok, rate_detail = _at_least(
        port.rate_gbps, rate, min_rate, f"{min_rate:g} Gb/s" if min_rate is not None else ""
    )
    out.append(_result(node, port, "rate", rate_ok, rate_detail))
    require = expect.require_rocev2_gid
    if require is None:
        require = port.link_layer == "Ethernet"
    if require:
        out.append(_rocev2_check(node, port))
    return out


def _rocev2_check(node: str, port: PortInfo) -> CheckResult:
    v2 = port.rocev2_gids()
    if v2:
        return _result(node, port, "rocev2_gid", True, f"index {v2[0].index} {v2[0].gid}")
    if not port.gids:
        return _result(
            node, port, "rocev2_gid", False, "no GID in this output (use ibv_devinfo -v or sysfs)"
        )
    if all(g.kind is None for g in port.gids):
        inferred = [g for g in infer_mofed_gid_kinds(port) if g.kind == "RoCE v2"]
        if inferred:
            g = inferred[0]
            return _result(
                node,
                port,
                "rocev2_gid",
                True,
                f"index {g.index} {g.gid} (type inferred: MOFED v1/v2 GID pairs)",
            )
        return _result(
            node, port, "rocev2_gid", False, f"{len(port.gids)} GIDs, types not reported"
        )
    return _result(node, port, "rocev2_gid", False, f"{len(port.gids)} GIDs, none RoCE v2")


def _problems(results: Iterable[CheckResult]) -> list[Problem]:
    return [Problem(r.node, r.device, r.port, r.check, r.detail) for r in results if not r.ok]


def check_port(port: PortInfo, expect: HealthExpectations, node: str = "-") -> list[Problem]:
    """The failed port checks (empty list: the port is healthy)."""
    return _problems(evaluate_port(port, expect, node))


def evaluate_netdev(
    name: str | None,
    operstate: str | None,
    mtu: int | None,
    expect: HealthExpectations,
    node: str = "-",
    device: str = "-",
    port: str = "-",
) -> list[CheckResult]:
    if name is None:
        return [
            CheckResult(node, device, port, "netdev_state", False, "no netdev found for this port")
        ]
    state = (operstate or "unknown").upper()
    out = [CheckResult(node, device, port, "netdev_state", state == "UP", f"{name} {state}")]
    if mtu is None:
        out.append(
            CheckResult(
                node,
                device,
                port,
                "netdev_mtu",
                expect.netdev_mtu is None,
                f"{name} mtu not reported",
            )
        )
    elif expect.netdev_mtu is None:
        out.append(
            CheckResult(
                node, device, port, "netdev_mtu", True, f"{name} mtu {mtu} (no expectation set)"
            )
        )
    else:
        ok = mtu == expect.netdev_mtu
        out.append(
            CheckResult(
                node,
                device,
                port,
                "netdev_mtu",
                ok,
                f"{name} mtu {mtu} {'==' if ok else '!='} {expect.netdev_mtu}",
            )
        )
    return out


def check_netdev(
    name: str | None,
    operstate: str | None,
    mtu: int | None,
    expect: HealthExpectations,
    node: str = "-",
) -> list[Problem]:
    """The failed netdev checks: operstate UP, MTU equal to ``expect.netdev_mtu`` when set."""
    return _problems(evaluate_netdev(name, operstate, mtu, expect, node))


def evaluate_arp_thresholds(
    values: Mapping[str, int | str | None],
    nodes: int | None,
    nics_per_node: int = 1,
    node: str = "-",
    minima: tuple[int, int, int] | None = None,
) -> list[CheckResult]:
    """``values``: gc_thresh1..3 (keys may be the full sysctl names) -> value."""
    norm: dict[str, int | None] = {}
    for key, value in values.items():
        short = key.rsplit(".", 1)[-1]
        try:
            norm[short] = int(value) if value is not None else None
        except (TypeError, ValueError):
            norm[short] = None
    if minima is None and nodes is not None:
        minima = gc_thresh_requirements(nodes, nics_per_node)
    out = []
    for i, key in enumerate(GC_KEYS):
        value = norm.get(key)
        if value is None:
            out.append(CheckResult(node, "-", "-", key, False, "not readable"))
        elif minima is None:
            out.append(
                CheckResult(
                    node, "-", "-", key, True, f"{value} (cluster size unknown: use --nodes)"
                )
            )
        else:
            ok = value >= minima[i]
            out.append(
                CheckResult(
                    node,
                    "-",
                    "-",
                    key,
                    ok,
                    f"{value} {'>=' if ok else '<'} {minima[i]} (nodes={nodes}, nics={nics_per_node})"
                    if nodes is not None
                    else f"{value} {'>=' if ok else '<'} {minima[i]}",
                )
            )
    got = [norm.get(k) for k in GC_KEYS]
    if all(v is not None for v in got):
        ordered = got[0] <= got[1] <= got[2]
        out.append(
            CheckResult(
                node, "-", "-", "gc_thresh_order", ordered, " <= ".join(str(v) for v in got)
            )
        )
    return out


def check_arp_thresholds(
    values: Mapping[str, int | str | None], nodes: int, nics_per_node: int = 1, node: str = "-"
) -> list[Problem]:
    """The failed ARP threshold checks for a cluster of ``nodes`` nodes."""
    return _problems(evaluate_arp_thresholds(values, nodes, nics_per_node, node))


def unreachable_pairs(
    ping_matrix: Mapping, nodes: Iterable[str] | None = None
) -> list[tuple[str, str]]:
    """Ordered (source, target) pairs that did not reach each other, sorted.

    ``ping_matrix`` is ``{(a, b): bool}`` or ``{a: {b: bool}}`` (True: a reached b). With
    ``nodes``, every ordered pair of distinct nodes must be present and True: a pair never
    tried counts as unreachable. Self-pairs are ignored.
    """
    flat: dict[tuple[str, str], bool] = {}
    for key, value in ping_matrix.items():
        if isinstance(key, tuple):
            flat[(str(key[0]), str(key[1]))] = bool(value)
        else:
            for target, ok in value.items():
                flat[(str(key), str(target))] = bool(ok)
    bad = {pair for pair, ok in flat.items() if not ok and pair[0] != pair[1]}
    if nodes is not None:
        names = list(dict.fromkeys(str(n) for n in nodes))
        for a in names:
            for b in names:
                if a != b and not flat.get((a, b), False):
                    bad.add((a, b))
    return sorted(bad)


# --------------------------------------------------------------------------- gathering


def _run(argv: list[str], timeout: float = 20) -> str | None:
    if shutil.which(argv[0]) is None:
        return None
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout if proc.returncode == 0 else None


def gather_ports(sys_root: Path, use_ibv_devinfo: bool = True) -> tuple[list[HcaInfo], str]:
    """RDMA devices from ``ibv_devinfo -v`` merged with sysfs (GID types, netdev, gaps)."""
    sysfs = read_hcas_from_sysfs(sys_root)
    by_port = {(p.device, p.port): p for h in sysfs for p in h.ports}
    hcas: list[HcaInfo] = []
    source = "sysfs"
    text = _run(["ibv_devinfo", "-v"]) if use_ibv_devinfo else None
    if text:
        try:
            hcas = parse_ibv_devinfo(text)
            source = "ibv_devinfo -v"
        except ParseError:
            hcas = []
        if hcas and devinfo_missing(hcas, text):
            # a port cut from the output would go unchecked: sysfs is the whole truth
            return sysfs, "sysfs (ibv_devinfo -v output cut short)"
    if not hcas:
        return sysfs, source
    for h in hcas:
        for p in h.ports:
            s = by_port.get((h.name, p.port))
            if s is None:
                continue
            source = "ibv_devinfo -v + sysfs"
            for name in (
                "phys_state",
                "rate_gbps",
                "active_width",
                "active_speed_gbps",
                "netdev",
                "active_mtu",
            ):
                if getattr(p, name) is None:
                    setattr(p, name, getattr(s, name))
            if s.gids and (not p.gids or all(g.kind is None for g in p.gids)):
                p.gids = list(s.gids)
    return hcas, source


def gather_netdevs(sys_root: Path) -> dict[str, tuple[str | None, int | None]]:
    """netdev -> (operstate, mtu), from ``ip -j link`` or else sysfs."""
    out: dict[str, tuple[str | None, int | None]] = {}
    text = _run(["ip", "-j", "link", "show"]) if sys_root == Path("/sys") else None
    if text:
        try:
            for item in json.loads(text):
                out[item["ifname"]] = (item.get("operstate"), item.get("mtu"))
            return out
        except (ValueError, KeyError, TypeError):
            out.clear()
    out.update(read_netdevs(sys_root))
    return out


def gather_gc_thresh(proc_root: Path) -> dict[str, int | None]:
    out: dict[str, int | None] = {}
    for key in GC_KEYS:
        value = _read(proc_root / "sys" / "net" / "ipv4" / "neigh" / "default" / key)
        if value is None and proc_root == Path("/proc"):
            value = (_run(["sysctl", "-n", f"net.ipv4.neigh.default.{key}"]) or "").strip() or None
        out[key] = int(value) if value and value.isdigit() else None
    return out


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def ping_peer(peer: str, count: int = 2, timeout_s: int = 2) -> tuple[bool, str]:
    from .parsers.ping import parse_ping

    if shutil.which("ping") is None:
        return False, "ping not installed"
    try:
        proc = subprocess.run(
            ["ping", "-c", str(count), "-W", str(timeout_s), peer],
            capture_output=True,
            text=True,
            timeout=count * timeout_s + 5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        return False, f"ping failed: {err}"
    try:
        res = parse_ping(proc.stdout)
    except ParseError:
        first = (proc.stderr or proc.stdout).strip().splitlines()
        return False, first[0] if first else f"ping exit {proc.returncode}"
    detail = f"{res.received}/{res.transmitted} replies"
    if res.rtt_avg_ms is not None:
        detail += f", avg {res.rtt_avg_ms:g} ms"
    return res.reachable, detail


# --------------------------------------------------------------------------- CLI


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # usage errors must not look like "no device" (2)
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


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
        epilog="Exit: 0 all passed, 1 a check failed, 2 no RDMA device, 64 usage error.",
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
    return p


def run_checks(args: argparse.Namespace, node: str) -> tuple[list[CheckResult] | None, str]:
    """All checks for this node; (None, reason) when it has no RDMA device."""
    sys_root, proc_root = Path(args.sys_root), Path(args.proc_root)
    hcas, source = gather_ports(sys_root, use_ibv_devinfo=not args.no_ibv_devinfo)
    ports = [p for h in hcas for p in h.ports]
    if not ports:
        return None, f"no device in ibv_devinfo or {sys_root}/class/infiniband"
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
    netdevs = gather_netdevs(sys_root)
    for port in ports:
        results += evaluate_port(port, expect, node)
        state, mtu = netdevs.get(port.netdev, (None, None)) if port.netdev else (None, None)
        if port.netdev or port.link_layer == "Ethernet":
            results += evaluate_netdev(
                port.netdev, state, mtu, expect, node, port.device or "?", str(port.port)
            )
    nodes = args.nodes if args.nodes is not None else _env_nodes()
    results += evaluate_arp_thresholds(gather_gc_thresh(proc_root), nodes, args.nics_per_node, node)
    for peer in [x.strip() for x in args.ping.split(",") if x.strip()]:
        ok, detail = ping_peer(peer)
        results.append(CheckResult(node, "-", "-", f"ping:{peer}", ok, detail))
    return results, source


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if (args.nodes is not None and args.nodes < 1) or args.nics_per_node < 1:
        print("fabric-health: error: --nodes and --nics-per-node must be >= 1", file=sys.stderr)
        return EXIT_USAGE
    node = args.node_name or socket.gethostname().split(".")[0]
    results, source = run_checks(args, node)
    if results is None:
        if args.json:
            print(json.dumps({"node": node, "no_device": True, "reason": source}))
        else:
            print(f"HEALTH {node} no RDMA device: {source}")
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
        for r in results:
            print(r.line())
        print(f"HEALTH summary: {len(results)} checks, {failed} failed")
    return EXIT_FAILED if failed else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
