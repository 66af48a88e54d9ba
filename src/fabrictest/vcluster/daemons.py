"""The cluster's daemons: munge, MariaDB and slurmdbd (accounting), slurmctld and a slurmd per
node. Each runs in the foreground of a process started in its own session with its output sent
to a log file, so its pid is known and nothing holds the caller's pipes. Every wait has a
deadline and ends in a `VClusterError` naming what did not happen and where its log is."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

from .plan import CTL_HOST, CTL_NETNS, Plan
from .shell import (
    DaemonDied,
    VClusterError,
    kill_pids,
    pid_alive,
    proc_cmdline,
    read_pid,
    run,
    tcp_open,
    wait_for,
)


class Daemons:
    """Start, check and stop the daemons of the cluster whose state lives in `plan.state_dir`."""

    def __init__(self, plan: Plan, log: Callable[[str], None]):
        self.plan = plan
        self.log = log

    # --- bookkeeping ----------------------------------------------------------------------
    @property
    def pids_file(self) -> Path:
        return self.plan.state_dir / "pids.json"

    def pids(self) -> dict[str, int]:
        try:
            return json.loads(self.pids_file.read_text())
        except (OSError, ValueError):
            return {}

    def _record_pid(self, name: str, pid: int) -> None:
        pids = self.pids()
        pids[name] = pid
        self.pids_file.write_text(json.dumps(pids, indent=1))

    def alive(self, name: str) -> bool:
        return pid_alive(self.pids().get(name))

    def names(self) -> list[str]:
        """Every daemon of this plan, in start order."""
        names = ["munged"]
        if self.plan.accounting:
            names += ["mariadbd", "slurmdbd"]
        return names + ["slurmctld"] + [f"slurmd-{n.name}" for n in self.plan.node_list]

    def slurm_env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["SLURM_CONF"] = str(self.plan.slurm_conf)
        return env

    def _spawn(self, name: str, argv: Sequence[str], *, netns: str | None = None,
               hostname: str | None = None) -> int:
        """Start a foreground daemon (in a namespace, under its own hostname); record its pid."""
        cmd: list[str] = []
        if netns:
            cmd += ["nsenter", f"--net=/run/netns/{netns}"]
        if hostname:
            # Own UTS namespace (own hostname) and own mount namespace in which the cluster's
            # hosts file covers /etc/hosts and a sysfs of the node's network namespace covers
            # /sys (as `ip netns exec` does): /sys/class/net is then the node's own, so its
            # counters (carrier_changes, statistics/) are its link's, not the host's.
            # slurmd wants the host's /sys/fs/cgroup: it is moved over from the old /sys.
            keep = self.plan.state_dir / "mnt" / name
            keep.mkdir(parents=True, exist_ok=True)
            sysfs = (' && mount --rbind /sys/fs/cgroup "$3" && mount -t sysfs sysfs /sys'
                     ' && mount --move "$3" /sys/fs/cgroup') if netns else ""
            cmd += [
                "unshare", "--uts", "--mount", "--propagation", "private",
                "sh", "-c", 'hostname "$1" && mount --bind "$2" /etc/hosts' + sysfs
                + ' && shift 3 && exec "$@"',
                "vcluster-" + name, hostname, str(self.plan.hosts_file), str(keep),
            ]
        cmd += list(argv)
        logf = self.plan.log_dir / f"{name}.out"
        with open(logf, "ab") as out:
            proc = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True, close_fds=True, env=self.slurm_env(),
            )
        self._record_pid(name, proc.pid)
        self.log(f"started {name} (pid {proc.pid})")
        return proc.pid

    def _expect_alive(self, name: str, logname: str | None = None) -> None:
        if not self.alive(name):
            raise DaemonDied(
                f"{name} exited at start; see {self.plan.log_dir / (logname or name + '.out')}"
            )

    # --- munge ----------------------------------------------------------------------------
    def start_munge(self) -> None:
        p = self.plan
        if self.alive("munged") and p.munge_socket.exists():
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
        wait_for("munged socket", self._munge_ok, 15, hint=f"see {p.log_dir / 'munged.log'}")

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

    # --- accounting: MariaDB and slurmdbd -------------------------------------------------
    def start_accounting(self) -> None:
        p = self.plan
        datadir = p.db_dir / "data"
        sock = p.db_dir / "mysqld.sock"
        if not (datadir / "mysql").is_dir():
            self.log("initialising the accounting database")
            run(["mariadb-install-db", "--no-defaults", f"--datadir={datadir}", "--user=root",
                 "--auth-root-authentication-method=socket", "--skip-test-db",
                 "--innodb-log-file-size=8M"], timeout=180)
        if not self.alive("mariadbd"):
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
        if not self.alive("slurmdbd"):
            self._spawn("slurmdbd", ["slurmdbd", "-D"], netns=CTL_NETNS, hostname=CTL_HOST)

        def dbd_ok():
            self._expect_alive("slurmdbd", "slurmdbd.log")
            return tcp_open(p.ctl_address, 6819)

        wait_for("slurmdbd", dbd_ok, 60, hint=f"see {p.log_dir / 'slurmdbd.log'}")
        env = self.slurm_env()
        out = run(["sacctmgr", "-n", "-P", "list", "cluster", "format=cluster"], env=env,
                  timeout=30).stdout.split()
        if "vcluster" not in out:
            run(["sacctmgr", "-i", "add", "cluster", "vcluster"], env=env, timeout=30)

    # --- Slurm ----------------------------------------------------------------------------
    def start_slurm(self) -> None:
        p = self.plan
        conf = ["-f", str(p.slurm_conf)]
        if not self.alive("slurmctld"):
            self._spawn("slurmctld", ["slurmctld", "-D", "-c", "-i", *conf],
                        netns=CTL_NETNS, hostname=CTL_HOST)

        def ctld_ok():
            self._expect_alive("slurmctld", "slurmctld.log")
            return tcp_open(p.ctl_address, 6817)

        wait_for("slurmctld", ctld_ok, 60, hint=f"see {p.log_dir / 'slurmctld.log'}")
        for n in p.node_list:
            name = f"slurmd-{n.name}"
            if not self.alive(name):
                self._spawn(name, ["slurmd", "-D", "-N", n.name, *conf],
                            netns=n.netns, hostname=n.name)

    def sinfo(self, timeout: float = 15) -> dict[str, str]:
        out = run(["sinfo", "-h", "-N", "-o", "%N %T"], env=self.slurm_env(),
                  timeout=timeout).stdout
        return dict(line.split()[:2] for line in out.splitlines() if len(line.split()) >= 2)

    def resume(self, names: Sequence[str]) -> None:
        """Hurry Slurm's ReturnToService for nodes that were cut off (marked DOWN)."""
        run(["scontrol", "update", f"nodename={','.join(names)}", "state=resume"],
            env=self.slurm_env(), check=False, timeout=15)

    def wait_idle(self, timeout: float = 90, only: set[str] | None = None) -> None:
        names = only or {n.name for n in self.plan.node_list}

        def all_idle():
            for n in self.plan.node_list:
                self._expect_alive(f"slurmd-{n.name}", f"slurmd-{n.name}.out")
            states = self.sinfo()
            return names <= set(states) and all(
                states[n] in ("idle", "mixed", "allocated") for n in names
            )

        wait_for("all nodes idle", all_idle, timeout, interval=0.5,
                 hint=f"see `vcluster status` and {self.plan.log_dir}")

    # --- stopping -------------------------------------------------------------------------
    def stop(self) -> None:
        """Stop the daemons this state directory started (munge last), wherever they run."""
        state = str(self.plan.state_dir)
        for pid in self.pids().values():
            if pid_alive(pid) and state in proc_cmdline(pid):
                kill_pids([pid])
        munge_pid = read_pid(self.plan.munge_pid)
        if munge_pid and "munged" in proc_cmdline(munge_pid):
            kill_pids([munge_pid])


__all__ = ["Daemons", "VClusterError"]
