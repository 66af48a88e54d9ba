/* Declarations-only stand-in for ROCm's <hip/hip_runtime_api.h>, used by tests/c to check that
 * src/c's ROCm branch compiles (-fsyntax-only) on machines without ROCm. Only the names that
 * src/c/gpumem.c uses, with HIP's documented values; never linked or run. */
#ifndef FABRICTEST_FAKE_HIP_RUNTIME_API_H
#define FABRICTEST_FAKE_HIP_RUNTIME_API_H
#include <stddef.h>
typedef enum hipError_t {
    hipSuccess = 0,
    hipErrorInsufficientDriver = 35,
    hipErrorNoDevice = 100
} hipError_t;
typedef enum hipMemcpyKind {
    hipMemcpyHostToHost = 0,
    hipMemcpyHostToDevice = 1,
    hipMemcpyDeviceToHost = 2
} hipMemcpyKind;
hipError_t hipGetDeviceCount(int *count);
hipError_t hipSetDevice(int device);
hipError_t hipMalloc(void **ptr, size_t size);
hipError_t hipFree(void *ptr);
hipError_t hipMemcpy(void *dst, const void *src, size_t size, hipMemcpyKind kind);
hipError_t hipMemset(void *dst, int value, size_t size);
hipError_t hipDeviceSynchronize(void);
const char *hipGetErrorString(hipError_t error);
const char *hipGetErrorName(hipError_t error);
#endif
