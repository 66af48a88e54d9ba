"""What the NIC checks are fed, read from the node the command runs on: RDMA ports
(``ibv_devinfo -v`` merged with sysfs), netdevs (``ip -j link`` or sysfs), the ARP cache
thresholds (``/proc`` or ``sysctl``) and pings to peers. Every command has a timeout; a
command missing or failing gives None, and the sysfs reading stands in."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from fabrictest.parsers import ParseError
from fabrictest.parsers.ibv_devinfo import HcaInfo, parse_ibv_devinfo
from fabrictest.parsers.ibv_devinfo import missing as devinfo_missing
from fabrictest.parsers.ping import parse_ping
from fabrictest.sysinfo import read_hcas_from_sysfs, read_netdevs

from .checks import GC_KEYS


def _run(argv: list[str], timeout: float = 20) -> str | None:
    if shutil.which(argv[0]) is None:
        return None
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired, UnicodeDecodeError):
        return None  # as if it were not there: the sysfs reading stands in
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
