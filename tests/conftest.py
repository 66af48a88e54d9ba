"""Shared fixtures: the repository root and a helper to run MPI jobs with a hard timeout."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fabrictest import mpirun as mpilaunch

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} (the users' documents and recorded outputs) is not beside the checkout")
    return SHARED


def _require_mpirun() -> None:
    if shutil.which("mpirun") is None:
        pytest.skip("mpirun not on PATH: run scripts/install.sh and activate .venv")


@pytest.fixture
def mpirun():
    """run_mpi(np, argv, timeout=60, **kw) -> CompletedProcess; never hangs past `timeout`."""
    _require_mpirun()

    def run_mpi(np: int, argv, timeout: float = 120, env=None, extra=(), check=False):
        cmd = mpilaunch.command(np, [str(a) for a in argv], extra=extra)
        try:
            proc = subprocess.run(
                cmd,
                capture_output=True,
                text=True,
                timeout=timeout,
                env=mpilaunch.environment(env),
                start_new_session=True,
            )
        except subprocess.TimeoutExpired as err:
            pytest.fail(f"{' '.join(cmd)} did not finish within {timeout}s:\n{err.stdout}\n{err.stderr}")
        if check and proc.returncode != 0:
            pytest.fail(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
        return proc

    return run_mpi


@pytest.fixture(scope="session")
def python_exe() -> str:
    return sys.executable


def env_path(name: str) -> Path | None:
    """A directory named by an environment variable (OSU_HOME, IMB_HOME, SPACK_ROOT), if set."""
    value = os.environ.get(name)
    return Path(value) if value else None


# ----------------------------------------------------------------------------- the proc marker
#: what a test module or hostile case shows when it starts processes (a program, ReFrame, MPI)
_STARTS = re.compile(r"\b(subprocess|Popen|run_reframe|run_mpi|mpirun|os\.system|os\.fork|"
                     r"multiprocessing|check_output|create_subprocess_exec)\b")
_MARKED = ("slow", "mpi", "vcluster", "proc")
_source_starts: dict[Path, bool] = {}
TESTS = Path(__file__).resolve().parent


def _local_imports(path: Path) -> list[Path]:
    """The tests' own helper modules ``path`` imports (``from _rfm_sessions import ...``)."""
    import ast

    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        names = [node.module] if isinstance(node, ast.ImportFrom) and node.module and \
            not node.level else [a.name for a in node.names] if isinstance(node, ast.Import) \
            else []
        for name in names:
            for base in (path.parent, TESTS, TESTS / "hostile"):
                candidate = base / (name.replace(".", "/") + ".py")
                if candidate.is_file():
                    out.append(candidate)
                    break
    return out


def _starts(path: Path) -> bool:
    """The module, or a helper module of the tests it imports, shows that it starts processes."""
    if path not in _source_starts:
        _source_starts[path] = False  # an import cycle ends here
        _source_starts[path] = bool(_STARTS.search(path.read_text())) or any(
            _starts(p) for p in _local_imports(path))
    return _source_starts[path]


def _in_tests(func) -> bool:
    """``func`` is the tests' own code (not pytest's, the standard library's or fabrictest's)."""
    path = getattr(getattr(func, "__code__", None), "co_filename", "")
    return bool(path) and Path(path).resolve().is_relative_to(TESTS)


def _function_starts(func, seen: set) -> bool:
    """A function, or one it calls from the tests' own code, shows that it starts processes."""
    import inspect

    if func in seen:
        return False
    seen.add(func)
    try:
        if _STARTS.search(inspect.getsource(func)):
            return True
    except (OSError, TypeError):
        return False
    codes, names = [func.__code__], set()
    while codes:
        code = codes.pop()
        names.update(code.co_names)
        codes += [c for c in code.co_consts if inspect.iscode(c)]
    for name in names:
        target = func.__globals__.get(name)
        module = getattr(target, "__module__", "") or ""
        if inspect.isfunction(target) and not module.startswith("fabrictest") and \
                _in_tests(target):
            if _function_starts(target, seen):
                return True
        elif inspect.ismodule(target) and getattr(target, "__file__", None) and \
                Path(target.__file__).resolve().is_relative_to(TESTS) and \
                _starts(Path(target.__file__).resolve()):
            return True
    return False


