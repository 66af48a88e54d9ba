"""Read this node's counters into a :class:`~.snapshot.Snapshot`: InfiniBand port counters and
RDMA hw_counters (sysfs, and ``perfquery -x`` where it gives the 64-bit extended ones), netdev
``carrier_changes`` and ``statistics/``, ``ethtool -S`` where installed, ``/proc/net/snmp``
(TCP retransmissions, of this network namespace) and ``cxi_stat`` where installed.

Only the counters the suite judges or reports are kept (:func:`~.kinds.kind_of`), each with its
width where it was read. What cannot be read is kept with the value None and a reason in
``unreadable``: never 0. Every command has a timeout.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

from fabrictest.parsers.errors import ParseError
from fabrictest.sysinfo import infiniband_dir, list_ports, net_dir

from .cxi import parse_cxi_stat
from .ethtool import parse_ethtool_stats
from .kinds import kind_of, width_of
from .perfquery import parse_perfquery, perfquery_missing
from .snapshot import Counter, Snapshot
from .sysfs import parse_counter_files, parse_snmp
from .text import cut_line_note

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
        except (OSError, UnicodeDecodeError) as err:
            files[name] = None
            unreadable.append(f"{what}/{name}: {getattr(err, 'strerror', None) or err}")
    return files


def _command(argv: list[str], unreadable: list[str]) -> str | None:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S,
                              check=False, errors="replace")
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
        out.append(Counter(source, device, port, name, value, width_of(source, name)))
    return out


def extended_ib(dev: str, port: int, unreadable: list[str]) -> dict[str, int]:
    """The port's 64-bit PortCountersExtended values of the kept counters (``perfquery -x``),
    when perfquery is installed, may query the port, and the port's PMA has the additional
    extended counters; else nothing (the sysfs values stand)."""
    if shutil.which("perfquery") is None:
        return {}
    text = _command(["perfquery", "-x", "-C", dev, "-P", str(port)], [])  # optional: no note
    if text is None:
        return {}
    try:
        blocks = parse_perfquery(text)
    except ParseError as err:
        unreadable.append(f"perfquery -x {dev}/{port}: {err} (the sysfs counters are used)")
        return {}
    missing = perfquery_missing(blocks)
    if len(blocks) != 1 or not blocks[0].additional or missing:
        if missing:
            unreadable.append(f"perfquery -x {dev}/{port}: {missing[0]} (the sysfs counters are "
                              "used)")
        return {}
    return {n: v for n, v in blocks[0].counters.items() if v is not None and kind_of(n)}


def rdma_counters(sys_root: Path, unreadable: list[str], commands: bool = True) -> list[Counter]:
    """``counters/`` and ``hw_counters/`` of every RDMA port; the InfiniBand ones 64 bits wide
    from ``perfquery -x`` where it has them (``commands``)."""
    out: list[Counter] = []
    base = infiniband_dir(sys_root)
    for dev, port in list_ports(sys_root):
        for sub, source in (("counters", "ib"), ("hw_counters", "hw")):
            path = base / dev / "ports" / str(port) / sub
            if not path.is_dir():
                continue
            what = f"{source} {dev}/{port} {sub}"
            files = _read_dir(path, unreadable, what)
            counters = _kept(source, dev, str(port), parse_counter_files(files), files,
                             unreadable, what)
            if source == "ib" and commands and counters:
                wide = extended_ib(dev, port, unreadable)
                counters = [Counter(c.source, c.device, c.port, c.name, wide[c.name], 64)
                            if c.name in wide else c for c in counters]
            out += counters
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
        return [Counter("netdev", ifname, "-", "carrier_changes", None,
                        width_of("netdev", "carrier_changes")) for ifname in (netdevs or [])]
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
        except (OSError, UnicodeDecodeError) as err:
            files["carrier_changes"] = None
            unreadable.append(f"netdev {ifname} carrier_changes: "
                              f"{getattr(err, 'strerror', None) or err}")
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
        if stats.cut is not None:
            unreadable.append(cut_line_note(f"ethtool -S {ifname}", stats.cut))
        unreadable += [f"ethtool -S {ifname}: {n} printed twice with two values"
                       for n in stats.twice if kind_of(n)]
        out += [Counter("ethtool", ifname, "-", name, value, width_of("ethtool", name))
                for name, value in stats.values.items() if kind_of(name) is not None]
    return out


def tcp_counters(proc_root: Path, unreadable: list[str]) -> list[Counter]:
    """TCP ``RetransSegs`` of this network namespace."""
    path = proc_root / "net" / "snmp"
    unread = [Counter("tcp", "tcp", "-", "RetransSegs", None, width_of("tcp", "RetransSegs"))]
    try:
        snmp = parse_snmp(path.read_text())
    except (OSError, UnicodeDecodeError) as err:
        unreadable.append(f"tcp {path}: {getattr(err, 'strerror', None) or err}")
        return unread
    except ParseError as err:
        unreadable.append(f"tcp {path}: {err}")
        return unread
    return [Counter("tcp", "tcp", "-", "RetransSegs", snmp["Tcp"].get("RetransSegs"),
                    width_of("tcp", "RetransSegs"))]


def cxi_counters(unreadable: list[str]) -> list[Counter]:
    """Slingshot: ``cxi_stat``'s link state per CXI device, as a 0/1 ``link_up`` reading (the
    driver keeps no link-down counter that cxi_stat prints); a state that is neither up nor
    down, or not read whole, is None."""
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
    unreadable += [p for d in devices for p in d.problems]
    return [Counter("cxi", d.device, "-", "link_up", d.link_up, width_of("cxi", "link_up"))
            for d in devices]


def gather_counters(node: str, sys_root: Path = Path("/sys"), proc_root: Path = Path("/proc"),
                    netdevs: list[str] | None = None, commands: bool = True) -> Snapshot:
    """This node's snapshot; ``commands`` False reads files only (no ethtool, perfquery,
    cxi_stat)."""
    started = time.time()
    unreadable: list[str] = []
    counters = rdma_counters(sys_root, unreadable, commands)
    netdev = netdev_counters(sys_root, netdevs, unreadable, proc_root)
    counters += netdev
    if commands:
        counters += ethtool_counters(sorted({c.device for c in netdev}), unreadable)
        counters += cxi_counters(unreadable)
    counters += tcp_counters(proc_root, unreadable)
    return Snapshot(node, counters, unreadable, taken=round(started, 3))
