"""What the stage-1 NIC checks are fed, read from the node the command runs on: a NIC's MAC and
addresses (``ip -j addr``), its name both ways (``getent``, so the node's own resolver order:
hosts file, DNS), its LLDP neighbours (``lldpctl -f keyvalue`` of lldpd, else ``lldptool -t
-n`` of lldpad), the management targets (a TCP connect or a ping), and a loopback transfer
(``ib_write_bw`` server and client on the same RDMA device, or ``txrx`` over MPI/TCP pinned to
the NIC).

Every command runs with a timeout; a command missing, failing or timing out gives no value and
a one-line reason, which fails the check that needed it.
"""

from __future__ import annotations

import concurrent.futures
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from fabrictest import mpirun
from fabrictest.parsers import ParseError
from fabrictest.parsers.getent import parse_ahosts, parse_hosts
from fabrictest.parsers.ip_addr import Interface, parse_ip_addr
from fabrictest.parsers.lldp import LldpNeighbor, missing, parse_lldpctl, parse_lldptool
from fabrictest.parsers.perftest import missing as perftest_missing
from fabrictest.parsers.perftest import parse_perftest
from fabrictest.parsers.txrx import parse_txrx
from fabrictest.sysinfo import read_netdev_speed

from .gather import Answer, ping_peer, run_tool

#: seconds a lookup, an LLDP query or a probe may take
COMMAND_TIMEOUT_S = 10.0
#: seconds a loopback transfer may take, start-up included
LOOPBACK_TIMEOUT_S = 60.0
#: seconds ib_write_bw's server is given to listen before its client connects
SERVER_START_S = 0.5


def run(argv: list[str], timeout: float | None = None, env=None) -> Answer:
    """``argv`` with a timeout (``COMMAND_TIMEOUT_S`` unless given, read at each call): a
    command that hangs or stops (SIGSTOP) is killed at it, and its problem says so."""
    return run_tool(argv, COMMAND_TIMEOUT_S if timeout is None else timeout, env)


# ----------------------------------------------------------------------- MAC and address
def read_interface(nic: str) -> tuple[Interface | None, str | None]:
    """The NIC's MAC, state and addresses (``ip -j addr show dev NIC``)."""
    ans = run(["ip", "-j", "addr", "show", "dev", nic])
    if ans.out is None:
        return None, ans.problem
    try:
        found = parse_ip_addr(ans.out)
    except ParseError as err:
        return None, str(err)
    return found.get(nic), (None if nic in found else f"ip addr shows no {nic}")


# ---------------------------------------------------------------------------- resolution
def resolve_name(name: str) -> tuple[list[str] | None, str | None]:
    """``name``'s addresses as the node resolves them."""
    ans = run(["getent", "ahosts", name])
    if ans.out is None:
        if ans.rc == 2:
            return None, "does not resolve"
        return None, ans.problem
    try:
        return parse_ahosts(ans.out), None
    except ParseError as err:
        return None, str(err)


def resolve_address(address: str) -> tuple[list[str] | None, str | None]:
    """``address``'s names as the node resolves them."""
    ans = run(["getent", "hosts", address])
    if ans.out is None:
        if ans.rc == 2:
            return None, "no name"
        return None, ans.problem
    try:
        return parse_hosts(ans.out), None
    except ParseError as err:
        return None, str(err)


# ---------------------------------------------------------------------------------- LLDP
def read_lldp(nic: str, lldp_socket: str | None = None
              ) -> tuple[list[LldpNeighbor] | None, str, str | None]:
    """(neighbours, source, problem): lldpd's ``lldpctl -f keyvalue NIC`` first, then
    open-lldp's ``lldptool -t -n -i NIC``; None neighbours when no agent answered whole."""
    problems = []
    if shutil.which("lldpctl"):
        argv = ["lldpctl", "-f", "keyvalue"] + (["-u", lldp_socket] if lldp_socket else [])
        ans = run([*argv, nic])
        if ans.out is not None:
            if not ans.out.strip():
                return [], "lldpctl", None  # lldpd runs and has heard no one on the NIC
            try:
                report = parse_lldpctl(ans.out)
            except ParseError as err:
                return None, "lldpctl", str(err)
            cut = missing(report)
            return (None, "lldpctl", cut[0]) if cut else (report.of(nic), "lldpctl", None)
        problems.append(ans.problem)
    if shutil.which("lldptool"):
        ans = run(["lldptool", "-t", "-n", "-i", nic])
        if ans.out is not None:
            try:
                report = parse_lldptool(ans.out, nic)
            except ParseError as err:
                return None, "lldptool", str(err)
            cut = missing(report)
            return (None, "lldptool", cut[0]) if cut else (report.of(nic), "lldptool", None)
        problems.append(ans.problem)
    if not problems:
        return None, "-", "neither lldpctl (lldpd) nor lldptool (lldpad) is installed"
    return None, "-", "; ".join(p for p in problems if p)


