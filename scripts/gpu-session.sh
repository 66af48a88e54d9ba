#!/usr/bin/env bash
# One GPU session, from this repository alone (issue 33): on a CUDA node, set up a CUDA-aware
# Open MPI (found, or built by scripts/build-cuda-mpi.sh) and the suite's Python, run
# scripts/gpu-check.sh, then the one-node GPU cases through ReFrame on `local`:
#
#   reframe -c reframe_tests -r --system local -n OsuGpuAwareTest -n TxRxTest \
#       -n GpuExchangeTest -n NcclTest -S missing_reference=warn
#
# and keep every output, with what produced it, under tests/data/real-outputs-local/gpu-session/
# <date>-<gpu>/ (SOURCES.md there: the node, its driver, CUDA, MPI and the commands), for the
# parsers' tests and the docs.
#
#   scripts/gpu-session.sh [--mpi-prefix DIR | --mpi-source SRC] [--osu SRC] [--osu-home DIR]
#                          [--wheelhouse DIR] [--out DIR] [--dry-run]
#
#   --mpi-prefix DIR  a CUDA-aware Open MPI already built (its bin/ompi_info says so)
#   --mpi-source SRC  build one from this Open MPI source (a directory, tarball or .dsc: the
#                     distribution's, `apt-get source openmpi`) with scripts/build-cuda-mpi.sh;
#                     neither: the mpirun on PATH, which must be CUDA-aware
#   --osu SRC         OSU's source, built with CUDA against that MPI (build-cuda-mpi.sh --osu)
#   --osu-home DIR    an OSU already built with CUDA (OSU_HOME)
#   --wheelhouse DIR  wheels for the suite's Python (pip download -d DIR -e '.[suite,gpu]' on a
#                     machine with the network, then carry it): the node needs no network
#   --out DIR         where the session's outputs go (default
#                     tests/data/real-outputs-local/gpu-session/<date>-<gpu>)
#   --dry-run         check what is there and print the steps; run nothing
#
# Every step has a timeout (GPU_SESSION_STEP_TIMEOUT seconds, default 1200; the ReFrame run
# GPU_SESSION_RFM_TIMEOUT, default 1500). Exit: 0 every step ran and passed; 1 a step failed
# (the session's outputs are kept); 2 refused before any work (one line: what is missing).
set -uo pipefail

die() { echo "ERROR: gpu-session: $*" >&2; exit 2; }
say() { echo "gpu-session: $*"; }

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MPI_PREFIX= MPI_SOURCE= OSU_SRC= OSU_DIR= WHEELS= OUT= DRY=0
while [ $# -gt 0 ]; do
    case $1 in
        --mpi-prefix|--mpi-source|--osu|--osu-home|--wheelhouse|--out)
            [ $# -ge 2 ] && [ -n "$2" ] || die "$1 needs a value"
            case $1 in
                --mpi-prefix) MPI_PREFIX=$2 ;; --mpi-source) MPI_SOURCE=$2 ;;
                --osu) OSU_SRC=$2 ;; --osu-home) OSU_DIR=$2 ;;
                --wheelhouse) WHEELS=$2 ;; --out) OUT=$2 ;;
            esac
            shift 2 ;;
        --dry-run) DRY=1; shift ;;
        -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument '$1' (see --help)" ;;
    esac
done
STEP_TIMEOUT=${GPU_SESSION_STEP_TIMEOUT:-1200}
RFM_TIMEOUT=${GPU_SESSION_RFM_TIMEOUT:-1500}
for t in "$STEP_TIMEOUT" "$RFM_TIMEOUT"; do
    [[ $t =~ ^[1-9][0-9]{0,5}$ ]] || die "GPU_SESSION_STEP_TIMEOUT and GPU_SESSION_RFM_TIMEOUT" \
        "must be whole numbers of seconds from 1 to 999999, not '$t'"
done
[ -z "$MPI_PREFIX" ] || [ -z "$MPI_SOURCE" ] || die "give --mpi-prefix or --mpi-source, not both"
[ -z "$OSU_SRC" ] || [ -z "$OSU_DIR" ] || die "give --osu or --osu-home, not both"
[ -z "$OSU_SRC" ] || [ -n "$MPI_SOURCE" ] || die "--osu builds OSU with the MPI --mpi-source" \
    "builds; with another MPI build OSU yourself and give --osu-home"
