"""Each session read once: a session given twice (one run report under two names, a file
in two globs, the base's session again in the target) would count its figures twice, as two
sessions' agreement, and a comparison of a session with itself finds no change. It is refused
in one line naming both places, never counted once silently.

A session is known by its ReFrame UUID (``session_info.uuid``, a test case's
``session_uuid``); perflogs carry no session UUID (their job ids repeat across days), so they
are not checked here.
"""

from __future__ import annotations

from collections.abc import Iterable

from fabrictest.report.records.results import ResultsError, ResultSet


def session_ids(part: ResultSet) -> set[str]:
    """The session UUIDs one run report or stored-session query holds."""
    ids = set(part.sessions)
    ids.update(tc.get("session_uuid") for tc in part.testcases
               if isinstance(tc.get("session_uuid"), str))
    ids.discard("")
    return ids


def refuse_doubled(parts: Iterable[tuple[str, ResultSet]], what: str = "given twice") -> None:
    """ResultsError when one session UUID is in two of ``parts`` ((where, what was read));
    ``what`` says how, for the message."""
    seen: dict[str, str] = {}
    for where, part in parts:
        for uuid in sorted(session_ids(part)):
            if uuid in seen:
                raise ResultsError(f"session {uuid} is {what} ({seen[uuid]} and {where}): "
                                   "refused, it would be counted twice; give each session "
                                   "once")
            seen[uuid] = where
