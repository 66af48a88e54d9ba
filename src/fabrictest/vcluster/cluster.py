"""Bring a `Plan` to life: bridge, namespaces, veth links, munge, Slurm daemons; and back.

Every daemon runs in the foreground of a process started in its own session with its output
sent to a log file, so its pid is known and nothing holds the caller's pipes. Every wait has
a deadline and ends in a `VClusterError` naming what did not happen and where its log is.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from .plan import (
    CTL_HOST,
    CTL_NETNS,
    NODE_NETNS_PREFIX,
    VETH_PREFIX,
    Node,
    Plan,
    PlanError,
    format_rate,
    parse_rate,
    tbf_args,
)

MARKER = ".vcluster"
REQUIRED_COMMANDS = ("ip", "tc", "nsenter", "unshare", "munged", "slurmctld", "slurmd", "sinfo")
ACCOUNTING_COMMANDS = ("slurmdbd", "mariadbd", "mariadb-install-db", "mariadb", "sacctmgr")


class VClusterError(RuntimeError):
    """A failure to report as one line (the CLI prints it and exits non-zero)."""


class DaemonDied(VClusterError):
    """A daemon being waited for has exited: stop waiting."""


# --- small helpers ------------------------------------------------------------------------
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


def netns_list() -> list[str]:
    proc = run(["ip", "netns", "list"], check=False)
    return [line.split()[0] for line in proc.stdout.splitlines() if line.strip()]


def netns_pids(ns: str) -> list[int]:
    proc = run(["ip", "netns", "pids", ns], check=False)
    return [int(x) for x in proc.stdout.split() if x.isdigit()]


def link_exists(name: str, netns: str | None = None) -> bool:
    cmd = ["ip"] + (["-n", netns] if netns else []) + ["link", "show", "dev", name]
    return run(cmd, check=False).returncode == 0


def link_is_up(name: str) -> bool:
    proc = run(["ip", "-j", "link", "show", "dev", name], check=False)
    if proc.returncode != 0:
        return False
    try:
        return "UP" in json.loads(proc.stdout)[0].get("flags", [])
    except (ValueError, IndexError):
        return False


def qdisc_rate(dev: str, netns: str | None = None) -> str | None:
    """The tbf rate on `dev` as tc prints it ('200Mbit'), or None when unshaped."""
    cmd = ["tc"] + (["-n", netns] if netns else []) + ["qdisc", "show", "dev", dev, "root"]
    out = run(cmd, check=False).stdout.split()
    if "tbf" in out and "rate" in out:
        return out[out.index("rate") + 1]
    return None


# --- the cluster --------------------------------------------------------------------------
class Cluster:
    """Operations on the cluster whose state lives in `plan.state_dir`."""

    def __init__(self, plan: Plan, *, verbose: bool = False, log=None):
        self.plan = plan
        self.verbose = verbose
        self._log = log or (lambda msg: None)

    @classmethod
    def load(cls, state_dir: Path, **kw) -> Cluster | None:
        """The cluster recorded in `state_dir`, or None when there is none."""
        path = Path(state_dir) / "cluster.json"
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        return cls(Plan.from_json(data), **kw)

    def log(self, msg: str) -> None:
        self._log(msg)

    # --- environment checks ---------------------------------------------------------------
    def check_host(self) -> None:
        if os.geteuid() != 0:
            raise VClusterError("vcluster needs root (network namespaces, veth links, tc)")
        needed = REQUIRED_COMMANDS + (ACCOUNTING_COMMANDS if self.plan.accounting else ())
        missing = [c for c in needed if shutil.which(c) is None]
        if missing:
            raise VClusterError(
                f"missing commands: {' '.join(missing)} (run scripts/install.sh as root)"
            )

    # --- process bookkeeping ------------------------------------------------------------
    @property
    def pids_file(self) -> Path:
        return self.plan.state_dir / "pids.json"

    def _pids(self) -> dict[str, int]:
        try:
            return json.loads(self.pids_file.read_text())
        except (OSError, ValueError):
            return {}

    def _record_pid(self, name: str, pid: int) -> None:
        pids = self._pids()
        pids[name] = pid
        self.pids_file.write_text(json.dumps(pids, indent=1))

    def daemon_alive(self, name: str) -> bool:
        return pid_alive(self._pids().get(name))

    def _spawn(self, name: str, argv: Sequence[str], *, netns: str | None = None,
               hostname: str | None = None) -> int:
        """Start a foreground daemon (in a namespace, under its own hostname); record its pid."""
        cmd: list[str] = []
        if netns:
            cmd += ["nsenter", f"--net=/run/netns/{netns}"]
        if hostname:
            # Own UTS namespace (own hostname) and own mount namespace in which the cluster's
            # hosts file covers /etc/hosts; `ip netns exec` would remount /sys instead.
            cmd += [
                "unshare", "--uts", "--mount", "--propagation", "private",
                "sh", "-c", 'hostname "$1" && mount --bind "$2" /etc/hosts && shift 2 && exec "$@"',
                "vcluster-" + name, hostname, str(self.plan.hosts_file),
            ]
        cmd += list(argv)
        logf = self.plan.log_dir / f"{name}.out"
        with open(logf, "ab") as out:
            proc = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True, close_fds=True, env=self._slurm_env(),
            )
        self._record_pid(name, proc.pid)
        self.log(f"started {name} (pid {proc.pid})")
        return proc.pid

    def _expect_alive(self, name: str, logname: str | None = None) -> None:
        if not self.daemon_alive(name):
            raise DaemonDied(
                f"{name} exited at start; see {self.plan.log_dir / (logname or name + '.out')}"
            )

    # --- network --------------------------------------------------------------------------
    def _net_up(self) -> None:
        p = self.plan
        if not link_exists(p.bridge):
            run(["ip", "link", "add", p.bridge, "type", "bridge"])
        run(["ip", "addr", "replace", f"{p.bridge_address}/{p.prefixlen}", "dev", p.bridge])
        run(["ip", "link", "set", p.bridge, "up"])
        endpoints = [(CTL_NETNS, p.ctl_veth, p.ctl_address, None)]
        endpoints += [(n.netns, n.veth, n.address, p.default_rate) for n in p.node_list]
        existing = set(netns_list())
        for ns, veth, addr, rate in endpoints:
            if ns not in existing:
                run(["ip", "netns", "add", ns])
            run(["ip", "-n", ns, "link", "set", "lo", "up"])
            if not link_exists(veth):
                if link_exists("eth0", ns):
                    run(["ip", "-n", ns, "link", "del", "eth0"])
                run(["ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0",
                     "netns", ns])
            run(["ip", "link", "set", veth, "master", p.bridge, "up"])
            run(["ip", "-n", ns, "addr", "replace", f"{addr}/{p.prefixlen}", "dev", "eth0"])
            run(["ip", "-n", ns, "link", "set", "eth0", "up"])
            if rate:
                self._shape(veth, ns, parse_rate(rate))

    def _shape(self, veth: str, ns: str, bits: int | None) -> None:
        """tbf at `bits`/s on both ends of a node's pair (None: remove shaping)."""
        for prefix, dev in ((["tc"], veth), (["tc", "-n", ns], "eth0")):
            if bits is None:
                run(prefix + ["qdisc", "del", "dev", dev, "root"], check=False)
            else:
                run(prefix + ["qdisc", "replace", "dev", dev, "root"] + tbf_args(bits))

    # --- daemons --------------------------------------------------------------------------
    def _write_files(self) -> None:
        p = self.plan
        for d in (p.etc, p.munge_dir, p.log_dir, p.ctl_dir / "state", p.db_dir):
            d.mkdir(parents=True, exist_ok=True)
        os.chmod(p.munge_dir, 0o755)
        for n in p.node_list:
            for sub in ("spool", "tmp"):
                (p.node_dir(n.name) / sub).mkdir(parents=True, exist_ok=True)
        (p.state_dir / MARKER).write_text("fabrictest vcluster state directory\n")
        p.plan_file.write_text(json.dumps(p.to_json(), indent=1) + "\n")
        p.slurm_conf.write_text(p.slurm_conf_text())
        p.hosts_file.write_text(p.hosts_text())
        p.hostfile.write_text(p.hostfile_text())
        p.env_file.write_text(p.env_sh_text())
        if not p.links_file.exists():
            p.links_file.write_text("{}\n")

    def _start_munge(self) -> None:
        p = self.plan
        if self.daemon_alive("munged") and p.munge_socket.exists():
            return
        # A fresh key for every cluster, readable by root only.
        if p.munge_key.exists():
            p.munge_key.chmod(0o600)
        fd = os.open(p.munge_key, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o400)
        with os.fdopen(fd, "wb") as fh:
            fh.write(secrets.token_bytes(1024))
        os.chmod(p.munge_key, 0o400)
        p.munge_socket.unlink(missing_ok=True)
        self._spawn("munged", [
            "munged", "--foreground", "--force",
            f"--socket={p.munge_socket}", f"--key-file={p.munge_key}",
            f"--pid-file={p.munge_pid}", f"--log-file={p.log_dir / 'munged.log'}",
            f"--seed-file={p.munge_dir / 'munged.seed'}",
        ])
        wait_for("munged socket", lambda: self._munge_ok(), 15,
                 hint=f"see {p.log_dir / 'munged.log'}")

    def _munge_ok(self) -> bool:
        self._expect_alive("munged", "munged.log")
        if not self.plan.munge_socket.exists():
            return False
        cred = run(["munge", "-n", "-S", str(self.plan.munge_socket)], check=False, timeout=5)
        if cred.returncode != 0:
            return False
        back = run(["unmunge", "-S", str(self.plan.munge_socket)], input=cred.stdout,
                   check=False, timeout=5)
        return back.returncode == 0

    def _start_db(self) -> None:
        p = self.plan
        datadir = p.db_dir / "data"
        sock = p.db_dir / "mysqld.sock"
        if not (datadir / "mysql").is_dir():
            self.log("initialising the accounting database")
            run(["mariadb-install-db", "--no-defaults", f"--datadir={datadir}", "--user=root",
                 "--auth-root-authentication-method=socket", "--skip-test-db",
                 "--innodb-log-file-size=8M"], timeout=180)
        if not self.daemon_alive("mariadbd"):
            sock.unlink(missing_ok=True)
            # On the controller namespace's own loopback: unreachable from anywhere else.
            self._spawn("mariadbd", [
                "mariadbd", "--no-defaults", f"--datadir={datadir}", f"--socket={sock}",
                f"--pid-file={p.db_dir / 'mysqld.pid'}", "--port=3306",
                "--bind-address=127.0.0.1", "--user=root", "--skip-name-resolve",
                f"--log-error={p.log_dir / 'mariadb.log'}", "--innodb-buffer-pool-size=16M",
                "--innodb-log-file-size=8M", "--max-connections=50",
            ], netns=CTL_NETNS)

        def db_ok():
            self._expect_alive("mariadbd", "mariadb.log")
            return run(["mariadb", "--no-defaults", f"--socket={sock}", "-u", "root", "-e",
                        "select 1"], check=False, timeout=10).returncode == 0

        wait_for("MariaDB", db_ok, 90, hint=f"see {p.log_dir / 'mariadb.log'}")
        pw_file = p.db_dir / "slurm.pass"
        if not pw_file.exists():
            pw_file.write_text(secrets.token_hex(16))
            pw_file.chmod(0o600)
        pw = pw_file.read_text().strip()
        sql = (
            f"CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY '{pw}';"
            f"ALTER USER 'slurm'@'127.0.0.1' IDENTIFIED BY '{pw}';"
            "GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';"
        )
        run(["mariadb", "--no-defaults", f"--socket={sock}", "-u", "root", "-e", sql])
        fd = os.open(p.slurmdbd_conf, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(p.slurmdbd_conf_text(pw))
        os.chmod(p.slurmdbd_conf, 0o600)
        if not self.daemon_alive("slurmdbd"):
            self._spawn("slurmdbd", ["slurmdbd", "-D"], netns=CTL_NETNS, hostname=CTL_HOST)

        def dbd_ok():
            self._expect_alive("slurmdbd", "slurmdbd.log")
            return tcp_open(p.ctl_address, 6819)

        wait_for("slurmdbd", dbd_ok, 60, hint=f"see {p.log_dir / 'slurmdbd.log'}")

    def _slurm_env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["SLURM_CONF"] = str(self.plan.slurm_conf)
        return env

    def _register_cluster(self) -> None:
        env = self._slurm_env()
        out = run(["sacctmgr", "-n", "-P", "list", "cluster", "format=cluster"], env=env,
                  timeout=30).stdout.split()
        if "vcluster" not in out:
            run(["sacctmgr", "-i", "add", "cluster", "vcluster"], env=env, timeout=30)

    def _start_slurm(self) -> None:
        p = self.plan
        env_conf = ["-f", str(p.slurm_conf)]
        if not self.daemon_alive("slurmctld"):
            self._spawn("slurmctld", ["slurmctld", "-D", "-c", "-i", *env_conf],
                        netns=CTL_NETNS, hostname=CTL_HOST)

        def ctld_ok():
            self._expect_alive("slurmctld", "slurmctld.log")
            return tcp_open(p.ctl_address, 6817)

        wait_for("slurmctld", ctld_ok, 60, hint=f"see {p.log_dir / 'slurmctld.log'}")
        for n in p.node_list:
            name = f"slurmd-{n.name}"
            if not self.daemon_alive(name):
                self._spawn(name, ["slurmd", "-D", "-N", n.name, *env_conf],
                            netns=n.netns, hostname=n.name)

    def _sinfo(self, timeout: float = 15) -> dict[str, str]:
        out = run(["sinfo", "-h", "-N", "-o", "%N %T"], env=self._slurm_env(),
                  timeout=timeout).stdout
        return dict(line.split()[:2] for line in out.splitlines() if len(line.split()) >= 2)

    def wait_idle(self, timeout: float = 90, only: set[str] | None = None) -> None:
        names = only or {n.name for n in self.plan.node_list}

        def all_idle():
            for n in self.plan.node_list:
                self._expect_alive(f"slurmd-{n.name}", f"slurmd-{n.name}.out")
            states = self._sinfo()
            return names <= set(states) and all(
                states[n] in ("idle", "mixed", "allocated") for n in names
            )

        wait_for("all nodes idle", all_idle, timeout, interval=0.5,
                 hint=f"see `vcluster status` and {self.plan.log_dir}")

    # --- public operations --------------------------------------------------------------
    def is_up(self) -> bool:
        """Every namespace, link and daemon of the plan present."""
        p = self.plan
        daemons = ["munged", "slurmctld"] + [f"slurmd-{n.name}" for n in p.node_list]
        if p.accounting:
            daemons += ["mariadbd", "slurmdbd"]
        if not all(self.daemon_alive(d) for d in daemons):
            return False
        have = set(netns_list())
        return {CTL_NETNS, *(n.netns for n in p.node_list)} <= have and link_exists(p.bridge)

    def up(self, *, timeout: float = 120) -> str:
        """Create or complete the cluster; return what was done ('already up' or 'up')."""
        self.check_host()
        existing = Cluster.load(self.plan.state_dir)
        if existing is not None:
            if existing.is_up():
                if existing.plan != self.plan:
                    raise VClusterError(
                        f"a different cluster is up in {self.plan.state_dir} "
                        f"({existing.plan.nodes} nodes, accounting "
                        f"{'on' if existing.plan.accounting else 'off'}): run `vcluster down` first"
                    )
                existing.wait_idle(timeout)
                return "already up"
            # A partial or stale cluster (crash, reboot): clear it and start afresh.
            self.log("clearing a partial cluster")
            existing.down()
        self._check_conflicts()
        t0 = time.monotonic()
        self.plan.state_dir.mkdir(parents=True, exist_ok=True)
        (self.plan.state_dir / "run-netns-mounted").write_text(
            "1\n" if is_mountpoint("/run/netns") else "0\n")
        self._write_files()
        try:
            self._net_up()
            self._start_munge()
            if self.plan.accounting:
                self._start_db()
                self._register_cluster()
            self._start_slurm()
            self.wait_idle(max(10.0, timeout - (time.monotonic() - t0)))
        except BaseException:
            # Leave nothing half-built behind, but keep the logs for the message's hint.
            self.down(keep_logs=True)
            raise
        return "up"

    def _check_conflicts(self) -> None:
        p = self.plan
        ours = {CTL_NETNS, *(n.netns for n in p.node_list)}
        stray = [ns for ns in netns_list() if ns in ours]
        if stray and not (p.state_dir / MARKER).exists():
            raise VClusterError(
                f"namespaces {' '.join(stray)} exist but belong to no cluster in "
                f"{p.state_dir}: run `vcluster down` (with that cluster's --state-dir)"
            )

    def down(self, *, keep_logs: bool = False) -> list[str]:
        """Stop everything and remove namespaces, links and state; safe to repeat."""
        p = self.plan
        done: list[str] = []
        ours = [ns for ns in netns_list()
                if ns == CTL_NETNS or (ns.startswith(NODE_NETNS_PREFIX + "node"))]
        # Jobs and slurmd first, then the controller and the database, munge last.
        ours.sort(key=lambda ns: ns == CTL_NETNS)
        for ns in ours:
            left = kill_pids(netns_pids(ns))
            if left:
                raise VClusterError(f"processes {left} in namespace {ns} survive SIGKILL")
        pids = self._pids()
        for pid in pids.values():
            if pid_alive(pid) and str(p.state_dir) in proc_cmdline(pid):
                kill_pids([pid])
        munge_pid = read_pid(p.munge_pid)
        if munge_pid and "munged" in proc_cmdline(munge_pid):
            kill_pids([munge_pid])
        for ns in ours:
            run(["ip", "netns", "del", ns], check=False)
            done.append(ns)
        for dev in [p.ctl_veth] + [n.veth for n in p.node_list]:
            if link_exists(dev):
                run(["ip", "link", "del", dev], check=False)
        # Links of a bigger cluster left in the same names.
        proc = run(["ip", "-o", "link", "show"], check=False)
        for line in proc.stdout.splitlines():
            name = line.split(":")[1].strip().split("@")[0] if ":" in line else ""
            if name.startswith(VETH_PREFIX):
                run(["ip", "link", "del", name], check=False)
        if link_exists(p.bridge):
            run(["ip", "link", "del", p.bridge], check=False)
            done.append(p.bridge)
        mounted_before = (p.state_dir / "run-netns-mounted").read_text().strip() \
            if (p.state_dir / "run-netns-mounted").exists() else "1"
        if mounted_before == "0" and is_mountpoint("/run/netns") \
                and not os.listdir("/run/netns"):
            run(["umount", "/run/netns"], check=False)
            with contextlib.suppress(OSError):
                os.rmdir("/run/netns")
        if (p.state_dir / MARKER).exists():
            if keep_logs:
                for child in p.state_dir.iterdir():
                    if child.name != "log":
                        if child.is_dir():
                            shutil.rmtree(child, ignore_errors=True)
                        else:
                            child.unlink(missing_ok=True)
            else:
                shutil.rmtree(p.state_dir, ignore_errors=True)
        return done

    # --- links ----------------------------------------------------------------------------
    def _links(self) -> dict[str, dict]:
        try:
            return json.loads(self.plan.links_file.read_text())
        except (OSError, ValueError):
            return {}

    def _save_links(self, links: dict) -> None:
        self.plan.links_file.write_text(json.dumps(links, indent=1, sort_keys=True) + "\n")

    def _require_up(self) -> None:
        self.check_host()
        if not self.is_up():
            raise VClusterError(f"no cluster is up in {self.plan.state_dir}: run `vcluster up`")

    def degrade(self, node: str, rate: str) -> str:
        self._require_up()
        n = self.plan.node(node)
        bits = parse_rate(rate)
        self._shape(n.veth, n.netns, bits)
        links = self._links()
        links.setdefault(n.name, {})["rate"] = format_rate(bits)
        self._save_links(links)
        return f"{n.name}: link shaped to {format_rate(bits)}"

    def link_down(self, node: str) -> str:
        self._require_up()
        n = self.plan.node(node)
        run(["ip", "link", "set", n.veth, "down"])
        links = self._links()
        links.setdefault(n.name, {})["down"] = True
        self._save_links(links)
        return f"{n.name}: link down"

    def restore(self, node: str | None = None, *, wait: float = 90) -> str:
        """Back to the default rate and link up (one node, or every node)."""
        self._require_up()
        targets: list[Node] = [self.plan.node(node)] if node else self.plan.node_list
        default = parse_rate(self.plan.default_rate) if self.plan.default_rate else None
        links = self._links()
        for n in targets:
            self._shape(n.veth, n.netns, default)
            run(["ip", "link", "set", n.veth, "up"])
            links.pop(n.name, None)
        self._save_links(links)
        # A node that was cut off long enough is DOWN in Slurm; ReturnToService=2 brings it
        # back when its slurmd registers again, which `scontrol update` hurries.
        names = ",".join(n.name for n in targets)
        run(["scontrol", "update", f"nodename={names}", "state=resume"], env=self._slurm_env(),
            check=False, timeout=15)
        if wait:
            self.wait_idle(wait, only={n.name for n in targets})
        return f"{names}: restored ({self.plan.default_rate or 'unshaped'}, link up)"

    # --- status --------------------------------------------------------------------------
    def status(self) -> dict:
        p = self.plan
        info: dict = {"state_dir": str(p.state_dir), "nodes": {}, "daemons": {},
                      "accounting": p.accounting, "default_rate": p.default_rate}
        daemons = ["munged", "slurmctld"] + (["mariadbd", "slurmdbd"] if p.accounting else [])
        for d in daemons:
            info["daemons"][d] = "running" if self.daemon_alive(d) else "stopped"
        try:
            states = self._sinfo(timeout=10) if self.daemon_alive("slurmctld") else {}
        except VClusterError:
            states = {}
        links = self._links()
        for n in p.node_list:
            info["nodes"][n.name] = {
                "address": n.address,
                "slurm": states.get(n.name, "unknown"),
                "slurmd": "running" if self.daemon_alive(f"slurmd-{n.name}") else "stopped",
                "link": "up" if link_is_up(n.veth) else "down",
                "rate": qdisc_rate(n.veth) or "unshaped",
                "degraded": bool(links.get(n.name)),
            }
        return info


def format_status(info: dict) -> str:
    lines = [f"vcluster in {info['state_dir']} (accounting "
             f"{'on' if info['accounting'] else 'off'}, default link rate "
             f"{info['default_rate'] or 'unshaped'})"]
    lines.append("daemons: " + ", ".join(f"{k} {v}" for k, v in info["daemons"].items()))
    lines.append(f"{'NODE':8} {'ADDRESS':13} {'SLURM':12} {'SLURMD':8} {'LINK':5} RATE")
    for name, n in info["nodes"].items():
        mark = "  <- degraded" if n["degraded"] else ""
        lines.append(f"{name:8} {n['address']:13} {n['slurm']:12} {n['slurmd']:8} "
                     f"{n['link']:5} {n['rate']}{mark}")
    return "\n".join(lines)


__all__ = ["Cluster", "VClusterError", "PlanError", "format_status", "run", "wait_for"]
