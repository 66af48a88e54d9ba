#!/usr/bin/env bash
# The GPU-aware paths on one CUDA node, for real, before an acceptance (the +gpu partitions'
# tests need them): the C programs built with GPU=cuda and run with device buffers (payloads
# checked, a corrupted byte caught), txrx --buffer cuda, and, with OSU_HOME, osu_bw/osu_bibw with
# H H, H D and D D buffers. Each run's output is kept in OUT_DIR for the parsers.
#
#   scripts/gpu-check.sh [OUT_DIR]        default OUT_DIR: ./gpu-check-<host>
#
# Environment: mpicc and mpirun on PATH (a CUDA-aware MPI), CUDA_HOME (default /usr/local/cuda),
# OSU_HOME (an OSU build with --enable-cuda; optional), PYTHON (default python3, with this
# checkout's src/ importable, mpi4py and CuPy; optional: the txrx runs are skipped, saying so,
# without CuPy), GPU_CHECK_TIMEOUT (seconds any one run may take, default 300). Open MPI only:
# the refusals of an MPI that is not CUDA-aware are shown by switching its CUDA support off
# (OMPI_MCA_opal_cuda_support=0).
#
# Exit: 0 every check passed; 1 a check failed (each is one FAIL line); 2 nothing to check
# (no GPU, no CUDA, no MPI: one line).
set -uo pipefail

die() { echo "ERROR: gpu-check: $1" >&2; exit 2; }

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ $# -le 1 ] || die "usage: scripts/gpu-check.sh [OUT_DIR]"
OUT=${1:-gpu-check-$(hostname -s)}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
PYTHON=${PYTHON:-python3}
RUN_TIMEOUT=${GPU_CHECK_TIMEOUT:-300}  # seconds any one run may take
[[ $RUN_TIMEOUT =~ ^[1-9][0-9]{0,4}$ ]] \
    || die "GPU_CHECK_TIMEOUT must be a whole number of seconds from 1 to 99999, not '$RUN_TIMEOUT'"

command -v nvidia-smi >/dev/null || die "no nvidia-smi on PATH: no NVIDIA driver on $(hostname)"
gpus=$(timeout 60 nvidia-smi -L 2>&1) || die "nvidia-smi -L failed on $(hostname): ${gpus//$'\n'/ }"
[ -n "$gpus" ] || die "nvidia-smi lists no GPU on $(hostname)"
[ -f "$CUDA_HOME/include/cuda_runtime_api.h" ] \
    || die "no CUDA toolkit at CUDA_HOME=$CUDA_HOME (include/cuda_runtime_api.h missing)"
CUDA_HOME=$(cd "$CUDA_HOME" && pwd)  # make runs in src/c
for tool in mpicc mpirun; do
    command -v "$tool" >/dev/null || die "$tool not on PATH: load a CUDA-aware MPI"
done
mkdir -p "$OUT" || die "cannot create $OUT"
OUT=$(cd "$OUT" && pwd)
if [ "$(id -u)" = 0 ]; then  # Open MPI refuses root unless told
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
IS_OMPI=0 LAUNCH_FLAGS=()
if command -v ompi_info >/dev/null; then
    IS_OMPI=1 LAUNCH_FLAGS=(--oversubscribe)  # Open MPI's; MPICH's mpirun has no such flag
fi

failed=0
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1"; failed=1; }

