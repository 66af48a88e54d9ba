"""Node sets from a partition's ``extras.topology`` (reframe_tests/fabric_node_sets.py): a system
that names a topology and writes no node set gets OsuMbwMrTest's switch/group/global lists and
bisection's halves from it; a scope its topology cannot hold is not listed, with the reason
(`reframe -l -vv`); a topology that cannot be read is one warning in the plain listing, and
every case that needs it is listed and fails at setup with that line."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from _rfm import SETTINGS, run_reframe
from fabric_node_sets import derived, first_nodes, node_set_sizes, node_sets
from test_listing import listed_cases

# one group of two switches: edge and local, nothing global
ONE_GROUP = "sw1: n[01-04] parent=g1\nsw2: n[05-08] parent=g1\ng1: parent=top\n"
# two groups
TWO_GROUPS = ONE_GROUP + "sw3: n[09-12] parent=g2\ng2: parent=top\n"

SYSTEM = """
site_configuration = {{
    "systems": [{{
        "name": "topo", "descr": "a Slurm system with a topology and no hand-written node set",
        "hostnames": ["no-such-host"],
        "modules_system": "nomod",
        "partitions": [{{
            "name": "compute", "scheduler": "slurm", "launcher": "srun",
            "environs": ["plain"], "sched_options": {{"use_nodes_option": True}},
            "features": ["mpi", "slurm", "spack", "osu"],
            "extras": {{"num_nodes": 12, "ranks_per_node": 2, "topology": {topology!r}}},
        }}],
    }}],
    "environments": [{{"name": "plain", "target_systems": ["topo"], "features": ["mpi"]}}],
}}
"""


def part(topology, **extras):
    return SimpleNamespace(fullname="sys:part", extras={"topology": topology, **extras})


def reframe_on(tmp_path, topology, *args):
    config = tmp_path / "topo_system.py"
    config.write_text(SYSTEM.format(topology=topology))
    env = {"RFM_CONFIG_FILES": f"{SETTINGS}:{config}", "OSU_HOME": "", "IMB_HOME": ""}
    run = run_reframe(["--system", "topo", *args], tmp_path / "rfm", timeout=300, env=env)
    assert run.returncode == 0, run.output[-3000:]
    return run


def test_inline_and_file_topologies_and_hand_written_sets(tmp_path):
    assert node_sets(part(TWO_GROUPS))["global"] == "n[01-04,09-12]"
    assert node_set_sizes(part(TWO_GROUPS)) == {"switch": 4, "group": 8, "global": 8,
                                               "bisection": 8}
    hand = part(TWO_GROUPS, node_sets={"group": "n[05-08]"}, node_set_sizes={"group": 4})
    assert node_sets(hand)["group"] == "n[05-08]" and node_set_sizes(hand)["group"] == 4
    assert node_sets(part("config/reframe/topology/slingshot.txt"))["switch"] == "nid[001-002]"
    assert derived(SimpleNamespace(fullname="p", extras={})).sets == {}
    assert first_nodes("nid[001-032,063-094]", 2) == "nid[001-002]"
    with pytest.raises(ValueError, match="cannot read .*no/such/file"):
        derived(part("no/such/file"))
    with pytest.raises(ValueError, match=r"^sys:part: extras.topology: topology file: line 1"):
        derived(part("not a topology\n"))


def test_a_scope_the_topology_cannot_hold_is_not_listed(tmp_path):
    run = reframe_on(tmp_path, ONE_GROUP, "-l", "-vv", "-n", "OsuMbwMrTest|BisectionTest")
    names = listed_cases(run.output)
    assert "OsuMbwMrTest %scope=switch %ranks_per_node=1" in names
    assert "OsuMbwMrTest %scope=group %ranks_per_node=1" in names
    assert "OsuMbwMrTest %scope=global %ranks_per_node=1" not in names
    assert ("OsuMbwMrTest %scope=global %ranks_per_node=1: not listed on topo:compute: "
            "osu_mbw_mr over a global (global): extras.topology: one group (g1): nothing "
            "spans two groups") in run.output
    assert "BisectionTest" in names  # no crossing: the partition's nodes, as without a topology


def test_dry_run_places_each_scope_on_its_set(tmp_path):
    run = reframe_on(tmp_path, TWO_GROUPS, "--dry-run", "-n",
                     "OsuMbwMrTest|BisectionTest|OsuPt2PtTest")
    scripts = {c["display_name"]: c["stagedir"] for c in run.cases()}

    def script(name):
        return (Path(scripts[name]) / "rfm_job.sh").read_text()

    edge = script("OsuMbwMrTest %scope=switch %ranks_per_node=1")
    assert "#SBATCH --nodelist=n[01-04]" in edge and "#SBATCH --nodes=4" in edge
    glob = script("OsuMbwMrTest %scope=global %ranks_per_node=1")
    assert "#SBATCH --nodelist=n[01-04,09-12]" in glob and "#SBATCH --nodes=8" in glob
    # a pair of one switch's nodes, not the switch's four (Slurm refuses a list longer than -N)
    pair = script("OsuPt2PtTest %benchmark=osu_bw")
    assert "#SBATCH --nodelist=n[01-02]" in pair and "#SBATCH --nodes=2" in pair
    bis = script("BisectionTest")
    assert "#SBATCH --nodelist=n[01-04,09-12]" in bis and "#SBATCH --nodes=8" in bis


def test_a_broken_topology_is_one_warning_and_fails_the_cases_that_need_it(tmp_path):
    """Issue 43: one duplicated switch line made plain `reframe -l` list 51 checks instead of
    79, naming the file only at -vv. Now the listing warns in one line without -v, keeps the
    cases that read the node sets, and each fails at setup with that line."""
    broken = ONE_GROUP + "sw1: n[09-10] parent=g1\n"  # sw1 twice
    listing = reframe_on(tmp_path, broken, "-l", "-n", "OsuMbwMrTest|BisectionTest")
    warnings = [line for line in listing.output.splitlines() if "switch sw1 listed twice" in line]
    assert len(warnings) == 1, listing.output[-3000:]
    assert "topo:compute: extras.topology" in warnings[0]
    names = listed_cases(listing.output)
    assert {"OsuMbwMrTest %scope=switch %ranks_per_node=1",
            "OsuMbwMrTest %scope=global %ranks_per_node=1", "BisectionTest"} <= set(names)
    config = tmp_path / "topo_system.py"
    env = {"RFM_CONFIG_FILES": f"{SETTINGS}:{config}", "OSU_HOME": "", "IMB_HOME": ""}
    run = run_reframe(["--system", "topo", "--dry-run", "-n", "BisectionTest"],
                      tmp_path / "rfm2", timeout=300, env=env)
    assert run.returncode != 0, run.output[-3000:]
    assert "switch sw1 listed twice: this case needs the partition's node sets" in run.output
