"""The rdma method's parts that need no device: GID choice, QP attributes, immediates, enums."""

from __future__ import annotations

import numpy as np
import pytest

from fabrictest.parsers.ibv_devinfo import GidEntry
from fabrictest.txrx import ring
from fabrictest.txrx.errors import Unavailable, UsageError
from fabrictest.txrx.stats import GapCounter
from fabrictest.txrx.transports.rdma import connect, gid, verbs
from fabrictest.txrx.transports.rdma.connect import Endpoint, qp_steps
from fabrictest.txrx.transports.rdma.gid import canonical_gid, select_gid
from fabrictest.txrx.transports.rdma.transmit import chain_length

# a ConnectX port with IPv6 link-local and an IPv4 address, RoCE v1 and v2 for each
SYSFS_TYPES = ["IB/RoCE v1", "RoCE v2", "IB/RoCE v1", "RoCE v2", ""]
TABLE = [
    GidEntry(0, canonical_gid("fe80::ba59:9fff:fe1a:2b3c"), "RoCE v1", "ens1f0"),
    GidEntry(1, canonical_gid("fe80::ba59:9fff:fe1a:2b3c"), "RoCE v2", "ens1f0"),
    GidEntry(2, canonical_gid("::ffff:10.1.2.3"), "RoCE v1", "ens1f0"),
    GidEntry(3, canonical_gid("::ffff:10.1.2.3"), "RoCE v2", "ens1f0"),
    GidEntry(4, canonical_gid("::"), None, None),
]


def test_one_gid_model_for_the_suite():
    # the rdma method's GID entries are the parsers' (and fabric-health's) GidEntry
    import fabrictest.txrx.transports.rdma.gid as model

    assert model.GidEntry is GidEntry
    assert not hasattr(verbs, "GidEntry") and not hasattr(connect, "read_sysfs_gids")


def test_gid_selection_prefers_roce_v2_ipv4():
    assert select_gid(TABLE).index == 3
    assert select_gid(TABLE[:2]).index == 1  # only link-local: its RoCE v2 entry
    glob = GidEntry(7, canonical_gid("2001:db8::5"), "RoCE v2")
    assert select_gid([TABLE[1], glob]).index == 7
    # ibv_devinfo's compressed spelling works as well as sysfs' exploded one
    assert select_gid([GidEntry(5, "::ffff:10.1.2.3", "RoCE v2")]).index == 5


def test_gid_override_and_errors():
    assert select_gid(TABLE, override=2).index == 2
    with pytest.raises(Unavailable, match="--gid-index 4 is empty"):
        select_gid(TABLE, override=4)
    with pytest.raises(Unavailable, match="no RoCE v2 GID"):
        select_gid([TABLE[0], TABLE[2]])
    ib = [GidEntry(0, canonical_gid("fe80::2:c903:a:1b2c"), None)]
    assert select_gid(ib, link_layer="infiniband").index == 0


def test_gid_table_from_sysfs(tmp_path):
    port = tmp_path / "class" / "infiniband" / "mlx5_0" / "ports" / "1"
    (port / "gids").mkdir(parents=True)
    (port / "gid_attrs" / "types").mkdir(parents=True)
    (port / "gid_attrs" / "ndevs").mkdir(parents=True)
    (port / "link_layer").write_text("Ethernet\n")
    for e, kind in zip(TABLE, SYSFS_TYPES, strict=True):
        (port / "gids" / str(e.index)).write_text(e.gid + "\n")
        if kind:
            (port / "gid_attrs" / "types" / str(e.index)).write_text(kind + "\n")
            (port / "gid_attrs" / "ndevs" / str(e.index)).write_text("ens1f0\n")

    class NoProvider:  # sysfs answers: the provider is not asked
        def query_gid(self, *a):
            raise AssertionError("asked the provider although sysfs has the table")

    got = gid.port_gids(NoProvider(), "mlx5_0", 1, None, "ethernet", root=tmp_path)
    assert got == TABLE[:4]  # the empty slot 4 is not an entry
    assert select_gid(got).gid == "0000:0000:0000:0000:0000:ffff:0a01:0203"


def test_gid_table_from_the_provider_without_sysfs(tmp_path):
    class Port:
        gid_tbl_len = 3

    class Ctx:  # what pyverbs' Context answers
        def query_gid(self, port, i):
            if i == 2:
                raise OSError("empty slot")
            return type("G", (), {"gid": ["fe80::1", "::ffff:10.1.2.3"][i]})()

        def query_gid_type(self, port, i):
            return verbs.E("IBV_GID_TYPE_ROCE_V2")

    got = gid.port_gids(Ctx(), "mlx5_0", 1, Port(), "ethernet", root=tmp_path)
    assert [(e.index, e.kind) for e in got] == [(0, "RoCE v2"), (1, "RoCE v2")]
    assert select_gid(got).index == 1


L = Endpoint(0x1A, 100, canonical_gid("::ffff:10.0.0.1"), 0, 5)
R = Endpoint(0x2B, 200, canonical_gid("::ffff:10.0.0.2"), 0, 3, 0x7F00_0000, 0x1234)


