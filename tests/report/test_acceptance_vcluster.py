"""The acceptance page on the vcluster's real runs (recorded: tests/report/data/acceptance,
SOURCES.md says how): the healthy run is ACCEPTED; node03's link 15 % slower and node01's link
flapping between two tests is NOT ACCEPTED, naming both at the top. The pages are rendered by
headless Chromium (Debian's package) into screenshots and a PDF (the browser's print), and the
screenshots are read back: the verdict's banner is there, green or red.

``FABRICTEST_SCREENSHOTS=DIR`` keeps the screenshots and PDFs in DIR to look at.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from report._reports import fabric_report
from report.acceptance_data import DATA, reports

GREEN, RED = (0xE3, 0xF4, 0xE3), (0xFB, 0xE3, 0xE3)  # the banner's backgrounds (page CSS)
WIDTH, HEIGHT = 1280, 1800


def page(tmp_path: Path, run: str, monkeypatch) -> tuple[int, str, dict, Path]:
    if not reports(run):
        pytest.fail(f"no recorded {run} run in {DATA}: run its record.sh")
    monkeypatch.chdir(DATA)  # the reports name their tests' directories relative to it
    out = tmp_path / run
    args = [a for r in reports(run) for a in ("--report", r)]
    rc, stdout, stderr = fabric_report("acceptance", *args, "--topology", "topology.txt",
                                       "-o", out)
    assert rc in (0, 1), stdout + stderr
    return rc, stdout, json.loads((out / "acceptance.json").read_text()), out


def test_the_healthy_vcluster_run_is_accepted(tmp_path, monkeypatch):
    rc, out, twin, _ = page(tmp_path, "healthy", monkeypatch)
    assert rc == 0, out
    assert twin["verdict"] == "ACCEPTED" and out.startswith("ACCEPTED: stage 1 4 nodes")
    assert [s["status"] for s in twin["stages"]] == ["pass", "pass", "pass"]
    sets = {s["set"] for s in twin["stages"][1]["sets"]}
    assert {"edge", "global", "bisection", "congestion"} <= sets, sets
    assert twin["stages"][1]["sweeps"][0]["healthy"] is True


def test_node03_slow_and_node01_flapping_are_named_at_the_top(tmp_path, monkeypatch):
    rc, out, twin, _ = page(tmp_path, "faulty", monkeypatch)
    assert rc == 1
    head = out.splitlines()[0]
    assert head.startswith("NOT ACCEPTED: failed: "), head
    assert re.search(r"\bnode03 \(stage 2 \(performance\)", head), head
    # its link: eth0, and hsn0 (the fabric NIC, a macvlan on the same cable) with it
    assert re.search(r"link node01 eth0(, hsn0)? \(stage 3 \(counters and flaps\)\)", head), head
    named = {(e["kind"], e["name"]): e for e in twin["elements"]}
    assert named[("node", "node03")]["stages"] == [2]
    assert any("below" in x for x in named[("node", "node03")]["evidence"])
    flap = next(e for (k, n), e in named.items() if k == "link" and n.startswith("node01 "))
    assert any("during no test (between" in x for x in flap["evidence"]), flap
    # the flap happened while no test ran: every test that used node01 passed its own check
    assert not any(k == "node" and n == "node01" for k, n in named), named
    assert {k for k, _ in named} == {"node", "link"}, named  # nothing else is blamed
    assert len(named) == 2, named
    assert twin["stages"][0]["status"] == "pass"


def _chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.skip("chromium not installed (scripts/install.sh installs Debian's chromium)")
    return exe


def _headless(exe: str, profile: Path, *args: str) -> None:
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--no-first-run", f"--user-data-dir={profile}", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-2000:]


def _banner_colour(png: Path) -> tuple[int, int, int]:
    """The commonest light colour in the top of the page: the verdict banner's background."""
    from matplotlib.image import imread

    img = imread(str(png))[:500, :, :3]
    px = (img.reshape(-1, 3) * 255).round().astype(int)
    light = px[(px.min(axis=1) > 0xD0) & (px.max(axis=1) < 0xFF)]
    colours, counts = __import__("numpy").unique(light, axis=0, return_counts=True)
    return tuple(int(c) for c in colours[counts.argmax()])


@pytest.mark.slow
def test_screenshots_and_print_of_both_pages(tmp_path, monkeypatch):
    exe = _chromium()
    keep = Path(os.environ["FABRICTEST_SCREENSHOTS"]) if os.environ.get(
        "FABRICTEST_SCREENSHOTS") else tmp_path
    keep.mkdir(parents=True, exist_ok=True)
    for run, colour in (("healthy", GREEN), ("faulty", RED)):
        _, _, _, out = page(tmp_path, run, monkeypatch)
        url = (out / "index.html").resolve().as_uri()
        png, pdf = keep / f"acceptance-{run}.png", keep / f"acceptance-{run}.pdf"
        _headless(exe, tmp_path / f"profile-{run}", f"--screenshot={png}",
                  f"--window-size={WIDTH},{HEIGHT}", url)
        _headless(exe, tmp_path / f"profile-{run}-pdf", f"--print-to-pdf={pdf}",
                  "--no-pdf-header-footer", url)
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert _banner_colour(png) == colour, (run, _banner_colour(png))
        data = pdf.read_bytes()
        assert data.startswith(b"%PDF") and len(re.findall(rb"/Type\s*/Page[^s]", data)) >= 2
