"""Bring a `Plan` to life and back: `up`, `down`, `status`, and the link faults (`degrade`,
`link-down`, `restore`). The network (`network.py`) and the daemons (`daemons.py`) do the
work; this module orders it and keeps the cluster's record in its state directory."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

from . import fabric_net, faults, network, switches
from .daemons import Daemons
from .fabric import Fabric
from .plan import CTL_NETNS, Node, Plan
from .preflight import Preflight
from .shaping import BOTH, describe, directions, format_rate, parse_rate
from .shell import VClusterError, is_mountpoint, kill_pids

MARKER = ".vcluster"
REQUIRED_COMMANDS = ("ip", "tc", "nsenter", "unshare", "munged", "slurmctld", "slurmd", "sinfo")
ACCOUNTING_COMMANDS = ("slurmdbd", "mariadbd", "mariadb-install-db", "mariadb", "sacctmgr")


class Cluster:
    """Operations on the cluster whose state lives in `plan.state_dir`."""

    def __init__(self, plan: Plan, *, verbose: bool = False,
                 log: Callable[[str], None] | None = None):
        self.plan = plan
        self.verbose = verbose
        self.log = log or (lambda msg: None)
        self.daemons = Daemons(plan, self.log)

    @classmethod
    def load(cls, state_dir: Path, **kw) -> Cluster | None:
        """The cluster recorded in `state_dir`, or None when there is none."""
        path = Path(state_dir) / "cluster.json"
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        return cls(Plan.from_json(data), **kw)

    def check_host(self) -> None:
        if os.geteuid() != 0:
            raise VClusterError("vcluster needs root (network namespaces, veth links, tc)")
        needed = REQUIRED_COMMANDS + (ACCOUNTING_COMMANDS if self.plan.accounting else ())
        missing = [c for c in needed if shutil.which(c) is None]
        if missing:
            raise VClusterError(
                f"missing commands: {' '.join(missing)} (run scripts/install.sh as root)"
            )
        if self.plan.preflight:
            Preflight(self.plan).check_host()

    # --- up / down ------------------------------------------------------------------------
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
        if p.switches or p.fabric:
            p.topology_conf.write_text(Fabric(p).topology_conf_text() if p.fabric
                                       else switches.topology_conf_text(p))
        elif p.topology_conf.exists():
            p.topology_conf.unlink()
        if p.fabric:  # ours, with the routing and the global wiring Slurm's cannot say
            p.fabric_topology.write_text(Fabric(p).own_topology_text())
        p.mpi_conf.write_text(p.mpi_conf_text())
        p.hosts_file.write_text(p.hosts_text())
        p.hostfile.write_text(p.hostfile_text())
        p.env_file.write_text(p.env_sh_text())
        if not p.links_file.exists():
            p.links_file.write_text("{}\n")

    def is_up(self) -> bool:
        """Every namespace, link and daemon of the plan present."""
        p = self.plan
        if not all(self.daemons.alive(d) for d in self.daemons.names()):
            return False
        have = set(network.netns_list())
        fabric = {Fabric.netns(s) for s in Fabric(p).switches} if p.fabric else set()
        return ({CTL_NETNS, *(n.netns for n in p.node_list), *fabric} <= have
                and network.link_exists(p.bridge))

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
                existing.daemons.wait_idle(timeout)
                return "already up"
            # A partial or stale cluster (crash, reboot): clear it and start afresh.
            self.log("clearing a partial cluster")
            existing.down()
        self._check_conflicts()
        problem = self.plan.state_dir_problem()
        if problem:
            raise VClusterError(problem)
        t0 = time.monotonic()
        self.plan.state_dir.mkdir(parents=True, exist_ok=True)
        (self.plan.state_dir / "run-netns-mounted").write_text(
            "1\n" if is_mountpoint(network.RUN_NETNS) else "0\n")
        self._write_files()
        if self.plan.preflight:  # inventory, fabric names, the health check (preflight.py)
            Preflight(self.plan, self.log).write_files()
        try:
            network.net_up(self.plan)
            if self.plan.fabric:
                fabric_net.up(self.plan)
            if self.plan.preflight:
                Preflight(self.plan, self.log).net_up()
            self.daemons.start_munge()
            if self.plan.accounting:
                self.daemons.start_accounting()
            self.daemons.start_slurm()
            self.daemons.wait_idle(max(10.0, timeout - (time.monotonic() - t0)))
        except BaseException:
            # Leave nothing half-built behind, but keep the logs for the message's hint.
            self.down(keep_logs=True)
            raise
        return "up"

    def _check_conflicts(self) -> None:
        p = self.plan
        ours = {CTL_NETNS, *(n.netns for n in p.node_list)}
        stray = [ns for ns in network.netns_list() if ns in ours]
        if stray and not (p.state_dir / MARKER).exists():
            raise VClusterError(
                f"namespaces {' '.join(stray)} exist but belong to no cluster in "
                f"{p.state_dir}: run `vcluster down` (with that cluster's --state-dir)"
            )

    def down(self, *, keep_logs: bool = False) -> list[str]:
        """Stop everything and remove namespaces, links and state; safe to repeat."""
        p = self.plan
        ours = network.our_netns()
        # Jobs and slurmd first, then the controller and the database, munge last.
        for ns in ours:
            left = kill_pids(network.netns_pids(ns))
            if left:
                raise VClusterError(f"processes {left} in namespace {ns} survive SIGKILL")
        Preflight(p, self.log).down()  # the switch ports' lldpd (the root namespace's)
        self.daemons.stop()
        flag = p.state_dir / "run-netns-mounted"
        mounted_before = flag.read_text().strip() if flag.exists() else "1"
        faults.drop_table()
        done = fabric_net.down(p)
        done += network.net_down(p, ours, unmount_run_netns=mounted_before == "0")
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

    # --- link faults ----------------------------------------------------------------------
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

    def degrade(self, node: str, rate: str, direction: str = BOTH) -> str:
        """Shape what `node` sends (tx), receives (rx) or both to `rate`."""
        n = self.plan.node(node)
        bits = parse_rate(rate)
        directions(direction)  # a bad direction is refused before any work
        self._require_up()
        if self.plan.fabric:  # the link MPI uses: the node's fabric link
            fabric_net.shape_node(self.plan, n, bits, direction)
        else:
            network.shape(n, bits, direction)
        links = self._links()
        for one in directions(direction):
            links.setdefault(n.name, {})[one] = format_rate(bits)
        self._save_links(links)
        return f"{n.name}: {describe(direction)} shaped to {format_rate(bits)}"

    def lose(self, node: str, percent: float, direction: str = BOTH) -> str:
        """Drop ``percent`` % of what `node` sends (tx), receives (rx) or both, at random."""
        n = self.plan.node(node)
        directions(direction)
        if self.plan.fabric:
            raise VClusterError("--loss is made on the bridge; on a routed fabric (--fat-tree, "
                                "--dragonfly) MPI does not cross it: use a rate")
        self._require_up()
        faults.set_loss(n, percent, direction)
        links = self._links()
        for one in directions(direction):
            links.setdefault(n.name, {})[f"loss_{one}"] = f"{percent:g}%"
        self._save_links(links)
        return f"{n.name}: {describe(direction)} loses {percent:g} % of its frames"

    def flap(self, node: str, times: int = 1, interval_s: float = 1.0) -> str:
        """`node`'s link down and up `times` times (its carrier_changes grows by 2 each)."""
        n = self.plan.node(node)
        faults.check_flap(times, interval_s)
        self._require_up()
        turn = ((lambda is_up: fabric_net.set_node_link(self.plan, n, is_up))
                if self.plan.fabric else None)  # routed: the leaf's port, MPI's link
        done = faults.flap(n, times, interval_s, log=self.log, set_link=turn)
        return (f"{n.name}: link flapped {done} time{'s' * (done != 1)} "
                f"({faults.FLAP_DOWN_S:g} s down each)")

    def degrade_uplink(self, switch: str, rate: str) -> str:
        """Shape a leaf switch's uplink to `rate` both ways (`none`: unshaped again)."""
        switches.require(self.plan, switch)
        bits = None if str(rate).lower() == "none" else parse_rate(rate)
        self._require_up()
        network.shape_uplink(switch, bits)
        links = self._links()
        up = links.setdefault("uplinks", {})
        if bits is None:
            up.pop(switch, None)
        else:
            up[switch] = format_rate(bits)
        self._save_links(links)
        what = "unshaped" if bits is None else f"shaped to {format_rate(bits)}"
        return f"uplink {switch}<->{switches.TOP}: {what}"

    def node_fault(self, fault: str, nodes: list[str], mac: str | None = None) -> str:
        """A pre-flight fault on nodes of a cluster up with --preflight (preflight.py)."""
        names = [self.plan.node(n).name for n in nodes]
        if not self.plan.preflight:
            raise VClusterError(f"{fault} needs a cluster up with --preflight "
                                "(`vcluster down`, then `vcluster up --preflight ...`)")
        self._require_up()
        pf = Preflight(self.plan, self.log)
        if fault == "swap-cable":
            return pf.swap_cable(*names)
        if fault == "set-mac":
            return pf.set_mac(names[0], mac or "")
        if fault == "drop-ip":
            return pf.drop_ip(names[0])
        return pf.bad_dns(names[0])

    def link_down(self, node: str) -> str:
        n = self.plan.node(node)
        self._require_up()
        if self.plan.fabric:
            fabric_net.set_node_link(self.plan, n, False)
        else:
            network.set_link(n, up=False)
        links = self._links()
        links.setdefault(n.name, {})["down"] = True
        self._save_links(links)
        return f"{n.name}: link down"

    def restore(self, node: str | None = None, *, wait: float = 90) -> str:
        """Back to the default rate both ways and link up (one node, or every node)."""
        targets: list[Node] = [self.plan.node(node)] if node else self.plan.node_list
        self._require_up()
        default = parse_rate(self.plan.default_rate) if self.plan.default_rate else None
        links = self._links()
        for n in targets:
            network.shape(n, default, BOTH)
            network.set_link(n, up=True)
            faults.clear_loss(n)
            if self.plan.fabric:
                fabric_net.shape_node(self.plan, n, default, BOTH)
                fabric_net.set_node_link(self.plan, n, True)
            links.pop(n.name, None)
        if node is None:  # every node: the uplinks and the fabric's links too
            for sw in switches.names(self.plan):
                network.shape_uplink(sw, None)
            links.pop("uplinks", None)
            if self.plan.fabric:
                for link in Fabric(self.plan).switch_links():
                    fabric_net.shape_ends(link, None)
                links.pop("fabric_links", None)
        self._save_links(links)
        if self.plan.preflight:  # cables home, MAC, fabric address and name back
            Preflight(self.plan, self.log).restore([n.name for n in targets])
        # A node that was cut off long enough is DOWN in Slurm; ReturnToService=2 brings it
        # back when its slurmd registers again, which `scontrol update` hurries.
        names = [n.name for n in targets]
        self.daemons.resume(names)
        if wait:
            self.daemons.wait_idle(wait, only=set(names))
        return f"{','.join(names)}: restored ({self.plan.default_rate or 'unshaped'}, link up)"

    # --- status ---------------------------------------------------------------------------
    def status(self) -> dict:
        p = self.plan
        info: dict = {"state_dir": str(p.state_dir), "nodes": {}, "daemons": {},
                      "accounting": p.accounting, "default_rate": p.default_rate}
        for d in self.daemons.names():
            if not d.startswith("slurmd-"):
                info["daemons"][d] = "running" if self.daemons.alive(d) else "stopped"
        try:
            states = self.daemons.sinfo(timeout=10) if self.daemons.alive("slurmctld") else {}
        except VClusterError:
            states = {}
        links = self._links()
        for n in p.node_list:
            got = fabric_net.node_rates(p, n) if p.fabric else network.rates(n)
            rates = {k: v or "unshaped" for k, v in got.items()}
            mark = links.get(n.name, {})
            info["nodes"][n.name] = {
                "address": n.address,
                "slurm": states.get(n.name, "unknown"),
                "slurmd": "running" if self.daemons.alive(f"slurmd-{n.name}") else "stopped",
                "link": "up" if network.link_is_up(n.veth) else "down",
                "tx_rate": rates["tx"],
                "rx_rate": rates["rx"],
                # one figure when both ways agree (what `degrade NODE RATE` sets)
                "rate": rates["tx"] if rates["tx"] == rates["rx"]
                else f"tx {rates['tx']} rx {rates['rx']}",
                "degraded": bool(mark),
                "degraded_directions": [d for d in directions(BOTH) if d in mark],
                "loss": {d: mark[f"loss_{d}"] for d in directions(BOTH) if f"loss_{d}" in mark},
            }
        info["switches"] = {
            sw: {"nodes": [n.name for n in ns], "uplink": {
                k: v or "unshaped" for k, v in network.uplink_rates(sw).items()}}
            for sw, ns in switches.members(p).items()}
        if p.fabric:
            f = Fabric(p)
            info["fabric"] = {"shape": p.fabric, "topology": str(p.fabric_topology),
                              "links": {link.name: {"kind": link.kind, **{
                                  k: v or "unshaped" for k, v in
                                  fabric_net.link_rates(link).items()}}
                                  for link in f.switch_links()}}
        if p.preflight:
            info["preflight"] = Preflight(p).status()
        return info


