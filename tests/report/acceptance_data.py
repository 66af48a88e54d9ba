"""The recorded vcluster acceptance runs (tests/report/data/acceptance, made by its
``record.sh``): the run reports byte for byte but for the test cases' ``outputdir`` and
``stagedir``, made relative to the data directory, and of those directories only the files
the acceptance page reads (counter snapshots, the health test's output, the sweep's JSON,
stage 1's record).

    python tests/report/acceptance_data.py keep WORKDIR tests/report/data/acceptance
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "acceptance"
RUNS = ("healthy", "faulty")
PARTS = ("run0", "run1", "run2")
#: the files of a test's directory the page reads
KEEP = ("counters", "sweep.json")
READ_OUTPUT = ("NicHealthTest", "Osu", "Imb")


def _keep_dir(src: Path, dst: Path, tc: dict) -> None:
    for name in KEEP:
        if (src / name).is_dir():
            shutil.copytree(src / name, dst / name, dirs_exist_ok=True)
        elif (src / name).is_file():
            dst.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src / name, dst / name)
    out = tc.get("job_stdout") or "rfm_job.out"
    if str(tc.get("name") or "").startswith(READ_OUTPUT) and (src / out).is_file():
        dst.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src / out, dst / out)
    record = src.parents[1] / "stage1.json"
    if record.is_file():
        (dst.parents[1]).mkdir(parents=True, exist_ok=True)
        shutil.copy2(record, dst.parents[1] / "stage1.json")


def keep(work: Path, dest: Path) -> None:
    for run in RUNS:
        for part in PARTS:
            report = work / run / f"{part}.json"
            if not report.is_file():
                print(f"no {report}", file=sys.stderr)
                continue
            data = json.loads(report.read_text())
            for r in data["runs"]:
                for tc in r["testcases"]:
                    for key in ("outputdir", "stagedir"):
                        d = tc.get(key)
                        if not d or not Path(d).is_relative_to(work / run):
                            continue
                        rel = Path(run) / Path(d).relative_to(work / run)
                        if Path(d).is_dir():
                            _keep_dir(Path(d), dest / rel, tc)
                        tc[key] = str(rel)
            (dest / run).mkdir(parents=True, exist_ok=True)
            (dest / run / f"{part}.json").write_text(json.dumps(data, indent=1) + "\n")
    if (work / "topology.txt").is_file():
        shutil.copy2(work / "topology.txt", dest / "topology.txt")


def reports(run: str) -> list[str]:
    """The run's reports, relative to :data:`DATA` (run the command there)."""
    return [f"{run}/{part}.json" for part in PARTS if (DATA / run / f"{part}.json").is_file()]


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] != "keep":
        sys.exit("usage: acceptance_data.py keep WORKDIR DEST")
    keep(Path(sys.argv[2]).resolve(), Path(sys.argv[3]).resolve())
