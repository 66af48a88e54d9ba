"""Performance records from ReFrame: JSON run reports, stored sessions, perflogs.

All three become flat :class:`PerfRecord` rows (one per test case and performance variable).
Stored sessions are read through ReFrame's own command line (``reframe
--describe-stored-sessions QUERY``, JSON), not by poking its database schema; a run report
(``--report-file``, or the ``report_file`` of the configuration) has the same structure.
"""

from __future__ import annotations

import datetime
import functools
import json
import math
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from fabrictest.parsers import physical
from fabrictest.references.model import band
from fabrictest.report.records.cut_units import cut_unit

_PARAM = re.compile(r"%(\w+)=(\S+)")


class ResultsError(RuntimeError):
    """Results could not be read."""


@dataclass
class PerfRecord:
    test: str  # display name, with parameters
    base: str  # class name
    system: str
    partition: str
    environ: str
    pvar: str
    value: float | None
    unit: str = ""
    ref: float | None = None
    lower: float | None = None
    upper: float | None = None
    result: str = ""  # pass / fail
    params: dict[str, str] = field(default_factory=dict)
    nodes: list[str] = field(default_factory=list)
    session: str = ""
    time: float | None = None
    outputdir: str = ""
    source: str = ""
    #: the test case's variables and parameters (run reports and stored sessions only)
    variables: dict = field(default_factory=dict, repr=False)

    @property
    def test_result(self) -> str:
        """The test case's result (pass / fail): a run report gives each figure its own, which
        passes without a reference even when the test failed for the lack of one."""
        return self.variables.get("result") or self.result

    @property
    def informational(self) -> bool:
        """The figure needs no reference: its test's ``informational_perf_vars`` (recorded in
        run reports and stored sessions) name it, or its system's reference file declares it
        informational there (``informational_here``)."""
        here = self.variables.get("informational_here") or []
        if isinstance(here, list) and self.pvar in here:
            return True
        pats = self.variables.get("informational_perf_vars") or []
        for p in pats if isinstance(pats, list) else []:
            try:
                if isinstance(p, str) and re.fullmatch(p, self.pvar):
                    return True
            except re.error:
                continue
        return False

    @property
    def scenario(self) -> str:
        return self.params.get("scenario", "")

    @property
    def sysenv(self) -> str:
        return f"{self.system}:{self.partition}+{self.environ}"

    @property
    def nodes_expr(self) -> str:
        return _collect(tuple(self.nodes)) if self.nodes else ""

    def band(self) -> tuple[float | None, float | None]:
        """(low, high) of the reference band, absolute; None where unbounded or absent."""
        if self.ref is None or self.ref == 0:
            return None, None
        return band(self.ref, self.lower, self.upper)

    def to_dict(self) -> dict:
        return asdict(self)


@functools.lru_cache(maxsize=4096)
def _collect(nodes: tuple[str, ...]) -> str:
    """`node[01-04]` for a node list (the same few lists recur in every session)."""
    from fabrictest.parsers.hostlists import compress

    return compress(nodes)


def params_of(display_name: str) -> dict[str, str]:
    return dict(_PARAM.findall(display_name or ""))


def _num(x) -> float | None:
    if x is None or x == "" or x == "null":
        return None
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def _stamp(text) -> float | None:
    """A perflog's `job_completion_time` (ISO 8601) as a Unix time; None when unreadable."""
    try:
        when = datetime.datetime.fromisoformat(str(text).strip())
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.astimezone()  # ReFrame writes local time
    return when.timestamp()


def _rate(unit: str) -> bool:
    """MB/s, GB/s, Gbps, msg/s...: a rate, which a run that moved data never prints as 0."""
    return unit.endswith(("/s", "/sec", "bps"))


