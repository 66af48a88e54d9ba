"""The GPU families' references (reference/crusher.yaml, reference/cuda-node.yaml): the Crusher
GPU notes' rule fails their own figures in our exchange too, and NCCL's bus bandwidth judged
against the link rates fails a fallback to a slower path (PCIe, TCP) and passes the rates'
level."""

from __future__ import annotations

from _rfm import ROOT

from fabrictest import references as refs

REF_DIR = ROOT / "reference"


def test_the_notes_rule_fails_their_figures_in_our_exchange():
    for system in ("crusher", "cuda-node"):
        ref = refs.load(REF_DIR / f"{system}.yaml")
        for program in ("bisection_bw", "alltomany"):
            rule = refs.lookup(ref, "GpuExchangeTest", system, {"program": program})
            assert not rule["dd_over_hh"].accepts(10.9 / 19.5), (system, program)
            assert rule["dd_over_hh"].accepts(0.8) and rule["dd_over_hh"].accepts(1.7)


def test_nccl_bus_bandwidth_against_the_link_rates():
    crusher = refs.load(REF_DIR / "crusher.yaml")
    ar = refs.lookup(crusher, "NcclTest", "crusher",
                     {"span": "nodes", "benchmark": "all_reduce_perf"})["busbw"]
    assert ar.accepts(90.0) and not ar.accepts(12.5)  # one NIC's worth: 3 of 4 links idle
    cuda = refs.load(REF_DIR / "cuda-node.yaml")
    node = refs.lookup(cuda, "NcclTest", "cuda-node",
                       {"span": "node", "benchmark": "all_reduce_perf"})["busbw"]
    assert node.accepts(450.0) and not node.accepts(50.0)  # PCIe instead of NVLink
    a2a = refs.lookup(cuda, "NcclTest", "cuda-node",
                      {"span": "nodes", "benchmark": "alltoall_perf"})["busbw"]
    assert a2a.accepts(90.0) and not a2a.accepts(12.0)  # TCP sockets instead of RDMA
    prov = cuda.classes["NcclTest"].provenance_for(("cuda-node", "nodes", "alltoall_perf"),
                                                   "busbw")
    assert "400 Gb/s" in prov["document"] and "N/(N-1)" in prov["table"]