def _hostile_case_starts(case) -> bool:
    """A hostile case starts processes when it is a command or a ReFrame run, or an in-process
    case whose function does (``fn:MODULE:FUNC``: the function and the tests' own functions
    it calls are read)."""
    if case.kind != "py":
        return True
    spec = case.argv[0]
    if not spec.startswith("fn:"):
        return False
    module, func = spec[3:].split(":")[:2]
    import importlib

    target = getattr(importlib.import_module(module), func)
    return ":rfm" in spec or _function_starts(target, set())


def pytest_collection_modifyitems(config, items):
    """Mark ``proc`` every test that starts processes (its module's source shows it; a hostile
    case by its kind), so that ``-m "not slow and not mpi and not vcluster and not proc"``
    (``scripts/run-tests.sh --fast``) is the pure loop of seconds. Under
    ``FABRICTEST_FAST=1`` an unmarked test that starts a process fails (the marking is
    checked, not trusted)."""
    for item in items:
        if any(item.get_closest_marker(m) for m in _MARKED):
            continue
        case = getattr(getattr(item, "callspec", None), "params", {}).get("case")
        if case is not None and hasattr(case, "kind") and hasattr(case, "argv"):
            starts = _hostile_case_starts(case)
        else:
            starts = _test_starts(item)
        if starts:
            item.add_marker(pytest.mark.proc)


def _test_starts(item) -> bool:
    """The test function, a function of the tests' own it calls, or one of its fixtures shows
    that it starts processes: per test, not per module, so that a module's pure checks (the
    family contract, the references against the families) run in the fast loop beside its
    ReFrame runs. A test that is no plain function is judged by its module's source."""
    func = getattr(item, "function", None)
    if func is None:
        return _starts(Path(str(item.path)))
    seen: set = set()
    if _function_starts(func, seen):
        return True
    # pytest keeps a test's fixture definitions here (no public accessor at collection)
    defs = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", None)
    if defs is None:
        return _starts(Path(str(item.path)))
    for name in item.fixturenames:
        for fixturedef in defs.get(name, ()):
            fixture = getattr(fixturedef, "func", None)
            if fixture is None or fixture is _GUARD or not _in_tests(fixture):
                continue  # pytest's own (tmp_path, monkeypatch) and the guard below
            if _function_starts(fixture, seen):
                return True
    return False


@pytest.fixture(autouse=True)
def _unmarked_tests_start_no_process(request, monkeypatch):
    """FABRICTEST_FAST=1: a test without the proc (or slow, mpi, vcluster) marker that starts
    a process fails, naming it, so that the fast selection stays pure."""
    if os.environ.get("FABRICTEST_FAST") != "1" or any(
            request.node.get_closest_marker(m) for m in _MARKED):
        yield
        return
    real = subprocess.Popen._execute_child

    def refuse(self, args, *rest, **kw):
        raise AssertionError(f"{request.node.nodeid} starts a process ({args!r}) without the "
                             "proc marker (tests/conftest.py: add the word that shows it to "
                             "_STARTS, or mark it)")

    monkeypatch.setattr(subprocess.Popen, "_execute_child", refuse)
    yield
    monkeypatch.setattr(subprocess.Popen, "_execute_child", real)


_GUARD = getattr(_unmarked_tests_start_no_process, "__wrapped__", _unmarked_tests_start_no_process)


# ------------------------------------------------------------------------ time per test folder
_folder_seconds: dict[str, float] = {}


def pytest_runtest_logreport(report):
    folder = report.nodeid.split("::")[0].rsplit("/", 1)[0]
    _folder_seconds[folder] = _folder_seconds.get(folder, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter):
    """Seconds per test folder (set-up, call and tear-down), largest first: where CI's time
    goes as the suite grows."""
    if not _folder_seconds:
        return
    terminalreporter.section("seconds per test folder")
    for folder, seconds in sorted(_folder_seconds.items(), key=lambda kv: -kv[1]):
        terminalreporter.write_line(f"{seconds:8.1f}  {folder}")
