"""The pure part of the vcluster: names, addresses, paths and the generated files.

Nothing here touches the system: `network.py` and `daemons.py` turn a `Plan` into namespaces,
links and daemons, and `cluster.py` drives them. Keeping the plan pure lets the tests check
slurm.conf, the address plan and the hostfile anywhere.

Layout of a cluster of N nodes (defaults):

    root namespace          bridge vcbr0, 10.200.0.1/24  (sbatch, squeue, sinfo, ReFrame)
    namespace vc-ctl        eth0 10.200.0.2, hostname vcctl: munge-authenticated slurmctld,
                            and with --accounting slurmdbd + MariaDB (on its private loopback)
    namespace vc-nodeNN     eth0 10.200.0.(10+NN), hostname nodeNN: slurmd -N nodeNN

Each namespace is joined to the bridge by a veth pair whose root end is `vcv-<short name>`
(`vcv-ctl`, `vcv-node01`, ...). A node's link is shaped with `tbf` on both ends of its pair
(`shaping.py`).
"""

from __future__ import annotations

import ipaddress
import os
import re
import shlex
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from .shaping import PlanError, parse_rate

BRIDGE = "vcbr0"
SUBNET = "10.200.0.0/24"
CTL_HOST = "vcctl"
CTL_NETNS = "vc-ctl"
NODE_NETNS_PREFIX = "vc-"
VETH_PREFIX = "vcv-"
FIRST_NODE_HOST = 10  # node01 -> .11
CLUSTER_NAME = "vcluster"
PARTITION = "vc"
MAX_NODES = 64
# Every node's link is shaped to this rate by default so that bandwidth is steady (unshaped
# traffic between namespaces varies 2-3x on a small shared machine) and references hold.
DEFAULT_RATE = "200mbit"
# Slurm's message and PMIx fence tree width; below the node count of any step (see mpi_conf_text)
TREE_WIDTH = 2
STATE_ENV = "VCLUSTER_STATE_DIR"

_NODE_RE = re.compile(r"^node(\d{2,})$")


def default_state_dir() -> Path:
    """`$VCLUSTER_STATE_DIR`, else `<system temporary directory>/fabrictest-vcluster`."""
    env = os.environ.get(STATE_ENV)
    if env:
        return Path(env).resolve()
    return Path(tempfile.gettempdir()).resolve() / "fabrictest-vcluster"


def node_name(index: int) -> str:
    """1 -> 'node01'."""
    return f"node{index:02d}"


def node_index(name: str) -> int:
    """'node01' -> 1; PlanError for anything else."""
    m = _NODE_RE.match(name)
    if not m:
        raise PlanError(f"{name!r} is not a node name (node01, node02, ...)")
    return int(m.group(1))


@dataclass(frozen=True)
class Node:
    name: str  # node01
    index: int  # 1
    address: str  # 10.200.0.11
    netns: str  # vc-node01
    veth: str  # vcv-node01 (root-namespace end)

    @property
    def netns_path(self) -> str:
        return f"/run/netns/{self.netns}"