def test_uc_qp_steps():
    (init, im), (rtr, rm), (rts, sm) = qp_steps("uc", L, R, port=1, gid_index=3)
    assert init["qp_state"] == "IBV_QPS_INIT" and init["port_num"] == 1
    assert init["qp_access_flags"] == verbs.E("IBV_ACCESS_LOCAL_WRITE") | verbs.E("IBV_ACCESS_REMOTE_WRITE")
    assert set(im) == {"IBV_QP_STATE", "IBV_QP_PKEY_INDEX", "IBV_QP_PORT", "IBV_QP_ACCESS_FLAGS"}
    assert rtr["dest_qp_num"] == 0x2B and rtr["rq_psn"] == 200 and rtr["path_mtu"] == 3
    assert rtr["ah_attr"] == {"is_global": 1, "dgid": R.gid, "sgid_index": 3, "hop_limit": 64,
                              "dlid": 0, "port_num": 1, "sl": 0}  # fmt: skip
    assert set(rm) == {"IBV_QP_STATE", "IBV_QP_AV", "IBV_QP_PATH_MTU", "IBV_QP_DEST_QPN", "IBV_QP_RQ_PSN"}
    assert rts == {"qp_state": "IBV_QPS_RTS", "sq_psn": 100} and set(sm) == {"IBV_QP_STATE", "IBV_QP_SQ_PSN"}
    assert verbs.mask(rm) == 1 | 128 | 256 | 1048576 | 4096


def test_rc_qp_steps_add_reliability_attributes():
    _, (rtr, rm), (rts, sm) = qp_steps("rc", L, R, port=2, gid_index=1)
    assert rtr["max_dest_rd_atomic"] == 1 and "IBV_QP_MIN_RNR_TIMER" in rm
    assert rts["retry_cnt"] == 7 and rts["timeout"] == 14 and "IBV_QP_RNR_RETRY" in sm
    ib = qp_steps("rc", L, Endpoint(5, 6, None, 42, 5), port=1, gid_index=None, roce=False)
    assert ib[1][0]["ah_attr"]["is_global"] == 0 and ib[1][0]["ah_attr"]["dlid"] == 42


def test_qp_attr_objects_build_with_installed_pyverbs():
    pytest.importorskip("pyverbs.qp")
    for attr, _ in qp_steps("rc", L, R, port=1, gid_index=3):
        qa = verbs.qp_attr(verbs.provider({}), attr)
        assert qa.qp_state == verbs.E(attr["qp_state"])


def test_enum_shim_falls_back_to_abi_values(monkeypatch):
    monkeypatch.setattr(verbs, "_enums", False)
    assert verbs.enums_module() is None
    assert verbs.E("IBV_QPT_UC") == 3 and verbs.E("IBV_WR_RDMA_WRITE_WITH_IMM") == 1
    assert verbs.E("IBV_WC_RECV_RDMA_WITH_IMM") == 129


def test_enum_shim_agrees_with_pyverbs():
    mod = pytest.importorskip("pyverbs.enums")
    for name, value in verbs.ABI.items():
        if hasattr(mod, name):
            assert int(getattr(mod, name)) == value, name


def test_immediate_data_round_trip_and_gap_accounting():
    seqs = [0, 1, 2, 0x01020304, 0xFFFFFFFF]
    imms = [verbs.imm_of(s) for s in seqs]
    assert verbs.imm_of(1) == 0x01000000  # network byte order on the wire
    assert [verbs.seq_of(i) for i in imms] == seqs
    np.testing.assert_array_equal(verbs.seqs_from_imm(imms), seqs)
    assert verbs.imms_of(np.array(seqs, dtype=np.int64)) == imms  # the batched form agrees
    # completions for seqs 0..9 with 3, 4 and 9 lost: immediates -> gaps
    got = [verbs.imm_of(s) for s in range(10) if s not in (3, 4, 9)]
    c = GapCounter(10)
    c.add(verbs.seqs_from_imm(got))
    r = c.finish(10)
    assert (r.received, r.missed, r.gaps) == (7, 3, 2)


def test_message_lands_in_its_slot_after_losses():
    # seq -> remote address is independent of what was lost before it
    slots, size, base = 1000, 65536, 0x10_0000
    for seq in (0, 999, 1000, 123_456):
        assert ring.remote_address(base, seq, slots, size) == base + (seq % slots) * size
    assert ring.slot_of(1001, slots) == 1


def test_chain_length():
    assert chain_length(100, 4096) == 100
    assert chain_length(100, 64) == 25
    assert chain_length(97, 64) == 1


def test_provider_is_chosen_by_fabrictest_verbs_only():
    assert verbs.provider_name({}) == "pyverbs"
    assert verbs.provider_name({"FABRICTEST_VERBS": "sim"}) == "sim"
    with pytest.raises(UsageError, match="FABRICTEST_VERBS=simulated: expected 'sim'"):
        verbs.provider_name({"FABRICTEST_VERBS": "simulated"})


def test_wc_status_names():
    assert verbs.wc_status_name(10) == "IBV_WC_REM_ACCESS_ERR"
    assert verbs.wc_status_name(12) == "IBV_WC_RETRY_EXC_ERR"
    assert verbs.wc_status_name(99) == "status 99"
