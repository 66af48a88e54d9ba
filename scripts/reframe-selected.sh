#!/usr/bin/env bash
# `reframe ARGS...`, refusing a run that selected nothing. ReFrame ends such a run
# "PASSED Ran 0/0 test case(s)", exit 0 (ReFrame issue #3599: a misspelt -n, a family this
# system does not provide); it has no hook where a run's selection could be judged (a test's
# hooks never run when no test is selected), so this wrapper judges it: one line on stderr,
# exit 1. reframe's output is passed through as it comes (stdout through tee, stderr as is);
# its exit status is kept otherwise. scripts/run-suite.sh runs the suite through it.
set -uo pipefail
log=$(mktemp "${TMPDIR:-/tmp}/reframe-selected.XXXXXX") || {
    echo "reframe-selected.sh: error: cannot make a temporary file" >&2; exit 1; }
trap 'rm -f "$log"' EXIT
reframe "$@" | tee "$log"
rc=${PIPESTATUS[0]}
if [[ $rc -eq 0 ]] && grep -qE 'Ran 0/0 test case\(s\)' "$log"; then
    echo "reframe-selected.sh: error: nothing was selected: no test case of this selection" \
         "runs on this system (reframe said PASSED, Ran 0/0); 'reframe -l -vv' says why" >&2
    exit 1
fi
exit "$rc"
