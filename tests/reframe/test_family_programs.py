"""Every third-party program a family asks the binaries fixture for is one the one search knows
(`fabrictest.binaries.PROGRAMS`): a partition's `osu`/`imb`/... feature comes from finding any
of those programs (`benchmark_features`), so a program left out of that list is a family that
lists 0 checks, silently, on a host with only that program built (issue 43). Found from the
families' own code: a new family is checked from its first commit, and the message names the
file to edit."""

from __future__ import annotations

import ast
import functools
import importlib.util
import sys
from pathlib import Path

from _rfm import ROOT

from fabrictest.binaries import IMB_NAME, PROGRAMS

FAMILY_DIR = ROOT / "reframe_tests"
#: the fixture's methods (and OsuBase's shorthand) and the suite each one searches
SUITE_OF = {"osu": "osu", "osu_binary": "osu", "imb": "imb", "perftest": "perftest",
            "gpcnet": "gpcnet", "nccl": "nccl"}


@functools.cache
def family_classes() -> tuple[type, ...]:
    """The registered test classes (`@rfm.simple_test`, not the bases they share) of every
    family file, loaded by path under names of our own (`osu`, `txrx` must not shadow
    anything)."""
    out = []
    for path in sorted(FAMILY_DIR.glob("*.py")):
        if "@rfm.simple_test" not in path.read_text():
            continue
        spec = importlib.util.spec_from_file_location(f"fabrictest_programs_{path.stem}", path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod  # ReFrame looks its test classes' files up there
        spec.loader.exec_module(mod)
        registered = {node.name for node in ast.walk(ast.parse(path.read_text()))
                      if isinstance(node, ast.ClassDef) and any(
                          ast.unparse(d).endswith("simple_test") for d in node.decorator_list)}
        out += [getattr(mod, name) for name in sorted(registered)]
    return tuple(out)


@functools.cache
def class_bodies() -> dict[str, tuple[Path, ast.ClassDef]]:
    """Every class of reframe_tests/ by name, with its file."""
    out = {}
    for path in sorted(FAMILY_DIR.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.ClassDef):
                out[node.name] = (path, node)
    return out


def _values(cls: type, arg: ast.expr | None, suite: str) -> list[str]:
    """The program names an argument stands for in `cls`: a literal, a parameter's values, a
    class attribute (GPCNeT's `program`); none: the suite's one program (IMB-MPI1)."""
    if arg is None:
        return [IMB_NAME] if suite == "imb" else []
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return [arg.value]
    if isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name) and \
            arg.value.id == "self":
        if arg.attr in cls.param_space.params:
            return [str(v) for v in cls.param_space[arg.attr]]
        value = getattr(cls, arg.attr, None)
        if isinstance(value, str):
            return [value]
    raise AssertionError(f"{cls.__name__}: cannot tell which program {ast.unparse(arg)} names; "
                         "pass a literal, a parameter or a class attribute")


def programs_asked(cls: type, bodies) -> dict[str, set[tuple[str, str]]]:
    """{suite: {(program, file)}} the class and its bases of reframe_tests/ ask for."""
    out: dict[str, set[tuple[str, str]]] = {}
    for klass in cls.__mro__:
        if klass.__name__ not in bodies or klass.__name__ == "FabricBinaries":
            continue
        path, body = bodies[klass.__name__]
        for call in ast.walk(body):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
                continue
            func, owner = call.func, call.func.value
            via_fixture = (isinstance(owner, ast.Attribute) and owner.attr == "binaries")
            if func.attr in SUITE_OF and (via_fixture or func.attr == "osu_binary"):
                if func.attr == "osu_binary" and not (isinstance(owner, ast.Name)
                                                      and owner.id == "self"):
                    continue
                suite = SUITE_OF[func.attr]
                arg = call.args[0] if call.args else None
                if func.attr == "osu" and klass.__name__ == "OsuBase":
                    continue  # osu_binary(name) itself: its callers are read
                for name in _values(cls, arg, suite):
                    out.setdefault(suite, set()).add((name, path.name))
    return out


def unknown_programs(classes, bodies) -> list[str]:
    problems = []
    for cls in classes:
        for suite, asked in programs_asked(cls, bodies).items():
            for name, file in sorted(asked):
                if name not in PROGRAMS[suite]:
                    problems.append(
                        f"{cls.__name__} ({file}) runs {suite} program {name!r}, which "
                        f"fabrictest.binaries does not search for: add it to PROGRAMS['{suite}'] "
                        "(src/fabrictest/binaries.py; OSU: OSU_BENCHMARKS, and OSU_SUBDIRS for its "
                        "directory), or correct the name")
    return problems


def test_every_program_a_family_runs_is_searched_for():
    classes, bodies = family_classes(), class_bodies()
    asked = {s for cls in classes for s in programs_asked(cls, bodies)}
    assert {"osu", "imb", "perftest", "gpcnet", "nccl"} <= asked, asked  # the reading finds them
    assert unknown_programs(classes, bodies) == []


def test_every_program_searched_for_is_run_by_a_family():
    """The other way: the list holds nothing no family runs (one fact, not two lists)."""
    classes, bodies = family_classes(), class_bodies()
    run: dict[str, set[str]] = {}
    for cls in classes:
        for suite, asked in programs_asked(cls, bodies).items():
            run.setdefault(suite, set()).update(name for name, _file in asked)
    for suite, names in PROGRAMS.items():
        assert set(names) == run.get(suite, set()), (
            f"PROGRAMS['{suite}'] in src/fabrictest/binaries.py: {sorted(set(names) ^ run[suite])}"
            " differ from what the families run")


def test_the_check_names_a_program_left_out(tmp_path):
    """A family running a program the search does not know is named, with the file to edit."""
    family = tmp_path / "osu_scratch_lat.py"
    family.write_text(
        "import reframe as rfm\nfrom fabric_osu import OsuBase\nfrom reframe.core.builtins "
        "import parameter, run_after\n\n\n@rfm.simple_test\nclass OsuScratchLatTest(OsuBase):\n"
        "    benchmark = parameter(['osu_scratch_lat'])\n\n    @run_after('setup')\n"
        "    def set_command(self):\n        self.executable = self.osu_binary(self.benchmark)\n")
    spec = importlib.util.spec_from_file_location("fabrictest_programs_scratch", family)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    tree = ast.parse(family.read_text())
    bodies = {**class_bodies(), "OsuScratchLatTest": (family, tree.body[-1])}
    (problem,) = unknown_programs([mod.OsuScratchLatTest], bodies)
    assert "OsuScratchLatTest (osu_scratch_lat.py) runs osu program 'osu_scratch_lat'" in problem
    assert "src/fabrictest/binaries.py" in problem
