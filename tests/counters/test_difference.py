"""Counters as NICs count them: widths, saturation, resets, two sources, snapshots that read
nothing; and how the thresholds judge an increase that cannot be known."""

from __future__ import annotations

import pytest

from fabrictest.counters.difference import (
    IMPOSSIBLE,
    NOTHING,
    RESET,
    SATURATED,
    WIDTHS,
    difference,
)
from fabrictest.counters.judge import judge
from fabrictest.counters.kinds import width_of
from fabrictest.counters.snapshot import Counter, Snapshot, parse_snapshot
from fabrictest.counters.thresholds import Thresholds
from fabrictest.parsers import ParseError

PROV = {"document": "test"}


def ib(name: str, value, width: int | None = None, port: str = "1") -> Counter:
    return Counter("ib", "mlx5_0", port, name, value, width or width_of("ib", name))


def diff(name: str, before, after, width: int | None = None):
    return difference(Snapshot("n1", [ib(name, before, width)]),
                      Snapshot("n1", [ib(name, after, width)]))


def test_a_saturated_xmit_wait_is_never_plus_zero():
    """sysfs port_xmit_wait is 32 bits: at 4294967295 it has stopped counting; a congested port
    must not pass as "+0"."""
    d = diff("port_xmit_wait", 4294967295, 4294967295)
    assert d.changes == []
    (u,) = d.unknown
    assert u.why == SATURATED and "saturated at 4294967295 (32-bit maximum)" in u.text
    verdict = judge([d])
    assert verdict.unread == [u.text] and verdict.figures == {"n1": {}}
    assert not any("+0" in line for line in verdict.unread)


def test_saturated_counters_are_judged_by_the_unknown_rule():
    d = diff("symbol_error", 65535, 65535)
    assert judge([d]).unread and not judge([d]).failures
    failing = Thresholds(provenance=PROV, unknown="fail")
    v = judge([d], failing)
    assert not v.unread and "counted a failure" in v.failures[0]


def test_what_a_saturating_counter_showed_is_judged():
    """symbol_error 10 -> 65535: at least 65525 errors, past any threshold below it: a failure
    whatever the unknown rule; link_downed 3 -> 255: the link went down at least 252 times."""
    v = judge([diff("symbol_error", 10, 65535)], Thresholds(100, provenance=PROV))
    assert v.failures == ["n1 mlx5_0/1: symbol_error rose by at least 65525 during the test "
                          "(threshold 100; n1 mlx5_0/1 symbol_error: saturated at 65535 (16-bit "
                          "maximum) during the test (10 -> 65535): it rose by at least 65525, "
                          "how much more is unknown)"]
    v = judge([diff("link_downed", 3, 255)])
    assert v.failures[0].startswith("n1 mlx5_0/1: link went down at least 252 times")
    # within the threshold: the saturation itself is what is unknown
    v = judge([diff("symbol_error", 65500, 65535)], Thresholds(100, provenance=PROV))
    assert not v.failures and "saturated at 65535" in v.unread[0]


def test_a_reset_is_named_a_reset():
    (u,) = diff("port_rcv_errors", 9, 2).unknown
    assert u.why == RESET
    assert u.text == ("n1 mlx5_0/1 port_rcv_errors: went backwards (9 -> 2): reset during the "
                      "test, its increase is unknown")


def test_the_64_bit_extended_counter_does_not_saturate_at_the_16_bit_maximum():
    d = diff("symbol_error", 65535, 70000, width=64)
    assert [c.increase for c in d.changes] == [4465] and d.unknown == []


def test_two_widths_are_not_compared_and_a_value_above_its_width_is_refused():
    d = difference(Snapshot("n1", [ib("symbol_error", 70000, 64)]),
                   Snapshot("n1", [ib("symbol_error", 65535, 16)]))
    assert [u.why for u in d.unknown] == [WIDTHS] and "64-bit counter before" in d.unknown[0].text
    (u,) = diff("link_downed", 3, 300).unknown
    assert u.why == IMPOSSIBLE and "more than its 8-bit counter holds (255)" in u.text


def test_a_cxi_state_going_down_is_not_a_reset():
    d = difference(Snapshot("n1", [Counter("cxi", "cxi0", "-", "link_up", 1, 1)]),
                   Snapshot("n1", [Counter("cxi", "cxi0", "-", "link_up", 0, 1)]))
    assert d.unknown == [] and judge([d]).failures[0].startswith("n1 cxi0: link went down 1 time")


def test_a_snapshot_that_read_nothing_is_unknown():
    empty = Snapshot("n1", [])
    d = difference(empty, empty)
    assert [u.why for u in d.unknown] == [NOTHING, NOTHING]
    v = judge([d])
    assert v.unread[0] == "n1: its snapshot before the test holds no counter value (0 counters, none read)"


