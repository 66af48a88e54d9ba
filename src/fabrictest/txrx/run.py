"""One rank's run: start-up checks agreed by all ranks, buffers, data path, report, exit code."""

from __future__ import annotations

import logging
import os
import socket

from fabrictest.txrx import bottleneck, output
from fabrictest.txrx.buffers import Buffer, check_cuda_setup
from fabrictest.txrx.errors import EXIT_LOSS, EXIT_OK, TxrxError, refuse
from fabrictest.txrx.options import Options, human_bytes
from fabrictest.txrx.roles import Role, role_of
from fabrictest.txrx.sync import allgather_obj, start_up
from fabrictest.txrx.transports.rings import ENV as ENV_LOOP

log = logging.getLogger(output.LOGGER)


def buffer_shape(opts: Options, role: Role) -> tuple[int, ...]:
    """(streams, blks, cmsgs, size) for a receiver, (blks, cmsgs, size) for a transmitter."""
    ring = (opts.num_blks, opts.num_cmsgs, opts.msg_size)
    return (role.streams, *ring) if role.is_receiver else ring


def host_memory() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def local_problem(opts: Options, role: Role, host: str, MPI) -> tuple[str | None, object]:
    """This rank's reason not to start (or None) and, for rdma, the probed device setup; for
    mpi, which loop runs (rings.choose: kind, why)."""
    if role.rank == 0 and opts.json:
        bad = output.json_path_problem(opts.json)
        if bad:
            return bad, None
    need = opts.rank_buffer_bytes(role.streams)
    mem = host_memory()
    if opts.buffer == "host" and mem and need > mem // 2:
        return (
            f"buffers of {human_bytes(need)} for rank {role.rank} exceed half of the memory of "
            f"{host} ({human_bytes(mem)}): lower --num-blks, --num-cmsgs or --msg-size"
        ), None
    try:
        if opts.buffer == "cuda":
            check_cuda_setup(MPI)
        if opts.method == "rdma":
            from fabrictest.txrx.transports import rdma

            return None, rdma.probe(opts, host)
    except TxrxError as err:
        return str(err), None
    from fabrictest.txrx.transports.rings import choose

    try:
        return None, choose(MPI, opts.buffer)  # the mpi method's loop: (kind, why)
    except ValueError as err:
        return str(err), None


