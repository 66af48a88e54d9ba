#!/usr/bin/env bash
# A CUDA-aware Open MPI for a node without Spack, built from the distribution's own Open MPI
# source against the CUDA toolkit found on the node, and (with --osu) OSU Micro-Benchmarks with
# device buffers on top of it: what the +gpu tests need (docs/gpu.md, issue 33).
#
#   scripts/build-cuda-mpi.sh [options] [-- EXTRA_OPEN_MPI_CONFIGURE_ARGS...]
#
#   --prefix DIR    where to install (default ./cuda-mpi); DIR/env.sh sets PATH, LD_LIBRARY_PATH,
#                   OPAL_PREFIX, CUDA_HOME and OSU_HOME for the shell that sources it
#   --cuda DIR      the CUDA toolkit (default: CUDA_HOME, CUDA_PATH, /usr/local/cuda, the
#                   directory above `nvcc` on PATH, then NVIDIA's CUDA wheels of --python)
#   --python PY     a Python whose NVIDIA wheels (nvidia-cuda-runtime, nvidia-cuda-nvcc,
#                   nvidia-cuda-crt) may serve as the toolkit; with --mpi4py, where mpi4py goes
#   --source SRC    Open MPI's source: a directory holding `configure`, a tarball, or a Debian
#                   source package (.dsc); default: `apt-get source openmpi` (deb-src lines and
#                   the network needed) into the work directory
#   --osu SRC       OSU Micro-Benchmarks' source (a directory or a tarball) to build with CUDA
#   --mpi4py        build mpi4py from source against this Open MPI into --python (pip: an index
#                   or PIP_FIND_LINKS needed)
#   --work DIR      build directory (default PREFIX/build)
#   --jobs N        make -j N (default: the cores, at most 16)
#   --check         probe only: say what was found and what would run, build nothing
#   --configure-only  stop after Open MPI's configure (the check of a toolkit without a GPU)
#
# The CUDA 13 pitfalls, handled: CUDA 13's cuda_runtime_api.h includes crt/host_defines.h, which
# NVIDIA's wheels ship separately (nvidia-cuda-crt): refused in one line when absent; OSU 7.x's
# full CUDA support calls the 4-argument cudaMemPrefetchAsync CUDA 13 removed: OSU is configured
# --enable-cuda=basic against CUDA 13 (device buffers kept); OSU's configure links libcuda,
# which no wheel ships and a node without the driver lacks: a link-time stub (soname
# libcuda.so.1, every cu* entry point of cuda.h) is made when neither the driver's library nor
# the toolkit's stubs/ is found; the wheels' libcudart.so.13 has no libcudart.so to link with:
# a link directory with one is made.
#
# Open MPI is configured --with-cuda (4.1: device buffers through smcuda/ob1 on a node; CUDA
# support checked with ompi_info afterwards) --without-ucx (a distribution's UCX is not
# CUDA-aware) --disable-mpi-fortran; give other arguments after `--` (--with-ucx=DIR for a UCX
# built with CUDA).
#
# Exit: 0 built (or, with --check, everything needed found); 1 a step failed (its log named);
# 2 refused before any work: bad arguments or something missing (one line).
set -uo pipefail

die() { echo "ERROR: build-cuda-mpi: $*" >&2; exit 2; }
say() { echo "build-cuda-mpi: $*"; }
STEP_TIMEOUT=${BUILD_CUDA_MPI_TIMEOUT:-3600}  # seconds any one step (configure, make) may take

PREFIX=./cuda-mpi CUDA= PYTHON=${PYTHON:-} SOURCE= OSU_SRC= WORK= JOBS= CHECK=0 MPI4PY=0
CONFIGURE_ONLY=0
EXTRA=()
while [ $# -gt 0 ]; do
    case $1 in
        --prefix|--cuda|--python|--source|--osu|--work|--jobs)
            [ $# -ge 2 ] && [ -n "$2" ] || die "$1 needs a value"
            case $1 in
                --prefix) PREFIX=$2 ;; --cuda) CUDA=$2 ;; --python) PYTHON=$2 ;;
                --source) SOURCE=$2 ;; --osu) OSU_SRC=$2 ;; --work) WORK=$2 ;; --jobs) JOBS=$2 ;;
            esac
            shift 2 ;;
        --check) CHECK=1; shift ;;
        --configure-only) CONFIGURE_ONLY=1; shift ;;
        --mpi4py) MPI4PY=1; shift ;;
        --) shift; EXTRA=("$@"); break ;;
        -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument '$1' (see --help)" ;;
    esac
done
[[ $STEP_TIMEOUT =~ ^[1-9][0-9]{0,5}$ ]] \
    || die "BUILD_CUDA_MPI_TIMEOUT must be a whole number of seconds from 1 to 999999, not '$STEP_TIMEOUT'"
