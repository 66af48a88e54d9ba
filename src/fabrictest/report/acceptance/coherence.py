"""Evidence that belongs together (pure): the sources of one acceptance are of one system, one
node set, one suite commit and one references file, and stage 1 ran within a stated time
before stage 2 (default a day), never after it.

Anything else is refused in one line naming the source (:func:`check_coherence`,
ResultsError: exit 2), unless the user says that rule does not hold here
(``--allow-mixed systems|nodes|commits|references``, ``--stage1-window HOURS``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from fabrictest.report.acceptance.cases import label
from fabrictest.report.records.results import ResultsError

#: the rules ``--allow-mixed`` can lift, one each
MIXABLE = ("systems", "nodes", "commits", "references")
#: how long before stage 2 stage 1 may have run, by default (hours)
STAGE1_WINDOW_HOURS = 24.0


def _first_other(cases: Sequence[dict], key: str, origin: Mapping[int, str]
                 ) -> tuple[str, str, str] | None:
    """(the commonest value, another, the source of the first case holding another) or
    None when every case that records it agrees."""
    values = Counter(v for tc in cases if isinstance(v := tc.get(key), str) and v)
    if len(values) < 2:
        return None
    common = values.most_common(1)[0][0]
    tc = next(tc for tc in cases if tc.get(key) not in (common, None, ""))
    return common, str(tc[key]), origin.get(id(tc), "?")


def _when(tc: dict) -> float | None:
    t = tc.get("job_completion_time_unix")
    return float(t) if isinstance(t, (int, float)) and not isinstance(t, bool) else None


def _hours(seconds: float) -> str:
    return f"{seconds / 86400:.1f} days" if seconds >= 2 * 86400 else f"{seconds / 3600:.1f} h"


def check_coherence(stage1: Sequence[dict], perf: Sequence[dict],
                    sweeps: Sequence[tuple[str, dict]], origin: Mapping[int, str],
                    allow: Sequence[str] = (), window_hours: float = STAGE1_WINDOW_HOURS,
                    records: Sequence[tuple[str, dict]] = ()) -> None:
    """``stage1``/``perf``: the run's health and performance test cases (and every other case
    of the run for the system, commit and references rules); ``sweeps``: (label, fabric-sweep
    JSON); ``origin``: id(test case) -> the source it was read from; ``records``: (path,
    stage 1's own record, ``stage1.json``)."""
    cases = [*stage1, *perf]
    systems = {tc.get("system") for tc in cases if tc.get("system")}
    for path, doc in records if "systems" not in allow else ():
        if doc.get("system") and systems and doc["system"] not in systems:
            raise ResultsError(f"{path}: a stage-1 record of system {doc['system']}, the run "
                               f"is of {', '.join(sorted(systems))}: another system, refused "
                               "(--allow-mixed systems pools them)")
    rules = (("systems", "system", "of system", "another system"),
             ("commits", "suite_commit", "run from suite commit", "another commit"),
             ("references", "reference_sha256", "judged with references sha256",
              "another references file"))
    for rule, key, what, other in rules:
        if rule in allow:
            continue
        mixed = _first_other(cases, key, origin)
        if mixed:
            first, second, where = mixed
            raise ResultsError(f"{where}: {what} {second[:16]}, the rest of the evidence "
                               f"{first[:16]}: {other}, refused (--allow-mixed {rule} pools "
                               "them)")
    if "nodes" not in allow:
        run_nodes = {n for tc in cases for n in tc.get("job_nodelist") or []}
        for lab, data in sweeps:
            theirs = {str(n) for n in data.get("nodes") or []}
            other = sorted(theirs - run_nodes) if run_nodes else []
            if other:
                raise ResultsError(f"sweep {lab}: measured {', '.join(other[:5])}"
                                   f"{' ...' if len(other) > 5 else ''}, nodes this run does "
                                   "not hold: a sweep of other nodes, refused (--allow-mixed "
                                   "nodes pools them)")
    starts = [t for t in map(_when, perf) if t is not None]
    if not starts:
        return
    first_perf = min(starts)
    timed = [(f"{origin.get(id(tc), '?')}: {label(tc)}", _when(tc)) for tc in stage1]
    timed += [(path, _when({"job_completion_time_unix": doc.get("time")}))
              for path, doc in records]
    for where, t in timed:
        if t is None:
            continue
        if t > first_perf:
            raise ResultsError(f"{where} ran {_hours(t - first_perf)} after the performance "
                               "stage began: pre-flight evidence comes before, refused")
        if first_perf - t > window_hours * 3600:
            raise ResultsError(f"{where} ran {_hours(first_perf - t)} before the performance "
                               f"stage (at most {window_hours:g} h: --stage1-window HOURS): "
                               "stale pre-flight evidence, refused")
