"""A whole run's counters per node (fabrictest.counters.whole_run): the first and last
snapshot of each node, and what changed while no test ran on it."""

from __future__ import annotations

import pytest

from fabrictest.counters.snapshot import Counter, Snapshot, parse_snapshot
from fabrictest.counters.thresholds import Thresholds
from fabrictest.counters.whole_run import CaseSnapshots, whole_run


def snap(node: str, taken: float | None, carrier: int, rx_errors: int = 0,
         retrans: int = 0) -> Snapshot:
    return Snapshot(node, [Counter("netdev", "eth0", "-", "carrier_changes", carrier),
                           Counter("netdev", "eth0", "-", "rx_errors", rx_errors),
                           Counter("tcp", "tcp", "-", "RetransSegs", retrans)], [], taken)


def case(name: str, t0: float, values: dict[str, tuple]) -> CaseSnapshots:
    """values: node -> (before, after) as (carrier, rx_errors, retrans)."""
    return CaseSnapshots(name, {n: snap(n, t0, *b) for n, (b, _) in values.items()},
                         {n: snap(n, t0 + 5, *a) for n, (_, a) in values.items()}, t0 + 6)


def test_healthy_run_has_no_failure_and_sums_the_congestion():
    runs = whole_run([case("A", 100, {"n1": ((4, 0, 0), (4, 0, 7)), "n2": ((4, 0, 0), (4, 0, 1))}),
                      case("B", 200, {"n1": ((4, 0, 7), (4, 0, 9))})])
    by = {r.node: r for r in runs}
    assert by["n1"].tests == ["A", "B"] and by["n2"].tests == ["A"]
    assert not any(r.failures or r.unread for r in runs)
    assert [(c.counter.name, c.increase) for c in by["n1"].changes] == [("RetransSegs", 9)]


def test_a_flap_between_tests_fails_naming_both_tests():
    """Each test's own span is clean: only the gap shows the link that went down."""
    runs = whole_run([case("A", 100, {"n3": ((4, 0, 0), (4, 0, 0))}),
                      case("B", 200, {"n3": ((6, 0, 0), (6, 0, 0))})])
    (run,) = runs
    assert any("n3 eth0: link went down 1 time during no test (between A and B)" in f
               for f in run.failures), run.failures
    # the same downs are in the whole run's difference: said once, as between the tests
    assert len(run.failures) == 1, run.failures


def nics(node: str, taken: float, eth0: int, hsn0: int) -> Snapshot:
    return Snapshot(node, [Counter("netdev", "eth0", "-", "carrier_changes", eth0),
                           Counter("netdev", "hsn0", "-", "carrier_changes", hsn0)], [], taken)


def two_nics(*spans: tuple[tuple[int, int], tuple[int, int]]) -> list[CaseSnapshots]:
    """One test per span: ((eth0, hsn0) before, (eth0, hsn0) after) on node01."""
    return [CaseSnapshots(f"T{i}", {"node01": nics("node01", 100 * i, *b)},
                          {"node01": nics("node01", 100 * i + 5, *a)}, 100 * i + 6)
            for i, (b, a) in enumerate(spans)]


def test_a_macvlan_that_went_down_with_its_link_is_one_flap():
    """The vcluster's recorded double flap of node01 (hsn0 a macvlan on eth0), between two
    tests: it was 4 failures (each NIC, between the tests and again over the run)."""
    (run,) = whole_run(two_nics(((2, 0), (2, 0)), ((6, 4), (6, 4))))
    assert len(run.failures) == 1, run.failures
    (f,) = run.failures
    assert f.startswith("node01 eth0, hsn0: link went down 2 times during no test "
                        "(between T0 and T1)"), f
    assert "hsn0 carrier_changes 0 -> 4" in f


def test_links_that_went_down_a_different_number_of_times_are_two():
    (run,) = whole_run(two_nics(((2, 0), (2, 0)), ((6, 2), (6, 2))))
    between = [f for f in run.failures if "during no test" in f]
    assert len(between) == 2 and len(run.failures) == 2, run.failures


def test_a_flap_during_a_test_is_still_said_over_the_run():
    """No gap explains it: the whole run's difference says it (the test's own check too)."""
    (run,) = whole_run(two_nics(((2, 0), (6, 4)), ((6, 4), (6, 4))))
    assert run.failures == [f for f in run.failures if "during the run" in f]
    assert len(run.failures) == 1 and run.failures[0].startswith("node01 eth0, hsn0: link "
                                                                  "went down 2 times during "
                                                                  "the run"), run.failures


def test_tests_are_ordered_by_their_snapshots_not_their_listing():
    late = case("late", 300, {"n1": ((6, 0, 0), (6, 0, 0))})
    early = case("early", 100, {"n1": ((4, 0, 0), (4, 0, 0))})
    (run,) = whole_run([late, early])
    assert run.tests == ["early", "late"]
    assert any("between early and late" in f for f in run.failures)


@pytest.mark.parametrize("errors, fails", [(2, False), (4, True)])
def test_error_thresholds_are_allowed_once_per_span(errors, fails):
    """Two tests and one gap: three spans of a threshold of 1."""
    th = Thresholds(errors_default=1, provenance={"document": "test"})
    (run,) = whole_run([case("A", 100, {"n1": ((4, 0, 0), (4, 1, 0))}),
                        case("B", 200, {"n1": ((4, 1, 0), (4, errors, 0))})], th)
    assert bool([f for f in run.verdict.failures if "rx_errors" in f]) is fails


def test_a_node_read_before_but_not_after_is_unread():
    t = CaseSnapshots("A", {"n1": snap("n1", 1, 4)}, {}, 2)
    (run,) = whole_run([t])
    assert run.unread == ["n1: A has no snapshot after its launch"]
    assert run.tests == []


def test_snapshots_without_a_time_say_how_they_were_ordered():
    a = CaseSnapshots("A", {"n1": snap("n1", None, 4)}, {"n1": snap("n1", None, 4)}, 10)
    b = CaseSnapshots("B", {"n1": snap("n1", None, 4)}, {"n1": snap("n1", None, 4)}, 20)
    (run,) = whole_run([b, a])
    assert run.tests == ["A", "B"]
    assert "completion time" in run.unread[0]


@pytest.mark.parametrize("taken", ["-1", "1e999", "\"noon\"", "true"])
def test_a_snapshot_time_that_is_no_time_is_refused(taken):
    from fabrictest.parsers import ParseError

    text = ('{"node": "n1", "format": "fabrictest-counters/1", "counters": [], '
            f'"unreadable": [], "taken": {taken}}}')
    with pytest.raises(ParseError):
        parse_snapshot(text)


def test_snapshot_time_round_trips():
    s = snap("n1", 1764161234.5, 4)
    assert parse_snapshot(s.to_json()).taken == 1764161234.5
    assert "taken" not in snap("n1", None, 4).as_dict()
