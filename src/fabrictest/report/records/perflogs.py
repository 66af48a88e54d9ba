"""Performance records from ReFrame's `filelog` perflogs (a file or a directory tree of
`*.log`), read by figure name: see :func:`read_perflogs`."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from fabrictest.report.records.cut_units import unitless_header
from fabrictest.report.records.results import (
    PerfRecord,
    ResultsError,
    ResultSet,
    _num,
    _stamp,
    params_of,
    refuse_impossible,
)


@dataclass(frozen=True)
class _Layout:
    """Where a perflog header puts its fields: the columns before the figures, and each
    figure's fields (``var``, ``value``, ``unit``, ``ref``, ``lower_thres``, ...)."""

    fixed: list[str]
    fields: list[str]  # the suffixes of one figure's columns, in order
    names: list[str]  # the figures the header names, in order
    named: bool  # each figure's first field is its name (`%(check_perf_var)s`)


def _layout(header: list[str]) -> _Layout | None:
    first = next((i for i, c in enumerate(header) if c.endswith("_value")), None)
    if first is None:  # a test without figures (a fixture)
        return _Layout(header, [], [], False)
    name = header[first][: -len("_value")]
    named = first > 0 and header[first - 1] == f"{name}_var"
    start = first - 1 if named else first
    values = [i for i, c in enumerate(header) if i >= start and c.endswith("_value")]
    width = (values[1] - values[0]) if len(values) > 1 else len(header) - start
    fields = []
    for c in header[start:start + width]:
        if not c.startswith(name + "_"):
            return None
        fields.append(c[len(name) + 1:])
    perf = header[start:]
    if len(perf) % width:
        return None
    names = [perf[k + fields.index("value")][: -len("_value")]
             for k in range(0, len(perf), width)]
    return _Layout(header[:start], fields, names, named)


def _figures(layout: _Layout, cols: list[str]) -> list[dict[str, str]] | None:
    """Each figure of a row as {field: text}, read by name: a row of the named format gives
    its own names (whatever the header's first row had); a row of the format without names
    is read only when it has exactly the header's figures. None: not a row of this header."""
    perf = cols[len(layout.fixed):]
    width = len(layout.fields)
    if not width:
        return [] if len(cols) == len(layout.fixed) else None
    if layout.named:
        if not perf or len(perf) % width:
            return None
        chunks = [dict(zip(layout.fields, perf[k:k + width], strict=True))
                  for k in range(0, len(perf), width)]
        return chunks if all(c.get("var") for c in chunks) else None
    if len(perf) != width * len(layout.names):
        return None
    return [{"var": n, **dict(zip(layout.fields, perf[k * width:(k + 1) * width], strict=True))}
            for k, n in enumerate(layout.names)]


def read_perflogs(path: str | os.PathLike) -> ResultSet:
    """Records from ReFrame `filelog` perflogs (a file or a directory tree of `*.log`).

    The header line names the fields. ReFrame writes a file's header once, from the first
    test case it logs, so the test cases of other scenarios sharing the file (other figures,
    more of them) follow under it: figures are read by name. The suite's configuration writes
    each figure's name in the row (`%(check_perf_var)s` first in `format_perfvars`); a row of
    a format without names is read only when it has exactly its header's figures, otherwise
    it is counted as unreadable and said (it cannot be read by name). Lines that are neither a
    header nor a row of the header's shape, and values that are not numbers, are counted as
    unreadable.
    """
    p = Path(path)
    if not p.exists():
        raise ResultsError(f"{path}: no such file or directory")
    files = sorted(p.rglob("*.log")) if p.is_dir() else [p]
    out = ResultSet()
    for f in files:
        try:
            text = f.read_text(errors="replace")
        except OSError as err:
            raise ResultsError(f"{f}: cannot read ({err.strerror or err})") from err
        layout: _Layout | None = None
        unnamed = 0
        for line in text.splitlines():
            if not line.strip():
                continue
            cols = line.rstrip("\n").split("|")
            if "display_name" in cols or "check_display_name" in cols:
                # `jobid=%(check_jobid)s` in a format heads its column `jobid=jobid`
                layout = _layout([c.removeprefix("check_").partition("=")[0] for c in cols])
                if (cut := unitless_header(str(f), layout and layout.fields)) is not None:
                    raise ResultsError(cut)
                continue
            figures = _figures(layout, cols) if layout else None
            if figures is None:
                out.unreadable += 1
                unnamed += bool(layout and not layout.named
                                and len(cols) > len(layout.fixed))
                continue
            row = dict(zip(layout.fixed, cols, strict=False))
            name = row.get("display_name", "")
            jobid = row.get("jobid", "").removeprefix("jobid=")
            for fig in figures:
                var = fig["var"]
                value = _num(fig.get("value"))
                if value is None:
                    out.unreadable += 1
                    continue
                unit = fig.get("unit", "")
                unit = "" if unit in ("None", "null") else unit
                refuse_impossible(str(f), name, var, value, unit, _num(fig.get("ref")))
                out.records.append(
                    PerfRecord(
                        test=name,
                        base=name.split(" %")[0],
                        system=row.get("system", ""),
                        partition=row.get("partition", ""),
                        environ=row.get("environ", ""),
                        pvar=var,
                        value=value,
                        unit=unit,
                        ref=_num(fig.get("ref")) or None,
                        lower=_num(fig.get("lower_thres")),
                        upper=_num(fig.get("upper_thres")),
                        result=row.get("result", ""),
                        params=params_of(name),
                        session=jobid,
                        time=_stamp(row.get("job_completion_time")),
                        source=str(f),
                    )
                )
        if unnamed:
            out.notes.append(
                f"{f}: {unnamed} row{'s' if unnamed > 1 else ''} with other figures than the "
                "header's, in a perflog format that does not name them: not read (they "
                "cannot be read by name; the suite's configuration names every figure)")
    return out


def load_perflogs(path: str | os.PathLike) -> list[PerfRecord]:
    return read_perflogs(path).records
