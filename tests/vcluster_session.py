"""The machine's one vcluster, for the test modules that bring it up.

Its namespaces have fixed names, so one cluster at a time: a module takes the machine-wide lock
(waiting a while for another session's cluster, then skipping with the reason), refuses to
touch a cluster it did not start (skip), brings its own up (a failure to come up fails the
module, it is never a skip) and always takes it down, twice if something was left behind.

    with held_cluster(tmp_path_factory.mktemp("vc") / "state", "--nodes", "4") as state:
        yield state
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from fabrictest.vcluster.plan import CTL_NETNS

LOCK = Path("/run/lock/fabrictest-vcluster-pytest.lock")
NEEDED = ("ip", "tc", "nsenter", "unshare", "munged", "slurmctld", "slurmd", "slurmdbd",
          "mariadbd", "sbatch", "salloc", "srun", "scontrol", "sacct", "reframe")


def unavailable() -> str | None:
    """Why no vcluster can run here, or None."""
    if os.geteuid() != 0:
        return "needs root (network namespaces, veth links, tc)"
    for cmd in NEEDED:
        if shutil.which(cmd) is None and not Path("/usr/sbin", cmd).exists():
            return f"{cmd} not found (scripts/install.sh as root installs it)"
    probe = subprocess.run(["unshare", "--net", "true"], capture_output=True, timeout=30)
    if probe.returncode != 0:
        return "cannot create network namespaces here: " + probe.stderr.decode().strip()
    return None


def vcluster(state: Path, *args: str, timeout: float = 300, check: bool = True):
    """One `vcluster` command on the cluster kept in `state`; `check`: fail the test on error."""
    proc = subprocess.run(
        [sys.executable, "-m", "fabrictest.vcluster.cli", "--state-dir", str(state), *args],
        capture_output=True, text=True, timeout=timeout,
    )
    if check and proc.returncode != 0:
        pytest.fail(f"vcluster {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
    return proc


def env_of(state: Path) -> dict[str, str]:
    """This process's environment plus the cluster's `vcluster env` exports."""
    env = dict(os.environ)
    for line in (state / "env.sh").read_text().splitlines():
        m = re.match(r"export (\w+)=(.*)$", line.strip())
        if m:
            env[m.group(1)] = m.group(2).strip("'\"")
    return env


def reframe_env(env: dict[str, str], work: Path) -> dict[str, str]:
    """`env` for a `reframe --system vcluster` run of this checkout: its configuration and
    references, its venv's commands first, results and ReFrame's log under `work`."""
    root = Path(__file__).resolve().parents[1]
    return {**env, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
            "RFM_CONFIG_FILES": str(root / "config" / "reframe" / "settings.py"),
            "RFM_REFERENCE_PREFIX": str(root / "reference"), "RFM_COLORIZE": "n",
            "FABRICTEST_RESULTS_DB": str(work / "results.db"),
            "FABRICTEST_RFM_LOG": str(work / "reframe.log")}


def leftovers(state: Path) -> list[str]:
    """What a cluster may leave behind: namespaces, links, processes, mounts, state."""
    out = []
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True,
                           timeout=30).stdout
    out += [f"netns {ln.split()[0]}" for ln in netns.splitlines()
            if ln.startswith(("vc-node", "vc-sw-", CTL_NETNS))]
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True,
                           timeout=30).stdout
    out += [f"link {m}" for m in re.findall(r"^\d+: (vc[^:@]+)", links, re.M)]
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            mounts = (proc / "mountinfo").read_text()
        except OSError:
            continue
        if str(state) in cmd:
            out.append(f"process {proc.name}: {cmd[:80]}")
        if str(state / "etc") in mounts or "/run/netns/vc-" in mounts:
            out.append(f"mount seen by process {proc.name}")
    if state.exists():
        out.append(f"state dir {state}")
    return out


@contextmanager
def held_cluster(state: Path, *up_args: str, wait_s: float = 900,
                 up_timeout: float = 300) -> Iterator[Path]:
    """The lock, then `vcluster up UP_ARGS` in `state`; always down (and the lock released)."""
    why = unavailable()
    if why:
        pytest.skip(f"vcluster: {why}")
    LOCK.parent.mkdir(parents=True, exist_ok=True)
    with open(LOCK, "w") as lock:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    pytest.skip(f"vcluster: another test session held the vcluster for "
                                f"{wait_s / 60:g} min")
                time.sleep(5)
        netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True,
                               timeout=30).stdout
        if re.search(rf"^{CTL_NETNS}\b", netns, re.M):
            pytest.skip("vcluster: a vcluster is already up on this machine (someone else's: "
                        "`vcluster down` with its --state-dir); not touching it")
        try:
            t0 = time.monotonic()
            proc = vcluster(state, "up", *up_args, timeout=up_timeout, check=False)
            if proc.returncode != 0:
                pytest.fail(f"vcluster up failed: {(proc.stderr or proc.stdout).strip()[-600:]}")
            print(f"vcluster up in {time.monotonic() - t0:.1f}s: {proc.stdout.strip()}")
            yield state
        finally:
            vcluster(state, "down", check=False)
            if leftovers(state):  # a second try; the module that checks reports what survives
                vcluster(state, "down", check=False)
