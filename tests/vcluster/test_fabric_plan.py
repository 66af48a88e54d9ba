"""`vcluster up --fat-tree / --dragonfly` as a plan (pure): switches, links and device names,
every switch's routes walked for every pair of nodes and compared with the topology model's
route (what fabric-sweep and fabric-report assume is what the cluster does), the files Slurm
and the tools read, and bad requests refused in one line."""

from __future__ import annotations

import pytest

from fabrictest.parsers.topology import parse_scontrol_topology, parse_topology_file
from fabrictest.vcluster import cli
from fabrictest.vcluster.fabric import Fabric
from fabrictest.vcluster.plan import Plan
from fabrictest.vcluster.shaping import PlanError


def plan(tmp_path, fabric, nodes):
    return Plan(state_dir=tmp_path, nodes=nodes, fabric=fabric)


@pytest.mark.parametrize("fabric, nodes", [("fat-tree:4x2", 8), ("fat-tree:4x2", 16),
                                           ("fat-tree:3x3", 9), ("dragonfly:2x2", 8),
                                           ("dragonfly:3x2", 12), ("dragonfly:2x2", 16)])
def test_the_clusters_routes_are_the_models(tmp_path, fabric, nodes):
    p = plan(tmp_path, fabric, nodes)
    f = Fabric(p)
    ours = parse_topology_file(f.own_topology_text())
    slurm = parse_scontrol_topology(f.topology_conf_text())
    assert ours.shape == fabric.split(":")[0] and ours.routing == "dmodk"
    assert slurm.switch_of() == ours.switch_of() == f.leaf_of
    for a in p.node_list:
        for b in p.node_list:
            if a != b:
                links = {frozenset(x.split("<->")) for x in f.path(a, b)[1:-1]}
                model = {frozenset((h.a, h.b)) for h in ours.route(a.name, b.name)}
                assert links == model, (a.name, b.name)


def test_fat_tree_4x2(tmp_path):
    p = plan(tmp_path, "fat-tree:4x2", 8)
    f = Fabric(p)
    assert f.switches == ["leaf1", "leaf2", "leaf3", "leaf4", "spine1", "spine2"]
    assert f.topology_conf_text().splitlines()[1:] == [
        "SwitchName=leaf1 Nodes=node[01-02]", "SwitchName=leaf2 Nodes=node[03-04]",
        "SwitchName=leaf3 Nodes=node[05-06]", "SwitchName=leaf4 Nodes=node[07-08]",
        "SwitchName=spine1 Switches=leaf[1-4]", "SwitchName=spine2 Switches=leaf[1-4]"]
    assert [x.name for x in f.switch_links()][:2] == ["leaf1<->spine1", "leaf1<->spine2"]
    # destination-mod-k: node05 is node 4, spine 4 mod 2 = 0; node06: spine2
    assert f.next_hop("leaf1", p.node("node05")) == "l-spine1"
    assert f.next_hop("leaf1", p.node("node06")) == "l-spine2"
    assert f.next_hop("spine2", p.node("node06")) == "l-leaf3"
    assert f.next_hop("leaf3", p.node("node06")) == "p-node06"
    assert f.node_address(p.node("node01")) == "10.200.1.11"
    assert f.switch_address("spine2") == "10.200.1.134"
    link = f.link("spine1", "leaf3")
    assert (link.kind, link.a_netns, link.a_dev, link.b_netns, link.b_dev) == (
        "leaf-spine", "vc-sw-leaf3", "l-spine1", "vc-sw-spine1", "l-leaf3")
    edge = f.link("node03", "leaf2")
    assert (edge.kind, edge.a_netns, edge.a_dev, edge.b_dev) == (
        "edge", "vc-node03", "hsn0", "p-node03")
    assert all(len(d) <= 15 for x in f.links() for _ns, d in x.ends())
    with pytest.raises(PlanError, match="no link between leaf1 and leaf2"):
        f.link("leaf1", "leaf2")
    # Slurm: the tree plugin; MPI over the fabric, Slurm's own traffic over the bridge
    assert "TopologyPlugin=topology/tree" in p.slurm_conf_text().splitlines()
    assert "TopologyParam=dragonfly" not in p.slurm_conf_text()
    env = p.mpi_env()
    assert env["OMPI_MCA_btl_tcp_if_include"] == "10.200.1.0/24"
    assert env["OMPI_MCA_oob_tcp_if_include"] == "10.200.0.0/24"
    assert env["OMPI_MCA_btl"] == "self,vader,tcp"
    assert Plan.from_json(p.to_json()) == p


