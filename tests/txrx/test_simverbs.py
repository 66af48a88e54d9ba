"""The simulated verbs provider's semantics, in one process (both ends of a link here).

The queue pairs are built and connected with the rdma transport's own code (qp_steps and the
shim's QPAttr builder), work requests are pyverbs' own classes."""

from __future__ import annotations

import errno

import numpy as np
import pytest

pytest.importorskip("pyverbs.wr")

from pyverbs.pyverbs_error import PyverbsRDMAError  # noqa: E402

from fabrictest import simverbs  # noqa: E402
from fabrictest.txrx.transports.rdma import verbs  # noqa: E402
from fabrictest.txrx.transports.rdma.connect import Endpoint, connect, qp_steps  # noqa: E402

E = verbs.E


@pytest.fixture
def pv(tmp_path, monkeypatch):
    monkeypatch.setenv("FABRICTEST_VERBS_SIM_DIR", str(tmp_path))
    monkeypatch.delenv("FABRICTEST_VERBS_SIM_FAULTS", raising=False)
    monkeypatch.delenv("FABRICTEST_VERBS_SIM_WIRE", raising=False)
    return verbs.provider({"FABRICTEST_VERBS": "sim"})


class Pair:
    """A sender QP and a receiver QP, each on its own CQ, and their memory regions."""

    def __init__(self, pv, transport="uc", cqe=64, send_wr=16, recv_wr=16, rx_access=None):
        self.pv = pv
        self.ctx = pv.Context(name="simverbs0")
        self.pd = pv.PD(self.ctx)
        self.scq = pv.CQ(self.ctx, cqe, None, None, 0)
        self.rcq = pv.CQ(self.ctx, cqe, None, None, 0)
        qpt = E("IBV_QPT_UC" if transport == "uc" else "IBV_QPT_RC")

        def qp(cq):
            cap = pv.QPCap(max_send_wr=send_wr, max_recv_wr=recv_wr, max_send_sge=1, max_recv_sge=1)
            return pv.QP(self.pd, pv.QPInitAttr(qp_type=qpt, scq=cq, rcq=cq, cap=cap, sq_sig_all=0))

        self.tx, self.rx = qp(self.scq), qp(self.rcq)
        self.transport = transport
        lw, rw = E("IBV_ACCESS_LOCAL_WRITE"), E("IBV_ACCESS_REMOTE_WRITE")
        self.src = pv.MR(self.pd, 4096, lw)
        self.dst = pv.MR(self.pd, 4096, lw | rw if rx_access is None else rx_access)
        self.src_view = verbs.np_view(self.src, 4096, (4096,))
        self.dst_view = verbs.np_view(self.dst, 4096, (4096,))
        gid = self.ctx.query_gid(1, 3).gid
        self.a = Endpoint(self.tx.qp_num, 100, gid, 0, 5)
        self.b = Endpoint(self.rx.qp_num, 200, gid, 0, 5)

    def connect(self, tx=True, rx=True):
        if rx:
            connect(self.pv, self.rx, qp_steps(self.transport, self.b, self.a, 1, 3))
        if tx:
            connect(self.pv, self.tx, qp_steps(self.transport, self.a, self.b, 1, 3))
        return self

    def write(self, wr_id=1, seq=0, offset=0, length=64, rkey=None, addr=None, signaled=True,
              lkey=None):  # fmt: skip
        sge = self.pv.SGE(self.src.buf + offset, length, self.src.lkey if lkey is None else lkey)
        wr = self.pv.SendWR(wr_id=wr_id, opcode=E("IBV_WR_RDMA_WRITE_WITH_IMM"), num_sge=1,
                            sg=[sge], imm_data=verbs.imm_of(seq),
                            send_flags=E("IBV_SEND_SIGNALED") if signaled else 0)  # fmt: skip
        wr.set_wr_rdma(self.dst.rkey if rkey is None else rkey,
                       self.dst.buf + offset if addr is None else addr)  # fmt: skip
        return wr

    def recv(self, n=1):
        sge = self.pv.SGE(self.src.buf, 64, self.src.lkey)
        for i in range(n):
            self.rx.post_recv(self.pv.RecvWR(wr_id=1000 + i, num_sge=1, sg=[sge]))


