"""`vcluster up --preflight` brought to life, and the node faults the pre-flight checks exist
for (the plan is :mod:`.preflight_plan`).

* Every node gets its fabric NIC ``hsn0`` (a macvlan on its link, :mod:`.preflight_plan`).
* lldpd runs in every node's namespace on ``hsn0``, and on every switch port: a Linux bridge
  does not forward LLDP frames, so the switch side advertises from the bridge's side of each
  node's link (the root namespace, ``-I vcv-nodeNN``), one lldpd per port with the switch's
  name as its system name and the port's name as its description. A node's ``lldpctl`` then
  shows the switch and port its cable is on, as a real switch's LLDP would.
* Faults: ``swap-cable A B`` (the two nodes' links exchange switch ports: bridge, port MAC
  and advertised identity move), ``set-mac NODE MAC``, ``drop-ip NODE`` (its fabric address
  removed), ``bad-dns NODE`` (its fabric name points at an address nobody has). ``restore``
  undoes them: cables back on their home ports, the AMA, the address and the name back.

The lldpd processes' process groups are recorded in ``lldp/pids.json`` (lldpd renames its
processes, so they are found by what was recorded, never by name) and stopped by ``down``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from . import preflight_plan as pp
from . import switches
from .plan import Plan
from .shell import VClusterError, pid_alive, run, wait_for

REQUIRED_COMMANDS = ("lldpd", "lldpcli")
LLDP_STOP_S = 5.0
NEIGHBOUR_WAIT_S = 30.0  # lldpd speaks at start and every second: seconds on a loaded host


class Preflight:
    """The fabric identity and faults of the cluster whose state lives in `plan.state_dir`."""

    def __init__(self, plan: Plan, log: Callable[[str], None] | None = None):
        self.plan = plan
        self.log = log or (lambda msg: None)

    # --- state ----------------------------------------------------------------------------
    def state(self) -> dict:
        try:
            data = json.loads(pp.state_file(self.plan).read_text())
        except (OSError, ValueError):
            data = {}
        home = pp.home_ports(self.plan)
        data.setdefault("ports", {n: [p.switch, p.index] for n, p in home.items()})
        data.setdefault("faults", {})
        data.setdefault("pids", {})
        data["extras"] = pp.reframe_extras(self.plan)
        return data

    def _save(self, data: dict) -> None:
        pp.state_file(self.plan).write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")

    def ports(self, data: dict | None = None) -> dict[str, pp.Port]:
        data = data or self.state()
        return {n: pp.Port(sw, int(i)) for n, (sw, i) in data["ports"].items()}

    # --- up / down ------------------------------------------------------------------------
    def check_host(self) -> None:
        missing = [c for c in REQUIRED_COMMANDS if shutil.which(c) is None]
        if missing:
            raise VClusterError(f"--preflight needs {' and '.join(missing)} (Debian's lldpd; "
                                "scripts/install.sh installs it)")

    def write_files(self) -> None:
        """Inventory, fabric names, the health check script and its slurm.conf lines, the
        state file with the ReFrame system's extras (after `Cluster._write_files`)."""
        p = self.plan
        # the system's own lldpd (its default socket) would speak on the switch ports too
        if run(["lldpcli", "show", "chassis"], check=False, timeout=10).returncode == 0:
            raise VClusterError("a system lldpd runs in the root namespace (lldpcli answers on "
                                "its default socket): it would speak on the cluster's switch "
                                "ports; stop it first (systemctl stop lldpd)")
        pp.lldp_dir(p).mkdir(parents=True, exist_ok=True)
        pp.lldp_dir(p).chmod(0o755)  # lldpcli runs as lldpd's user
        pp.inventory_file(p).write_text(pp.inventory(p))
        self._write_hosts(set(self.state()["faults"].get("_bad_dns", [])))
        if p.health_check:
            pp.check_health_interval(p.health_check)
            script = pp.health_script(p)
            script.write_text(pp.health_script_text(p, Path(sys.executable).parent))
            script.chmod(0o755)
            with open(p.slurm_conf, "a") as fh:
                fh.write("\n".join(pp.slurm_conf_lines(p)) + "\n")
        self._save(self.state())

    def _write_hosts(self, bad_dns: set[str]) -> None:
        # in place (same inode): every daemon's mount namespace has this file bound over
        # /etc/hosts, and sees the change
        p = self.plan
        with open(p.hosts_file, "w") as fh:
            fh.write(p.hosts_text() + pp.hosts_lines(p, bad_dns))

    def net_up(self) -> None:
        """MACs, fabric addresses and lldpd on both ends of every link (after the network
        is up, before the daemons: no traffic has learnt a MAC yet)."""
        p = self.plan
        for bridge in [p.bridge] + [switches.bridge(p, s) for s in switches.names(p)]:
            _pin_mac(bridge)  # a bridge takes its lowest port's MAC unless told one
        run(["ip", "addr", "replace",
             f"{pp.bridge_fabric_address(p)}/{pp.fabric_network(p).prefixlen}", "dev", p.bridge])
        data = self.state()
        ports = self.ports(data)
        for n in p.node_list:
            if run(["ip", "-n", n.netns, "link", "show", pp.NIC], check=False).returncode:
                run(["ip", "-n", n.netns, "link", "add", pp.NIC, "link", pp.LINK,
                     "type", "macvlan", "mode", "bridge"])
            run(["ip", "-n", n.netns, "link", "set", pp.NIC, "address", ports[n.name].ama])
            run(["ip", "-n", n.netns, "link", "set", pp.NIC, "up"])
            run(["nsenter", f"--net={n.netns_path}", "sysctl", "-q", "-w",
                 f"net.ipv4.conf.{pp.NIC}.arp_notify=1"])  # a new MAC is announced
            run(["ip", "-n", n.netns, "addr", "replace",
                 f"{pp.fabric_address(p, n.name)}/{pp.fabric_network(p).prefixlen}",
                 "dev", pp.NIC])
            self._cable(n.name, ports[n.name], data)
            self._start_lldpd(data, n.name, netns=n.netns_path, device=pp.NIC,
                              config=pp.lldpd_config(n.name), sock=pp.node_socket(p, n.name))
        self._save(data)
        # every node has heard its switch port before slurmd starts: Slurm's first health
        # check runs at once, and would drain a node whose lldpd had not heard it yet
        wait_for("every node's LLDP neighbour", self._all_heard, NEIGHBOUR_WAIT_S,
                 hint=f"see {p.log_dir}/lldpd-*.out")

    def _all_heard(self) -> bool:
        for n in self.plan.node_list:
            proc = run(["lldpctl", "-u", pp.node_socket(self.plan, n.name), "-f", "keyvalue",
                        pp.NIC], check=False, timeout=10)
            if proc.returncode != 0 or f"lldp.{pp.NIC}.chassis" not in proc.stdout:
                return False
        return True

    def _cable(self, node: str, port: pp.Port, data: dict) -> None:
        """``node``'s link onto ``port``: its bridge, the port's MAC, its lldpd."""
        p = self.plan
        veth = p.node(node).veth
        bridge = p.bridge if port.switch == pp.SINGLE_SWITCH else switches.bridge(p, port.switch)
        run(["ip", "link", "set", veth, "master", bridge])
        run(["ip", "link", "set", veth, "address", port.switch_mac])
        self._stop_lldpd(data, f"port-{node}")
        self._start_lldpd(data, f"port-{node}", netns=None, device=veth,
                          config=pp.lldpd_config(port.switch, veth, port.name),
                          sock=pp.port_socket(p, node), mgmt=p.bridge_address)

    def _start_lldpd(self, data: dict, name: str, *, netns: str | None, device: str,
                     config: str, sock: str, mgmt: str | None = None) -> None:
        p = self.plan
        conf = pp.lldp_dir(p) / f"{name}.conf"
        conf.write_text(config)
        Path(sock).unlink(missing_ok=True)
        argv = (["nsenter", f"--net={netns}"] if netns else []) + [
            "lldpd", "-d", "-u", sock, "-I", device, "-C", device, "-O", str(conf)]
        if mgmt:
            argv += ["-m", mgmt]
        with open(p.log_dir / f"lldpd-{name}.out", "ab") as out:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, start_new_session=True,
                                    close_fds=True)
        data["pids"][name] = proc.pid
        self.log(f"started lldpd {name} (pid {proc.pid})")

    def _stop_lldpd(self, data: dict, name: str) -> None:
        pid = data["pids"].pop(name, None)
        if pid:
            _stop_group(pid)

    def down(self) -> None:
        """Stop every lldpd this cluster started (the nodes' die with their namespaces) and
        remove their sockets and start-up files."""
        data = self.state()
        for name in list(data["pids"]):
            self._stop_lldpd(data, name)
        if pp.state_file(self.plan).exists():
            self._save(data)
            shutil.rmtree(pp.lldp_dir(self.plan), ignore_errors=True)

    # --- faults ---------------------------------------------------------------------------
    def swap_cable(self, a: str, b: str) -> str:
        if a == b:
            raise VClusterError(f"swap-cable needs two nodes, not {a} twice")
        data = self.state()
        ports = self.ports(data)
        pa, pb = ports[a], ports[b]
        # through a free MAC, so that no two ports ever share one
        run(["ip", "link", "set", self.plan.node(a).veth, "address", "02:fe:ff:ff:ff:fe"])
        for node, port in ((b, pa), (a, pb)):
            data["ports"][node] = [port.switch, port.index]
            self._cable(node, port, data)
        self._save(data)
        for node in (a, b):
            self._announce(node)
        return (f"{a}: cable now on {pb.switch} {pb.name}; {b}: cable now on "
                f"{pa.switch} {pa.name}")

    def _announce(self, node: str) -> None:
        """A frame from ``node`` through its new switch: the bridges learn where its MAC now
        is (as a switch learns a re-plugged host's from its first frame); until then frames
        for it would go to the switch its cable left."""
        n = self.plan.node(node)
        for device, address in ((pp.LINK, self.plan.bridge_address),
                                (pp.NIC, pp.bridge_fabric_address(self.plan))):
            run(["nsenter", f"--net={n.netns_path}", "ping", "-c", "1", "-W", "1", "-I",
                 device, address], check=False, timeout=5)

    def set_mac(self, node: str, mac: str) -> str:
        mac = pp.parse_mac(mac)
        n = self.plan.node(node)
        run(["ip", "-n", n.netns, "link", "set", pp.NIC, "address", mac])
        data = self.state()
        data["faults"].setdefault(node, {})["mac"] = mac
        self._save(data)
        return f"{node}: {pp.NIC} MAC set to {mac} (its AMA is {self.ports(data)[node].ama})"

    def drop_ip(self, node: str) -> str:
        n = self.plan.node(node)
        addr = f"{pp.fabric_address(self.plan, node)}/{pp.fabric_network(self.plan).prefixlen}"
        run(["ip", "-n", n.netns, "addr", "del", addr, "dev", pp.NIC], check=False)
        data = self.state()
        data["faults"].setdefault(node, {})["ip_dropped"] = True
        self._save(data)
        return f"{node}: fabric address {addr} removed from {pp.NIC}"

    def bad_dns(self, node: str) -> str:
        self.plan.node(node)
        data = self.state()
        bad = set(data["faults"].get("_bad_dns", [])) | {node}
        data["faults"]["_bad_dns"] = sorted(bad)
        self._write_hosts(bad)
        self._save(data)
        return (f"{node}: {pp.fabric_name(node)} now resolves to "
                f"{pp.unused_fabric_address(self.plan)} (no node's address)")

    def restore(self, nodes: list[str]) -> None:
        """Cables home, AMA, fabric address and name back for ``nodes``."""
        home = pp.home_ports(self.plan)
        for node in nodes:
            data = self.state()
            ports = self.ports(data)
            if ports[node] != home[node]:
                holder = next(n for n, port in ports.items() if port == home[node])
                self.swap_cable(node, holder)
        data = self.state()
        p = self.plan
        for node in nodes:
            n = p.node(node)
            run(["ip", "-n", n.netns, "link", "set", pp.NIC, "address", home[node].ama])
            run(["ip", "-n", n.netns, "addr", "replace",
                 f"{pp.fabric_address(p, node)}/{pp.fabric_network(p).prefixlen}",
                 "dev", pp.NIC])
            data["faults"].pop(node, None)
        bad = set(data["faults"].get("_bad_dns", [])) - set(nodes)
        data["faults"]["_bad_dns"] = sorted(bad)
        self._write_hosts(bad)
        self._save(data)

    def status(self) -> dict:
        data = self.state()
        ports = self.ports(data)
        home = pp.home_ports(self.plan)
        bad = set(data["faults"].get("_bad_dns", []))
        out = {}
        for n in self.plan.node_list:
            mark = data["faults"].get(n.name, {})
            faults = {}
            if "mac" in mark:
                faults["mac"] = f"{mark['mac']} (AMA {ports[n.name].ama})"
            if mark.get("ip_dropped"):
                faults["address"] = "removed"
            if ports[n.name] != home[n.name]:
                faults["cable"] = f"on {ports[n.name].switch} {ports[n.name].name}"
            if n.name in bad:
                faults["dns"] = f"{pp.fabric_name(n.name)} -> " \
                                f"{pp.unused_fabric_address(self.plan)}"
            out[n.name] = {"port": f"{ports[n.name].switch} {ports[n.name].name}",
                           "fabric_address": pp.fabric_address(self.plan, n.name),
                           "faults": faults}
        return out


def _pin_mac(dev: str) -> None:
    proc = run(["ip", "-j", "link", "show", "dev", dev])
    try:
        mac = json.loads(proc.stdout)[0]["address"]
    except (ValueError, IndexError, KeyError):
        raise VClusterError(f"ip -j link show dev {dev}: no address") from None
    run(["ip", "link", "set", "dev", dev, "address", mac])


def _stop_group(pid: int) -> None:
    """SIGTERM to the process group ``pid`` leads (lldpd sends its neighbours a shutdown
    frame), SIGKILL what is left after :data:`LLDP_STOP_S`."""
    for sig, wait in ((signal.SIGTERM, LLDP_STOP_S), (signal.SIGKILL, 2.0)):
        try:
            os.killpg(pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if not _group_alive(pid):
                return
            time.sleep(0.05)


def _group_alive(pgid: int) -> bool:
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(stat) > 3 and stat[3] == str(pgid) and pid_alive(int(entry.name)):
            return True
    return False


__all__ = ["Preflight"]
