"""Results -> tables, plots, regression verdicts (`fabric-report`).

One package per command (compare, html, calibrate, history, attribute, counters, acceptance),
each with its `cmd.py` (`add_parser(sub)`, `run(args)`) that only `cli` imports; below them the
shared `options` and `page` (CSS, escaping, plots), and the floor, `records` (results,
sessions, perflogs, units, statistics). The layers are the `report-layers` contract
(pyproject.toml, docs/architecture.md).
"""