def poll(cq, n=64):
    got, wcs = cq.poll(n)
    return [(wc.wr_id, wc.status, wc.opcode) for wc in wcs[:got]], wcs[:got]


def test_posting_in_the_wrong_state_fails_as_verbs_do(pv):
    p = Pair(pv)
    with pytest.raises(PyverbsRDMAError) as err:
        p.tx.post_send(p.write())
    assert err.value.error_code == errno.EINVAL  # RESET
    with pytest.raises(PyverbsRDMAError, match="Failed to post recv"):
        p.recv()
    steps = qp_steps("uc", p.b, p.a, 1, 3)
    connect(pv, p.rx, steps[:1])
    p.recv()  # INIT: receives may be posted
    connect(pv, p.tx, qp_steps("uc", p.a, p.b, 1, 3)[:2])
    with pytest.raises(PyverbsRDMAError) as err:  # RTR: no sends yet
        p.tx.post_send(p.write())
    assert err.value.error_code == errno.EINVAL


def test_transitions_need_the_kernels_attribute_masks(pv):
    p = Pair(pv, transport="rc")
    init, rtr, rts = qp_steps("rc", p.a, p.b, 1, 3)

    def modify(attr, names):
        p.tx.modify(verbs.qp_attr(pv, attr), verbs.mask(names))

    with pytest.raises(PyverbsRDMAError, match="Failed to modify QP state"):
        modify(*rtr)  # RESET -> RTR skips INIT
    modify(*init)
    short = [n for n in rtr[1] if n != "IBV_QP_MIN_RNR_TIMER"]  # RC needs it at RTR
    with pytest.raises(PyverbsRDMAError):
        modify(rtr[0], short)
    modify(*rtr)
    uc_rts = qp_steps("uc", p.a, p.b, 1, 3)[2]
    with pytest.raises(PyverbsRDMAError):
        modify(*uc_rts)  # RC's RTS needs timeout, retry_cnt, rnr_retry, max_rd_atomic
    modify(*rts)
    assert p.tx.qp_state == E("IBV_QPS_RTS")
    q = Pair(pv)
    init, rtr, rts = qp_steps("uc", q.a, q.b, 1, 3)
    connect(pv, q.tx, [init, rtr])
    with pytest.raises(PyverbsRDMAError):  # UC's RTS does not take RC's retry attributes
        q.tx.modify(verbs.qp_attr(pv, {**rts[0], "retry_cnt": 7}),
                    verbs.mask([*rts[1], "IBV_QP_RETRY_CNT"]))  # fmt: skip


@pytest.mark.parametrize("transport", ["uc", "rc"])
def test_write_with_immediate_lands_and_consumes_a_receive(pv, transport):
    p = Pair(pv, transport).connect()
    p.src_view[:] = np.arange(4096) % 251
    p.recv(1)
    p.tx.post_send(p.write(wr_id=7, seq=0x010203, offset=512, length=100))
    got, wcs = poll(p.rcq)
    assert got == [(1000, 0, E("IBV_WC_RECV_RDMA_WITH_IMM"))]
    assert verbs.seq_of(wcs[0].imm_data) == 0x010203 and wcs[0].byte_len == 100
    assert wcs[0].qp_num == p.rx.qp_num and wcs[0].wc_flags & E("IBV_WC_WITH_IMM")
    np.testing.assert_array_equal(p.dst_view[512:612], p.src_view[512:612])
    assert not p.dst_view[:512].any() and not p.dst_view[612:].any()
    assert poll(p.scq)[0] == [(7, 0, E("IBV_WC_RDMA_WRITE"))]


def test_uc_write_without_a_posted_receive_is_dropped(pv):
    p = Pair(pv).connect()
    p.tx.post_send(p.write(wr_id=1))
    assert poll(p.rcq)[0] == [] and poll(p.scq)[0] == [(1, 0, E("IBV_WC_RDMA_WRITE"))]
    assert simverbs.stats(p.rx)["no_receive"] == 1


