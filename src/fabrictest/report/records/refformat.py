"""What `fabric-report calibrate` writes into a reference file, in one place.

The reference format is `src/fabrictest/references/`'s (ReFrame's external references plus a
`$provenance` block ReFrame ignores). Everything the calibration knows about that format is
here, so that a change of format is one edit:

* an entry is `[reference, lower, upper, unit]`, thresholds as fractions, `null` unbounded;
* provenance is per test class and system (`$provenance.<Class>.<system>`), or per value
  (`...<system>.values.<dotted key path>`) when the class keeps hand-written entries beside
  the calibrated ones; it needs `document` and `table`;
* `measured_by: fabric-report calibrate` marks calibrated provenance (hand-written blocks
  have none), `measured_with` records the test variables that shape the figure (message
  size, message count, size profile, ...): a run with other values measures something else;
* `calibration` names the sessions (UUID, date, host, ReFrame version, extras, and what
  they were read from: a stored session or a run report's file), the statistics and each
  figure's spread, for review; `table` says what was read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fabrictest.robust import MAD_TO_SIGMA

MEASURED_BY = "fabric-report calibrate"

#: test variables that change what a figure measures, read from the test case when it does not
#: record `measured_with` itself (parameters in the reference's `$index` are keys, not listed)
SHAPING_VARIABLES = (
    "size_profile", "msg_size", "nmsg", "num_blks", "num_cmsgs", "transport", "connection",
    "unit_size", "ppn", "num_reps", "msglog", "max_repetitions", "max_size", "osu_iterations",
    "mbw_nodes", "perftest_iters", "rounds", "num_nodes",
)


def entry(ref: float, lower: float | None, upper: float | None, unit: str) -> list:
    """One reference value as the file holds it."""
    return [ref, lower, upper, unit]


#: the run report's test case field holding the effective values of the test's shaping
#: variables (`{'msg_size': 65536, 'nmsg': 20000}`), when the ReFrame base records them
RECORDED_FIELD = "measured_with"


def index_value(variables: Mapping[str, Any], name: str) -> Any:
    """The value a test case had for a reference `$index` name: what it recorded as measured
    with where that is a value (BisectionTest's `num_nodes` None resolves to the nodes it ran
    on; the test's reference lookup uses the same), else the variable's own."""
    recorded = variables.get(RECORDED_FIELD)
    if isinstance(recorded, Mapping) and recorded.get(name) is not None:
        return recorded[name]
    return variables[name]


def measured_with(variables: Mapping[str, Any], index: Sequence[str]) -> dict[str, Any]:
    """The shaping values one test case was measured with (those its reference index does not
    key on): what the test recorded in its `measured_with` field, else the raw values of the
    known shaping variables it has."""
    recorded = variables.get(RECORDED_FIELD)
    if isinstance(recorded, Mapping):
        return {k: v for k, v in recorded.items() if k not in index}
    return {k: variables[k] for k in SHAPING_VARIABLES
            if k in variables and k not in index and variables[k] is not None}


#: `read_from` of a session read through ReFrame's results database
STORED_SESSION = "stored session"


#: `read_from` of a session read from a run report file: this, then the file's path
RUN_REPORT = "run report "


def read_from_report(path: str) -> str:
    return RUN_REPORT + path


def session_record(info: Mapping[str, Any], read_from: str = STORED_SESSION
                   ) -> dict[str, Any]:
    """How a calibration names one ReFrame session, and what it was read from."""
    known = {"data_version", "hostname", "uuid", "time_start", "time_start_unix", "time_end",
             "time_end_unix", "time_elapsed", "cmdline", "config_files", "log_files",
             "prefix_output", "prefix_stage", "user", "version", "workdir", "num_cases",
             "num_failures", "num_aborted", "num_skipped"}
    extras = {k: v for k, v in info.items() if k not in known}
    rec = {"uuid": info.get("uuid", ""), "date": info.get("time_start", ""),
           "host": info.get("hostname", ""), "reframe": info.get("version", "")}
    if extras:
        rec["extras"] = extras
    rec["read_from"] = read_from
    return rec


def _what_was_read(sessions: Sequence[Mapping[str, Any]]) -> str:
    """`stored sessions 1265cdb7, ...` and/or `run reports run0.json (1265cdb7), ...`: the
    provenance's `table`, saying what the calibration read (a record without `read_from`
    predates it and was a stored session)."""
    stored, reports = [], []
    for s in sessions:
        uuid = str(s.get("uuid", ""))[:8]
        read_from = str(s.get("read_from") or STORED_SESSION)
        if read_from.startswith(RUN_REPORT):
            reports.append(f"{read_from.removeprefix(RUN_REPORT)} ({uuid})")
        else:
            stored.append(uuid)
    parts = [f"stored sessions {', '.join(stored)}"] if stored else []
    if reports:
        parts.append(f"run reports {', '.join(reports)}")
    return "; ".join(parts)


def provenance(*, system: str, sessions: Sequence[Mapping[str, Any]], command: str, date: str,
               factor: float, floor: float, shaping: Mapping[str, Any] | None,
               spreads: Mapping[str, str] | None = None,
               loose: str | None = None, counts: str | None = None) -> dict[str, Any]:
    """The provenance of calibrated entries: a system block, or one value's block (then
    `spreads` holds that value only); `loose`: why a bound is past the strict band; `counts`:
    the count rule, where some of the entries are counts."""
    hosts = sorted({str(s.get("host", "")) for s in sessions})
    block: dict[str, Any] = {
        "document": f"measured: {MEASURED_BY} from {len(sessions)} ReFrame sessions on "
                    f"{system} ({', '.join(hosts)}), {date[:10]}",
        "table": _what_was_read(sessions),
        "note": f"reference = median of the sessions; bound = the largest of the floor "
                f"{100 * floor:g}%, {factor:g} x the noise ({MAD_TO_SIGMA:g} MAD corrected for K sessions, "
                "x sqrt(1 + pi/2K) for the median's own error) and the farthest session, "
                "on the side that matters (rates: lower, times: upper)"
                + (f"; {counts}" if counts else ""),
        "measured_by": MEASURED_BY,
    }
    if loose:
        block["loose"] = loose
    if shaping:
        block["measured_with"] = shaping
    block["calibration"] = {
        "date": date,
        "command": command,
        "factor": factor,
        "floor": floor,
        "sessions": list(sessions),
    }
    if spreads:
        block["calibration"]["figures"] = spreads
    return block


def is_calibrated(block: Any) -> bool:
    """Whether a provenance block was written by the calibration (not by hand)."""
    return isinstance(block, Mapping) and block.get("measured_by") == MEASURED_BY
