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


def test_nccl_bus_bandwidth_at_half_the_rate_fails_and_a_healthy_one_passes():
    """A path at half the rate (0.5 x the reference) fails every NCCL band (a band of exactly
    -50 % accepted it at its edge); a healthy run at NCCL's ~0.8 x the rate (its protocol
    overhead, nccl-tests issue 212: 370 of NVLink 4's 450 GB/s) passes, as NVLink SHARP's
    ~480 GB/s does."""
    seen = 0
    for system in ("crusher", "cuda-node"):
        cref = refs.load(REF_DIR / f"{system}.yaml").classes["NcclTest"]
        for keys, values in cref.entries.items():
            band = values["busbw"]
            assert not band.accepts(0.5 * band.value), (system, keys)
            assert band.accepts(0.8 * band.value) and band.accepts(1.07 * band.value)
            seen += 1
    assert seen == 6
    cuda = refs.load(REF_DIR / "cuda-node.yaml")
    node = refs.lookup(cuda, "NcclTest", "cuda-node",
                       {"span": "node", "benchmark": "alltoall_perf"})["busbw"]
    assert node.accepts(370.0) and node.accepts(480.0) and not node.accepts(225.0)
