"""Where the reference directory is: the one lookup every reader uses (performance references
in ReFrame, ``fabric-report``, the counter thresholds in ReFrame, ``fabric-report counters``
and ``fabric-health counters --diff``).

In order: the reader's own option (``--reference-dir``; under ReFrame its ``reference_prefix``
setting, which ``RFM_REFERENCE_PREFIX`` sets), else ``$RFM_REFERENCE_PREFIX``, else the
repository's ``reference/`` (the checkout this package runs from), else ``reference`` under
the current directory (a package installed elsewhere). A site that moves its references sets
``RFM_REFERENCE_PREFIX`` once and every reader follows.
"""

from __future__ import annotations

import os
from pathlib import Path

#: the variable ReFrame reads for its reference_prefix, honoured by every reader
ENV = "RFM_REFERENCE_PREFIX"
#: the repository's reference/ beside src/ (this file is src/fabrictest/references/location.py)
REPOSITORY = Path(__file__).resolve().parents[3] / "reference"


def reference_dir(option: str | os.PathLike | None = None) -> Path:
    """The reference directory: ``option``, else ``$RFM_REFERENCE_PREFIX``, else the
    repository's ``reference/``, else ``./reference``."""
    if option:
        return Path(option)
    if os.environ.get(ENV):
        return Path(os.environ[ENV])
    return REPOSITORY if REPOSITORY.is_dir() else Path("reference")


def reference_file(system: str, file: str = "", option: str | os.PathLike | None = None) -> Path:
    """A system's performance references: ``file`` (default ``<system>.yaml``) in
    :func:`reference_dir`."""
    return reference_dir(option) / (file or f"{system}.yaml")