@dataclass(frozen=True)
class Plan:
    """Everything that identifies one cluster: derive every name and path from here."""

    state_dir: Path
    nodes: int = 4
    subnet: str = SUBNET
    accounting: bool = False
    default_rate: str | None = DEFAULT_RATE
    # Slurm CPUs per node: all nodes share this machine's cores anyway (ranks are never bound),
    # so declare enough for the scenarios' ranks per node (many-to-one runs 3).
    cpus: int = 4
    bridge: str = BRIDGE
    switches: int = 0  # leaf switches (switches.py); 0: every node on the one bridge
    # --preflight: lldpd, AMAs, fabric addresses and names, an inventory (preflight_plan.py);
    # --health-check S: Slurm's HealthCheckProgram every S seconds (0: none)
    preflight: bool = False
    health_check: int = 0
    extra: dict = field(default_factory=dict, compare=False)

    def __post_init__(self):
        if not 1 <= self.nodes <= MAX_NODES:
            raise PlanError(f"--nodes must be between 1 and {MAX_NODES}, not {self.nodes}")
        net = self.network
        if net.num_addresses < FIRST_NODE_HOST + self.nodes + 2:
            raise PlanError(f"subnet {self.subnet} is too small for {self.nodes} nodes")
        if not net.is_private:
            raise PlanError(f"subnet {self.subnet} is not a private range")
        if self.default_rate is not None:
            parse_rate(self.default_rate)
        if not 0 <= self.switches <= self.nodes:
            raise PlanError(f"--switches must be between 1 and the node count ({self.nodes}),"
                            f" not {self.switches}")
        object.__setattr__(self, "state_dir", Path(self.state_dir))

    # --- addresses -------------------------------------------------------------------
    @property
    def network(self) -> ipaddress.IPv4Network:
        try:
            return ipaddress.IPv4Network(self.subnet, strict=True)
        except ValueError as err:
            raise PlanError(f"bad subnet {self.subnet!r}: {err}") from None

    def host_address(self, offset: int) -> str:
        return str(self.network.network_address + offset)

    @property
    def bridge_address(self) -> str:
        return self.host_address(1)

    @property
    def ctl_address(self) -> str:
        return self.host_address(2)

    @property
    def prefixlen(self) -> int:
        return self.network.prefixlen

    @property
    def ctl_veth(self) -> str:
        return f"{VETH_PREFIX}ctl"

    @property
    def node_list(self) -> list[Node]:
        return [
            Node(
                name=node_name(i),
                index=i,
                address=self.host_address(FIRST_NODE_HOST + i),
                netns=f"{NODE_NETNS_PREFIX}{node_name(i)}",
                veth=f"{VETH_PREFIX}{node_name(i)}",
            )
            for i in range(1, self.nodes + 1)
        ]

    def node(self, name: str) -> Node:
        idx = node_index(name)
        if idx > self.nodes:
            raise PlanError(f"{name} is not in this cluster (node01..{node_name(self.nodes)})")
        return self.node_list[idx - 1]

    @property
    def nodeset(self) -> str:
        """Slurm's compact spelling: node[01-04]."""
        if self.nodes == 1:
            return node_name(1)
        return f"node[01-{self.nodes:02d}]"

    # --- paths -----------------------------------------------------------------------
    @property
    def etc(self) -> Path:
        return self.state_dir / "etc"

    @property
    def slurm_conf(self) -> Path:
        return self.etc / "slurm.conf"

    @property
    def topology_conf(self) -> Path:
        """Slurm's tree topology (with --switches): read from slurm.conf's directory."""
        return self.etc / "topology.conf"

    @property
    def slurmdbd_conf(self) -> Path:
        return self.etc / "slurmdbd.conf"

    @property
    def mpi_conf(self) -> Path:
        """Slurm's MPI plugin configuration: read from slurm.conf's directory."""
        return self.etc / "mpi.conf"

    @property
    def hosts_file(self) -> Path:
        return self.etc / "hosts"

    @property
    def hostfile(self) -> Path:
        return self.etc / "hostfile"

    @property
    def env_file(self) -> Path:
        return self.state_dir / "env.sh"

    @property
    def plan_file(self) -> Path:
        return self.state_dir / "cluster.json"

    @property
    def links_file(self) -> Path:
        return self.state_dir / "links.json"

    @property
    def munge_dir(self) -> Path:
        return self.state_dir / "munge"

    @property
    def munge_key(self) -> Path:
        return self.munge_dir / "munge.key"

    @property
    def munge_socket(self) -> Path:
        return self.munge_dir / "munge.socket"

    @property
    def munge_pid(self) -> Path:
        return self.munge_dir / "munged.pid"

    @property
    def ctl_dir(self) -> Path:
        return self.state_dir / "ctl"

    @property
    def db_dir(self) -> Path:
        return self.state_dir / "db"

    def node_dir(self, name: str) -> Path:
        return self.state_dir / "nodes" / name

    @property
    def log_dir(self) -> Path:
        return self.state_dir / "log"

    # --- generated files ---------------------------------------------------------------
    def slurm_conf_text(self) -> str:
        nodes_dir = self.state_dir / "nodes"
        lines = [
            "# Generated by `vcluster up`: do not edit (regenerated on every up).",
            f"ClusterName={CLUSTER_NAME}",
            f"SlurmctldHost={CTL_HOST}({self.ctl_address})",
            "SlurmUser=root",
            "SlurmdUser=root",
            "SlurmctldPort=6817",
            "SlurmdPort=6818",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.munge_socket}",
            f"StateSaveLocation={self.ctl_dir / 'state'}",
            f"SlurmctldPidFile={self.ctl_dir / 'slurmctld.pid'}",
            f"SlurmctldLogFile={self.log_dir / 'slurmctld.log'}",
            f"SlurmdSpoolDir={nodes_dir}/%n/spool",
            f"SlurmdPidFile={nodes_dir}/%n/slurmd.pid",
            f"SlurmdLogFile={self.log_dir}/slurmd-%n.log",
            # A TmpFS shared by all nodes makes PMIx collide on its directory.
            f"TmpFS={nodes_dir}/%n/tmp",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "SwitchType=switch/none",
            "MpiDefault=pmix",
            # The PMIx plugin's tree fences (mpi.conf) hold a step's nodes together only with a
            # width below the node count: with the default (50) the fence that ends MPI_Init
            # completed node by node (start-up crashes) and 2-node steps on other than the
            # first nodes hung. Measured: docs/vcluster.md, bench/bench_vcluster_mpi_start.py.
            f"TreeWidth={TREE_WIDTH}",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU",
            "SchedulerType=sched/backfill",
            "ReturnToService=2",
            # A node whose link is down must be noticed within the tests' time limits.
            "SlurmdTimeout=30",
            "SlurmctldTimeout=30",
            "MessageTimeout=10",
            "KillWait=5",
            "InactiveLimit=0",
            "MinJobAge=300",
            "UnkillableStepTimeout=30",
            "SlurmctldDebug=info",
            "SlurmdDebug=info",
            "PropagateResourceLimits=NONE",
            # Use the CPUs declared here, not the machine's (shared by every node).
            "SlurmdParameters=config_overrides",
            "MailProg=/bin/true",
        ]
        if self.accounting:
            lines += [
                "AccountingStorageType=accounting_storage/slurmdbd",
                f"AccountingStorageHost={self.ctl_address}",
                "AccountingStoragePort=6819",
                f"AccountingStoragePass={self.munge_socket}",
                "JobCompType=jobcomp/none",
            ]
        else:
            lines += ["AccountingStorageType=accounting_storage/none"]
        if self.switches:  # the tree of topology.conf (switches.py), next to this file
            lines.append("TopologyPlugin=topology/tree")
        for n in self.node_list:
            lines.append(
                f"NodeName={n.name} NodeAddr={n.address} NodeHostname={n.name} "
                f"CPUs={self.cpus} RealMemory=1000 State=UNKNOWN"
            )
        lines.append(
            f"PartitionName={PARTITION} Nodes={self.nodeset} Default=YES "
            "MaxTime=INFINITE State=UP OverSubscribe=NO"
        )
        return "\n".join(lines) + "\n"

    def mpi_conf_text(self) -> str:
        """PMIx collectives for `srun --mpi=pmix`: a tree (of TreeWidth, slurm.conf) for every
        fence.

        Slurm 22.05's default ("mixed") runs a fence without data (the barriers ending MPI_Init
        and in MPI_Finalize) as a tree and one with data as a ring. Measured here (4 nodes,
        docs/vcluster.md): with the default TreeWidth the tree fence did not hold the nodes
        together, so a rank could leave MPI_Init and send to a peer not ready yet (crashes in
        Open MPI's TCP/shared-memory start-up); the ring holds them but hung now and then in
        2-node steps of a 4-node allocation (fabric-sweep's steps). Trees of width 2 did both
        right.
        """
        return "# Generated by `vcluster up`: do not edit.\nPMIxCollFence=tree\n"

    def slurmdbd_conf_text(self, db_password: str) -> str:
        return "\n".join(
            [
                "# Generated by `vcluster up --accounting`: do not edit.",
                "AuthType=auth/munge",
                f"AuthInfo=socket={self.munge_socket}",
                f"DbdHost={CTL_HOST}",
                f"DbdAddr={self.ctl_address}",
                "DbdPort=6819",
                "SlurmUser=root",
                f"PidFile={self.db_dir / 'slurmdbd.pid'}",
                f"LogFile={self.log_dir / 'slurmdbd.log'}",
                "DebugLevel=info",
                "StorageType=accounting_storage/mysql",
                "StorageHost=127.0.0.1",
                "StoragePort=3306",
                "StorageUser=slurm",
                f"StoragePass={db_password}",
                "StorageLoc=slurm_acct_db",
                "",
            ]
        )

    def hosts_text(self) -> str:
        """The /etc/hosts every namespace of the cluster sees (bind-mounted over it)."""
        lines = ["127.0.0.1\tlocalhost", "::1\tlocalhost ip6-localhost ip6-loopback"]
        lines.append(f"{self.bridge_address}\tvcbridge")
        lines.append(f"{self.ctl_address}\t{CTL_HOST}")
        lines += [f"{n.address}\t{n.name}" for n in self.node_list]
        return "\n".join(lines) + "\n"

    def hostfile_text(self, slots: int | None = None) -> str:
        """An Open MPI hostfile naming every node (for mpirun outside Slurm)."""
        slots = self.cpus if slots is None else slots
        return "".join(f"{n.name} slots={slots}\n" for n in self.node_list)

    def mpi_env(self) -> dict[str, str]:
        """What Open MPI needs inside a job: stay on the bridge, never bind to cores."""
        env = {
            "OMPI_MCA_btl_tcp_if_include": self.subnet,
            "OMPI_MCA_oob_tcp_if_include": self.subnet,
            "OMPI_MCA_pml": "ob1",
            "OMPI_MCA_btl": "self,vader,tcp",
            "OMPI_MCA_hwloc_base_binding_policy": "none",
            "OMPI_MCA_rmaps_base_oversubscribe": "1",
            "PMIX_MCA_gds": "hash",
        }
        if os.geteuid() == 0:
            env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
            env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
        return env

    def env(self) -> dict[str, str]:
        """The environment of a shell that uses this cluster (`eval $(vcluster env)`)."""
        return {
            "SLURM_CONF": str(self.slurm_conf),
            STATE_ENV: str(self.state_dir),
            "VCLUSTER_HOSTFILE": str(self.hostfile),
            **self.mpi_env(),
        }

    def env_sh_text(self) -> str:
        return "".join(f"export {k}={shlex.quote(v)}\n" for k, v in self.env().items())

    def to_json(self) -> dict:
        return {
            "state_dir": str(self.state_dir),
            "nodes": self.nodes,
            "subnet": self.subnet,
            "accounting": self.accounting,
            "default_rate": self.default_rate,
            "cpus": self.cpus,
            "bridge": self.bridge,
            "switches": self.switches,
            "preflight": self.preflight,
            "health_check": self.health_check,
        }

    @classmethod
    def from_json(cls, data: dict) -> Plan:
        keys = ("state_dir", "nodes", "subnet", "accounting", "default_rate", "cpus", "bridge",
                "switches", "preflight", "health_check")
        return cls(**{k: data[k] for k in keys if k in data})
