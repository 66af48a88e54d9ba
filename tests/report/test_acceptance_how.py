"""The acceptance page says how its verdict is made, after the failures and before the
per-check tables, and its first screen still holds the verdict and every failure."""

from __future__ import annotations

import html
import re

from report.test_acceptance import Run, accept, env, healthy

__all__ = ["env"]  # the fixture, used by name

#: the first screen, as body text (what a person reads before scrolling)
SCREEN = 2048


def _text(page: str) -> str:
    body = page.split("<body>", 1)[-1]
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", body)).split())


def test_the_how_paragraph_sits_between_the_failures_and_the_counts(env):
    rc, _out, _err, _twin = accept(env, "--report", healthy(Run(env), 0.15, flap=True).write())
    assert rc == 1
    page = (env / "page" / "index.html").read_text()
    failures, how, counts = (page.find('id="failures"'), page.find('id="how"'),
                             page.find('id="counts"'))
    assert 0 < failures < how < counts, (failures, how, counts)
    said = _text(page[how:counts])
    for words in ("Stage 1", "Stage 2", "Stage 3", "judges every figure itself",
                  "the band recorded with the run", "INCOMPLETE", "NOT ACCEPTED too",
                  "ACCEPTED only when all three stages PASS"):
        assert words in said, words
    screen = _text(page)[:SCREEN]
    assert "NOT ACCEPTED" in screen and "node03" in screen and "link node01 eth0" in screen
    assert screen.find("Failures and what is missing") < screen.find("stream_node03_to_node01")


def test_a_healthy_pages_first_screen_holds_the_verdict_and_the_stages(env):
    rc, _out, _err, _twin = accept(env, "--report", healthy(Run(env)).write())
    assert rc == 0
    screen = _text((env / "page" / "index.html").read_text())[:SCREEN]
    before_how = screen[:screen.index("How the verdict is made")]
    assert "ACCEPTED" in before_how and "NOT ACCEPTED" not in before_how
    assert all(f"Stage {n}: nothing failed, nothing missing" in before_how for n in (1, 2, 3))
