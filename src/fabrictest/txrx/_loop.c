/*
 * fabrictest.txrx._loop: the compiled inner loop of `txrx --method mpi` (docs/txrx.md).
 *
 * What Python cannot do at line rate, and nothing else: a ring of persistent MPI requests
 * (one per slot, created once) started and completed in blocks, waiting spun in C (the MPI
 * library progresses and copies inside MPI_Testall; Python between two tests would leave it
 * idle), a block's sequence numbers scanned in place, and the payload checks of
 * --test ones/increment. The loop itself (windows, accounting, deadlines, final counts,
 * progress lines, fault hooks, reports) stays in Python (transports/mpi.py) and calls these
 * once per block, never per message.
 *
 * Every wait returns after at most `seconds` so that Python's deadlines and progress lines
 * keep running; the GIL is released while waiting.
 *
 * Built with the MPI compiler wrapper (setup.py); the MPI must be the one mpi4py runs on
 * (txrx compares library_version(), the library linked, and header_mpi(), the mpi.h compiled
 * against, with mpi4py's before using it: one MPI's headers linked to another's library, as a
 * wrapper whose -L path falls behind the system's gives, hands the library handles of the
 * wrong ABI, a crash in the first MPI_Send_init).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <mpi.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define STR_(x) #x
#define STR(x) STR_(x)
#if defined(OMPI_MAJOR_VERSION)
#define HEADER_MPI "Open MPI " STR(OMPI_MAJOR_VERSION) "." STR(OMPI_MINOR_VERSION)
#elif defined(MPICH_VERSION) /* MPICH and its derivatives (Cray MPICH, Intel MPI, MVAPICH) */
#define HEADER_MPI "MPICH " MPICH_VERSION
#else
#define HEADER_MPI "unknown"
#endif

/* turns of a spin between two looks at the clock */
#define SPINS_PER_CLOCK 64

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static PyObject *mpi_error(const char *what, int code)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(code, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "error %d", code);
    PyErr_Format(PyExc_RuntimeError, "%s: %s", what, text);
    return NULL;
}

/* ------------------------------------------------------------------------------ Ring */

typedef struct {
    PyObject_HEAD
    MPI_Request *reqs;
    Py_ssize_t count;
} Ring;

static void ring_release(Ring *self)
{
    int finalized = 1;
    MPI_Finalized(&finalized);
    if (self->reqs && !finalized)
        for (Py_ssize_t i = 0; i < self->count; i++)
            if (self->reqs[i] != MPI_REQUEST_NULL)
                MPI_Request_free(&self->reqs[i]);
    PyMem_Free(self->reqs);
    self->reqs = NULL;
    self->count = 0;
}