def test_rc_write_waits_for_a_receive(pv):
    p = Pair(pv, "rc").connect()
    p.tx.post_send(p.write(wr_id=1))
    assert poll(p.rcq)[0] == [] and poll(p.scq)[0] == []  # receiver not ready: RNR, retried
    p.recv(1)
    assert poll(p.rcq)[0] == [(1000, 0, E("IBV_WC_RECV_RDMA_WITH_IMM"))]
    assert poll(p.scq)[0] == [(1, 0, E("IBV_WC_RDMA_WRITE"))]


@pytest.mark.parametrize("bad", ["rkey", "bounds", "mr-access"])
def test_remote_access_errors(pv, bad):
    for transport in ("uc", "rc"):
        rx_access = E("IBV_ACCESS_LOCAL_WRITE") if bad == "mr-access" else None
        p = Pair(pv, transport, rx_access=rx_access).connect()
        p.recv(4)
        wr = {"rkey": p.write(wr_id=1, rkey=p.dst.rkey ^ 0x5A5A),
              "bounds": p.write(wr_id=1, addr=p.dst.buf + 4096 - 32, length=64),
              "mr-access": p.write(wr_id=1)}[bad]  # fmt: skip
        p.tx.post_send(wr)
        p.tx.post_send(p.write(wr_id=2))  # a good write (none can be, to a read-only region)
        rx, _ = poll(p.rcq)
        tx, _ = poll(p.scq)
        good = bad != "mr-access"
        if transport == "uc":  # the responder drops a bad write silently
            assert rx == ([(1000, 0, E("IBV_WC_RECV_RDMA_WITH_IMM"))] if good else [])
            assert tx == [(1, 0, E("IBV_WC_RDMA_WRITE")), (2, 0, E("IBV_WC_RDMA_WRITE"))]
            assert simverbs.stats(p.rx)["access_errors"] == (1 if good else 2)
        else:  # RC: the requester gets the error, its QP fails, what follows is flushed
            assert rx == []
            assert tx == [(1, E("IBV_WC_REM_ACCESS_ERR"), E("IBV_WC_RDMA_WRITE")),
                          (2, E("IBV_WC_WR_FLUSH_ERR"), E("IBV_WC_RDMA_WRITE"))]  # fmt: skip
            assert p.tx.qp_state == E("IBV_QPS_ERR") and not p.dst_view.any()
            assert simverbs.stats(p.rx)["access_errors"] == 1


def test_local_protection_error_for_a_bad_lkey(pv):
    p = Pair(pv).connect()
    p.tx.post_send(p.write(wr_id=3, lkey=p.src.lkey ^ 1, signaled=False))
    assert poll(p.scq)[0] == [(3, E("IBV_WC_LOC_PROT_ERR"), E("IBV_WC_RDMA_WRITE"))]


def test_send_queue_depth_and_unsignalled_requests(pv):
    p = Pair(pv, send_wr=4).connect()
    p.recv(16)
    for i in range(4):
        p.tx.post_send(p.write(wr_id=i, signaled=False))
    with pytest.raises(PyverbsRDMAError) as err:
        p.tx.post_send(p.write(wr_id=9))
    assert err.value.error_code == errno.ENOMEM
    assert poll(p.scq)[0] == []  # unsignalled: no completion, their slots stay taken
    assert len(poll(p.rcq)[0]) == 4
    with pytest.raises(PyverbsRDMAError):
        p.tx.post_send(p.write(wr_id=9))


def test_a_chain_completes_in_order_and_only_where_signalled(pv):
    p = Pair(pv, send_wr=8).connect()
    p.recv(8)
    wrs = [p.write(wr_id=i, seq=i, offset=64 * i, signaled=i in (1, 3)) for i in range(4)]
    for a, b in zip(wrs, wrs[1:], strict=False):
        a.next_wr = b
    p.tx.post_send(wrs[0])
    rx, wcs = poll(p.rcq)
    assert [verbs.seq_of(w.imm_data) for w in wcs] == [0, 1, 2, 3]
    assert poll(p.scq)[0] == [(1, 0, E("IBV_WC_RDMA_WRITE")), (3, 0, E("IBV_WC_RDMA_WRITE"))]
    # the signalled completion of wr 3 freed all four slots: four more fit
    p.recv(4)
    for i in range(4):
        p.tx.post_send(p.write(wr_id=10 + i, signaled=i == 3))