if [ -z "$JOBS" ]; then
    JOBS=$(nproc 2>/dev/null || echo 2); [ "$JOBS" -gt 16 ] && JOBS=16
fi
[[ $JOBS =~ ^[1-9][0-9]{0,2}$ ]] || die "--jobs must be a whole number from 1 to 999, not '$JOBS'"
[ "$MPI4PY" = 0 ] || [ -n "$PYTHON" ] || die "--mpi4py needs --python (where mpi4py is installed)"
for tool in gcc make tar; do
    command -v "$tool" >/dev/null || die "$tool not on PATH (Debian: apt install build-essential)"
done

# -- the CUDA toolkit ----------------------------------------------------------------------------
wheel_home() {  # NVIDIA's wheels of $PYTHON: nvidia/cu13 (CUDA 13), nvidia/cuda_runtime (12)
    [ -n "$PYTHON" ] || return 1
    local dirs
    dirs=$(timeout 60 "$PYTHON" -c 'import nvidia, sys; print("\n".join(nvidia.__path__))' \
           2>/dev/null) || return 1
    local d
    for d in $dirs; do
        for h in "$d/cu13" "$d/cu12" "$d/cuda_runtime"; do
            [ -f "$h/include/cuda_runtime_api.h" ] && { echo "$h"; return 0; }
        done
    done
    return 1
}
find_cuda() {
    local cand nvcc
    for cand in "$CUDA" "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda; do
        [ -n "$cand" ] && [ -f "$cand/include/cuda_runtime_api.h" ] && { echo "$cand"; return 0; }
        [ -n "$cand" ] && [ "$cand" = "$CUDA" ] && return 1  # --cuda names it: only that one
    done
    if nvcc=$(command -v nvcc); then
        cand=$(cd "$(dirname "$nvcc")/.." && pwd)
        [ -f "$cand/include/cuda_runtime_api.h" ] && { echo "$cand"; return 0; }
    fi
    wheel_home
}
CUDA_DIR=$(find_cuda) || {
    [ -n "$CUDA" ] && die "no CUDA toolkit at --cuda $CUDA (include/cuda_runtime_api.h missing)"
    die "no CUDA toolkit: none at CUDA_HOME, CUDA_PATH, /usr/local/cuda, beside nvcc on PATH$(
        [ -n "$PYTHON" ] && echo ", or in $PYTHON's NVIDIA wheels") (give --cuda DIR, or" \
        "--python PY with pip install nvidia-cuda-runtime nvidia-cuda-nvcc nvidia-cuda-crt)"
}
CUDA_DIR=$(cd "$CUDA_DIR" && pwd)
INC=$CUDA_DIR/include
VERSION=$(sed -n 's/^#define CUDART_VERSION *\([0-9]*\).*/\1/p' "$INC/cuda_runtime_api.h" | head -n 1)
[[ $VERSION =~ ^[0-9]+$ ]] || die "$INC/cuda_runtime_api.h has no CUDART_VERSION: not a CUDA toolkit"
MAJOR=$((VERSION / 1000)) MINOR=$((VERSION % 1000 / 10))
[ -f "$INC/cuda.h" ] || die "CUDA $MAJOR.$MINOR at $CUDA_DIR has no include/cuda.h (the driver API" \
    "header Open MPI's --with-cuda needs; wheels: nvidia-cuda-runtime)"
if [ "$MAJOR" -ge 13 ] && [ ! -f "$INC/crt/host_defines.h" ]; then
    die "CUDA $MAJOR.$MINOR at $CUDA_DIR lacks include/crt/host_defines.h, which its" \
        "cuda_runtime_api.h includes (NVIDIA's wheels: pip install nvidia-cuda-crt)"
fi
CUDA_LIB=
for d in "$CUDA_DIR/lib64" "$CUDA_DIR/lib" "$CUDA_DIR/targets/x86_64-linux/lib"; do
    if compgen -G "$d/libcudart.so*" >/dev/null || [ -f "$d/libcudart_static.a" ]; then
        CUDA_LIB=$d; break
    fi
done
[ -n "$CUDA_LIB" ] || die "CUDA $MAJOR.$MINOR at $CUDA_DIR has no libcudart (lib64/, lib/)"
DRIVER=
for f in $(ldconfig -p 2>/dev/null | sed -n 's/.*libcuda\.so\(\.1\)\{0,1\} .*=> //p'); do
    DRIVER=$f; break
done
STUBS=
[ -f "$CUDA_LIB/stubs/libcuda.so" ] && STUBS=$CUDA_LIB/stubs
[ -z "$STUBS" ] && [ -f "$CUDA_DIR/lib64/stubs/libcuda.so" ] && STUBS=$CUDA_DIR/lib64/stubs
OSU_CUDA=--enable-cuda
[ "$MAJOR" -ge 13 ] && OSU_CUDA=--enable-cuda=basic

