"""Message buffers: host memory (numpy) or GPU memory (CuPy), and the CUDA-aware MPI check.

A buffer is a uint8 array of the ring's shape, plus a view of it as 64-bit words (the last axis
divided by 8) used to write and check headers and payloads. `xp` is numpy or cupy.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import socket
import subprocess

import numpy as np

from fabrictest.txrx.errors import Unavailable

ASSUME_CUDA_AWARE = "FABRICTEST_ASSUME_CUDA_AWARE"


class Buffer:
    def __init__(self, shape: tuple[int, ...], kind: str = "host"):
        self.kind = kind
        self.shape = tuple(int(x) for x in shape)
        if kind == "host":
            self.xp = np
            self.array = aligned_empty(self.shape)
            self.array.fill(0)  # touch every page now, not during the timed run
        elif kind == "cuda":
            cp = import_cupy()
            self.xp = cp
            self.array = cp.zeros(self.shape, dtype=cp.uint8)
        else:
            raise ValueError(f"unknown buffer kind {kind!r}")
        self.words = self.array.view(self.xp.uint64)

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape))

    def sync(self) -> None:
        """Make device writes visible before MPI reads the memory."""
        if self.kind == "cuda":
            self.xp.cuda.get_current_stream().synchronize()

    def host(self, x) -> np.ndarray:
        return x.get() if self.kind == "cuda" else x


#: a ring of 2 MiB or more starts on a huge-page boundary, a smaller one on a page: numpy's own
#: alignment (64 B) puts every slot across one page more and its copies across huge-page
#: boundaries; measured with shared memory, Open MPI 4.1 (docs/txrx.md): +30 % at 64 KiB, +14 %
#: at 256 KiB
HUGE_PAGE, PAGE = 1 << 21, 1 << 12


def aligned_empty(shape: tuple[int, ...]) -> np.ndarray:
    """An uninitialised uint8 array of `shape` whose first byte is page (or huge-page)
    aligned; it keeps its over-allocated base alive (`.base`)."""
    nbytes = int(np.prod(shape))
    align = HUGE_PAGE if nbytes >= HUGE_PAGE else PAGE
    raw = np.empty(nbytes + align, dtype=np.uint8)
    offset = -raw.ctypes.data % align
    return raw[offset : offset + nbytes].reshape(shape)


def import_cupy():
    try:
        import cupy
    except ImportError:
        raise Unavailable(
            "--buffer cuda needs CuPy, which is not installed: pip install 'fabrictest[gpu]'"
            " (or cupy-rocm-* for ROCm), or use --buffer host"
        ) from None
    return cupy


def check_gpu() -> None:
    """Raise Unavailable unless CuPy sees a GPU on this host."""
    cp = import_cupy()
    try:
        n = cp.cuda.runtime.getDeviceCount()
    except Exception as err:  # CUDARuntimeError without a driver
        raise Unavailable(
            f"--buffer cuda: no usable GPU on {socket.gethostname()} ({err}); use --buffer host"
        ) from None
    if n < 1:
        raise Unavailable(f"--buffer cuda: no GPU on {socket.gethostname()}; use --buffer host")


def _truthy(value: str | None) -> bool:
    return str(value or "").strip().lower() in ("1", "yes", "true", "on", "enable", "enabled")


def decide_cuda_aware(
    vendor: str,
    query: bool | None = None,
    mpix: bool | None = None,
    ompi_info: str | None = None,
    env: dict | None = None,
    ompi_switch: bool | None = None,
) -> tuple[bool | None, str]:
    """Whether the MPI library accepts device pointers: (answer or None if unknown, how we know).

    query: mpi4py>=4's MPI.Query_cuda_support(); mpix: Open MPI's MPIX_Query_cuda_support();
    ompi_info: `ompi_info --parsable --all` text; env: the environment (MPICH's switches);
    ompi_switch: Open MPI's run-time switch ``opal_cuda_support`` (MPI_T), None if unread.
    Open MPI 4.x's query answers what was built: a build with CUDA whose support is switched off
    at run time (``--mca opal_cuda_support 0``) says yes, then crashes on a device pointer.
    """
    env = os.environ if env is None else env
    if _truthy(env.get(ASSUME_CUDA_AWARE)):
        return True, f"{ASSUME_CUDA_AWARE} is set"
    v = vendor.lower()
    is_ompi = "open mpi" in v or "openmpi" in v
    if is_ompi and ompi_switch is False and (query or mpix):
        return False, "Open MPI: built with CUDA support, but opal_cuda_support is off at run time"
    if query is not None:
        return bool(query), "MPI.Query_cuda_support()"
    if is_ompi:
        if mpix is not None:
            return bool(mpix), "MPIX_Query_cuda_support()"
        if ompi_info:
            for line in ompi_info.splitlines():
                if line.startswith("mca:mpi:base:param:mpi_built_with_cuda_support:value:"):
                    ok = line.rsplit(":", 1)[1].strip() == "true"
                    return ok, "ompi_info mpi_built_with_cuda_support"
        return None, "Open MPI without MPIX_Query_cuda_support or ompi_info"
    if "mpich" in v or "intel" in v or "cray" in v or "mvapich" in v:
        for name in ("MPIR_CVAR_ENABLE_GPU", "MPICH_GPU_SUPPORT_ENABLED"):
            if _truthy(env.get(name)):
                return True, f"{name}=1"
        return False, "neither MPIR_CVAR_ENABLE_GPU nor MPICH_GPU_SUPPORT_ENABLED is set"
    return None, f"unknown MPI vendor {vendor!r}"


def probe_cuda_aware(MPI) -> tuple[bool | None, str]:
    vendor = MPI.get_vendor()[0]
    query = None
    if hasattr(MPI, "Query_cuda_support"):
        try:
            query = bool(MPI.Query_cuda_support())
        except Exception:
            query = None
    mpix = None
    info = None
    if "open mpi" in vendor.lower() and query is None:
        try:
            fn = ctypes.CDLL(None).MPIX_Query_cuda_support
            fn.restype = ctypes.c_int
            mpix = bool(fn())
        except (AttributeError, OSError):
            exe = shutil.which("ompi_info")
            if exe:
                try:
                    info = subprocess.run(
                        [exe, "--parsable", "--all"], capture_output=True, text=True, timeout=30
                    ).stdout
                except (OSError, subprocess.TimeoutExpired):
                    info = None
    switch = ompi_flag("opal_cuda_support") if "open mpi" in vendor.lower() else None
    return decide_cuda_aware(vendor, query, mpix, info, ompi_switch=switch)


def ompi_flag(name: str) -> bool | None:
    """Open MPI's boolean control variable ``name`` through the MPI tool interface (MPI_T, the
    library mpi4py loaded), None when it cannot be read."""
    try:
        lib = ctypes.CDLL(None)
        if not hasattr(lib, "MPI_T_cvar_read"):
            lib = ctypes.CDLL("libmpi.so.40", mode=os.RTLD_NOLOAD)  # Open MPI 4 and 5
        init, finalize = lib.MPI_T_init_thread, lib.MPI_T_finalize
    except (AttributeError, OSError):
        return None
    provided, index, count = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    handle = ctypes.c_void_p()
    value = (ctypes.c_ubyte * 16)()  # a bool or an int: any non-zero byte is "on"
    if init(0, ctypes.byref(provided)) != 0:  # MPI_THREAD_SINGLE
        return None
    try:
        if lib.MPI_T_cvar_get_index(name.encode(), ctypes.byref(index)) != 0:
            return None
        if lib.MPI_T_cvar_handle_alloc(index, None, ctypes.byref(handle), ctypes.byref(count)):
            return None
        try:
            if count.value != 1 or lib.MPI_T_cvar_read(handle, value) != 0:
                return None
            return any(value)
        finally:
            lib.MPI_T_cvar_handle_free(ctypes.byref(handle))
    finally:
        finalize()


def check_cuda_setup(MPI) -> None:
    """Everything `--buffer cuda` needs on this rank, or Unavailable with one line."""
    check_gpu()
    ok, how = probe_cuda_aware(MPI)
    if not ok:
        vendor = MPI.get_vendor()[0]
        state = "is not CUDA-aware" if ok is False else "cannot be shown to be CUDA-aware"
        raise Unavailable(
            f"--buffer cuda: this MPI ({vendor}) {state} ({how}); use a CUDA-aware MPI, "
            f"set {ASSUME_CUDA_AWARE}=1 if it is, or use --buffer host"
        )
