"""Pure parts of the vcluster: address plan, slurm.conf, hosts file, hostfile, rates, CLI errors.

These run anywhere (no root, no Slurm)."""

from __future__ import annotations

import ipaddress
import os

import pytest

from fabrictest.vcluster import cli
from fabrictest.vcluster.plan import Plan, PlanError, default_state_dir, node_index, node_name
from fabrictest.vcluster.shaping import directions, format_rate, parse_rate, shaped_end, tbf_args


def conf_dict(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line.startswith("#") or "=" not in line:
            continue
        key, value = line.split("=", 1)
        out.setdefault(key, []).append(value)
    return out


def test_address_plan_is_private_and_distinct(tmp_path):
    plan = Plan(state_dir=tmp_path, nodes=4)
    net = ipaddress.IPv4Network(plan.subnet)
    addrs = [plan.bridge_address, plan.ctl_address] + [n.address for n in plan.node_list]
    assert len(set(addrs)) == len(addrs)
    assert all(ipaddress.IPv4Address(a) in net for a in addrs)
    assert net.is_private
    assert [n.name for n in plan.node_list] == ["node01", "node02", "node03", "node04"]
    assert plan.node("node03").address == "10.200.0.13"
    assert plan.node("node03").netns == "vc-node03"
    # Linux interface names are at most 15 characters.
    assert all(len(n.veth) <= 15 for n in Plan(state_dir=tmp_path, nodes=64).node_list)


def test_node_names_and_bounds(tmp_path):
    assert node_name(7) == "node07" and node_index("node07") == 7
    assert node_index("node12") == 12
    with pytest.raises(PlanError):
        node_index("nodeX")
    plan = Plan(state_dir=tmp_path, nodes=2)
    with pytest.raises(PlanError, match="not in this cluster"):
        plan.node("node03")
    with pytest.raises(PlanError):
        Plan(state_dir=tmp_path, nodes=0)
    with pytest.raises(PlanError, match="private"):
        Plan(state_dir=tmp_path, subnet="8.8.8.0/24")
    with pytest.raises(PlanError, match="too small"):
        Plan(state_dir=tmp_path, nodes=8, subnet="10.200.0.0/29")


def test_slurm_conf_essentials(tmp_path):
    plan = Plan(state_dir=tmp_path, nodes=3)
    conf = conf_dict(plan.slurm_conf_text())
    assert conf["SlurmctldHost"] == ["vcctl(10.200.0.2)"]
    assert conf["ProctrackType"] == ["proctrack/linuxproc"]
    assert conf["TaskPlugin"] == ["task/none"]
    assert conf["JobAcctGatherType"] == ["jobacct_gather/none"]
    assert conf["SelectType"] == ["select/cons_tres"]
    assert conf["AuthInfo"] == [f"socket={tmp_path / 'munge' / 'munge.socket'}"]
    assert conf["AccountingStorageType"] == ["accounting_storage/none"]
    # per-node directories: a shared TmpFS makes PMIx collide
    for key in ("SlurmdSpoolDir", "SlurmdPidFile", "TmpFS"):
        assert "%n" in conf[key][0], key
    nodes = conf["NodeName"]
    assert len(nodes) == 3
    assert nodes[1].startswith("node02 NodeAddr=10.200.0.12 ")
    assert "CPUs=4" in nodes[1]
    assert conf["SlurmdParameters"] == ["config_overrides"]
    assert conf["PartitionName"] == [
        "vc Nodes=node[01-03] Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO"
    ]


def test_slurm_conf_with_accounting(tmp_path):
    plan = Plan(state_dir=tmp_path, nodes=2, accounting=True)
    conf = conf_dict(plan.slurm_conf_text())
    assert conf["AccountingStorageType"] == ["accounting_storage/slurmdbd"]
    assert conf["AccountingStorageHost"] == ["10.200.0.2"]
    assert conf["AccountingStoragePass"] == [str(plan.munge_socket)]
    dbd = conf_dict(plan.slurmdbd_conf_text("s3cret"))
    assert dbd["DbdHost"] == ["vcctl"] and dbd["DbdAddr"] == ["10.200.0.2"]
    assert dbd["StorageHost"] == ["127.0.0.1"] and dbd["StoragePass"] == ["s3cret"]
    assert dbd["AuthInfo"] == [f"socket={plan.munge_socket}"]


def test_max_step_count_is_written_only_when_asked(tmp_path):
    assert "MaxStepCount" not in conf_dict(Plan(state_dir=tmp_path).slurm_conf_text())
    plan = Plan(state_dir=tmp_path, max_step_count=12)
    assert conf_dict(plan.slurm_conf_text())["MaxStepCount"] == ["12"]
    assert Plan.from_json(plan.to_json()) == plan
    with pytest.raises(PlanError, match="--max-step-count"):
        Plan(state_dir=tmp_path, max_step_count=-1)


def test_single_node_nodeset(tmp_path):
    conf = conf_dict(Plan(state_dir=tmp_path, nodes=1).slurm_conf_text())
    assert conf["PartitionName"][0].startswith("vc Nodes=node01 ")


def test_hosts_and_hostfile(tmp_path):
    plan = Plan(state_dir=tmp_path, nodes=2)
    hosts = plan.hosts_text().splitlines()
    assert "127.0.0.1\tlocalhost" in hosts
    assert "10.200.0.2\tvcctl" in hosts
    assert "10.200.0.11\tnode01" in hosts and "10.200.0.12\tnode02" in hosts
    assert plan.hostfile_text() == "node01 slots=4\nnode02 slots=4\n"
    assert plan.hostfile_text(slots=1) == "node01 slots=1\nnode02 slots=1\n"


def test_env_keeps_open_mpi_on_the_bridge(tmp_path):
    plan = Plan(state_dir=tmp_path)
    env = plan.env()
    assert env["SLURM_CONF"] == str(tmp_path / "etc" / "slurm.conf")
    assert env["OMPI_MCA_btl_tcp_if_include"] == "10.200.0.0/24"
    assert env["OMPI_MCA_oob_tcp_if_include"] == "10.200.0.0/24"
    assert env["OMPI_MCA_hwloc_base_binding_policy"] == "none"
    text = plan.env_sh_text()
    assert f"export SLURM_CONF={tmp_path / 'etc' / 'slurm.conf'}\n" in text


@pytest.mark.parametrize(
    "text,bits",
    [("200mbit", 200_000_000), ("50Mbit", 50_000_000), ("1gbit", 10**9), ("500kbit", 500_000),
     ("1.5mbit", 1_500_000), ("10mbps", 80_000_000), ("1000000", 1_000_000)],
)
def test_parse_rate(text, bits):
    assert parse_rate(text) == bits


@pytest.mark.parametrize("text", ["fast", "-5mbit", "10 furlongs", "1bit"])
def test_parse_rate_rejects(text):
    with pytest.raises(PlanError):
        parse_rate(text)


def test_format_rate_and_tbf():
    assert format_rate(200_000_000) == "200mbit"
    assert format_rate(1_500_000) == "1500kbit"
    assert format_rate(10**9) == "1gbit"
    args = tbf_args(50_000_000)
    assert args[:3] == ["tbf", "rate", "50000000bit"]
    assert int(args[args.index("burst") + 1]) >= 64 * 1024


def test_plan_json_round_trip(tmp_path):
    plan = Plan(state_dir=tmp_path, nodes=3, accounting=True, default_rate="100mbit")
    assert Plan.from_json(plan.to_json()) == plan


def test_default_state_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("VCLUSTER_STATE_DIR", str(tmp_path / "x"))
    assert default_state_dir() == (tmp_path / "x").resolve()
    monkeypatch.delenv("VCLUSTER_STATE_DIR")
    assert default_state_dir().name == "fabrictest-vcluster"


def test_cli_errors_are_one_line(tmp_path, capsys):
    rc = cli.main(["--state-dir", str(tmp_path / "none"), "status"])
    err = capsys.readouterr().err
    assert rc != 0
    assert err.count("\n") == 1 and err.startswith("vcluster: error: no cluster in ")
    assert "Traceback" not in err


@pytest.mark.skipif(os.geteuid() == 0, reason="checks the message given to non-root users")
def test_cli_up_needs_root(tmp_path, capsys):
    rc = cli.main(["--state-dir", str(tmp_path), "up"])
    assert rc == 1
    assert "needs root" in capsys.readouterr().err


def test_cli_bad_rate_is_one_line(tmp_path, capsys):
    rc = cli.main(["--state-dir", str(tmp_path), "up", "--rate", "fast"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "bad rate" in err


@pytest.mark.parametrize("argv, says", [
    (["degrade", "node03", "fast"], "bad rate"),
    (["degrade", "node03", "1kbit", "--direction", "tx"], "below 8kbit"),
    (["degrade", "nodeX", "50mbit"], "nodeX"),
    (["link-down", "ctl"], "ctl"),
    (["restore", "node3"], "node3"),
    (["degrade", "node03"], "needs a RATE, --loss P, or both"),
    (["degrade", "node03", "--loss", "1x"], "bad loss"),
    (["degrade", "node03", "--loss", "0.001"], "smallest step"),
    (["degrade", "node03", "--loss", "100"], "below 100"),
    (["flap", "node03", "--times", "0"], "flap at least once"),
    (["flap", "node03", "--interval", "0.1"], "--interval 0.1"),
    (["flap", "nodeX"], "nodeX"),
])
def test_cli_bad_input_is_refused_before_looking_for_a_cluster(tmp_path, capsys, argv, says):
    # no cluster in tmp_path: the refusal comes first, exit 2, one line
    rc = cli.main(["--state-dir", str(tmp_path / "none"), *argv])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and says in err, err
    assert err.startswith("vcluster: error: ") and "no cluster" not in err


def test_directions_name_the_end_that_shapes_them():
    # what node03 sends leaves its own eth0; what it receives leaves the bridge's vcv-node03
    assert shaped_end("tx", "vc-node03", "vcv-node03") == ("vc-node03", "eth0")
    assert shaped_end("rx", "vc-node03", "vcv-node03") == (None, "vcv-node03")
    assert directions("both") == ("tx", "rx")
    assert directions("tx") == ("tx",) and directions("rx") == ("rx",)
    with pytest.raises(PlanError, match="direction"):
        directions("up")
    with pytest.raises(PlanError):
        shaped_end("both", "vc-node03", "vcv-node03")


def test_cli_degrade_takes_a_direction(tmp_path, capsys):
    for direction in ("tx", "rx", "both"):
        rc = cli.main(["--state-dir", str(tmp_path / "none"), "degrade", "node03", "50mbit",
                       "--direction", direction])
        err = capsys.readouterr().err
        # accepted; what stops it is the missing cluster
        assert rc == 1 and err.startswith("vcluster: error: no cluster in "), err


@pytest.mark.parametrize("argv", [
    ["degrade", "node03", "50mbit", "--direction", "up"],
    ["flap", "node03", "--times", "two"],
    ["frobnicate"],
])
def test_cli_bad_usage_is_one_line_and_exit_2(tmp_path, capsys, argv):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--state-dir", str(tmp_path), *argv])
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert err.count("\n") == 1 and err.startswith("vcluster: error: "), err


def test_pmix_fences_are_narrow_trees_next_to_slurm_conf(tmp_path):
    """Slurm reads mpi.conf from slurm.conf's directory; every fence a tree of width 2
    (docs/vcluster.md: with the default width the fence ending MPI_Init completed node by node;
    the ring hung 2-node steps now and then)."""
    plan = Plan(state_dir=tmp_path, nodes=4)
    assert plan.mpi_conf.parent == plan.slurm_conf.parent
    lines = [ln for ln in plan.mpi_conf_text().splitlines() if not ln.startswith("#")]
    assert lines == ["PMIxCollFence=tree"]
    conf = conf_dict(plan.slurm_conf_text())
    assert conf["MpiDefault"] == ["pmix"]
    assert conf["TreeWidth"] == ["2"]


def test_a_flap_turns_the_link_it_is_given_and_leaves_it_up(monkeypatch, tmp_path):
    """faults.flap with a routed fabric's switch port (set_link): down, up, per flap, and up
    again when a turn fails."""
    from fabrictest.vcluster import faults
    from fabrictest.vcluster.shell import VClusterError

    monkeypatch.setattr(faults.time, "sleep", lambda s: None)
    node = Plan(state_dir=tmp_path, nodes=2).node("node01")
    turns: list[bool] = []
    assert faults.flap(node, 2, 1.0, set_link=turns.append) == 2
    assert turns == [False, True, False, True, True]

    def fails_down(is_up: bool) -> None:
        turns.append(is_up)
        if not is_up:
            raise VClusterError("ip: cannot find device")

    turns.clear()
    with pytest.raises(VClusterError):
        faults.flap(node, 1, 1.0, set_link=fails_down)
    assert turns == [False, True]


def test_a_state_dir_too_long_for_slurms_sockets_is_refused():
    """Under a 74-character state directory every srun task launch failed ("Unspecified
    error": slurmstepd's socket path in the spool directory passed 107 bytes)."""
    long = Plan(nodes=4, state_dir="/tmp/pytest-of-root/pytest-141/"
                "test_one_step_per_round_matche0/state-default")
    assert "too long for Slurm's step sockets" in long.state_dir_problem()
    assert Plan(nodes=4, state_dir="/tmp/pytest-of-root/pytest-1410/vc-quarantine10/state"
                ).state_dir_problem() is None