say "CUDA $MAJOR.$MINOR at $CUDA_DIR (libcudart in $CUDA_LIB)"
if [ -n "$DRIVER" ]; then
    say "libcuda: the driver's, $DRIVER"
elif [ -n "$STUBS" ]; then
    say "libcuda: the toolkit's link stub in $STUBS (no driver here)"
else
    say "libcuda: none here (no driver, no stubs/): a link-time stub will be made; the" \
        "driver's libcuda.so.1 is the one loaded at run time"
fi

# -- Open MPI's source ---------------------------------------------------------------------------
PREFIX_ABS=$(realpath -m -- "$PREFIX")
WORK=${WORK:-$PREFIX_ABS/build}
if [ -n "$SOURCE" ] && [ ! -e "$SOURCE" ]; then
    die "no Open MPI source at --source $SOURCE"
fi
if [ -z "$SOURCE" ]; then
    if ! command -v apt-get >/dev/null; then
        die "no Open MPI source: give --source (a directory, a tarball or a .dsc); no apt-get" \
            "here to fetch the distribution's"
    fi
    SOURCE_HOW="apt-get source openmpi (into $WORK/src)"
else
    SOURCE=$(cd "$(dirname "$SOURCE")" && pwd)/$(basename "$SOURCE")
    case $SOURCE in
        *.dsc) command -v dpkg-source >/dev/null \
                   || die "--source $SOURCE is a Debian source package: dpkg-source not on PATH" \
                          "(apt install dpkg-dev)"
               SOURCE_HOW="dpkg-source -x $SOURCE" ;;
        *.tar.gz|*.tgz|*.tar.bz2|*.tar.xz) SOURCE_HOW="tar xf $SOURCE" ;;
        *) [ -x "$SOURCE/configure" ] \
               || die "--source $SOURCE holds no configure script (a release tree, not git)"
           SOURCE_HOW="the tree $SOURCE" ;;
    esac
fi
if [ -n "$OSU_SRC" ]; then
    [ -e "$OSU_SRC" ] || die "no OSU source at --osu $OSU_SRC"
    OSU_SRC=$(cd "$(dirname "$OSU_SRC")" && pwd)/$(basename "$OSU_SRC")
fi
MPI_CONFIGURE=(--prefix="$PREFIX_ABS" --with-cuda="$CUDA_DIR" --without-ucx --disable-mpi-fortran
               "${EXTRA[@]}")
say "Open MPI from $SOURCE_HOW: configure ${MPI_CONFIGURE[*]}; make -j $JOBS install"
[ -n "$OSU_SRC" ] && say "OSU from $OSU_SRC: configure CC=mpicc CXX=mpicxx $OSU_CUDA (CUDA $MAJOR.$MINOR)"
[ "$MPI4PY" = 1 ] && say "mpi4py built against it into $PYTHON"
if [ "$CHECK" = 1 ]; then
    say "--check: found everything needed; nothing built"
    exit 0
fi

# -- build ---------------------------------------------------------------------------------------
mkdir -p "$PREFIX_ABS" "$WORK/src" "$WORK/logs" || die "cannot create $PREFIX_ABS and $WORK"
step() {  # step NAME CMD...: run with a timeout, output in WORK/logs/NAME.log
    local name=$1; shift
    say "$name ..."
    timeout -k 30 "$STEP_TIMEOUT" "$@" >"$WORK/logs/$name.log" 2>&1
    local rc=$?
    if [ "$rc" != 0 ]; then
        echo "FAIL build-cuda-mpi: $name (exit $rc): $(tail -n 3 "$WORK/logs/$name.log" | tr '\n' ' ')"
        echo "build-cuda-mpi: the whole log: $WORK/logs/$name.log"
        exit 1
    fi
}
unpacked() {  # the directory holding configure under $1
    find "$1" -maxdepth 2 -name configure -type f -printf '%h\n' | sort | head -n 1
}
cd "$WORK/src" || exit 1
case ${SOURCE:-apt} in
    apt) step fetch-source apt-get source openmpi ;;
    *.dsc) step unpack-source dpkg-source -x "$SOURCE" ;;
    *.tar.gz|*.tgz|*.tar.bz2|*.tar.xz) step unpack-source tar xf "$SOURCE" ;;
esac
MPI_SRC=${SOURCE:-}
[ -n "$MPI_SRC" ] && [ -d "$MPI_SRC" ] || MPI_SRC=$(unpacked "$WORK/src")
[ -n "$MPI_SRC" ] || { echo "FAIL build-cuda-mpi: no configure script in $WORK/src"; exit 1; }

