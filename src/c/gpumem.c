/*
 * Message buffers in host memory, or in GPU memory for a GPU-aware MPI.
 *
 * Built host-only by default; `make GPU=cuda` defines FT_GPU_CUDA (CUDA runtime API, plain C,
 * linked with cudart), `make GPU=rocm` defines FT_GPU_ROCM (HIP runtime API, libamdhip64).
 * Only runtime-API calls are used (allocation, copies, memset), so mpicc compiles everything
 * and no device code is needed.
 */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h> /* MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support() */
#endif

#if defined(FT_GPU_CUDA) && defined(FT_GPU_ROCM)
#error "define at most one of FT_GPU_CUDA and FT_GPU_ROCM"
#endif

#if defined(FT_GPU_CUDA)
#include <cuda_runtime_api.h>
#define GPU_API "CUDA"
typedef cudaError_t gpu_err_t;
#define gpuSuccess cudaSuccess
#define gpuGetDeviceCount cudaGetDeviceCount
#define gpuSetDevice cudaSetDevice
#define gpuMalloc cudaMalloc
#define gpuFree cudaFree
#define gpuMemcpy cudaMemcpy
#define gpuMemcpyHostToDevice cudaMemcpyHostToDevice
#define gpuMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define gpuMemset cudaMemset
#define gpuDeviceSynchronize cudaDeviceSynchronize
#define gpuGetErrorString cudaGetErrorString
#define gpuGetErrorName cudaGetErrorName
#define GPU_NO_DEVICE(e) ((e) == cudaErrorNoDevice)
#define GPU_NO_DRIVER(e) ((e) == cudaErrorInsufficientDriver || (e) == cudaErrorStubLibrary)
#define GPU_DRIVER_HINT "no CUDA driver (libcuda.so.1 missing or too old for this runtime)"
#elif defined(FT_GPU_ROCM)
#include <hip/hip_runtime_api.h>
#define GPU_API "ROCm"
typedef hipError_t gpu_err_t;
#define gpuSuccess hipSuccess
#define gpuGetDeviceCount hipGetDeviceCount
#define gpuSetDevice hipSetDevice
#define gpuMalloc hipMalloc
#define gpuFree hipFree
#define gpuMemcpy hipMemcpy
#define gpuMemcpyHostToDevice hipMemcpyHostToDevice
#define gpuMemcpyDeviceToHost hipMemcpyDeviceToHost
#define gpuMemset hipMemset
#define gpuDeviceSynchronize hipDeviceSynchronize
#define gpuGetErrorString hipGetErrorString
#define gpuGetErrorName hipGetErrorName
#define GPU_NO_DEVICE(e) ((e) == hipErrorNoDevice)
#define GPU_NO_DRIVER(e) ((e) == hipErrorInsufficientDriver)
#define GPU_DRIVER_HINT "no ROCm driver (amdgpu/kfd not loaded or too old for this runtime)"
#endif

const char *ft_gpu_api(void)
{
#ifdef GPU_API
    return GPU_API;
#else
    return NULL;
#endif
}

#ifdef GPU_API
#define GPU_CHECK(call)                                                                        \
    do {                                                                                       \
        gpu_err_t err_ = (call);                                                               \
        if (err_ != gpuSuccess)                                                                \
            ft_die(FT_EXIT_RUNTIME, "rank %d: %s failed: %s (%s)", ft_rank, #call,            \
                   gpuGetErrorString(err_), gpuGetErrorName(err_));                            \
    } while (0)

#if defined(FT_GPU_CUDA) && defined(MPIX_CUDA_AWARE_SUPPORT)
/* Open MPI's boolean control variable NAME through the MPI tool interface: 1 on, 0 off, -1 not
 * readable. */
static int ompi_flag(const char *name)
{
    int provided, index, count, on = -1;
    unsigned char value[16] = {0}; /* a bool or an int: any non-zero byte is "on" */
    MPI_T_cvar_handle handle;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
        return -1;
    if (MPI_T_cvar_get_index(name, &index) == MPI_SUCCESS &&
        MPI_T_cvar_handle_alloc(index, NULL, &handle, &count) == MPI_SUCCESS) {
        if (count == 1 && MPI_T_cvar_read(handle, value) == MPI_SUCCESS) {
            on = 0;
            for (size_t i = 0; i < sizeof value; i++)
                on |= value[i] != 0;
        }
        MPI_T_cvar_handle_free(&handle);
    }
    MPI_T_finalize();
    return on;
}
#endif

