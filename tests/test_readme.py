"""The README is a front page (issue 30): short, its links and the docs' links resolve, and every
command in its bash blocks is real (a script that exists and runs, a console script declared in
pyproject.toml whose ``--help`` exits 0, ReFrame options that ReFrame has)."""

from __future__ import annotations

import importlib.util
import re
import shlex
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
MAX_LINES = 160

FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.S | re.M)
CODE_SPAN = re.compile(r"`+[^`\n]*`+")
LINK = re.compile(r"\]\(([^)\s]+)\)")
BASH_BLOCK = re.compile(r"^```bash\n(.*?)^```", re.S | re.M)


def _prose(text: str) -> str:
    """The text without fenced blocks and code spans (links inside code are not links)."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def _anchors(path: Path) -> set[str]:
    """GitHub's heading anchors of a Markdown file (headings in fenced blocks are not headings)."""
    seen: dict[str, int] = {}
    anchors = set()
    for line in FENCE.sub("", path.read_text()).splitlines():
        m = re.match(r"#{1,6} +(.*?)\s*#*\s*$", line)
        if not m:
            continue
        slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        anchors.add(slug if n == 0 else f"{slug}-{n}")
    return anchors


def test_readme_is_a_front_page():
    lines = README.read_text().splitlines()
    assert len(lines) <= MAX_LINES, f"README.md has {len(lines)} lines, at most {MAX_LINES}"


def test_readme_links_every_doc():
    linked = {(README.parent / t.split("#")[0]).resolve()
              for t in LINK.findall(_prose(README.read_text()))}
    missing = [d.name for d in DOCS if d.resolve() not in linked]
    assert not missing, f"docs/ files the README does not link: {missing}"


@pytest.mark.parametrize("doc", [README, *DOCS], ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(doc: Path):
    broken = []
    for target in LINK.findall(_prose(doc.read_text())):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        dest = (doc.parent / path).resolve() if path else doc
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {dest.relative_to(ROOT)}")
    assert not broken, f"{doc.relative_to(ROOT)}: " + "; ".join(broken)


@pytest.mark.parametrize("doc", [README, *DOCS], ids=lambda p: str(p.relative_to(ROOT)))
def test_code_fences_close(doc: Path):
    """A moved block that lost its opening or closing fence turns the rest of the page inside out."""
    fences = [line for line in doc.read_text().splitlines() if line.startswith("```")]
    assert len(fences) % 2 == 0, f"{doc.relative_to(ROOT)}: {len(fences)} fence lines"


def _readme_commands() -> list[list[str]]:
    commands = []
    for block in BASH_BLOCK.findall(README.read_text()):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if words:
                commands.append(words)
    return commands


def _console_scripts() -> dict[str, str]:
    """pyproject.toml's [project.scripts] (tomllib from Python 3.11; the README asks for 3.10+)."""
    text = (ROOT / "pyproject.toml").read_text()
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: the table's `name = "module:func"` lines
        table = text.split("\n[project.scripts]\n", 1)[1].split("\n[", 1)[0]
        return dict(re.findall(r'^([\w-]+)\s*=\s*"([^"]+)"', table, re.M))
    return tomllib.loads(text)["project"]["scripts"]


def _help_exit(entry_point: str) -> tuple[int, str]:
    """``--help`` of a console script run by this interpreter from its entry point."""
    module, _, func = entry_point.partition(":")
    code = (f"import sys; from {module} import {func} as main; sys.argv = ['x', '--help']; "
            "sys.exit(main())")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                       cwd=ROOT)
    return p.returncode, p.stderr[-2000:]


def _reframe_options() -> set[str]:
    exe = shutil.which("reframe") or str(Path(sys.executable).parent / "reframe")
    p = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr[-2000:]
    return set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", p.stdout))


def test_readme_commands_are_real():
    scripts = _console_scripts()
    commands = _readme_commands()
    assert commands, "no bash block in README.md"
    problems, helps, reframe_lines = [], set(), []
    for words in commands:
        cmd, args = words[0], words[1:]
        if cmd == "source":
            # .venv is made by scripts/install.sh (absent in a fresh clone)
            assert args == [".venv/bin/activate"], words
            assert "$ROOT/.venv" in (ROOT / "scripts" / "install.sh").read_text()
        elif "/" in cmd:
            path = ROOT / cmd
            if not (path.is_file() and path.stat().st_mode & 0o111):
                problems.append(f"{cmd}: not an executable file")
        elif cmd in scripts:
            helps.add(cmd)
        elif cmd == "reframe":
            reframe_lines.append(args)
        elif cmd == "python":
            assert args[0] == "-m", words
            if importlib.util.find_spec(args[1]) is None:
                problems.append(f"python -m {args[1]}: no such module")
            for arg in args[2:]:
                if arg.endswith(".py") and not (ROOT / arg).is_file():
                    problems.append(f"{' '.join(words)}: no file {arg}")
        elif not (shutil.which(cmd) or (Path(sys.executable).parent / cmd).exists()):
            problems.append(f"{cmd}: not a command of the environment")
    # the commands the README names in prose (`txrx`, `fabric-sweep`, ...): declared, and run
    named = {s.strip("`") for s in CODE_SPAN.findall(FENCE.sub("", README.read_text()))}
    for name in named & {"txrx", "vcluster"} | {n for n in named if re.fullmatch(r"fabric-[a-z]+", n)}:
        if name in scripts:
            helps.add(name)
        else:
            problems.append(f"`{name}`: not in pyproject.toml's [project.scripts]")
    assert helps, "the README names no console script"
    names = sorted(helps)
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = dict(zip(names, pool.map(lambda c: _help_exit(scripts[c]), names), strict=True))
    problems += [f"{c} --help: exit {rc}: {err}" for c, (rc, err) in results.items() if rc != 0]
    if reframe_lines:
        known = _reframe_options()
        for args in reframe_lines:
            for arg in args:
                if not arg.startswith("-"):
                    continue
                option = arg.split("=")[0]
                if re.fullmatch(r"-v+", option):  # -vv: -v repeated
                    option = "-v"
                if option not in known:
                    problems.append(f"reframe {' '.join(args)}: {option} is not a ReFrame option")
    assert not problems, "\n".join(problems)
