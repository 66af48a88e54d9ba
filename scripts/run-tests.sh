#!/usr/bin/env bash
# Set up (if needed) and run the project's tests: ruff, the layer contracts (lint-imports, see
# docs/architecture.md), then pytest (real MPI runs, the C programs, the parsers, ReFrame on
# `local`, and, as root, the vcluster multi-node suite). ruff or lint-imports failing stops the
# run; both pytest phases below always run, and the exit is non-zero when either failed.
# The whole run (no arguments) is two pytest sessions: first, one at a time, the tests that
# judge measured time or rates on this host (`-m "vcluster or timing"`: the vcluster's shaped
# links, the all-to-many growth checks, the timeouts), alone so that no other test's load is
# taken for a slow link; then the rest (outputs, exit statuses, refusals) on two workers
# (pytest-xdist, a test file per worker). With arguments: one session, one at a time, with
# them (e.g. `./scripts/run-tests.sh tests/parsers -k osu`).
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
# the Spack recipes in Spack's own style (spack_repo/ruff.toml: black at 99, flake8, isort)
ruff check spack_repo
ruff format --check spack_repo
lint-imports --no-cache --no-logo
if [ "$FAST" = 1 ]; then
    FABRICTEST_FAST=1 exec python -m pytest -m "not slow and not mpi and not vcluster and not proc" "$@"
fi
if [ "$#" -gt 0 ]; then
    exec python -m pytest "$@"
fi
status=0
python -m pytest -m "vcluster or timing" || status=$?
python -m pytest -m "not vcluster and not timing" -n 2 --dist loadfile || status=$?
exit "$status"
