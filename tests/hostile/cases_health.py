"""Hostile cases for stage 1's options (issue 31): fabric-health's fabric-NIC checks and the
vcluster's node faults. Each value that makes no sense is refused with one line, before
anything is read from the node (the same on a node without an RDMA device), and a site file
that cannot be read is named."""

from __future__ import annotations

from table import USAGE_HEALTH, cmd

NIC = ["--nic", "eth0"]
# a node without an RDMA device (the table's fake sysfs): refused, not hidden behind "no device"
NO_DEV = ["--sys-root", "{d}/sys", "--proc-root", "{d}/proc", "--no-ibv-devinfo",
          "--node-name", "n01"]
WHY = "a site's declaration that makes no sense must be refused, not turned into a pass"

HEALTH_STAGE1_BAD = [
    (["--no-rdma"], r"--no-rdma checks the --nic netdevs: name at least one --nic"),
    (["--nic", ""], r"--nic needs a network interface name"),
    (["--nic", "../eth0"], r"--nic needs a network interface name"),
    (["--mac-rule", "slingshot-ama"], r"--mac-rule checks fabric NICs: name them with --nic"),
    ([*NIC, "--mac-rule", "ama"], r"argument --mac-rule: invalid choice: 'ama'"),
    ([*NIC, "--mac-rule", "inventory"], r"--mac-rule inventory needs --inventory FILE"),
    ([*NIC, "--inventory", "/no/such/inventory"],
     r"--inventory /no/such/inventory: No such file or directory"),
    ([*NIC, "--inventory", "/proc/self/status"],
     r"--inventory /proc/self/status: inventory line 1: 2 columns, expected"),
    ([*NIC, "--inventory", "/bin/sh"], r"--inventory /bin/sh: .*(codec|decode|columns)"),
    ([*NIC, "--topology", "/no/such/topology"],
     r"--topology /no/such/topology: No such file or directory"),
    (["--fabric-hostname", "{host}-hsn0"],
     r"--fabric-hostname '\{host\}-hsn0': unknown field \{host\}"),
    (["--fabric-hostname", "{node"], r"--fabric-hostname '\{node': "),
    (["--fabric-hostname", " "], r"--fabric-hostname is empty"),
    (["--lldp-socket", "/run/{nic}.sock"], r"--lldp-socket '/run/\{nic\}\.sock': unknown field"),
    (["--fabric-subnet", "10.253.0.0/33"], r"--fabric-subnet '10\.253\.0\.0/33': a network"),
    (["--mgmt", "ncn-m001:99999"], r"--mgmt 'ncn-m001:99999': port 99999 is not 1 to 65535"),
    (["--mgmt", "ncn-m001:ssh"], r"--mgmt 'ncn-m001:ssh': the port is not a number"),
    (["--mgmt", "ncn-m001,,ncn-m002"], r"--mgmt 'ncn-m001,,ncn-m002': an empty target"),
    (["--mgmt-timeout", "nan"], r"--mgmt-timeout nan: seconds in \(0, 60\]"),
    (["--mgmt-timeout", "0"], r"--mgmt-timeout 0: seconds in \(0, 60\]"),
    ([*NIC, "--loopback", "1.5"], r"--loopback 1\.5: a fraction of the port's rate in \(0, 1\]"),
    ([*NIC, "--loopback", "nan"], r"--loopback nan: a fraction"),
    ([*NIC, "--loopback", "0.9", "--port-rate", "-100"], r"--port-rate -100: Gb/s in \(0, "),
    ([*NIC, "--port-rate", "200"], r"--port-rate is what --loopback is held to"),
]
for argv, line in HEALTH_STAGE1_BAD:
    cmd(f"health {' '.join(argv)}", ["fabric-health", *argv], USAGE_HEALTH,
        rf"^fabric-health: error: {line}", why=WHY)
for argv, line in HEALTH_STAGE1_BAD[:4]:  # with no RDMA device: the same refusal
    cmd(f"health no-device {' '.join(argv)}", ["fabric-health", *NO_DEV, *argv], USAGE_HEALTH,
        rf"^fabric-health: error: {line}", why=WHY)

# vcluster's pre-flight faults: bad input is refused before a cluster is looked for (exit 2)
VC = ["vcluster", "--state-dir", "{d}/vcluster-state"]
VC_UP = ["vcluster", "--state-dir", "/proc/fabrictest-hostile/state"]
for argv, line in [
    (["swap-cable", "node01", "node01"], r"swap-cable needs two nodes, not node01 twice"),
    (["swap-cable", "node01"], r"the following arguments are required: node_b"),
    (["set-mac", "node02", "01:00:5e:00:00:01"], r"is a multicast address"),
    (["set-mac", "node02", "02:00:00:00:00"], r"bad MAC '02:00:00:00:00'"),
    (["drop-ip", "hsn0"], r"'hsn0' is not a node name"),
    (["bad-dns", "node"], r"'node' is not a node name"),
    (["up", "--health-check", "-1"], r"--health-check -1: seconds between runs"),
]:
    base = VC_UP if argv[:1] == ["up"] else VC
    cmd(f"vcluster {' '.join(argv)}", [*base, *argv], 2, rf"^vcluster: error: .*{line}",
        why="a fault that cannot be must not half-happen on a shared cluster")
cmd("vcluster drop-ip with no cluster", [*VC, "drop-ip", "node01"], 1,
    r"^vcluster: error: no cluster in .*: run `vcluster up`")