def test_dragonfly_2x2_is_the_slingshot_notes_example(tmp_path):
    p = plan(tmp_path, "dragonfly:2x2", 8)
    f = Fabric(p)
    assert f.groups == {"g1": ["g1s1", "g1s2"], "g2": ["g2s1", "g2s2"]}
    kinds = {x.name: x.kind for x in f.switch_links()}
    assert kinds == {"g1s1<->g1s2": "local", "g2s1<->g2s2": "local",
                     "g1s1<->g2s1": "global", "g1s2<->g2s2": "global"}
    assert "TopologyParam=dragonfly" in p.slurm_conf_text().splitlines()
    assert f.topology_conf_text().splitlines()[-3:] == [
        "SwitchName=g1 Switches=g1s[1-2]", "SwitchName=g2 Switches=g2s[1-2]",
        "SwitchName=top Switches=g[1-2]"]
    # node07 is node 6: the pair's global link 6 mod 2 = 0 (g1s1-g2s1)
    assert f.switches_on(p.node("node03"), p.node("node07")) == ["g1s2", "g1s1", "g2s1",
                                                                 "g2s2"]


@pytest.mark.parametrize("argv, message", [
    (["up", "--fat-tree", "4"], "--fat-tree '4': expected LEAVESxSPINES"),
    (["up", "--fat-tree", "1x2"], "at least 2 leaves"),
    (["up", "--fat-tree", "30x4"], "34 switches, at most 32"),
    (["up", "--dragonfly", "2x0"], "at least 2 groups of 1 switch"),
    (["up", "--dragonfly", "2x2", "--nodes", "3"], "4 switches with nodes need at least as "
                                                   "many nodes, not 3"),
    (["up", "--fat-tree", "2x2", "--switches", "2"], "exclude each other"),
    (["up", "--fat-tree", "2x2", "--dragonfly", "2x2"], "not allowed with argument"),
    (["degrade-link", "leaf1", "spine1", "fast"], "bad rate 'fast'"),
])
def test_bad_requests_are_one_line(tmp_path, capsys, argv, message):
    try:
        rc = cli.main(["--state-dir", str(tmp_path / "none"), *argv])
    except SystemExit as done:  # argparse's own refusals
        rc = done.code
    assert rc == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err


def test_degrade_link_needs_a_cluster(tmp_path, capsys):
    assert cli.main(["--state-dir", str(tmp_path / "none"), "degrade-link", "leaf1", "spine1",
                     "50mbit"]) == 1
    assert capsys.readouterr().err.startswith("vcluster: error: no cluster in ")


def test_a_node_port_up_again_gets_its_routes_back(tmp_path, monkeypatch):
    """The kernel drops a switch's routes through a port set down: `link-down`/`flap` then
    `restore` put the leaf's route to the node back (a flap once left node02 unreachable)."""
    from fabrictest.vcluster import fabric_net

    calls: list[tuple] = []
    monkeypatch.setattr(fabric_net, "run", lambda argv, **kw: calls.append(("run", *argv)))
    monkeypatch.setattr(fabric_net, "_batch", lambda ns, cmds: calls.append(("batch", ns, *cmds)))
    p = plan(tmp_path, "fat-tree:4x2", 8)
    f = Fabric(p)
    node = p.node("node02")
    fabric_net.set_node_link(p, node, False)
    assert calls == [("run", "ip", "-n", f.netns("leaf1"), "link", "set", "p-node02", "down")]
    calls.clear()
    fabric_net.set_node_link(p, node, True)
    assert calls == [("run", "ip", "-n", f.netns("leaf1"), "link", "set", "p-node02", "up"),
                     ("batch", f.netns("leaf1"),
                      f"route replace {f.node_address(node)}/32 dev p-node02")]