def format_status(info: dict) -> str:
    lines = [f"vcluster in {info['state_dir']} (accounting "
             f"{'on' if info['accounting'] else 'off'}, default link rate "
             f"{info['default_rate'] or 'unshaped'})"]
    lines.append("daemons: " + ", ".join(f"{k} {v}" for k, v in info["daemons"].items()))
    lines.append(f"{'NODE':8} {'ADDRESS':13} {'SLURM':12} {'SLURMD':8} {'LINK':5} "
                 f"{'TX (sends)':11} RX (receives)")
    for name, n in info["nodes"].items():
        marks = []
        if n["degraded_directions"]:
            marks.append(f"degraded ({'/'.join(n['degraded_directions'])})")
        if n.get("loss"):
            marks.append("loss " + ", ".join(f"{d} {v}" for d, v in n["loss"].items()))
        if n["link"] == "down":
            marks.append("link down")
        mark = "  <- " + ", ".join(marks) if marks else ""
        lines.append(f"{name:8} {n['address']:13} {n['slurm']:12} {n['slurmd']:8} "
                     f"{n['link']:5} {n['tx_rate']:11} {n['rx_rate']}{mark}")
    for sw, info_sw in info.get("switches", {}).items():
        up = info_sw["uplink"]
        rate = up["up"] if up["up"] == up["down"] else f"up {up['up']} down {up['down']}"
        mark = "  <- degraded" if rate != "unshaped" else ""
        lines.append(f"switch {sw}: {','.join(info_sw['nodes'])}; uplink to "
                     f"{switches.TOP} {rate}{mark}")
    fab = info.get("fabric")
    if fab:
        lines.append(f"fabric {fab['shape']} (routed, destination-mod-k; {fab['topology']}):")
        for name, link in fab["links"].items():
            rates = sorted({v for k, v in link.items() if k != "kind"})
            mark = "  <- degraded" if rates != ["unshaped"] else ""
            lines.append(f"  {link['kind']} link {name}: {' / '.join(rates)}{mark}")
    for name, fab in info.get("preflight", {}).items():  # vcluster up --preflight
        faults = "; ".join(f"{k} {v}" for k, v in fab["faults"].items())
        lines.append(f"fabric {name}: {fab['port']}, {fab['fabric_address']}"
                     f"{'  <- ' + faults if faults else ''}")
    return "\n".join(lines)


__all__ = ["Cluster", "VClusterError", "format_status"]