# ---------------------------------------------------------------------------- management
def split_target(target: str) -> tuple[str, int | None]:
    """``host:port`` -> (host, port); ``host`` -> (host, None) (a ping);
    ``[v6::addr]:port`` for IPv6 with a port."""
    if target.startswith("["):
        host, _, rest = target[1:].partition("]")
        return host, int(rest[1:]) if rest.startswith(":") else None
    if target.count(":") == 1:
        host, port = target.split(":")
        return host, int(port)
    return target, None


def probe(target: str, timeout_s: float = 3.0) -> tuple[bool, str]:
    """A TCP connect to ``host:port`` within ``timeout_s`` (name lookup included), or a
    ping of ``host`` (2 packets, 2 s each)."""
    host, port = split_target(target)
    if port is None:
        return ping_peer(host)

    def connect() -> float:
        t0 = time.monotonic()
        with socket.create_connection((host, port), timeout=timeout_s):
            return time.monotonic() - t0

    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    try:
        took = pool.submit(connect).result(timeout=timeout_s + 1)
    except concurrent.futures.TimeoutError:
        return False, f"no answer within {timeout_s:g} s (name lookup or connect)"
    except OSError as err:
        return False, f"tcp connect failed: {err.strerror or err}"
    finally:
        pool.shutdown(wait=False)
    return True, f"tcp connect to {host}:{port} in {took * 1000:.3g} ms"


# ------------------------------------------------------------------------------ loopback
def port_rate_gbps(nic: str, sys_root: Path = Path("/sys")) -> tuple[float | None, str | None]:
    """The netdev's link speed (``/sys/class/net/NIC/speed``, Mb/s) in Gb/s."""
    speed = read_netdev_speed(sys_root, nic)
    if speed is None or speed <= 0:
        return None, f"{nic} reports no link speed"
    return speed / 1000.0, None


def loopback_rdma(device: str, port: int, gid_index: int | None, duration_s: int = 3,
                  tcp_port: int = 18515) -> tuple[float | None, str | None]:
    """``ib_write_bw`` server and client on ``device``: a transfer the NIC loops back."""
    if shutil.which("ib_write_bw") is None:
        return None, "ib_write_bw (perftest) not found"
    base = ["ib_write_bw", "-d", device, "-i", str(port), "--report_gbits", "-D",
            str(duration_s), "-p", str(tcp_port)]
    if gid_index is not None:
        base += ["-x", str(gid_index)]
    server = subprocess.Popen(base, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, start_new_session=True, stdin=subprocess.DEVNULL)
    try:
        time.sleep(SERVER_START_S)  # the server listens before the client connects
        client = run([*base, "localhost"], timeout=LOOPBACK_TIMEOUT_S)
    finally:
        _stop(server)
    if client.out is None:
        return None, client.problem
    try:
        result = parse_perftest(client.out)
    except ParseError as err:
        return None, f"ib_write_bw: {err}"
    cut = perftest_missing(result)
    if cut:
        return None, cut[0]
    return result.peak_avg_gbps(), None


def loopback_txrx(nic: str, nmsg: int = 2000, msg_size: int = 65536
                  ) -> tuple[float | None, str | None]:
    """Two ranks of ``txrx --method mpi`` on this node over Open MPI's TCP transport pinned
    to ``nic``. Linux delivers traffic to a node's own address through ``lo``: this proves
    the node's MPI-over-TCP path, not the cable."""
    txrx = Path(sys.executable).parent / "txrx"
    exe = str(txrx) if txrx.exists() else "txrx"
    try:
        cmd = mpirun.command(2, [exe, "--method", "mpi", "--nrx", "1", "--nlink", "1",
                                 "--nmsg", str(nmsg), "--msg-size", str(msg_size), "-q"],
                             hosts=[socket.gethostname()],
                             extra=["--mca", "btl", "self,tcp", "--mca", "pml", "ob1",
                                    "--mca", "btl_tcp_if_include", nic]
                             if mpirun.flavour() == "openmpi" else [])
    except mpirun.MpiNotFound as err:
        return None, str(err)
    env = {k: v for k, v in mpirun.environment().items()
           if not k.startswith(("SLURM_", "PMIX_", "PMI_", "OMPI_MCA_"))}
    ans = run(cmd, timeout=LOOPBACK_TIMEOUT_S, env=env)
    if ans.out is None:
        return None, ans.problem
    try:
        report = parse_txrx(ans.out)
    except ParseError as err:
        return None, f"txrx: {err}"
    rate = report.min_gbps()
    return (rate, None) if rate is not None else (None, "txrx reported no stream")


def _stop(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(5)


__all__ = ["Answer", "loopback_rdma", "loopback_txrx", "port_rate_gbps", "probe",
           "read_interface", "read_lldp", "resolve_address", "resolve_name", "run",
           "split_target"]
