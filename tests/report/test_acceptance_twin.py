"""The JSON twin is proportionate to the run (issue 40: 47 MB at 10,000 nodes): passing rows
are counted, every failing and every missing item is listed in full, and a large twin is
written without indentation (report/acceptance/twin.py)."""

from __future__ import annotations

import json

from fabrictest.report.acceptance import twin as tw


def _check(node, check, ok):
    return {"node": node, "nic": "hsn0/-", "check": check, "ok": ok, "found": "x",
            "expected": "y", "detail": "found x, expected y", "source": "NicHealthTest"}


def _figure(test, figure, failing=False, judges=True):
    return {"set": "global", "test": test, "system": "s:p+e", "nodes": "nid[001-100]",
            "figure": figure, "unit": "Gbps", "value": 1.0, "reference": 1.0,
            "band": [0.95, None], "ratio": 1.0, "failing": failing, "judges": judges}


NODES = [f"nid{i:03d}" for i in range(1, 101)]


def _twin() -> dict:
    s1 = {"stage": 1, "status": "fail", "gaps": ["no pre-flight result for nid100"],
          "findings": [{"name": "nid007"}], "sources": ["NicHealthTest"],
          "rows": [_check(n, c, not (n == "nid007" and c == "mac"))
                   for n in NODES[:99] for c in ("mac", "ip")]}
    figures = [_figure("TxRx", f"node_{n}_rx_gbps", failing=n == "nid042") for n in NODES]
    figures.append(_figure("Congestion", "lat_impact", judges=False))
    s2 = {"stage": 2, "status": "fail", "gaps": ["1 figures have no reference"],
          "findings": [{"name": "nid042"}], "figures": figures,
          "failed_cases": [{"test": "TxRx", "nodes": list(NODES), "failing_links": ["a->b"]}],
          "topology": [{"switch": "sw1", "parent": "top", "nodes": NODES[:64]}]}
    nodes = [{"node": n, "failures": ["eth0 down 2"] if n == "nid050" else [],
              "unread": ["cxi"] if n == "nid051" else []} for n in NODES]
    congestion = [{"node": n, "counter": c, "failing": n == "nid060" and c == "RetransSegs"}
                  for n in NODES for c in ("RetransSegs", "ecn")]
    s3 = {"stage": 3, "status": "fail", "gaps": [], "findings": [{"name": "nid050"}],
          "nodes": nodes, "congestion": congestion}
    return {"format": "fabrictest-acceptance/2", "stages": [s1, s2, s3]}


def test_passing_rows_are_counted_and_every_failure_listed():
    full = _twin()
    s1, s2, s3 = tw.proportionate(full)["stages"]
    assert [(r["node"], r["check"]) for r in s1["rows"]] == [("nid007", "mac")]
    assert s1["passed"] == {"ip": 99, "mac": 98} and s1["rows_total"] == {"rows": 198}
    assert [r["figure"] for r in s2["figures"]] == ["node_nid042_rx_gbps", "lat_impact"]
    assert s2["passed"] == {"TxRx": 99} and s2["rows_total"] == {"figures": 101}
    assert s2["failed_cases"][0]["nodes"] == "nid[001-100]"
    assert s2["failed_cases"][0]["failing_links"] == ["a->b"]
    assert s2["topology"][0]["nodes"] == "nid[001-064]"
    assert [n["node"] for n in s3["nodes"]] == ["nid050", "nid051"] and s3["passed"] == 98
    assert [(c["node"], c["counter"]) for c in s3["congestion"]] == [("nid060", "RetransSegs")]
    assert s3["passed_congestion"] == {"RetransSegs": 99, "ecn": 100}
    assert s3["rows_total"] == {"nodes": 100, "congestion": 200}
    for before, after in zip(full["stages"], (s1, s2, s3), strict=True):  # never cut
        assert (after["gaps"], after["findings"], after["status"]) == (
            before["gaps"], before["findings"], before["status"])


def test_a_large_twin_is_written_without_indentation():
    small = tw.dumps(tw.proportionate(_twin()))
    assert "\n " in small and json.loads(small)["stages"][0]["passed"]["ip"] == 99
    big = _twin()
    big["stages"][1]["gaps"] = ["x" * 100] * (tw.INDENT_BELOW // 100)
    text = tw.dumps(big)
    assert text.count("\n") == 1 and json.loads(text)["stages"][1]["gaps"] == big["stages"][1][
        "gaps"]


def test_a_twin_of_either_format_is_its_own_to_replace(tmp_path):
    from fabrictest.report.acceptance.outputs import TWIN_FORMAT, own_twin

    for fmt, ours in ((TWIN_FORMAT, True), ("fabrictest-acceptance/1", True),
                      ("someone-else/1", False)):
        (tmp_path / "t.json").write_text(json.dumps({"format": fmt}))
        assert own_twin(tmp_path / "t.json") is ours, fmt
