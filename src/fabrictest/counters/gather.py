"""Read this node's counters into a :class:`~fabrictest.counters.snapshot.Snapshot`:
InfiniBand port counters and RDMA hw_counters (sysfs), netdev ``carrier_changes`` and
``statistics/``, ``ethtool -S`` where installed, ``/proc/net/snmp`` (TCP retransmissions, of
this network namespace) and ``cxi_stat`` where installed.

Only the counters the suite judges or reports are kept (:func:`~fabrictest.counters.read.kind_of`).
What cannot be read is kept with the value None and a reason in ``unreadable``: never 0.
Every command has a timeout.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

from fabrictest.counters.read import (
    kind_of,
    parse_counter_files,
    parse_cxi_stat,
    parse_ethtool_stats,
    parse_snmp,
)
from fabrictest.counters.snapshot import Counter, Snapshot
from fabrictest.parsers import ParseError
from fabrictest.sysinfo import infiniband_dir, list_ports, net_dir

COMMAND_TIMEOUT_S = 5


def _read_dir(path: Path, unreadable: list[str], what: str) -> dict[str, str | None]:
    """The kept counter files of a directory: name -> text (None, with a reason, when a read
    fails)."""
    files: dict[str, str | None] = {}
    try:
        names = sorted(p.name for p in path.iterdir())
    except OSError as err:
        unreadable.append(f"{what}: {err.strerror or err}")
        return files
    for name in names:
        if kind_of(name) is None:
            continue
        try:
            files[name] = (path / name).read_text()
        except OSError as err:
            files[name] = None
            unreadable.append(f"{what}/{name}: {err.strerror or err}")
    return files


def _command(argv: list[str], unreadable: list[str]) -> str | None:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        unreadable.append(f"{' '.join(argv)}: {err}")
        return None
    if proc.returncode != 0:
        first = (proc.stderr or proc.stdout).strip().splitlines()
        unreadable.append(f"{' '.join(argv)}: exit {proc.returncode}"
                          + (f": {first[0]}" if first else ""))
        return None
    return proc.stdout


def _kept(source: str, device: str, port: str, values: dict[str, int | None],
          files: dict[str, str | None], unreadable: list[str], what: str) -> list[Counter]:
    out = []
    for name, value in values.items():
        if value is None and files.get(name) is not None:
            unreadable.append(f"{what}/{name}: not a counter value {files[name].strip()[:30]!r}")
        out.append(Counter(source, device, port, name, value))
    return out


def rdma_counters(sys_root: Path, unreadable: list[str]) -> list[Counter]:
    """``counters/`` and ``hw_counters/`` of every RDMA port."""
    out: list[Counter] = []
    base = infiniband_dir(sys_root)
    for dev, port in list_ports(sys_root):
        for sub, source in (("counters", "ib"), ("hw_counters", "hw")):
            path = base / dev / "ports" / str(port) / sub
            if not path.is_dir():
                continue
            what = f"{source} {dev}/{port} {sub}"
            files = _read_dir(path, unreadable, what)
            out += _kept(source, dev, str(port), parse_counter_files(files), files, unreadable,
                         what)
    return out


def _other_namespace(net: Path, proc_root: Path) -> str | None:
    """Why ``net`` (``/sys/class/net``) is not this network namespace's, or None: sysfs shows
    the netdevs of the namespace it was mounted in, ``/proc/net/dev`` those of the reader's
    (a process that entered a namespace with ``nsenter --net`` sees the host's sysfs)."""
    try:
        lines = (proc_root / "net" / "dev").read_text().splitlines()[2:]
        here = {line.split(":", 1)[0].strip() for line in lines if ":" in line} - {"lo"}
        shown = {p.name for p in net.iterdir()} - {"lo"}
    except OSError:
        return None
    if here and shown and here != shown:
        return (f"{net} shows another network namespace's netdevs ({', '.join(sorted(shown))[:80]}; "
                f"this one has {', '.join(sorted(here))}): mount a sysfs of this namespace")
    return None


def netdev_counters(sys_root: Path, netdevs: list[str] | None, unreadable: list[str],
                    proc_root: Path = Path("/proc")) -> list[Counter]:
    """``carrier_changes`` and ``statistics/`` of the netdevs (default: every one but lo)."""
    out: list[Counter] = []
    net = net_dir(sys_root)
    other = _other_namespace(net, proc_root)
    if other:
        unreadable.append(f"netdev: {other}")
        return [Counter("netdev", ifname, "-", "carrier_changes", None)
                for ifname in (netdevs or [])]
    if netdevs is None:
        netdevs = sorted(p.name for p in net.iterdir() if p.name != "lo") if net.is_dir() else []
    for ifname in netdevs:
        d = net / ifname
        if not d.is_dir():
            unreadable.append(f"netdev {ifname}: no {d}")
            continue
        files: dict[str, str | None] = {}
        try:
            files["carrier_changes"] = (d / "carrier_changes").read_text()
        except OSError as err:
            files["carrier_changes"] = None
            unreadable.append(f"netdev {ifname} carrier_changes: {err.strerror or err}")
        files.update(_read_dir(d / "statistics", unreadable, f"netdev {ifname} statistics"))
        out += _kept("netdev", ifname, "-", parse_counter_files(files), files, unreadable,
                     f"netdev {ifname}")
    return out


def ethtool_counters(netdevs: list[str], unreadable: list[str]) -> list[Counter]:
    """``ethtool -S`` of each netdev whose driver has statistics (a veth has some, the kept
    ones are the NIC's pause, discard, CRC and link-down counters)."""
    if shutil.which("ethtool") is None:
        return []
    out: list[Counter] = []
    for ifname in netdevs:
        text = _command(["ethtool", "-S", ifname], [])  # no statistics: not a failure
        if text is None:
            continue
        try:
            stats = parse_ethtool_stats(text)
        except ParseError as err:
            unreadable.append(f"ethtool -S {ifname}: {err}")
            continue
        out += [Counter("ethtool", ifname, "-", name, value) for name, value in stats.items()
                if kind_of(name) is not None]
    return out


def tcp_counters(proc_root: Path, unreadable: list[str]) -> list[Counter]:
    """TCP ``RetransSegs`` of this network namespace."""
    path = proc_root / "net" / "snmp"
    try:
        snmp = parse_snmp(path.read_text())
    except OSError as err:
        unreadable.append(f"tcp {path}: {err.strerror or err}")
        return [Counter("tcp", "tcp", "-", "RetransSegs", None)]
    except ParseError as err:
        unreadable.append(f"tcp {path}: {err}")
        return [Counter("tcp", "tcp", "-", "RetransSegs", None)]
    return [Counter("tcp", "tcp", "-", "RetransSegs", snmp["Tcp"].get("RetransSegs"))]


def cxi_counters(unreadable: list[str]) -> list[Counter]:
    """Slingshot: ``cxi_stat``'s link state per CXI device, as a 0/1 ``link_up`` reading (the
    driver keeps no link-down counter that cxi_stat prints)."""
    if shutil.which("cxi_stat") is None:
        return []
    text = _command(["cxi_stat"], unreadable)
    if text is None:
        return []
    try:
        devices = parse_cxi_stat(text)
    except ParseError as err:
        unreadable.append(f"cxi_stat: {err}")
        return []
    return [Counter("cxi", d.device, "-", "link_up",
                    None if d.link_state is None else int(d.link_state == "up"))
            for d in devices]


def gather_counters(node: str, sys_root: Path = Path("/sys"), proc_root: Path = Path("/proc"),
                    netdevs: list[str] | None = None, commands: bool = True) -> Snapshot:
    """This node's snapshot; ``commands`` False reads files only (no ethtool, no cxi_stat)."""
    started = time.time()
    unreadable: list[str] = []
    counters = rdma_counters(sys_root, unreadable)
    netdev = netdev_counters(sys_root, netdevs, unreadable, proc_root)
    counters += netdev
    if commands:
        counters += ethtool_counters(sorted({c.device for c in netdev}), unreadable)
        counters += cxi_counters(unreadable)
    counters += tcp_counters(proc_root, unreadable)
    return Snapshot(node, counters, unreadable, taken=round(started, 3))