def refuse_impossible(source: str, test: str, pvar: str, value: float | None, unit: str,
                      ref: float | None = None, lower: float | None = None) -> None:
    """A figure no benchmark prints for a real run (``inf``, ``nan``, negative; 0 for a rate),
    a reference that is not a finite number or no rate or time of a fabric
    (``physical.implausible``: 1e-300 Gbps), or a band that reaches 0 on a rate (a lower
    threshold of -1 or less: every figure passes) is no result: ResultsError, one line."""
    if value is not None and (not math.isfinite(value) or value < 0
                              or (value == 0 and _rate(unit))):
        kind = "a finite positive rate" if _rate(unit) else "a finite number >= 0"
        raise ResultsError(f"{source}: {test} {pvar} = {value:.4g} {unit}".rstrip()
                           + f" is not {kind}: refused (no result; rerun the test)")
    if ref is not None and not math.isfinite(ref):
        raise ResultsError(f"{source}: {test} {pvar}: reference {ref:.4g} is not a finite "
                           "number: refused")
    if ref and (why := physical.implausible(ref, unit)) is not None:
        raise ResultsError(f"{source}: {test} {pvar}: reference {why}: refused")
    if ref and lower is not None and lower <= -1 and _rate(unit):
        raise ResultsError(f"{source}: {test} {pvar}: lower threshold {lower:g} puts the band's "
                           f"floor at {band(ref, lower, None)[0]:g} {unit}: a band reaching 0 accepts "
                           "every figure: refused")


@dataclass
class ResultSet:
    """What one source gave: its figures, how many entries could not be read, and the
    sessions they came from (uuid -> ReFrame's ``session_info``)."""

    records: list[PerfRecord] = field(default_factory=list)
    unreadable: int = 0
    sessions: dict[str, dict] = field(default_factory=dict)
    testcases: list[dict] = field(default_factory=list)
    #: what a person must know about the entries that were not read (one line each)
    notes: list[str] = field(default_factory=list)

    def extend(self, other: ResultSet) -> None:
        self.records += other.records
        self.unreadable += other.unreadable
        self.sessions.update(other.sessions)
        self.testcases += other.testcases
        self.notes += other.notes


def _variables(tc: dict) -> dict:
    """The test case's variables and parameters (what may index a reference or shape a
    figure), and ReFrame's facts about it (fail_phase, job_nodelist, ...)."""
    return {k: v for k, v in tc.items() if k != "perfvalues"}


_TC_TEXT = ("name", "display_name", "system", "partition", "environ", "session_uuid",
            "outputdir", "stagedir", "result", "fail_phase")


def _kind(x) -> str:
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean",
            int: "a number", float: "a number", type(None): "null"}.get(type(x), type(x).__name__)


def check_shape(data, source: str) -> None:
    """Refuse, in one line naming the place, a run report (or stored sessions) whose shape is
    not ReFrame's: the readers below may then trust every field they read."""
    def bad(where: str, what, want: str):
        raise ResultsError(f"{source}: not a ReFrame run report: {where} is {_kind(what)}, "
                           f"not {want}")

    sessions = data if isinstance(data, list) else [data]
    for i, sess in enumerate(sessions):
        at = f"session {i}: " if isinstance(data, list) else ""
        if not isinstance(sess, dict) or not isinstance(sess.get("runs"), list):
            raise ResultsError(f"{source}: not a ReFrame run report ({at}no 'runs' list)")
        info = sess.get("session_info")
        if info is not None and not isinstance(info, dict):
            bad(f"{at}session_info", info, "a mapping")
        if isinstance(info, dict):
            for key in ("uuid", "hostname"):
                if info.get(key) is not None and not isinstance(info[key], str):
                    bad(f"{at}session_info.{key}", info[key], "a string")
            t = info.get("time_start_unix")
            if t is not None and (isinstance(t, bool) or not isinstance(t, (int, float))):
                bad(f"{at}session_info.time_start_unix", t, "a number")
        for r, run in enumerate(sess["runs"]):
            if not isinstance(run, dict):
                bad(f"{at}runs[{r}]", run, "a run (a mapping)")
            cases = run.get("testcases")
            if cases is not None and not isinstance(cases, list):
                bad(f"{at}runs[{r}].testcases", cases, "a list")
            for c, tc in enumerate(cases or []):
                where = f"{at}runs[{r}].testcases[{c}]"
                if not isinstance(tc, dict):
                    bad(where, tc, "a test case (a mapping)")
                for key in _TC_TEXT:
                    if tc.get(key) is not None and not isinstance(tc[key], str):
                        bad(f"{where}.{key}", tc[key], "a string")
                nodes = tc.get("job_nodelist")
                if nodes is not None and (not isinstance(nodes, list)
                                          or not all(isinstance(n, str) for n in nodes)):
                    bad(f"{where}.job_nodelist", nodes, "a list of node names")
                t = tc.get("job_completion_time_unix")
                if t is not None and (isinstance(t, bool) or not isinstance(t, (int, float))):
                    bad(f"{where}.job_completion_time_unix", t, "a number")
                pvs = tc.get("perfvalues")
                if pvs is not None and not isinstance(pvs, dict):
                    bad(f"{where}.perfvalues", pvs, "a mapping")
                for key, pv in (pvs or {}).items():
                    if isinstance(pv, list) and len(pv) > 4 and pv[4] is not None \
                            and not isinstance(pv[4], str):
                        bad(f"{where}.perfvalues[{key!r}] unit", pv[4], "a string")


