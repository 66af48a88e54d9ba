"""Performance records from ReFrame: JSON run reports, stored sessions, perflogs.

All three become flat :class:`PerfRecord` rows (one per test case and performance variable).
Stored sessions are read through ReFrame's own command line (``reframe
--describe-stored-sessions QUERY``, JSON), not by poking its database schema; a run report
(``--report-file``, or the ``report_file`` of the configuration) has the same structure.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

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

    @property
    def scenario(self) -> str:
        return self.params.get("scenario", "")

    @property
    def sysenv(self) -> str:
        return f"{self.system}:{self.partition}+{self.environ}"

    @property
    def nodes_expr(self) -> str:
        if not self.nodes:
            return ""
        try:
            import hostlist

            return hostlist.collect_hostlist(list(self.nodes))
        except Exception:  # noqa: BLE001 - cosmetic only
            return ",".join(self.nodes)

    def band(self) -> tuple[float | None, float | None]:
        """(low, high) of the reference band, absolute; None where unbounded or absent."""
        if self.ref is None or self.ref == 0:
            return None, None
        lo = self.ref * (1 + self.lower) if self.lower is not None else None
        hi = self.ref * (1 + self.upper) if self.upper is not None else None
        return lo, hi

    def to_dict(self) -> dict:
        return asdict(self)


def params_of(display_name: str) -> dict[str, str]:
    return dict(_PARAM.findall(display_name or ""))


def _num(x) -> float | None:
    if x is None or x == "" or x == "null":
        return None
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def records_from_report(data, source: str = "") -> list[PerfRecord]:
    """Records of a run report (dict) or of `--describe-stored-sessions` output (list)."""
    sessions = data if isinstance(data, list) else [data]
    out: list[PerfRecord] = []
    for sess in sessions:
        info = sess.get("session_info", {})
        uuid = info.get("uuid", "")
        runs = sess.get("runs", [])
        # retries/reruns: keep the last run of each test case
        last: dict[str, dict] = {}
        for run in runs:
            for tc in run.get("testcases", []):
                key = f"{tc.get('name')}|{tc.get('system')}|{tc.get('partition')}|{tc.get('environ')}"
                last[key] = tc
        for tc in last.values():
            name = tc.get("display_name") or tc.get("name", "")
            params = params_of(name)
            if isinstance(tc.get("scenario"), str) and tc["scenario"]:
                params.setdefault("scenario", tc["scenario"])  # a variable, not a parameter
            for key, pv in (tc.get("perfvalues") or {}).items():
                pvar = key.split(":")[-1]
                val, ref, lower, upper, unit = (list(pv) + [None] * 6)[:5]
                result = pv[5] if len(pv) > 5 else tc.get("result", "")
                out.append(
                    PerfRecord(
                        test=name,
                        base=name.split(" %")[0].split(" ")[0],
                        system=tc.get("system", ""),
                        partition=tc.get("partition", ""),
                        environ=tc.get("environ", ""),
                        pvar=pvar,
                        value=_num(val),
                        unit=unit or "",
                        ref=_num(ref) or None,
                        lower=_num(lower),
                        upper=_num(upper),
                        result=result or "",
                        params=params,
                        nodes=list(tc.get("job_nodelist") or []),
                        session=tc.get("session_uuid") or uuid,
                        time=_num(tc.get("job_completion_time_unix")),
                        outputdir=tc.get("outputdir") or "",
                        source=source or uuid,
                    )
                )
    return out


def testcases_from_report(data) -> list[dict]:
    sessions = data if isinstance(data, list) else [data]
    return [tc for s in sessions for run in s.get("runs", []) for tc in run.get("testcases", [])]


def load_report_file(path: str | os.PathLike) -> list[PerfRecord]:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as err:
        raise ResultsError(f"{path}: not a ReFrame JSON run report ({err})") from err
    return records_from_report(data, source=str(path))


def reframe_exe() -> str:
    cand = Path(sys.executable).parent / "reframe"
    return str(cand) if cand.exists() else (shutil.which("reframe") or "reframe")


def tag_query(tags: Iterable[str]) -> str:
    """`stack=pre-upgrade` (and more, all required) -> ReFrame's session filter."""
    terms = []
    for t in tags:
        k, sep, v = t.partition("=")
        if not sep or not k:
            raise ResultsError(f"bad tag {t!r}: use KEY=VALUE, e.g. stack=pre-upgrade")
        terms.append(f"{k}=={v!r}")
    return "?" + " and ".join(terms)


def describe_sessions(query: str, env: dict[str, str] | None = None) -> list:
    """`reframe --describe-stored-sessions QUERY` as JSON (a list of sessions)."""
    cmd = [reframe_exe(), "--describe-stored-sessions", query, "--nocolor"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    text = proc.stdout
    start = text.find("[")
    if proc.returncode != 0 or start < 0:
        raise ResultsError(
            f"{' '.join(cmd)} failed (exit {proc.returncode}): "
            f"{(proc.stderr or proc.stdout).strip()[-500:]}"
        )
    try:
        data = json.loads(text[start:])
    except ValueError as err:
        raise ResultsError(f"{' '.join(cmd)}: output is not JSON ({err})") from err
    if not data:
        raise ResultsError(f"no stored session matches {query!r}")
    return data


def load_session(query: str, env: dict[str, str] | None = None) -> list[PerfRecord]:
    """Records of the stored session(s) a UUID or a `?filter` query selects."""
    return records_from_report(describe_sessions(query, env), source=query)


def load_perflogs(path: str | os.PathLike) -> list[PerfRecord]:
    """Records from ReFrame `filelog` perflogs (a file or a directory tree of `*.log`).

    The header line names the fields; performance variables are the `<var>_value` columns
    followed by `_unit`, `_ref`, `_lower_thres`, `_upper_thres` as written by our
    configuration (and ReFrame's default format).
    """
    p = Path(path)
    files = sorted(p.rglob("*.log")) if p.is_dir() else [p]
    out: list[PerfRecord] = []
    for f in files:
        header: list[str] | None = None
        for line in f.read_text(errors="replace").splitlines():
            cols = line.rstrip("\n").split("|")
            if "display_name" in cols or "check_display_name" in cols:
                header = [c.removeprefix("check_") for c in cols]
                continue
            if header is None or len(cols) < len(header) - 1:
                continue
            row = dict(zip(header, cols, strict=False))
            name = row.get("display_name", "")
            for col in header:
                if not col.endswith("_value"):
                    continue
                var = col[: -len("_value")]
                jobid = row.get("jobid", "").removeprefix("jobid=")
                out.append(
                    PerfRecord(
                        test=name,
                        base=name.split(" %")[0],
                        system=row.get("system", ""),
                        partition=row.get("partition", ""),
                        environ=row.get("environ", ""),
                        pvar=var,
                        value=_num(row.get(col)),
                        unit=row.get(f"{var}_unit", ""),
                        ref=_num(row.get(f"{var}_ref")) or None,
                        lower=_num(row.get(f"{var}_lower_thres")),
                        upper=_num(row.get(f"{var}_upper_thres")),
                        result=row.get("result", ""),
                        params=params_of(name),
                        session=jobid,
                        source=str(f),
                    )
                )
    return out