# run NAME EXPECTED_STATUS NP CMD...: stdout to OUT/NAME.txt, stderr to OUT/NAME.err
run() {
    local name=$1 want=$2 np=$3
    shift 3
    timeout -k 10 "$RUN_TIMEOUT" mpirun -np "$np" "${LAUNCH_FLAGS[@]}" "$@" \
        >"$OUT/$name.txt" 2>"$OUT/$name.err"
    local rc=$?
    echo "$rc" >"$OUT/$name.status"
    if [ "$rc" != "$want" ]; then  # the program's own reason, else the end of its stderr
        local why
        why=$(grep -m 1 -E '^([a-z_]+: error: |ERROR:)' "$OUT/$name.err" \
              || tail -n 2 "$OUT/$name.err" | tr '\n' ' ')
        fail "$name: exit status $rc, expected $want: $why"
        return 1
    fi
}
txrx_whole() {  # txrx_whole NAME NRX NLINK: the suite's parser finds every stream whole, no
    # message missed or corrupt, and the JSON report says the buffers were cuda
    local why
    why=$(timeout 120 "$PYTHON" -c '
import json, sys
from fabrictest.parsers.txrx import missing, parse_txrx
out, nrx, nlink = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rep = parse_txrx(open(out + ".txt").read())
problems = missing(rep, nrx, nlink)
problems += [f"receiver {s.receiver_rank} <- transmitter {s.transmitter}: {s.missed} missed, "
             f"{s.corrupt} corrupt" for s in rep.streams if s.missed or s.corrupt]
if json.load(open(out + ".json"))["options"]["buffer"] != "cuda":
    problems.append("the JSON report says the buffers were not cuda")
print("; ".join(problems))
' "$OUT/$1" "$2" "$3" 2>&1) || why="the parser failed: ${why//$'\n'/ }"
    [ -z "$why" ] && return 0
    fail "$1: $why"
    return 1
}
has() {  # has NAME FILE-SUFFIX REGEX WHAT
    grep -Eq "$3" "$OUT/$1.$2" && return 0
    fail "$1: $4 (no line matching '$3' in $1.$2)"
    return 1
}

echo "gpu-check on $(hostname): ${gpus%%$'\n'*}; outputs in $OUT"
timeout 60 nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1
timeout 60 mpirun --version >"$OUT/mpi-version.txt" 2>&1
[ "$IS_OMPI" = 1 ] && timeout 60 ompi_info --parsable --all 2>/dev/null \
    | grep -E "cuda_support|^ompi:version:full" >"$OUT/ompi-cuda.txt"

# -- the C programs, built here with this node's CUDA toolkit --------------------------------
BIN=$OUT/c-cuda
if timeout 900 make -C "$ROOT/src/c" GPU=cuda CUDA_HOME="$CUDA_HOME" O="$BIN" >"$OUT/make.log" 2>&1; then
    pass "make -C src/c GPU=cuda CUDA_HOME=$CUDA_HOME"
    run alltomany-device 0 4 "$BIN/alltomany" -d device -p 2 -b 1k -n 50 -r 3 \
        && has alltomany-device txt '^Buffer memory += device CUDA$' "buffers not on the device" \
        && has alltomany-device txt '^Payload check += passed \([0-9]+ messages\)$' "payload check" \
        && pass "alltomany -d device: every payload checked on the GPU"
    run alltomany-device-corrupt 4 2 "$BIN/alltomany" -d device -p 1 -n 3 -x \
        && has alltomany-device-corrupt txt '^Payload check += FAILED' "corruption not caught" \
        && pass "alltomany -d device -x: the corrupted byte is caught (exit 4)"
    run bisection-device 0 2 "$BIN/bisection_bw" -d device -s 4k -e 4m 1 20 \
        && has bisection-device txt '^ *2 Ranks, Msg Size: +4194304 ' "no 4 MiB row" \
        && pass "bisection_bw -d device: 4 KiB-4 MiB"
    run bisection-host 0 2 "$BIN/bisection_bw" -d host -s 4k -e 4m 1 20 \
        && pass "bisection_bw -d host (the same build)"
    if [ "$IS_OMPI" = 1 ]; then
        OMPI_MCA_opal_cuda_support=0 run alltomany-not-cuda-aware 3 2 "$BIN/alltomany" -p 1 -n 2 \
            && has alltomany-not-cuda-aware err '^alltomany: error: .*-d device needs a CUDA-aware MPI' \
                "no one-line refusal" \
            && pass "alltomany -d device refused in one line by an MPI with CUDA support off"
    fi
else
    fail "make -C src/c GPU=cuda failed: $(tail -n 3 "$OUT/make.log" | tr '\n' ' ')"
fi

# -- txrx --buffer cuda (mpi4py + CuPy) --------------------------------------------------------
export PYTHONPATH="$ROOT/src${PYTHONPATH:+:$PYTHONPATH}"
if ! timeout 120 "$PYTHON" -c "import cupy, mpi4py, fabrictest.txrx" 2>"$OUT/txrx-import.err"; then
    echo "SKIP txrx --buffer cuda: $PYTHON cannot import cupy, mpi4py and fabrictest.txrx:" \
         "$(tail -n 1 "$OUT/txrx-import.err")"
else
    TXRX=("$PYTHON" -m fabrictest.txrx --method mpi --buffer cuda --msg-size 1048576)
    run txrx-cuda 0 2 "${TXRX[@]}" --nmsg 20000 --json "$OUT/txrx-cuda.json" \
        && txrx_whole txrx-cuda 1 1 \
        && pass "txrx --buffer cuda: 20000 x 1 MiB, every message accounted"
    run txrx-cuda-increment 0 3 "${TXRX[@]}" --nrx 1 --nlink 2 --test increment --nmsg 5000 \
        --json "$OUT/txrx-cuda-increment.json" && txrx_whole txrx-cuda-increment 1 2 \
        && pass "txrx --buffer cuda --test increment, 2 streams: payloads checked on the GPU"
    if [ "$IS_OMPI" = 1 ]; then
        OMPI_MCA_opal_cuda_support=0 run txrx-not-cuda-aware 2 2 "${TXRX[@]}" --nmsg 10 \
            && has txrx-not-cuda-aware err 'buffer cuda: this MPI .* not CUDA-aware' \
                "no one-line refusal" \
            && pass "txrx --buffer cuda refused in one line by an MPI with CUDA support off"
    fi
fi

# -- OSU with device buffers --------------------------------------------------------------------
if [ -z "${OSU_HOME:-}" ]; then
    echo "SKIP osu_bw/osu_bibw -d cuda: OSU_HOME is unset"
else
    for bench in osu_bw osu_bibw; do
        exe=$(find "$OSU_HOME" -name "$bench" -type f -perm -u+x 2>/dev/null | head -n 1)
        if [ -z "$exe" ]; then
            fail "$bench not found under OSU_HOME=$OSU_HOME"
            continue
        fi
        for mode in "H H" "H D" "D D"; do
            name="$bench-cuda-${mode// /}"
            run "$name" 0 2 "$exe" -m 4194304 -d cuda $mode \
                && has "$name" txt '^# OSU MPI-CUDA ' "not a CUDA run" \
                && pass "$bench -d cuda $mode"
        done
    done
fi

[ "$failed" = 0 ] && echo "gpu-check: every check passed" && exit 0
echo "gpu-check: some checks failed (outputs in $OUT)"
exit 1