def read_report(data, source: str = "") -> ResultSet:
    """A run report (dict) or `--describe-stored-sessions` output (list of sessions)."""
    check_shape(data, source)
    sessions = data if isinstance(data, list) else [data]
    out = ResultSet()
    for sess in sessions:
        info = sess.get("session_info") or {}
        uuid = info.get("uuid") or ""
        if uuid:
            out.sessions[uuid] = info
        runs = sess["runs"]
        out.testcases += [tc for run in runs for tc in run.get("testcases") or []]
        # retries/reruns: keep the last run of each test case
        last: dict[str, dict] = {}
        for run in runs:
            for tc in run.get("testcases") or []:
                key = f"{tc.get('name')}|{tc.get('system')}|{tc.get('partition')}|{tc.get('environ')}"
                last[key] = tc
        for tc in last.values():
            name = tc.get("display_name") or tc.get("name") or ""
            params = params_of(name)
            if isinstance(tc.get("scenario"), str) and tc["scenario"]:
                params.setdefault("scenario", tc["scenario"])  # a variable, not a parameter
            perfvalues = tc.get("perfvalues") or {}
            variables = None
            # one list for the case's figures: 30,000 copies of a 10,000-node list are 2.4 GB
            nodes = list(tc.get("job_nodelist") or [])
            for key, pv in perfvalues.items():
                if not isinstance(pv, list) or not pv:
                    out.unreadable += 1
                    continue
                pvar = str(key).split(":")[-1]
                if (cut := cut_unit(source or uuid, name, pvar, pv)) is not None:
                    raise ResultsError(cut)
                val, ref, lower, upper, unit = (list(pv) + [None] * 6)[:5]
                if isinstance(val, bool) or isinstance(ref, bool):
                    raise ResultsError(f"{source or uuid}: {name} {pvar} = {val!r}, reference "
                                       f"{ref!r}: a JSON boolean is not a figure: refused")
                if val is not None and _num(val) is None:
                    out.unreadable += 1
                    continue
                result = pv[5] if len(pv) > 5 else tc.get("result", "")
                refuse_impossible(source or uuid, name, pvar, _num(val), unit or "", _num(ref),
                                  _num(lower))
                if variables is None:
                    variables = _variables(tc)
                out.records.append(
                    PerfRecord(
                        test=name,
                        base=name.split(" %")[0].split(" ")[0],
                        system=tc.get("system") or "",
                        partition=tc.get("partition") or "",
                        environ=tc.get("environ") or "",
                        pvar=pvar,
                        value=_num(val),
                        unit=unit or "",
                        ref=_num(ref) or None,
                        lower=_num(lower),
                        upper=_num(upper),
                        result=result if isinstance(result, str) else "",
                        params=params,
                        nodes=nodes,
                        session=tc.get("session_uuid") or uuid,
                        time=_num(tc.get("job_completion_time_unix")),
                        outputdir=tc.get("outputdir") or "",
                        source=source or uuid,
                        variables=variables,
                    )
                )
    return out


def records_from_report(data, source: str = "") -> list[PerfRecord]:
    """Records of a run report (dict) or of `--describe-stored-sessions` output (list)."""
    return read_report(data, source).records


def testcases_from_report(data) -> list[dict]:
    sessions = data if isinstance(data, list) else [data]
    return [tc for s in sessions for run in s.get("runs", []) for tc in run.get("testcases", [])]


def read_report_file(path: str | os.PathLike) -> ResultSet:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as err:
        raise ResultsError(f"{path}: not a ReFrame JSON run report ({err})") from err
    return read_report(data, source=str(path))


def load_report_file(path: str | os.PathLike) -> list[PerfRecord]:
    return read_report_file(path).records
