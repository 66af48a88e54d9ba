"""The pure part of the vcluster: names, addresses and paths (the generated files are
conf_files.py's, a routed fabric's switches and routes fabric.py's).

Nothing here touches the system: `network.py`, `fabric_net.py` and `daemons.py` turn a `Plan`
into namespaces, links and daemons, and `cluster.py` drives them. Keeping the plan pure lets
the tests check slurm.conf, the address plan and the hostfile anywhere.

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
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from . import conf_files
from .conf_files import (  # noqa: F401 - re-exported: daemons, tests, config
    CLUSTER_NAME,
    CTL_HOST,
    PARTITION,
    STATE_ENV,
    TREE_WIDTH,
)
from .fabric_spec import MAX_SWITCHES, leaves_of, parse_fabric
from .shaping import PlanError, parse_rate

BRIDGE = "vcbr0"
SUBNET = "10.200.0.0/24"
CTL_NETNS = "vc-ctl"
NODE_NETNS_PREFIX = "vc-"
VETH_PREFIX = "vcv-"
FIRST_NODE_HOST = 10  # node01 -> .11
FIRST_SWITCH_HOST = 128  # a routed fabric's switches: .129, ... of the fabric subnet
MAX_NODES = 64
# Every node's link is shaped to this rate by default so that bandwidth is steady (unshaped
# traffic between namespaces varies 2-3x on a small shared machine) and references hold.
DEFAULT_RATE = "200mbit"

_NODE_RE = re.compile(r"^node(\d{2,})$")


#: slurmstepd's socket for a job's extern step in a node's SlurmdSpoolDir
#: (conf_files: STATE/nodes/<node>/spool), with a job id of 7 digits: a Unix socket's path
#: holds at most 107 bytes, and past it every task launch fails with "Unspecified error" (seen
#: with a 74-character state directory under pytest's per-test directory)
STEP_SOCKET_TAIL = "/nodes/node01/spool/node01_1234567.4294967292"
SOCKET_PATH_MAX = 107


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
    # a routed fabric (fabric.py): "fat-tree:LxS" or "dragonfly:GxS"; "" for none
    fabric: str = ""
    # --preflight: lldpd, AMAs, fabric addresses and names, an inventory (preflight_plan.py);
    # --health-check S: Slurm's HealthCheckProgram every S seconds (0: none)
    preflight: bool = False
    health_check: int = 0
    # --max-step-count N: Slurm's MaxStepCount (job steps a job may launch; Slurm's default
    # 40,000 when 0): set low to show a launcher that needs a step per run fail at scale
    max_step_count: int = 0
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
        if not 0 <= self.max_step_count < 1 << 31:  # slurm.conf holds it in 32 bits
            raise PlanError(f"--max-step-count must be a step count from 1 (0: Slurm's "
                            f"default), not {self.max_step_count}")
        if not 0 <= self.switches <= self.nodes:
            raise PlanError(f"--switches must be between 1 and the node count ({self.nodes}),"
                            f" not {self.switches}")
        shape = parse_fabric(self.fabric)
        if shape is not None:
            if self.switches:
                raise PlanError("--switches (one bridge per switch) and a routed fabric "
                                f"(--{shape[0]}) exclude each other")
            if self.preflight:  # both would own the subnet after the cluster's
                raise PlanError(f"--preflight (a fabric NIC per node) and a routed fabric "
                                f"(--{shape[0]}) exclude each other")
            if self.nodes < leaves_of(shape):
                raise PlanError(f"--{shape[0]} {shape[1]}x{shape[2]}: {leaves_of(shape)} "
                                f"switches with nodes need at least as many nodes, not "
                                f"{self.nodes}")
            fab = self.fabric_network
            if fab.num_addresses < FIRST_SWITCH_HOST + MAX_SWITCHES + 2 or not fab.is_private:
                raise PlanError(f"subnet {self.subnet}: the routed fabric's subnet after it "
                                f"({fab}) is too small or not private")
        object.__setattr__(self, "state_dir", Path(self.state_dir))

    def state_dir_problem(self) -> str | None:
        """Why Slurm could not launch a task with its spool under :attr:`state_dir`; None."""
        longest = len(str(self.state_dir.resolve())) + len(STEP_SOCKET_TAIL)
        if longest <= SOCKET_PATH_MAX:
            return None
        return (f"--state-dir {self.state_dir}: too long for Slurm's step sockets inside it "
                f"({longest} of at most {SOCKET_PATH_MAX} bytes with '{STEP_SOCKET_TAIL}'; "
                f"every task launch would fail): choose a directory of at most "
                f"{SOCKET_PATH_MAX - len(STEP_SOCKET_TAIL)} characters")

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
    def fabric_network(self) -> ipaddress.IPv4Network:
        """A routed fabric's own subnet: the block after the bridge's (10.201.0.0/24)."""
        net = self.network
        return ipaddress.IPv4Network(
            (int(net.network_address) + net.num_addresses, net.prefixlen))

    @property
    def fabric_subnet(self) -> str:
        return str(self.fabric_network)

    def fabric_address(self, offset: int) -> str:
        return str(self.fabric_network.network_address + offset)

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
    def fabric_topology(self) -> Path:
        """A routed fabric in our own topology format, with its routing rule (fabric.py)."""
        return self.etc / "fabric.topology"

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

    # --- generated files (conf_files.py) -------------------------------------------------
    def slurm_conf_text(self) -> str:
        return conf_files.slurm_conf_text(self)

    def mpi_conf_text(self) -> str:
        return conf_files.mpi_conf_text(self)

    def slurmdbd_conf_text(self, db_password: str) -> str:
        return conf_files.slurmdbd_conf_text(self, db_password)

    def hosts_text(self) -> str:
        return conf_files.hosts_text(self)

    def hostfile_text(self, slots: int | None = None) -> str:
        return conf_files.hostfile_text(self, slots)

    def mpi_env(self) -> dict[str, str]:
        return conf_files.mpi_env(self)

    def env(self) -> dict[str, str]:
        return conf_files.env(self)

    def env_sh_text(self) -> str:
        return conf_files.env_sh_text(self)

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
            "fabric": self.fabric,
            "preflight": self.preflight,
            "health_check": self.health_check,
            "max_step_count": self.max_step_count,
        }

    @classmethod
    def from_json(cls, data: dict) -> Plan:
        keys = ("state_dir", "nodes", "subnet", "accounting", "default_rate", "cpus", "bridge",
                "switches", "fabric", "preflight", "health_check", "max_step_count")
        return cls(**{k: data[k] for k in keys if k in data})