static void ring_dealloc(Ring *self)
{
    ring_release(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Ring(comm_f, address, count, msg_size, peer, tag, send): one persistent request per slot
 * of `msg_size` bytes from `address` (a host or, with a CUDA-aware MPI, a device address) */
static int ring_init(Ring *self, PyObject *args, PyObject *kwds)
{
    long long comm_f, address, count, size;
    int peer, tag, send;
    (void)kwds;
    if (!PyArg_ParseTuple(args, "LLLLiip", &comm_f, &address, &count, &size, &peer, &tag, &send))
        return -1;
    if (count <= 0 || size <= 0 || size > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "Ring: count and msg_size must be positive (msg_size < 2 GiB)");
        return -1;
    }
    ring_release(self);
    self->reqs = PyMem_Calloc((size_t)count, sizeof(MPI_Request));
    if (!self->reqs) {
        PyErr_NoMemory();
        return -1;
    }
    self->count = (Py_ssize_t)count;
    for (Py_ssize_t i = 0; i < self->count; i++)
        self->reqs[i] = MPI_REQUEST_NULL;
    MPI_Comm comm = MPI_Comm_f2c((MPI_Fint)comm_f);
    char *base = (char *)(intptr_t)address;
    for (Py_ssize_t i = 0; i < self->count; i++) {
        void *buf = base + (size_t)i * (size_t)size;
        int rc = send ? MPI_Send_init(buf, (int)size, MPI_BYTE, peer, tag, comm, &self->reqs[i])
                      : MPI_Recv_init(buf, (int)size, MPI_BYTE, peer, tag, comm, &self->reqs[i]);
        if (rc != MPI_SUCCESS) {
            mpi_error(send ? "MPI_Send_init" : "MPI_Recv_init", rc);
            return -1;
        }
    }
    return 0;
}

static int span(Ring *self, long long first, long long n)
{
    if (!self->reqs || first < 0 || n < 0 || first + n > self->count) {
        PyErr_Format(PyExc_IndexError, "Ring: slots [%lld, %lld) outside 0..%zd", first,
                     first + n, self->count);
        return -1;
    }
    return 0;
}

static PyObject *ring_start(Ring *self, PyObject *args)
{
    long long first, n;
    if (!PyArg_ParseTuple(args, "LL", &first, &n) || span(self, first, n))
        return NULL;
    int rc = n ? MPI_Startall((int)n, self->reqs + first) : MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        return mpi_error("MPI_Startall", rc);
    Py_RETURN_NONE;
}

/* test(first, n): whether every request of the block completed (one MPI_Testall) */
static PyObject *ring_test(Ring *self, PyObject *args)
{
    long long first, n;
    int flag = 1;
    if (!PyArg_ParseTuple(args, "LL", &first, &n) || span(self, first, n))
        return NULL;
    int rc = n ? MPI_Testall((int)n, self->reqs + first, &flag, MPI_STATUSES_IGNORE) : MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        return mpi_error("MPI_Testall", rc);
    return PyBool_FromLong(flag);
}

/* wait(first, n, seconds): spin until the block completed (True) or `seconds` passed (False) */
static PyObject *ring_wait(Ring *self, PyObject *args)
{
    long long first, n;
    double seconds;
    int flag = 0, rc = MPI_SUCCESS;
    if (!PyArg_ParseTuple(args, "LLd", &first, &n, &seconds) || span(self, first, n))
        return NULL;
    if (!n)
        Py_RETURN_TRUE;
    Py_BEGIN_ALLOW_THREADS
    double until = now() + seconds;
    for (unsigned spins = 1;; spins++) {
        rc = MPI_Testall((int)n, self->reqs + first, &flag, MPI_STATUSES_IGNORE);
        if (rc != MPI_SUCCESS || flag)
            break;
        if (spins % SPINS_PER_CLOCK == 0 && now() > until)
            break;
    }
    Py_END_ALLOW_THREADS
    if (rc != MPI_SUCCESS)
        return mpi_error("MPI_Testall", rc);
    return PyBool_FromLong(flag);
}

/* cancel(first, n, seconds): cancel the block's requests and wait for them (False: timed out) */
static PyObject *ring_cancel(Ring *self, PyObject *args)
{
    long long first, n;
    double seconds;
    int flag = 0, rc = MPI_SUCCESS;
    if (!PyArg_ParseTuple(args, "LLd", &first, &n, &seconds) || span(self, first, n))
        return NULL;
    for (long long i = first; i < first + n; i++)
        MPI_Cancel(&self->reqs[i]);
    if (!n)
        Py_RETURN_TRUE;
    Py_BEGIN_ALLOW_THREADS
    double until = now() + seconds;
    for (unsigned spins = 1;; spins++) {
        rc = MPI_Testall((int)n, self->reqs + first, &flag, MPI_STATUSES_IGNORE);
        if (rc != MPI_SUCCESS || flag)
            break;
        if (spins % SPINS_PER_CLOCK == 0 && now() > until)
            break;
    }
    Py_END_ALLOW_THREADS
    if (rc != MPI_SUCCESS)
        return mpi_error("MPI_Testall", rc);
    return PyBool_FromLong(flag);
}

static PyObject *ring_free(Ring *self, PyObject *unused)
{
    (void)unused;
    ring_release(self);
    Py_RETURN_NONE;
}

static PyMethodDef ring_methods[] = {
    {"start", (PyCFunction)ring_start, METH_VARARGS, "start(first, n): MPI_Startall on the block"},
    {"test", (PyCFunction)ring_test, METH_VARARGS, "test(first, n) -> bool: the block completed"},
    {"wait", (PyCFunction)ring_wait, METH_VARARGS,
     "wait(first, n, seconds) -> bool: spin until the block completed or seconds passed"},
    {"cancel", (PyCFunction)ring_cancel, METH_VARARGS,
     "cancel(first, n, seconds) -> bool: cancel the block and wait for it"},
    {"free", (PyCFunction)ring_free, METH_NOARGS, "free(): free every request"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject RingType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "fabrictest.txrx._loop.Ring",
    .tp_doc = "Ring(comm_f, address, count, msg_size, peer, tag, send): persistent requests, one per slot",
    .tp_basicsize = sizeof(Ring),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)ring_init,
    .tp_dealloc = (destructor)ring_dealloc,
    .tp_methods = ring_methods,
};

/* wait_any(blocks, seconds) -> index of the first (ring, first, n) of `blocks` that completed,
 * or -1 after `seconds`. Every block is tested in turn: one stream never starves another. */
static PyObject *wait_any(PyObject *self, PyObject *args)
{
    PyObject *blocks;
    double seconds;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!d", &PyList_Type, &blocks, &seconds))
        return NULL;
    Py_ssize_t k = PyList_GET_SIZE(blocks);
    if (k == 0)
        return PyLong_FromLong(-1);
    MPI_Request **reqs = PyMem_Malloc((size_t)k * sizeof(MPI_Request *));
    int *counts = PyMem_Malloc((size_t)k * sizeof(int));
    if (!reqs || !counts) {
        PyMem_Free(reqs);
        PyMem_Free(counts);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < k; i++) {
        PyObject *item = PyList_GET_ITEM(blocks, i);
        Ring *ring;
        long long first, n;
        if (!PyArg_ParseTuple(item, "O!LL", &RingType, &ring, &first, &n) || span(ring, first, n)) {
            PyMem_Free(reqs);
            PyMem_Free(counts);
            return NULL;
        }
        reqs[i] = ring->reqs + first;
        counts[i] = (int)n;
    }
    Py_ssize_t found = -1;
    int rc = MPI_SUCCESS;
    Py_BEGIN_ALLOW_THREADS
    double until = now() + seconds;
    for (unsigned spins = 1; found < 0; spins++) {
        for (Py_ssize_t i = 0; i < k; i++) {
            int flag = 0;
            if (counts[i] == 0)
                continue;
            rc = MPI_Testall(counts[i], reqs[i], &flag, MPI_STATUSES_IGNORE);
            if (rc != MPI_SUCCESS)
                break;
            if (flag) {
                found = i;
                break;
            }
        }
        if (rc != MPI_SUCCESS)
            break;
        if (spins % SPINS_PER_CLOCK == 0 && now() > until)
            break;
    }
    Py_END_ALLOW_THREADS
    PyMem_Free(reqs);
    PyMem_Free(counts);
    if (rc != MPI_SUCCESS)
        return mpi_error("MPI_Testall", rc);
    return PyLong_FromSsize_t(found);
}

/* ----------------------------------------------------------------- headers and checks */

/* scan(address, stride, n, after, limit) -> (first, last, gaps) when the n sequence numbers
 * (uint64 at address + i*stride) rise strictly, the first above `after` and the last below
 * `limit`; gaps: runs of missing numbers between them. None otherwise (a repeat, a reordering,
 * a number out of range: Python's accounting sorts those out). */
static PyObject *scan(PyObject *self, PyObject *args)
{
    long long address, stride, n, after, limit;
    (void)self;
    if (!PyArg_ParseTuple(args, "LLLLL", &address, &stride, &n, &after, &limit))
        return NULL;
    if (n <= 0)
        Py_RETURN_NONE;
    const char *p = (const char *)(intptr_t)address;
    uint64_t first = *(const uint64_t *)p, prev = first, gaps = 0;
    if (first > (uint64_t)INT64_MAX || (long long)first <= after || (long long)first >= limit)
        Py_RETURN_NONE;
    for (long long i = 1; i < n; i++) {
        uint64_t s = *(const uint64_t *)(p + i * stride);
        if (s <= prev)
            Py_RETURN_NONE;
        gaps += (s != prev + 1);
        prev = s;
    }
    if (prev >= (uint64_t)limit)
        Py_RETURN_NONE;
    return Py_BuildValue("LLL", (long long)first, (long long)prev, (long long)gaps);
}

#define ONES 0x0101010101010101ULL

/* corrupt(address, msg_size, n, mode) -> messages whose payload is not what --test wrote:
 * mode 1 (ones) every payload byte 1, mode 2 (increment) word j of message seq is seq*W + j
 * (W = msg_size/8, seq its header); every word of every message is read. */
static PyObject *corrupt(PyObject *self, PyObject *args)
{
    long long address, size, n;
    int mode;
    (void)self;
    if (!PyArg_ParseTuple(args, "LLLi", &address, &size, &n, &mode))
        return NULL;
    if (size % 8 || (mode != 1 && mode != 2)) {
        PyErr_SetString(PyExc_ValueError, "corrupt: msg_size a multiple of 8, mode 1 or 2");
        return NULL;
    }
    long long bad = 0, words = size / 8;
    const char *base = (const char *)(intptr_t)address;
    Py_BEGIN_ALLOW_THREADS
    for (long long m = 0; m < n; m++) {
        const uint64_t *w = (const uint64_t *)(base + m * size);
        uint64_t diff = 0;
        if (mode == 1) {
            for (long long j = 1; j < words; j++)
                diff |= w[j] ^ ONES;
        } else {
            uint64_t x = w[0] * (uint64_t)words;
            for (long long j = 1; j < words; j++)
                diff |= w[j] ^ (x + (uint64_t)j);
        }
        bad += diff != 0;
    }
    Py_END_ALLOW_THREADS
    return PyLong_FromLongLong(bad);
}

static PyObject *library_version(PyObject *self, PyObject *unused)
{
    char text[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    (void)self;
    (void)unused;
    MPI_Get_library_version(text, &len);
    return PyUnicode_FromStringAndSize(text, len);
}

static PyObject *header_mpi(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyUnicode_FromString(HEADER_MPI);
}

static PyMethodDef methods[] = {
    {"wait_any", wait_any, METH_VARARGS,
     "wait_any([(ring, first, n), ...], seconds) -> index of a completed block, or -1"},
    {"scan", scan, METH_VARARGS,
     "scan(address, stride, n, after, limit) -> (first, last, gaps) or None"},
    {"corrupt", corrupt, METH_VARARGS, "corrupt(address, msg_size, n, mode) -> count"},
    {"library_version", library_version, METH_NOARGS,
     "MPI_Get_library_version() of the MPI library this module is linked to"},
    {"header_mpi", header_mpi, METH_NOARGS,
     "the MPI whose mpi.h this module was compiled with: 'Open MPI M.m', 'MPICH V' or 'unknown'"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_loop",
    .m_doc = "The compiled inner loop of txrx --method mpi (persistent request rings, spin "
             "waits, header scans, payload checks).",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__loop(void)
{
    if (PyType_Ready(&RingType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    Py_INCREF(&RingType);
    if (PyModule_AddObject(m, "Ring", (PyObject *)&RingType) < 0) {
        Py_DECREF(&RingType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