def test_an_ignored_counter_is_not_judged_at_all():
    th = Thresholds(provenance=PROV, ignore=frozenset({"port_xmit_wait"}))
    assert judge([diff("port_xmit_wait", 4294967295, 4294967295)], th).unread == []


def test_a_figure_with_an_unknown_part_is_no_figure():
    before = Snapshot("n1", [ib("port_xmit_wait", 10), ib("port_xmit_wait", 4294967295, port="2")])
    after = Snapshot("n1", [ib("port_xmit_wait", 110), ib("port_xmit_wait", 4294967295, port="2")])
    v = judge([difference(before, after)])
    assert v.figures == {"n1": {}} and v.unread


@pytest.mark.parametrize("doc, message", [
    ({"errors": {"default": 10**21}}, r"errors.default: 1000000000000000000000 can never be "
                                      r"exceeded"),
    ({"errors": {"symbol_error": (1 << 64) - 1}}, "can never be exceeded"),
    ({"errors": {"default": 1e21}}, "is not a count"),
    ({"errors": {"default": "1e21"}}, "is not a count"),
    ({"errors": {"default": True}}, "is not a count"),
    ({"errors": {"default": -1}}, "is not a count"),
    ({"errors": [1]}, "errors: a mapping"),
    ({"ignore": "rx_errors"}, "ignore: a list"),
    ({"unknown": "pass"}, "unknown: 'pass' is not one of unread, fail"),
    ({"unkown": "fail"}, "unknown keys"),
])
def test_thresholds_are_bounded(doc, message):
    with pytest.raises(ValueError, match=message):
        Thresholds.from_dict({"$provenance": PROV, **doc})


def test_a_threshold_just_below_the_maximum_is_accepted():
    th = Thresholds.from_dict({"$provenance": PROV, "errors": {"symbol_error": (1 << 64) - 2},
                               "unknown": "fail"})
    assert th.limit("symbol_error") == (1 << 64) - 2 and th.unknown == "fail"
    assert th.times(3).unknown == "fail"


def _doc(counters: str) -> str:
    return ('{"node": "n1", "format": "fabrictest-counters/1", "counters": [' + counters
            + '], "unreadable": []}\n')


CC = '{"source": "netdev", "device": "eth0", "port": "-", "name": "carrier_changes", "value": %d}'


def test_a_counter_twice_in_one_snapshot_is_refused():
    """Two carrier_changes of eth0 in one snapshot: the first or the last could hide a flap."""
    with pytest.raises(ParseError, match="netdev eth0 carrier_changes twice \\(14 and 18\\)"):
        parse_snapshot(_doc(CC % 14 + ", " + CC % 18))


@pytest.mark.parametrize("counter, message", [
    ('{"source": "netdev", "device": "eth0", "port": "-", "name": "x", "value": 1, '
     '"width": 65}', "width 65"),
    ('{"source": "netdev", "device": "eth0", "port": "-", "name": "x", "value": '
     f'{1 << 64}}}', "not a counter value"),
    ('{"source": "", "device": "eth0", "port": "-", "name": "x", "value": 1}', "source"),
    ('{"source": "netdev", "device": "eth 0", "port": "-", "name": "x", "value": 1}', "device"),
    ('["netdev"]', "is not an object"),
])
def test_malformed_counters_are_refused(counter, message):
    with pytest.raises(ParseError, match=message):
        parse_snapshot(_doc(counter))


def test_older_snapshots_without_widths_read_the_table_s():
    snap = parse_snapshot(_doc('{"source": "ib", "device": "mlx5_0", "port": "1", "name": '
                               '"symbol_error", "value": 3}'))
    assert snap.counters[0].bits == 16


def test_every_system_thresholds_file_loads():
    """The repository's reference/counters/<system>.yaml files pass their own rules (a system
    added by docs/architecture.md's checklist brings one)."""
    from pathlib import Path

    from fabrictest.counters.files import load_thresholds

    files = sorted((Path(__file__).resolve().parents[2] / "reference" / "counters").glob("*.yaml"))
    assert files
    for path in files:
        thresholds, problem = load_thresholds(path)
        assert problem is None and thresholds.provenance, path
        systems = Path(__file__).resolve().parents[2] / "config" / "reframe" / "systems"
        assert (systems / f"{path.stem}.py").is_file(), f"{path.name}: no system {path.stem}"


def test_a_wrapping_counter_at_its_maximum_is_unknown_too():
    before = Snapshot("n1", [Counter("netdev", "eth0", "-", "carrier_changes", 2**31 - 5)])
    after = Snapshot("n1", [Counter("netdev", "eth0", "-", "carrier_changes", 2**31 - 1)])
    (u,) = difference(before, after).unknown
    assert u.why == SATURATED and "at its 31-bit maximum 2147483647 (it wraps next)" in u.text
    assert judge([difference(before, after)]).failures[0].startswith(
        "n1 eth0: link went down at least 2 times")
