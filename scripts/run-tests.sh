#!/usr/bin/env bash
# Set up (if needed) and run the project's tests: ruff, the layer contracts (lint-imports, see
# docs/architecture.md), then pytest (real MPI runs, the C programs, the parsers, ReFrame on
# `local`, and, as root, the vcluster multi-node suite). Each step that fails stops the run.
# Extra arguments go to pytest.
# --fast: the developer loop, the tests that start no process (about 30 s on 2 cores): no set-up
# once .venv exists, and a test that starts a process without the `proc` marker fails
# (tests/conftest.py).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FAST=0
if [ "${1:-}" = "--fast" ]; then
    FAST=1
    shift
fi
if [ "$FAST" = 0 ] || [ ! -x "$ROOT/.venv/bin/pytest" ]; then
    "$ROOT/scripts/install.sh" dev
fi
# shellcheck disable=SC1091
source "$ROOT/.venv/bin/activate"
cd "$ROOT"
ruff check src tests bench reframe_tests config
lint-imports --no-cache --no-logo
if [ "$FAST" = 1 ]; then
    FABRICTEST_FAST=1 exec python -m pytest -m "not slow and not mpi and not vcluster and not proc" "$@"
fi
exec python -m pytest "$@"