for path in "$MPI_PREFIX" "$MPI_SOURCE" "$OSU_SRC" "$OSU_DIR" "$WHEELS"; do
    [ -z "$path" ] || [ -e "$path" ] || die "no such file or directory: $path"
done

# -- the node: driver, GPUs, CUDA toolkit, Python --------------------------------------------------
command -v nvidia-smi >/dev/null || die "no nvidia-smi on PATH: no NVIDIA driver on $(hostname)"
gpus=$(timeout 60 nvidia-smi -L 2>&1) || die "nvidia-smi -L failed on $(hostname): ${gpus//$'\n'/ }"
[ -n "$gpus" ] || die "nvidia-smi lists no GPU on $(hostname)"
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
[ -f "$CUDA_HOME/include/cuda_runtime_api.h" ] \
    || die "no CUDA toolkit at CUDA_HOME=$CUDA_HOME (include/cuda_runtime_api.h missing)"
export CUDA_HOME
PY=${PYTHON:-python3}
command -v "$PY" >/dev/null || die "no $PY on PATH"
gpu_name=$(echo "${gpus%%$'\n'*}" | sed -E 's/^GPU [0-9]+: //; s/ \(UUID.*//; s/[^A-Za-z0-9]+/-/g')
OUT=${OUT:-$ROOT/tests/data/real-outputs-local/gpu-session/$(date -u +%Y-%m-%d)-$gpu_name}

# -- the MPI -----------------------------------------------------------------------------------
cuda_aware() {  # cuda_aware OMPI_INFO: Open MPI built with CUDA support
    timeout 60 "$1" --parsable --all 2>/dev/null \
        | grep -q '^mca:mpi:base:param:mpi_built_with_cuda_support:value:true$'
}
MPI_PLAN=
if [ -n "$MPI_SOURCE" ]; then
    MPI_PREFIX=$OUT/cuda-mpi
    MPI_PLAN="build: scripts/build-cuda-mpi.sh --prefix $MPI_PREFIX --source $MPI_SOURCE${OSU_SRC:+ --osu $OSU_SRC}"
elif [ -n "$MPI_PREFIX" ]; then
    [ -x "$MPI_PREFIX/bin/ompi_info" ] || die "--mpi-prefix $MPI_PREFIX holds no bin/ompi_info"
    cuda_aware "$MPI_PREFIX/bin/ompi_info" \
        || die "the Open MPI in $MPI_PREFIX is not CUDA-aware (ompi_info: no CUDA support)"
    MPI_PLAN="use $MPI_PREFIX"
else
    command -v ompi_info >/dev/null || die "no CUDA-aware MPI: no ompi_info on PATH; give" \
        "--mpi-prefix DIR, or --mpi-source SRC to build one (docs/gpu.md)"
    cuda_aware "$(command -v ompi_info)" || die "the Open MPI on PATH ($(command -v ompi_info))" \
        "is not CUDA-aware; give --mpi-source SRC to build one (docs/gpu.md)"
    MPI_PLAN="use the Open MPI on PATH ($(command -v mpirun))"
fi

# -- the suite's Python ----------------------------------------------------------------------------
VENV=$OUT/venv
PIP_SOURCE=(--no-index --find-links "$WHEELS")
[ -n "$WHEELS" ] || PIP_SOURCE=()
say "node $(hostname): ${gpus//$'\n'/; }"
say "CUDA toolkit: $CUDA_HOME; Python: $($PY --version 2>&1)"
say "MPI: $MPI_PLAN"
say "Python: $VENV ($PY -m venv --system-site-packages; pip install ${PIP_SOURCE[*]:-from the index} -e '$ROOT[suite,gpu]')"
say "then: scripts/gpu-check.sh $OUT/gpu-check; reframe ... --system local -n OsuGpuAwareTest" \
    "-n TxRxTest -n GpuExchangeTest -n NcclTest; outputs in $OUT"
if [ "$DRY" = 1 ]; then
    say "--dry-run: nothing run"
    exit 0
fi

mkdir -p "$OUT/logs" || die "cannot create $OUT"
failed=0
step() {  # step NAME TIMEOUT CMD...: output in OUT/logs/NAME.log; FAIL line on error
    local name=$1 limit=$2; shift 2
    say "$name ..."
    timeout -k 30 "$limit" "$@" >"$OUT/logs/$name.log" 2>&1
    local rc=$?
    if [ "$rc" != 0 ]; then
        echo "FAIL gpu-session: $name (exit $rc): $(tail -n 3 "$OUT/logs/$name.log" | tr '\n' ' ')"
        failed=1
        return 1
    fi
    echo "PASS gpu-session: $name"
}