# the link directory: libcudart.so (the wheels have only libcudart.so.13) and libcuda.so
LINK=$PREFIX_ABS/cuda-link
mkdir -p "$LINK"
real_cudart=$(compgen -G "$CUDA_LIB/libcudart.so*" | sort | tail -n 1)
[ -n "$real_cudart" ] && ln -sf "$real_cudart" "$LINK/libcudart.so"
if [ -n "$DRIVER" ]; then
    ln -sf "$DRIVER" "$LINK/libcuda.so"
elif [ -n "$STUBS" ]; then
    ln -sf "$STUBS/libcuda.so" "$LINK/libcuda.so"
else
    echo '#include <cuda.h>' | gcc -E -P -I"$INC" - 2>"$WORK/logs/stub.log" \
        | grep -oE '\bCUresult +(CUDAAPI +)?cu[A-Za-z0-9_]+ *\(' \
        | sed -E 's/.*\b(cu[A-Za-z0-9_]+) *\(/\1/' | sort -u \
        | sed 's/.*/int &(void) { return 999; }/' >"$LINK/libcuda-stub.c"
    [ -s "$LINK/libcuda-stub.c" ] \
        || { echo "FAIL build-cuda-mpi: no cu* entry point read from $INC/cuda.h"; exit 1; }
    step libcuda-stub gcc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$LINK/libcuda.so" \
        "$LINK/libcuda-stub.c"
fi

cd "$MPI_SRC" || exit 1
step configure-openmpi ./configure "${MPI_CONFIGURE[@]}" \
    CPPFLAGS="-I$INC" LDFLAGS="-L$LINK -L$CUDA_LIB"
if [ "$CONFIGURE_ONLY" = 1 ]; then
    grep -E "^#define OPAL_CUDA_SUPPORT 1" opal/include/opal_config.h >/dev/null \
        || { echo "FAIL build-cuda-mpi: configure did not enable CUDA (opal_config.h)"; exit 1; }
    say "PASS Open MPI configured with CUDA support (OPAL_CUDA_SUPPORT 1); --configure-only: stop"
    exit 0
fi
step make-openmpi make -j "$JOBS"
step install-openmpi make install
if ! "$PREFIX_ABS/bin/ompi_info" --parsable --all 2>/dev/null \
        | grep -q '^mca:mpi:base:param:mpi_built_with_cuda_support:value:true$'; then
    echo "FAIL build-cuda-mpi: $PREFIX_ABS/bin/ompi_info says it was not built with CUDA support"
    exit 1
fi
say "PASS Open MPI with CUDA support in $PREFIX_ABS"

cat >"$PREFIX_ABS/env.sh" <<EOF
# source this file: the CUDA-aware Open MPI of $PREFIX_ABS (scripts/build-cuda-mpi.sh)
export OPAL_PREFIX=$PREFIX_ABS
export PATH=$PREFIX_ABS/bin\${PATH:+:\$PATH}
export LD_LIBRARY_PATH=$PREFIX_ABS/lib:$CUDA_LIB\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
export CUDA_HOME=$CUDA_DIR
EOF

if [ -n "$OSU_SRC" ]; then
    cd "$WORK/src" || exit 1
    case $OSU_SRC in
        *.tar.gz|*.tgz|*.tar.bz2|*.tar.xz) step unpack-osu tar xf "$OSU_SRC"
            OSU_TREE=$(find "$WORK/src" -maxdepth 2 -path '*osu*' -name configure -printf '%h\n' | head -n 1) ;;
        *) OSU_TREE=$OSU_SRC ;;
    esac
    [ -x "${OSU_TREE:-}/configure" ] || { echo "FAIL build-cuda-mpi: no configure in $OSU_SRC"; exit 1; }
    cd "$OSU_TREE" || exit 1
    step configure-osu ./configure --prefix="$PREFIX_ABS/osu" CC="$PREFIX_ABS/bin/mpicc" \
        CXX="$PREFIX_ABS/bin/mpicxx" "$OSU_CUDA" --with-cuda-include="$INC" \
        --with-cuda-libpath="$LINK" LDFLAGS="-L$LINK -L$CUDA_LIB -Wl,-rpath,$CUDA_LIB"
    step make-osu make -j "$JOBS"
    step install-osu make install
    echo "export OSU_HOME=$PREFIX_ABS/osu" >>"$PREFIX_ABS/env.sh"
    say "PASS OSU ($OSU_CUDA) in $PREFIX_ABS/osu"
fi

if [ "$MPI4PY" = 1 ]; then
    step mpi4py env MPICC="$PREFIX_ABS/bin/mpicc" "$PYTHON" -m pip install --no-binary=mpi4py \
        --no-cache-dir --force-reinstall --no-deps mpi4py
    say "PASS mpi4py against $PREFIX_ABS in $PYTHON"
fi
say "done: source $PREFIX_ABS/env.sh"