def test_an_unlinked_chain_posts_only_its_head(pv):
    # pyverbs links next_wr in C; the provider reads the C structs, so an unlinked request
    # is not posted even if Python code believes it is
    p = Pair(pv).connect()
    p.recv(4)
    first, second = p.write(wr_id=1, signaled=False), p.write(wr_id=2)
    p.tx.post_send(first)
    assert len(poll(p.rcq)[0]) == 1 and second is not None


def test_completion_queue_overrun_fails_loudly(pv):
    p = Pair(pv, cqe=2, recv_wr=8).connect()
    p.recv(3)
    for i in range(3):
        p.tx.post_send(p.write(wr_id=i, signaled=False))
    with pytest.raises(PyverbsRDMAError, match="overrun"):
        p.rcq.poll(1)


def test_psn_mismatch_uc_resynchronises_rc_fails(pv):
    for transport in ("uc", "rc"):
        p = Pair(pv, transport)
        p.b = Endpoint(p.rx.qp_num, 200, p.b.gid, 0, 5)
        connect(pv, p.rx, qp_steps(transport, p.b, Endpoint(p.tx.qp_num, 999, p.a.gid, 0, 5), 1, 3))
        connect(pv, p.tx, qp_steps(transport, p.a, p.b, 1, 3))  # sends from PSN 100, not 999
        p.recv(2)
        p.tx.post_send(p.write(wr_id=1))
        rx, _ = poll(p.rcq)
        tx, _ = poll(p.scq)
        if transport == "uc":
            assert len(rx) == 1 and simverbs.stats(p.rx)["psn_resyncs"] == 1
        else:
            assert rx == [] and tx[0][1] == E("IBV_WC_RETRY_EXC_ERR")


def test_a_peer_that_is_not_there(pv):
    p = Pair(pv)
    ghost = Endpoint(0xFFFFFE, 1, p.a.gid, 0, 5)
    for transport, status in (("uc", 0), ("rc", E("IBV_WC_RETRY_EXC_ERR"))):
        q = Pair(pv, transport)
        connect(pv, q.tx, qp_steps(transport, q.a, ghost, 1, 3))
        q.tx.post_send(q.write(wr_id=5))
        assert poll(q.scq)[0] == [(5, status, E("IBV_WC_RDMA_WRITE"))]


def test_faults_drop_and_corrupt(pv, monkeypatch):
    monkeypatch.setenv("FABRICTEST_VERBS_SIM_FAULTS", "drop=0.2,corrupt=0.1,seed=3")
    p = Pair(pv, send_wr=256, recv_wr=256, cqe=512).connect()
    p.src_view[:] = 1
    p.recv(200)
    for i in range(200):
        p.tx.post_send(p.write(wr_id=i, seq=i, offset=(i % 64) * 64, signaled=True))
        poll(p.scq)
    rx, wcs = poll(p.rcq, 512)
    s_tx, s_rx = simverbs.stats(p.tx), simverbs.stats(p.rx)
    assert s_tx["dropped"] > 0 and s_tx["corrupted"] > 0
    assert len(rx) == 200 - s_tx["dropped"] == s_rx["landed"] and s_rx["lost"] == s_tx["dropped"]


def test_the_provider_is_chosen_by_the_environment_only(pv):
    assert pv.name == "sim" and pv.simulated and pv.Context is simverbs.Context
    real = verbs.provider({})
    assert real.name == "pyverbs" and not real.simulated and real.Context is not simverbs.Context
    assert real.SendWR is pv.SendWR and real.QPAttr is pv.QPAttr  # pyverbs' own either way


def test_a_bad_fault_spec_is_one_line(monkeypatch, tmp_path):
    from fabrictest.txrx.errors import Unavailable

    monkeypatch.setenv("FABRICTEST_VERBS_SIM_DIR", str(tmp_path))
    monkeypatch.setenv("FABRICTEST_VERBS_SIM_FAULTS", "drop=lots")
    with pytest.raises(Unavailable, match="drop=lots"):
        verbs.provider({"FABRICTEST_VERBS": "sim"})
