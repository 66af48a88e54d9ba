"""What the NIC checks are fed, read from the node the command runs on: RDMA ports
(``ibv_devinfo -v`` merged with sysfs), netdevs (``ip -j link`` or sysfs), the ARP cache
thresholds (``/proc`` or ``sysctl``) and pings to peers. Every command has a timeout; where a
command is missing or fails the sysfs reading stands in, and the source names why when the tool
was there: its view was lost (timed out, exited non-zero, printed no UTF-8, not understood)."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from fabrictest.parsers import ParseError
from fabrictest.parsers.ibv_devinfo import HcaInfo, parse_ibv_devinfo
from fabrictest.parsers.ibv_devinfo import missing as devinfo_missing
from fabrictest.parsers.ping import parse_ping
from fabrictest.sysinfo import read_hcas_from_sysfs, read_netdevs

from .checks import GC_KEYS

#: seconds ``ibv_devinfo -v``, ``ip -j link`` and ``sysctl`` may take
TOOL_TIMEOUT_S = 20.0


@dataclass
class Answer:
    """A command's stdout (``out``) when it ran and exited 0, else why not (``problem``);
    ``found`` is False when the command is not installed."""

    out: str | None
    problem: str | None = None
    rc: int | None = None
    found: bool = True


def run_tool(argv: list[str], timeout: float, env=None) -> Answer:
    """``argv`` with a timeout: a command that hangs or stops (SIGSTOP) is killed at it, and
    its problem says so, as does one that exits non-zero or prints bytes that are not UTF-8."""
    exe = shutil.which(argv[0])
    if exe is None:
        return Answer(None, f"{argv[0]} not found", found=False)
    try:
        proc = subprocess.run([exe, *argv[1:]], capture_output=True, text=True,
                              timeout=timeout, check=False, env=env, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return Answer(None, f"{argv[0]} gave no answer within {timeout:g} s")
    except UnicodeDecodeError as err:  # what it printed is no text we can read
        return Answer(None, f"{argv[0]} printed bytes that are not UTF-8 "
                      f"(0x{err.object[err.start]:02x} at byte {err.start})")
    except OSError as err:
        return Answer(None, f"{argv[0]}: {err.strerror or err}")
    if proc.returncode != 0:
        said = (proc.stderr or proc.stdout).strip().splitlines()
        return Answer(None, f"{argv[0]} exited {proc.returncode}"
                      + (f": {said[-1].strip()[:160]}" if said else ""), proc.returncode)
    return Answer(proc.stdout, None, 0)


#: how a source says a tool's view was lost and sysfs stood in: ``sysfs (<why>)``
SYSFS_INSTEAD = "sysfs ("


def sysfs_instead(why: str) -> str:
    return f"{SYSFS_INSTEAD}{why})"


def _lost(answer: Answer) -> str | None:
    """Why the tool's view was lost, or None when it is not installed (sysfs alone, as
    documented) or answered."""
    return answer.problem if answer.found else None


def gather_ports(sys_root: Path, use_ibv_devinfo: bool = True) -> tuple[list[HcaInfo], str]:
    """RDMA devices from ``ibv_devinfo -v`` merged with sysfs (GID types, netdev, gaps)."""
    sysfs = read_hcas_from_sysfs(sys_root)
    by_port = {(p.device, p.port): p for h in sysfs for p in h.ports}
    hcas: list[HcaInfo] = []
    source = "sysfs"
    answer = run_tool(["ibv_devinfo", "-v"], TOOL_TIMEOUT_S) if use_ibv_devinfo else Answer("")
    lost = _lost(answer)
    if use_ibv_devinfo and answer.out is not None and not answer.out.strip():
        lost = "ibv_devinfo -v printed nothing"
    if lost is not None:
        source = sysfs_instead(lost)
    if text := answer.out:
        try:
            hcas = parse_ibv_devinfo(text)
            source = "ibv_devinfo -v"
        except ParseError as err:
            hcas, source = [], sysfs_instead(f"ibv_devinfo -v output not understood: {err}")
        if hcas and devinfo_missing(hcas, text):
            # a port cut from the output would go unchecked: sysfs is the whole truth
            return sysfs, sysfs_instead("ibv_devinfo -v output cut short")
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


def gather_netdevs(
    sys_root: Path,
) -> tuple[dict[str, tuple[str | None, int | None]], str | None]:
    """netdev -> (operstate, mtu), from ``ip -j link`` or else sysfs; and why ``ip``'s view
    was lost when it was (None when it answered, is not installed or sysfs was asked for)."""
    out: dict[str, tuple[str | None, int | None]] = {}
    if sys_root != Path("/sys"):
        return read_netdevs(sys_root), None
    answer = run_tool(["ip", "-j", "link", "show"], TOOL_TIMEOUT_S)
    lost = _lost(answer)
    if answer.out:
        try:
            for item in json.loads(answer.out):
                out[item["ifname"]] = (item.get("operstate"), item.get("mtu"))
            return out, None
        except (ValueError, KeyError, TypeError) as err:
            out.clear()
            lost = f"ip -j link output not understood: {err}"
    out.update(read_netdevs(sys_root))
    return out, lost


def gather_gc_thresh(proc_root: Path) -> dict[str, int | None]:
    out: dict[str, int | None] = {}
    for key in GC_KEYS:
        value = _read(proc_root / "sys" / "net" / "ipv4" / "neigh" / "default" / key)
        if value is None and proc_root == Path("/proc"):
            answer = run_tool(["sysctl", "-n", f"net.ipv4.neigh.default.{key}"], TOOL_TIMEOUT_S)
            value = (answer.out or "").strip() or None
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
