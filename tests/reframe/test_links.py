"""Per-link figure names and the node a failing figure points at (fabrictest.links), and the
wording of a missed reference (fabric_references.miss_words): pure, no ReFrame run."""

from __future__ import annotations

from fabric_references import miss_words

from fabrictest.links import Link, name_links, node_var, place_of, suspects
from fabrictest.references import Reference


def pairs_of_three_many():
    """node01 <- node03, node05; node02 <- node04, node06 (two triples)."""
    return name_links([Link(0, "node03", "node01", 0.095), Link(1, "node04", "node02", 0.095),
                       Link(2, "node05", "node01", 0.095), Link(3, "node06", "node02", 0.095)])


def test_names_say_transmitter_and_receiver_host():
    links = pairs_of_three_many()
    assert [x.stream_var for x in links] == [
        "stream_node03_to_node01_gbps", "stream_node04_to_node02_gbps",
        "stream_node05_to_node01_gbps", "stream_node06_to_node02_gbps"]
    assert [x.tx_var for x in links][:2] == ["tx_node03_gbps", "tx_node04_gbps"]
    assert node_var("seren-01") == "node_seren_01_rx_gbps"


def test_ranks_on_one_host_get_the_transmitter_index():
    links = name_links([Link(0, "vm", "vm", 1.0), Link(1, "vm", "vm", 2.0)])
    assert [x.stream_var for x in links] == ["stream_vm_to_vm_tx0_gbps", "stream_vm_to_vm_tx1_gbps"]
    assert [x.tx_var for x in links] == ["tx_vm_tx0_gbps", "tx_vm_tx1_gbps"]
    assert links[1].label == "vm->vm from transmitter 1"


def test_a_slow_transmitter_is_named_not_its_healthy_receiver():
    links = pairs_of_three_many()
    failed = {"stream_node03_to_node01_gbps", "tx_node03_gbps", "node_node01_rx_gbps"}
    assert suspects(links, failed) == {"node03"}  # node01 received node05's stream fine
    assert place_of("stream_node03_to_node01_gbps", links, failed) == (
        "node03", "stream node03->node01")
    assert place_of("tx_node03_gbps", links, failed) == (
        "node03", "transmitter 0 on node03 sending to node01")
    # the receiving node's sum is low because of node03's stream
    assert place_of("node_node01_rx_gbps", links, failed) == (
        "node03", "node01 receiving from node03, node05")


def test_a_lone_pair_names_both_ends_and_a_bad_link_itself():
    links = name_links([Link(0, "node03", "node01", 0.05), Link(1, "node04", "node02", 0.19)])
    failed = {"stream_node03_to_node01_gbps"}
    assert place_of("stream_node03_to_node01_gbps", links, failed)[0] == "node03 or node01"
    # both ends have a healthy stream elsewhere: the link itself
    links = name_links([Link(0, "a", "b", 0.05), Link(1, "a", "c", 0.19), Link(2, "d", "b", 0.19)])
    assert place_of("stream_a_to_b_gbps", links, {"stream_a_to_b_gbps"})[0] == "a->b"


def test_miss_words_give_the_drop_and_the_bound():
    assert miss_words(0.161, Reference(0.19, -0.05, None, "Gbps")) == (
        "is 15.3 % below its reference 0.19 (lower bound -5 %)")
    assert miss_words(0.3, Reference(0.1, None, 0.2, "s")) == (
        "is 200 % above its reference 0.1 (upper bound +20 %)")
