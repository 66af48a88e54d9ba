"""Every benchmark family asks its scheduler for whole nodes (issue 42: on orfeo, slingshot and
cori none of the benchmark job scripts had ``#SBATCH --exclusive``; another job on a node reads as
a slow link). The NIC pre-flight (``NicHealthTest``), which only reads a node's state, may share.

Read from the recorded ``--dry-run`` job scripts of every system (``golden/``), which
``test_job_scripts_golden.py`` holds to what ``reframe --dry-run`` writes today; the scheduler is
told by the script itself (``#SBATCH`` lines), so a new Slurm system is covered once its scripts
are recorded.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

GOLDEN = Path(__file__).resolve().parent / "golden"
MAY_SHARE = ("NicHealthTest",)


def _slurm_job_scripts():
    for path in sorted(GOLDEN.glob("job_scripts-*.json")):
        system = path.stem.removeprefix("job_scripts-")
        for key, text in json.loads(path.read_text()).items():
            if key.endswith(" rfm_job.sh") and "#SBATCH " in text:
                yield system, key, text


SCRIPTS = list(_slurm_job_scripts())


def test_the_recorded_scripts_cover_every_slurm_site():
    systems = {system for system, _, _ in SCRIPTS}
    assert {"orfeo", "slingshot", "cori", "crusher", "cuda-node", "vcluster"} <= systems


@pytest.mark.parametrize(("system", "key", "text"), SCRIPTS,
                         ids=[f"{s}:{k.split(' @')[0]}" for s, k, _ in SCRIPTS])
def test_a_benchmark_job_asks_for_whole_nodes_once(system, key, text):
    lines = [line.strip() for line in text.splitlines()]
    exclusive = lines.count("#SBATCH --exclusive")
    if key.split(" ")[0] in MAY_SHARE:
        assert exclusive <= 1, f"{system} {key}: --exclusive {exclusive} times"
        return
    assert exclusive == 1, (f"{system} {key}: {exclusive} '#SBATCH --exclusive' lines; a "
                            "benchmark must not share its nodes (FabricCheck.exclusive_access)")
