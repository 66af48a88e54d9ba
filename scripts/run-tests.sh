#!/usr/bin/env bash
# Set up (if needed) and run the project's tests: ruff, the layer contracts (lint-imports, see
# docs/architecture.md), then pytest (real MPI runs, the C programs, the parsers, ReFrame on
# `local`, and, as root, the vcluster multi-node suite). Each step that fails stops the run.
# Extra arguments go to pytest.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$ROOT/scripts/install.sh"
# shellcheck disable=SC1091
source "$ROOT/.venv/bin/activate"
cd "$ROOT"
ruff check src tests bench reframe_tests config
lint-imports --no-cache --no-logo
exec python -m pytest "$@"
