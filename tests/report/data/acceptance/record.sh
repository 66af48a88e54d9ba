#!/usr/bin/env bash
# Records the acceptance page's test data on the vcluster: two acceptance runs of the suite,
# healthy, then with node03's link 15 % slower (170 of 200 Mbit/s) and node01's link flapping
# between the two halves of the run; each run is three ReFrame invocations on one 4-node
# cluster on 2 switches: stage 1 first (run0, the pre-flight checks), as the Slingshot
# acceptance notes order it, then the performance tests in two halves (run1, run2). Then the files the page reads are kept beside this script
# (tests/report/acceptance_data.py keep), with paths made relative to it.
#
#   source .venv/bin/activate
#   flock /run/lock/fabrictest-vcluster-pytest.lock bash tests/report/data/acceptance/record.sh /tmp/acc-rec
#
# PREFLIGHT="--preflight" (the health family's `vcluster up --preflight`) adds stage 1 on the
# vcluster's fabric NICs where the checkout has it. NODES and SWITCHES (4 and 2) size the
# cluster (docs/vcluster.md: the acceptance at 16 nodes on 4 switches); KEEP=0 leaves the
# recorded test data alone (a run at another size is not the page's test data). FLAP=0 leaves
# node01's link alone (the faulty run then has node03 slow and nothing else); UPLINK=SW adds a
# third run, "uplink", with SW's uplink to the top switch at UPLINK_RATE (100mbit).
set -euo pipefail
OUT=$(realpath -m "${1:?usage: record.sh WORKDIR}")
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." && pwd)
HERE=$ROOT/tests/report/data/acceptance
STATE=$OUT/state
mkdir -p "$OUT"
cd "$ROOT"
vc() { vcluster --state-dir "$STATE" "$@"; }
vc up --nodes "${NODES:-4}" --switches "${SWITCHES:-2}" --accounting ${PREFLIGHT:-}
trap 'vc down || vc down' EXIT
eval "$(vc env)"
scontrol show topology > "$OUT/topology.txt"

S=(-S size_profile=quick -S TxRxTest.nmsg=2000 --exec-policy=serial --nocolor)
PREFLIGHT_TESTS=(-n NicHealthTest)
FIRST=(-n 'TxRxTest%scenario=paired%span=one%method=mpi%buffer=host'
       -n 'TxRxTest%scenario=paired%span=many%method=mpi%buffer=host')
SECOND=(-n 'TxRxTest%scenario=pairs-of-three%span=one%method=mpi%buffer=host'
        -n BisectionTest -n 'CongestionTest%aggressors=incast' -n 'SweepTest%method=mpi')
run() {  # run NAME PART SELECTORS...
    local name=$1 part=$2; shift 2
    mkdir -p "$OUT/$name"
    local t0=$SECONDS
    reframe -c reframe_tests -r --system vcluster "${S[@]}" --prefix "$OUT/$name/rfm-$part" \
        --report-file "$OUT/$name/$part.json" --session-extras "acceptance=$name" "$@" \
        > "$OUT/$name/$part.out" 2>&1 || true
    echo "$name $part: $((SECONDS - t0)) s, $(grep -c '\[       OK \]' "$OUT/$name/$part.out") ok, $(grep -c '\[     FAIL \]' "$OUT/$name/$part.out") failed"
}

run healthy run0 "${PREFLIGHT_TESTS[@]}"
run healthy run1 "${FIRST[@]}"
run healthy run2 "${SECOND[@]}"

vc degrade node03 170mbit                       # node03's link 15 % below its 200 Mbit/s
run faulty run0 "${PREFLIGHT_TESTS[@]}"
run faulty run1 "${FIRST[@]}"
if [ "${FLAP:-1}" = 1 ]; then
    vc flap node01 --times 2 --interval 1      # between the two halves: no test is looking
fi
run faulty run2 "${SECOND[@]}"
vc restore

if [ -n "${UPLINK:-}" ]; then
    vc degrade-uplink "$UPLINK" "${UPLINK_RATE:-100mbit}"
    run uplink run0 "${PREFLIGHT_TESTS[@]}"
    run uplink run1 "${FIRST[@]}"
    run uplink run2 "${SECOND[@]}"
    vc degrade-uplink "$UPLINK" none
fi

if [ "${KEEP:-1}" = 1 ]; then
    python "$ROOT/tests/report/acceptance_data.py" keep "$OUT" "$HERE"
fi