if [ -n "$MPI_SOURCE" ]; then
    step build-cuda-mpi "$((STEP_TIMEOUT * 3))" "$ROOT/scripts/build-cuda-mpi.sh" \
        --prefix "$MPI_PREFIX" --source "$MPI_SOURCE" ${OSU_SRC:+--osu "$OSU_SRC"} \
        || { echo "gpu-session: no CUDA-aware MPI: stopped (outputs in $OUT)"; exit 1; }
    [ -n "$OSU_SRC" ] && OSU_DIR=$MPI_PREFIX/osu
fi
if [ -n "$MPI_PREFIX" ]; then
    export OPAL_PREFIX=$MPI_PREFIX PATH=$MPI_PREFIX/bin:$PATH
    export LD_LIBRARY_PATH=$MPI_PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
[ -n "$OSU_DIR" ] && export OSU_HOME=$OSU_DIR  # else the environment's OSU_HOME, if any
if [ "$(id -u)" = 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

step venv "$STEP_TIMEOUT" "$PY" -m venv --system-site-packages "$VENV" \
    && step pip-install "$STEP_TIMEOUT" "$VENV/bin/pip" install "${PIP_SOURCE[@]}" -e "$ROOT[suite,gpu]" \
    && step mpi4py "$STEP_TIMEOUT" env MPICC="$(command -v mpicc)" "$VENV/bin/pip" install \
        "${PIP_SOURCE[@]}" --no-binary=mpi4py --no-cache-dir --force-reinstall --no-deps mpi4py \
    || { echo "gpu-session: the suite's Python could not be set up: stopped (outputs in $OUT)"; exit 1; }
export PYTHON=$VENV/bin/python PATH=$VENV/bin:$PATH
export RFM_CONFIG_FILES=$ROOT/config/reframe/settings.py RFM_REFERENCE_PREFIX=$ROOT/reference

{   # what produced these outputs
    timeout 60 nvidia-smi
    timeout 60 mpirun --version
    timeout 60 ompi_info --parsable --all | grep -E "cuda_support|^ompi:version:full"
    timeout 60 "$PYTHON" -c 'import mpi4py, cupy; print("mpi4py", mpi4py.__version__, "CuPy", cupy.__version__)'
} >"$OUT/environment.txt" 2>&1

step gpu-check "$STEP_TIMEOUT" env GPU_CHECK_TIMEOUT=300 "$ROOT/scripts/gpu-check.sh" "$OUT/gpu-check"
cd "$ROOT" || exit 1
step reframe "$RFM_TIMEOUT" reframe -c reframe_tests -r --system local -n OsuGpuAwareTest \
    -n TxRxTest -n GpuExchangeTest -n NcclTest -S missing_reference=warn \
    --prefix "$OUT/rfm" --perflogdir "$OUT/perflogs" --report-file "$OUT/report.json"

# each case's outputs, named by the case, beside the report
find "$OUT/rfm/output" -type f \( -name 'rfm_job.out' -o -name 'rfm_job.err' -o -name '*.out' \) \
    2>/dev/null | while read -r f; do
    case_dir=$(basename "$(dirname "$f")")
    cp "$f" "$OUT/$case_dir-$(basename "$f").txt"
done
cat >"$OUT/SOURCES.md" <<EOF
# GPU session on $(hostname), $(date -u +%Y-%m-%dT%H:%MZ) (scripts/gpu-session.sh)

Node: ${gpus//$'\n'/; }. CUDA toolkit: $CUDA_HOME. MPI: $MPI_PLAN. Versions: environment.txt.
Every rank on this node's GPUs: no NIC, no GPUDirect RDMA between nodes.

| file | command |
| --- | --- |
| gpu-check/*.txt, *.err, *.status | \`scripts/gpu-check.sh\` (its log: logs/gpu-check.log) |
| <case>-rfm_job.out.txt, <case>-*.out.txt | \`reframe -c reframe_tests -r --system local -n OsuGpuAwareTest -n TxRxTest -n GpuExchangeTest -n NcclTest -S missing_reference=warn\`: each case's job output (report.json names the case of each directory, perflogs/ its figures) |
EOF
if [ "$failed" = 0 ]; then
    say "every step passed; outputs and SOURCES.md in $OUT"
    exit 0
fi
say "some steps failed; outputs and SOURCES.md in $OUT"
exit 1
