"""scripts/install.sh installs by level (docs/install.md): the suite's command takes neither
Slurm nor a browser nor the test tools; `vcluster` adds the cluster's daemons, `dev` the
screenshots' browser and the [dev] extra. `--list` says what a level holds, installing
nothing."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.proc

ROOT = Path(__file__).resolve().parents[1]


def _listed(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(ROOT / "scripts" / "install.sh"), "--list", *args],
                          capture_output=True, text=True, timeout=30)


def _level(level: str) -> tuple[set[str], str]:
    proc = _listed(level)
    assert proc.returncode == 0, proc.stderr
    apt, pip = proc.stdout.splitlines()
    return set(apt.removeprefix("apt: ").split()), pip.removeprefix("pip: ")


def test_each_level_holds_what_its_command_needs_and_no_more():
    suite, vcluster, dev = _level("suite"), _level("vcluster"), _level("dev")
    assert {"openmpi-bin", "python3-mpi4py", "python3-pyverbs", "perftest"} <= suite[0]
    assert not suite[0] & {"slurmctld", "munge", "mariadb-server", "lldpd", "chromium"}
    assert suite[1] == vcluster[1] == "fabrictest[suite]"
    assert vcluster[0] - suite[0] == {"slurmctld", "slurmd", "slurm-client", "slurmdbd", "munge",
                                      "mariadb-server", "lldpd", "nftables"}
    assert dev[0] - vcluster[0] == {"chromium"} and dev[1] == "fabrictest[dev,cuda-check]"


def test_the_default_level_is_suite_and_an_unknown_one_is_refused():
    default = _listed()
    assert default.returncode == 0 and default.stdout.endswith("pip: fabrictest[suite]\n")
    bad = _listed("everything")
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.strip() == ("install.sh: unknown level 'everything' "
                                  "(suite, vcluster or dev)")


def test_the_two_commands_ask_for_their_level():
    assert '"$ROOT/scripts/install.sh"\n' in (ROOT / "scripts" / "run-suite.sh").read_text()
    assert '"$ROOT/scripts/install.sh" dev\n' in (ROOT / "scripts" / "run-tests.sh").read_text()