def run(comm, opts: Options) -> int:
    from mpi4py import MPI

    rank = comm.Get_rank()
    role = role_of(rank, opts.nrx, opts.nlink)
    host = socket.gethostname()
    problem, setup = local_problem(opts, role, host, MPI)
    agreed, hosts = start_up(comm, problem, host, opts.timeout)
    if agreed is not None:
        if rank == 0:
            log.error(agreed[1])
        return refuse(rank)

    shape = buffer_shape(opts, role)
    loop = None
    if opts.method == "mpi":
        from fabrictest.txrx.transports import mpi as transport
        from fabrictest.txrx.transports.rings import Rings

        loop, why = setup
        buf = Buffer(shape, opts.buffer)
        output.emit([output.buffer_line(host, role.kind, shape)])
        log.debug(f"rank {rank}: {loop} loop ({why})")
        if role.is_receiver:
            streams, own = transport.receive(comm, opts, role, buf, host, Rings(loop))
            rep = output.RxReport(rank, role.index, host, streams, own=own)
        else:
            rep = transport.transmit(comm, opts, role, buf, host, Rings(loop))
    else:
        from fabrictest.txrx.transports import rdma

        providers = allgather_obj(comm, setup.pv.name, opts.timeout, "agreeing on the verbs provider")
        if len(set(providers)) > 1:
            if rank == 0:
                log.error(
                    f"ranks disagree on the verbs provider ({', '.join(sorted(set(providers)))}):"
                    " set FABRICTEST_VERBS the same on every rank"
                )
            return refuse(rank)
        if rank == 0 and setup.simulated:
            log.warning(
                f"verbs provider is {setup.pv.describe}: the rdma code path ran without an RDMA"
                " device; data rates are not NIC rates"
            )
        rep = rdma.run(comm, opts, role, setup, host, shape)

    name_link_ends(rep, hosts)
    rep.loop = loop
    line_rate = opts.line_rate or getattr(setup, "rate_gbps", None)
    rep.verdict = bottleneck.judge(rep.own, opts.msg_size, line_rate)
    if role.is_receiver:
        output.emit(output.receiver_lines(rep))
        lost = any(s.missed or s.corrupt for s in rep.streams)
    else:
        output.emit([*output.transmitter_lines(rep), ""])
        lost = False
    status = EXIT_LOSS if lost else EXIT_OK
    everyone = allgather_obj(comm, (rep.record(), status), opts.timeout, "gathering results")
    code = max(s for _, s in everyone)
    if rank == 0:
        records = [r for r, _ in everyone]
        fallback = [r["rank"] for r in records if r.get("loop") == "python"]
        if fallback and os.environ.get(ENV_LOOP, "") != "python" and opts.buffer == "host":
            log.warning(
                f"rank(s) {', '.join(map(str, fallback))} ran the mpi4py loop, not the compiled"
                " one (-v says why): more own time per message; the tool-bound verdict says"
                " whether it matters"
            )
        for r in records:
            if r.get("tool_bound"):
                who = f"Rank {r['index']} {r['role']}"
                log.warning(bottleneck.warning(who, bottleneck.Verdict(
                    r["own_time_per_msg_s"], r["line_rate_time_per_msg_s"], r["line_rate_gbps"]
                ), opts.msg_size))  # fmt: skip
        if opts.json:
            output.write_json(opts.json, json_document(opts, records, code, setup))
        if code == EXIT_LOSS:
            rx = [r for r in records if r["role"] == "receiver"]
            missed = sum(r["messages_missed"] for r in rx)
            corrupt = sum(r["messages_corrupt"] for r in rx)
            total = sum(r["messages_total"] for r in rx)
            log.warning(
                f"{missed} of {total} messages missed, {corrupt} corrupt: exit status {EXIT_LOSS}"
            )
    return code


def one_line_rate(records: list[dict]) -> float | None:
    """The line rate every rank was judged against (None: none, or ports of several rates)."""
    rates = {r.get("line_rate_gbps") for r in records}
    return rates.pop() if len(rates) == 1 else None


def tool_bound(records: list[dict]) -> bool | None:
    """True when a rank's own time per message could not fill the line rate; None when a rank
    could not be judged (no line rate, or a rank that handled no message)."""
    flags = [r.get("tool_bound") for r in records]
    if any(f is True for f in flags):
        return True
    return None if any(f is None for f in flags) else False


def name_link_ends(rep, hosts: list[str]) -> None:
    """Give each stream (and a transmitter) the host of the rank at the link's other end."""
    if isinstance(rep, output.RxReport):
        for s in rep.streams:
            s.peer_host = hosts[s.peer]
    else:
        rep.peer_host = hosts[rep.peer]


def json_document(opts: Options, records: list[dict], code: int, setup=None) -> dict:
    from fabrictest import __version__

    opt = {k: v for k, v in vars(opts).items() if k not in ("fault", "verbose", "json")}
    pv = getattr(setup, "pv", None)
    return {
        "tool": "fabrictest.txrx",
        "version": __version__,
        "exit_status": code,
        "world_size": opts.world_size,
        # which verbs provider ran the rdma method: "pyverbs", "sim" (simulated), None (mpi)
        "verbs_provider": getattr(pv, "name", None),
        "simulated": bool(getattr(pv, "simulated", False)),
        **({"verbs": pv.describe} if pv is not None else {}),
        # the line rate the ranks were judged against, and whether any could not fill it
        "line_rate_gbps": one_line_rate(records),
        "tool_bound": tool_bound(records),
        "options": opt,
        "ranks": records,
    }
