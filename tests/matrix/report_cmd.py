"""``fabric-report`` in this process (tests/report/_reports.py), its temporary paths masked."""

from __future__ import annotations

from report._reports import fabric_report

__all__ = ["fabric_report"]
