"""Small process helpers shared by the network and daemon code: run a command with a deadline,
poll with a deadline, look at and stop processes. Every failure is one `VClusterError` line."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path


class VClusterError(RuntimeError):
    """A failure to report as one line (the CLI prints it and exits non-zero)."""


class DaemonDied(VClusterError):
    """A daemon being waited for has exited: stop waiting."""


def run(cmd: Sequence[str], *, timeout: float = 30, check: bool = True, env=None, input=None):
    """Run a command, capture its output; one-line VClusterError on failure or timeout."""
    try:
        proc = subprocess.run(
            list(cmd),
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            input=input,
            stdin=None if input is not None else subprocess.DEVNULL,
        )
    except FileNotFoundError:
        raise VClusterError(f"command not found: {cmd[0]}") from None
    except subprocess.TimeoutExpired:
        raise VClusterError(f"`{' '.join(cmd)}` did not finish within {timeout:g}s") from None
    if check and proc.returncode != 0:
        msg = (proc.stderr or proc.stdout).strip().splitlines()
        raise VClusterError(
            f"`{' '.join(cmd)}` failed ({proc.returncode}): {msg[-1] if msg else 'no output'}"
        )
    return proc


def wait_for(what: str, predicate, timeout: float, *, interval: float = 0.2, hint: str = ""):
    """Poll `predicate()` until truthy; VClusterError after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = predicate()
        except DaemonDied:
            raise
        except VClusterError:
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            raise VClusterError(f"{what} not within {timeout:g}s{'; ' + hint if hint else ''}")
        time.sleep(interval)


def pid_alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def proc_cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def tcp_open(host: str, port: int, timeout: float = 1.0) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def kill_pids(pids: Sequence[int], *, grace: float = 10.0) -> list[int]:
    """SIGTERM, wait up to `grace` s, SIGKILL the rest; returns pids that still live."""
    pids = [p for p in pids if p != os.getpid() and pid_alive(p)]
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        for p in pids:
            try:
                os.kill(p, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            pids = [p for p in pids if pid_alive(p)]
            if not pids:
                return []
            time.sleep(0.1)
    return [p for p in pids if pid_alive(p)]


def is_mountpoint(path: str) -> bool:
    """True when `path` is a mount point (bind mounts included, unlike os.path.ismount)."""
    try:
        with open("/proc/self/mountinfo") as fh:
            return any(line.split()[4] == path for line in fh if len(line.split()) > 4)
    except OSError:
        return os.path.ismount(path)
