#!/usr/bin/env bash
# Set up (if needed) and run the whole suite on this machine: ReFrame system `local`.
# Extra arguments go to reframe, e.g. `scripts/run-suite.sh -n TxRx` or `--mode quick`.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$ROOT/scripts/install.sh"
# shellcheck disable=SC1091
source "$ROOT/.venv/bin/activate"
cd "$ROOT"
# through reframe-selected.sh: a selection that runs nothing is a failure, not ReFrame's
# "PASSED Ran 0/0"
exec "$ROOT/scripts/reframe-selected.sh" -c reframe_tests -r --system local "$@"
