"""A system's counter thresholds file, ``<reference dir>/counters/<system>.yaml``: one loader
for the per-test snapshots (reframe_tests/fabric_counters.py) and the whole-run view
(``fabric-report counters``, ``fabric-report html``)."""

from __future__ import annotations

from pathlib import Path

from .judge import Thresholds

#: the thresholds' folder inside a reference directory
SUBDIR = "counters"


def thresholds_path(reference_dir: Path, system: str) -> Path:
    return Path(reference_dir) / SUBDIR / f"{system}.yaml"


def load_thresholds(path: Path) -> tuple[Thresholds, str | None]:
    """The thresholds in ``path`` and the problem with the file (None when fine). No file: the
    defaults (every error counts), no problem."""
    if not path.is_file():
        return Thresholds(), None
    import yaml

    try:
        return Thresholds.from_dict(yaml.safe_load(path.read_text())), None
    except (OSError, yaml.YAMLError, ValueError) as err:
        return Thresholds(), f"{path}: {err}"
