"""The families' ``-S`` options (issue 27, "options that do not do what they say"): every
variable a family declares has a rule (reframe_tests/fabric_variables.py) and a kind whose
``-S`` form ReFrame converts without a traceback (reframe_tests/fabric_types.py); booleans
are read as booleans; the documented forms are accepted; a value that is not of its kind, an
injection no run can make, or a node count no partition can hold is refused with one line
before any work, and the session exits non-zero saying why (it used to end `PASSED Ran 0/0`)."""

from __future__ import annotations

import ast
import sys

import pytest
from _rfm import ROOT, run_reframe

sys.path.insert(0, str(ROOT / "reframe_tests"))
import fabric_variables  # noqa: E402
from fabric_types import Count, Flag, Real, Unreadable  # noqa: E402

#: the kinds an -S string converts to without a ReFrame traceback (any string is a str; a
#: typ.List[str] splits at commas)
SAFE_KINDS = {"Count", "Real", "Flag", "str", "typ.List[str]"}


def declared_variables(source: str) -> list[tuple[str, str]]:
    """``(name, first type as written)`` of every ``name = variable(TYPE, ...)``."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                getattr(node.value.func, "id", None) == "variable":
            for target in node.targets:
                if isinstance(target, ast.Name) and node.value.args:
                    out.append((target.id, ast.unparse(node.value.args[0])))
    return out


def unruled(source: str) -> list[str]:
    """The variables of ``source`` that have no rule, or a kind -S cannot always convert."""
    bad = []
    for name, kind in declared_variables(source):
        rule = fabric_variables.RULES.get(name)
        if rule is None:
            bad.append(f"{name}: no rule in fabric_variables.RULES")
        elif kind not in SAFE_KINDS and rule is not fabric_variables.family_data:
            bad.append(f"{name}: kind {kind} (an -S value may end the session with a traceback)")
    return bad


@pytest.mark.parametrize("path", sorted((ROOT / "reframe_tests").glob("*.py")),
                         ids=lambda p: p.name)
def test_every_variable_has_a_rule_and_a_safe_kind(path):
    assert unruled(path.read_text()) == []


def test_the_check_sees_a_variable_without_a_rule():
    source = ("x = variable(Count, value=1)\nnmsg = variable(int, value=1)\n"
              "scenario = variable(dict, value={})\n")
    assert unruled(source) == ["x: no rule in fabric_variables.RULES",
                               "nmsg: kind int (an -S value may end the session with a traceback)"]


def test_every_rule_names_a_declared_variable():
    names = {name for path in (ROOT / "reframe_tests").glob("*.py")
             for name, _ in declared_variables(path.read_text())}
    assert set(fabric_variables.RULES) - names == set()


@pytest.mark.parametrize(("kind", "text", "value"), [
    (Count, "8", 8), (Count, " +8 ", 8), (Count, "1_000_000", 1_000_000), (Count, "-3", -3),
    (Real, "2", 2.0), (Real, "2.0", 2.0), (Real, "1e-6", 1e-6),
    (Flag, "false", False), (Flag, "No", False), (Flag, "off", False), (Flag, "0", False),
    (Flag, "TRUE", True), (Flag, "yes", True), (Flag, "on", True), (Flag, "1", True),
])
def test_documented_forms_are_read(kind, text, value):
    got = kind(text)
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize(("kind", "text"), [(Count, "abc"), (Count, "1.5"), (Count, "1e3"),
                                            (Real, "fast"), (Flag, "maybe"), (Flag, "")])
def test_other_forms_reach_their_rule_as_text(kind, text):
    got = kind(text)
    assert isinstance(got, Unreadable) and got == text
    assert isinstance(got, kind)  # ReFrame's check of the variable's type lets it through


@pytest.mark.parametrize(("name", "value", "said"), [
    ("nmsg", Unreadable("abc"), "-S nmsg='abc': nmsg must be a whole number"),
    ("counter_snapshots", Unreadable("maybe"), "counter_snapshots must be true or false"),
    ("warmup_s", Unreadable("two"), "warmup_s must be a finite number in [0, 600]"),
    ("loss_tolerance", 0.999999, "loss_tolerance must be a finite number in [0, 0.01]"),
    ("loss_tolerance", 0.02, "loss_tolerance must be a finite number in [0, 0.01]"),
    ("size_profile", "fast", "size_profile must be one of full, quick"),
    ("program_timeout", 0.0, "program_timeout must be a finite number in (0, 86400]"),
    ("max_run_growth", 0.9, "max_run_growth must be a finite number in [1, 1000]"),
    ("inject_min_iterations", -1, "inject_min_iterations must be a whole number from 0"),
    # an injection below the MPI clock's tick injects nothing a run can show (issue 40)
    ("inject", "17:0.000001", "-S inject='17:0.000001': inject must be K:USEC (from iteration "
                              "K >= 1 on, USEC microseconds from 0.001, the MPI clock's 1 ns "
                              "tick: less is no delay a run can show) or empty"),
    ("inject", "3:0.0009", "USEC microseconds from 0.001"),
    ("bw_size", -5, "bw_size must be a whole number from 1 to 268435456, or 0 (the size "
                    "profile's)"),
])
def test_rules_refuse_with_one_line(name, value, said):
    stand_in = type("StandIn", (), {name: value})()
    assert said in fabric_variables.problems(stand_in)[name]


def test_an_injection_of_one_clock_tick_is_accepted():
    for ok in ("", "17:0.001", "1:5", "3:60000000"):
        assert fabric_variables.problems(type("T", (), {"inject": ok})()) == {}, ok


def test_loss_tolerance_up_to_one_percent_is_accepted():
    for ok in (0.0, 1e-6, 0.01):
        assert fabric_variables.problems(type("T", (), {"loss_tolerance": ok})()) == {}


# -- ReFrame itself -----------------------------------------------------------------------------

ALLTOMANY = "AllToManyTest %iterations="


@pytest.fixture(scope="module")
def accepted(tmp_path_factory):
    """Documented forms of typed options, on local (dry run: nothing is built or run)."""
    args = ["--system", "local", "--dry-run", "-n", "AllToMany", "-n", "BisectionTest",
            "-n", "CongestionTest%aggressors=incast",
            "-S", "CongestionTest.warmup_s=2.0", "-S", "CongestionTest.num_nodes=4",
            "-S", "size_profile=quick", "-S", "counter_snapshots=no",
            "-S", "AllToManyTest.inject=1:5", "-S", "AllToManyTest.inject_min_iterations=16",
            "-S", "AllToManyTest.program_timeout=30", "-S", "BisectionTest.program_timeout=45.5",
            "-S", "AllToManyScalingTest.max_run_growth=2"]
    return run_reframe(args, tmp_path_factory.mktemp("accepted"), timeout=300)


@pytest.mark.slow
def test_documented_forms_are_accepted_by_reframe(accepted):
    assert accepted.returncode == 0, accepted.output[-3000:]
    assert "Traceback" not in accepted.output
    congestion = accepted.job_script("CongestionTest %aggressors=incast")
    assert " -W 2.0" in congestion and " -n 4 " in congestion, congestion
    for n in (2, 8):
        assert " -i " not in accepted.job_script(f"{ALLTOMANY}{n}")
    for n in (16, 32):
        assert " -i 1:5 -T 30" in accepted.job_script(f"{ALLTOMANY}{n}")
    assert "bisection_bw -T 45.5 2 50" in accepted.job_script("BisectionTest")


@pytest.fixture(scope="module")
def refused(tmp_path_factory):
    """One value each that makes no sense (a test's other values would hide its family's own
    rules, which run once the single values pass)."""
    args = ["--system", "local", "--dry-run", "-n", "AllToManyTest", "-n", "BisectionTest",
            "-n", "CongestionTest", "-n", "TxRxTest%scenario=same-node%span=one%method=mpi",
            "-S", "AllToManyTest.inject=99:5", "-S", "CongestionTest.num_nodes=2",
            "-S", "BisectionTest.num_reps=abc",
            "-S", "TxRxTest.counter_snapshots=maybe"]
    return run_reframe(args, tmp_path_factory.mktemp("refused"), timeout=300)


def _reasons(run, name: str) -> list[str]:
    cases = [c for c in run.cases() if c["display_name"].replace(" ", "").startswith(
        name.replace(" ", ""))]
    assert cases, (name, run.output[-3000:])
    assert all(c["result"] == "fail" and c.get("fail_phase") == "setup" for c in cases), cases
    return [c.get("fail_reason") or "" for c in cases]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "said"), [
    ("AllToManyTest", "-S inject='99:5': from iteration 99 on, but the runs have at most 32 "
                      "iterations ([2, 8, 16, 32]): nothing would be injected"),
    ("CongestionTest", "-S num_nodes=2: incast aggressors need at least 3 nodes|-S num_nodes=2: "
                       "all-to-all aggressors need at least 4 nodes"),
    ("BisectionTest", "-S num_reps='abc': num_reps must be a whole number"),
    ("TxRxTest", "-S counter_snapshots='maybe': counter_snapshots must be true or false"),
])
def test_senseless_values_are_refused_before_any_work(refused, name, said):
    assert refused.returncode != 0, refused.output[-3000:]
    assert "Traceback" not in refused.output
    for reason in _reasons(refused, name):
        assert any(part in reason for part in said.split("|")), reason


@pytest.mark.slow
def test_counter_snapshots_false_turns_them_off(tmp_path):
    """`-S counter_snapshots=false` used to leave them on (bool('false') is True)."""
    case = "TxRxTest%scenario=paired%span=one%method=rdma%buffer=host"
    run = run_reframe(["--system", "seren", "--dry-run", "-n", case, "-n", "BisectionTest",
                       "-S", "TxRxTest.counter_snapshots=false"], tmp_path, timeout=300)
    assert run.returncode == 0, run.output[-3000:]
    assert "counters --out-dir" not in run.job_script(case.replace("%", " %"))
    assert "counters --out-dir" in run.job_script("BisectionTest")


@pytest.mark.slow
def test_a_message_size_txrx_refuses_is_refused_at_setup(tmp_path):
    """`-S msg_size=12` (not a multiple of 8 B) was submitted and came back as a launch
    failure (issue 28): the tool's own rule (txrx.options.option_problem), which fabric-sweep
    also calls, refuses it when the test is made, before any job."""
    case = "TxRxTest%scenario=same-node%span=one%method=mpi%buffer=host"
    run = run_reframe(["--system", "local", "-r", "-n", case, "-S", "msg_size=12"], tmp_path,
                      timeout=300)
    assert run.returncode != 0, run.output[-3000:]
    assert "Traceback" not in run.output
    for reason in _reasons(run, "TxRxTest"):
        assert "txrx would refuse these options: --msg-size 12 does not fit the buffer " \
               "limits: a multiple of 8 bytes" in reason, reason
    assert not list(tmp_path.rglob("rfm_job.out")), "a job ran"


def test_the_tools_rule_is_the_one_the_families_and_the_sweep_call():
    from fabrictest.sweep.options import UsageError, check_txrx
    from fabrictest.txrx.options import option_problem

    assert option_problem("mpi", msg_size=65536) is None
    why = option_problem("mpi", msg_size=12)
    assert why and "multiple of 8" in why
    with pytest.raises(UsageError, match="txrx would refuse it: --msg-size 12"):
        check_txrx("mpi", 12, 100, 10, 100, 10.0)
    assert "32-bit immediate" in option_problem("rdma", nmsg=1 << 33)
    with pytest.raises(TypeError):
        option_problem("mpi", msg_sise=8)
