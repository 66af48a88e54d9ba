"""What the sweep says about the cluster as a whole rather than about one node: its level
stands on a minority of the nodes, or cannot be told from two fast nodes; and the one pair of
a sweep of two nodes, which never names one node and is never healthy unless a reference
says so."""

from __future__ import annotations

import math

import numpy as np

from .expectation import Expectation, below_text
from .level import Level
from .numbers import fmt
from .runs import OK, RunTable

#: the head of a line on what the sweep cannot decide (fabric-sweep exits 3 on these alone)
UNDECIDABLE = "undecidable:"


def level_notes(level: Level, unit: str, expected: Expectation | None) -> list[str]:
    """What the level itself says: it stands on a minority of the nodes (the rest run well
    below what those reach with each other), or one pair runs far above every other run and
    the sweep cannot tell a slow majority from two fast nodes."""
    up = level.upper
    if up is None:
        return []
    ratio = up.below / up.center
    if up.adopted:
        return [f"cluster-wide: most runs are at about {ratio:.2f}x of the level "
                f"{fmt(up.center)} {unit} that {len(up.nodes)} of the nodes reach with each "
                f"other ({up.pairs} pairs, {up.runs} runs): the level stands on a minority, "
                "the rest of the cluster is slow (a switch, the fabric or a group of nodes "
                "more likely than each node alone)"]
    if expected is not None:  # the reference says whether the others are slow
        return []
    if up.suggested and not up.firm:  # enough to measure more, not to doubt the verdict
        return []
    if up.suggested:
        return [f"{UNDECIDABLE} {up.runs} runs sit at about {fmt(up.center)} {unit}, "
                f"{1 / ratio:.2f}x the level {fmt(up.below)} {unit} of the rest: more than "
                "one level's noise puts there, but on no group of nodes of their own (too "
                "few runs, or every node reaches them with some partner), so which level is "
                "the healthy one cannot be told: a slow majority, a slow path between groups "
                "of nodes, or noise (give --expect or --expect-from, --topology, or more "
                "--max-rounds)"]
    pair = "–".join(up.nodes[:2])
    return [f"{UNDECIDABLE} {pair} run at {fmt(up.center)} {unit} with each other, "
            f"{1 / ratio:.2f}x the {fmt(up.below)} {unit} of the other runs: one pair cannot "
            "tell a slow majority from two fast nodes (give --expect or --expect-from)"]


def pair_line(table: RunTable, level: Level, unit: str, expected: Expectation | None) -> str:
    """The verdict on a sweep of two nodes: one pair, measured both ways. Whatever it shows
    is the pair's (either node, or the link between them): never one node, never healthy
    unless a reference says so."""
    a, b = table.nodes
    ok = (table.status == OK) & (table.value > 0)
    figs = []
    for s, d in ((0, 1), (1, 0)):
        sel = ok & (table.src == s) & (table.dst == d)
        figs.append(float(np.exp(np.mean(np.log(table.value[sel])))) if sel.any() else None)
    shown = ", ".join(f"{x}->{y} {fmt(f)} {unit}" for (x, y), f in
                      zip(((a, b), (b, a)), figs, strict=True) if f is not None)
    if expected is not None:
        low = [f for f in figs if f is not None and f < expected.floor]
        if not low:
            return ""
        return (f"slow pair: {a}–{b} ({shown}): {below_text(min(low), expected)}; {a}, {b} or "
                "the link between them is slow, cannot tell which with 2 nodes")
    if None not in figs and min(figs) < math.exp(level.cut) * max(figs):
        (s, d), f = min(zip(((a, b), (b, a)), figs, strict=True), key=lambda t: t[1])
        return (f"slow pair: {s}->{d} ({shown}) at {min(figs) / max(figs):.2f}x of the other "
                f"direction: {s} sending or {d} receiving is slow, cannot tell which with 2 "
                "nodes")
    return (f"{UNDECIDABLE} {a}–{b} ({shown or 'no figure'}): with 2 nodes there is no other "
            "pair to compare with and no reference to hold them against, so slow or not "
            "cannot be told (give --expect or --expect-from)")