/* Is the MPI library able to take device pointers? 1 yes, 0 no, -1 unknown. */
static int mpi_gpu_aware(const char **why)
{
    const char *assume = getenv("FABRICTEST_ASSUME_GPU_AWARE_MPI");
    if (assume != NULL && strcmp(assume, "1") == 0) {
        *why = "FABRICTEST_ASSUME_GPU_AWARE_MPI=1";
        return 1;
    }
#if defined(FT_GPU_CUDA) && defined(MPIX_CUDA_AWARE_SUPPORT)
    *why = "Open MPI: MPIX_Query_cuda_support() returned 0";
    if (!MPIX_Query_cuda_support())
        return 0;
    /* Open MPI 4.x answers what was built: CUDA support switched off at run time (--mca
     * opal_cuda_support 0, OMPI_MCA_mpi_cuda_support=0) is only seen in the switch itself,
     * and device pointers then crash inside the library (seen on an H100). */
    *why = "Open MPI: built with CUDA support, but opal_cuda_support is off at run time";
    return ompi_flag("opal_cuda_support") == 0 ? 0 : 1;
#elif defined(FT_GPU_ROCM) && defined(MPIX_ROCM_AWARE_SUPPORT)
    *why = "Open MPI: MPIX_Query_rocm_support() returned 0";
    return MPIX_Query_rocm_support() ? 1 : 0;
#else
    /* Cray MPICH takes device pointers only with MPICH_GPU_SUPPORT_ENABLED=1. */
    const char *cray = getenv("CRAY_MPICH_VERSION");
    const char *enabled = getenv("MPICH_GPU_SUPPORT_ENABLED");
    if (cray != NULL && (enabled == NULL || strcmp(enabled, "1") != 0)) {
        *why = "Cray MPICH without MPICH_GPU_SUPPORT_ENABLED=1";
        return 0;
    }
    *why = "unknown";
    return -1;
#endif
}
#endif

void ft_mem_init(ft_mem_kind kind, int local_rank)
{
    if (kind != FT_MEM_DEVICE)
        return;
#ifdef GPU_API
    /* Collective: every rank checks, and only the lowest failing rank prints its line. */
    char msg[512] = "";
    int count = 0;
    gpu_err_t err = gpuGetDeviceCount(&count);
    const char *why = "";
    if (GPU_NO_DRIVER(err))
        snprintf(msg, sizeof msg, "rank %d: -d device needs a GPU, but there is %s: %s", ft_rank,
                 GPU_DRIVER_HINT, gpuGetErrorString(err));
    else if (GPU_NO_DEVICE(err) || (err == gpuSuccess && count == 0))
        snprintf(msg, sizeof msg, "rank %d: -d device needs a GPU, but no %s GPU was found",
                 ft_rank, GPU_API);
    else if (err != gpuSuccess)
        snprintf(msg, sizeof msg, "rank %d: -d device: %s GPU query failed: %s (%s)", ft_rank,
                 GPU_API, gpuGetErrorString(err), gpuGetErrorName(err));
    else if (mpi_gpu_aware(&why) == 0)
        snprintf(msg, sizeof msg,
                 "rank %d: -d device needs a %s-aware MPI, and this one is not (%s); use -d host, "
                 "or set FABRICTEST_ASSUME_GPU_AWARE_MPI=1 if it is",
                 ft_rank, GPU_API, why);
    ft_die_first(msg[0] != '\0', FT_EXIT_RUNTIME, msg);
    GPU_CHECK(gpuSetDevice(local_rank % count));
#else
    (void)local_rank;
    ft_die_all(FT_EXIT_USAGE, "device buffers requested from a host-only build");
#endif
}

void *ft_mem_alloc(ft_mem_kind kind, size_t bytes)
{
    void *p = NULL;
    if (bytes == 0)
        bytes = 1;
    if (kind == FT_MEM_DEVICE) {
#ifdef GPU_API
        GPU_CHECK(gpuMalloc(&p, bytes));
        return p;
#endif
    }
    long page = sysconf(_SC_PAGESIZE);
    if (posix_memalign(&p, page > 0 ? (size_t)page : 4096, bytes) != 0 || p == NULL)
        ft_die(FT_EXIT_RUNTIME, "rank %d: cannot allocate %zu bytes of host memory", ft_rank,
               bytes);
    return p;
}

void ft_mem_free(ft_mem_kind kind, void *ptr)
{
    if (ptr == NULL)
        return;
    if (kind == FT_MEM_DEVICE) {
#ifdef GPU_API
        GPU_CHECK(gpuFree(ptr));
        return;
#endif
    }
    free(ptr);
}

void ft_mem_put(ft_mem_kind kind, void *dst, const void *src, size_t bytes)
{
    if (kind == FT_MEM_DEVICE) {
#ifdef GPU_API
        GPU_CHECK(gpuMemcpy(dst, src, bytes, gpuMemcpyHostToDevice));
        return;
#endif
    }
    memcpy(dst, src, bytes);
}

void ft_mem_get(ft_mem_kind kind, void *dst, const void *src, size_t bytes)
{
    if (kind == FT_MEM_DEVICE) {
#ifdef GPU_API
        GPU_CHECK(gpuMemcpy(dst, src, bytes, gpuMemcpyDeviceToHost));
        return;
#endif
    }
    memcpy(dst, src, bytes);
}

void ft_mem_set(ft_mem_kind kind, void *dst, int value, size_t bytes)
{
    if (kind == FT_MEM_DEVICE) {
#ifdef GPU_API
        GPU_CHECK(gpuMemset(dst, value, bytes));
        GPU_CHECK(gpuDeviceSynchronize());
        return;
#endif
    }
    memset(dst, value, bytes);
}
