/*
 * fabrictest C MPI benchmarks: helpers shared by alltomany and bisection_bw.
 *
 * Error handling: every fatal error prints exactly one line "PROG: error: ..." on stderr
 * and ends the whole job with MPI_Abort, so that no rank is left waiting for a peer.
 *
 * Timeouts: no rank waits for its peers without a deadline. Every exchange and collective goes
 * through ft_wait/ft_waitall (non-blocking calls, tested until they complete): a rank that has
 * waited ft_timeout_s (-T, default FT_DEFAULT_TIMEOUT_S) for one of them prints one line naming
 * what it waited for and ends the job (exit FT_EXIT_TIMEOUT), so that a rank that stopped
 * answering (a stopped process, a dead node, a link that went down) ends the run with a message
 * instead of a hang.
 */
#ifndef FABRICTEST_COMMON_H
#define FABRICTEST_COMMON_H

#include <stddef.h>
#include <mpi.h>

/* Exit codes (passed to MPI_Abort; mpirun reports them as its own exit status). */
#define FT_EXIT_USAGE 2   /* bad command line or bad rank count */
#define FT_EXIT_RUNTIME 3 /* no GPU, no GPU driver, MPI not GPU-aware, out of memory */
#define FT_EXIT_PAYLOAD 4 /* received data differ from what was sent */
#define FT_EXIT_TIMEOUT 5 /* a rank stopped answering: a wait passed its deadline */

/* The longest any rank waits for one exchange or collective with its peers, unless -T says. */
#define FT_DEFAULT_TIMEOUT_S 120.0
#define FT_MAX_TIMEOUT_S 86400.0

typedef enum { FT_MEM_HOST = 0, FT_MEM_DEVICE = 1 } ft_mem_kind;

extern const char *ft_prog; /* program name used in messages */
extern int ft_rank;         /* rank in MPI_COMM_WORLD */
extern int ft_size;         /* size of MPI_COMM_WORLD */

/* MPI_Init / MPI_Finalize, each watched by an alarm (-T seconds, read from argv before
 * MPI_Init): a rank that never starts or never finishes ends the job with one line. */
void ft_init(int *argc, char ***argv, const char *prog);
void ft_finalize(void);

/* One line on stderr from the calling rank, then MPI_Abort(code). Never returns. */
void ft_die(int code, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));

/* For errors every rank detects identically (arguments): rank 0 prints the line and
 * aborts; the other ranks wait to be ended by that abort. Never returns. */
void ft_die_all(int code, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));

/* Collective over MPI_COMM_WORLD: when any rank passes failed != 0, the lowest such rank
 * prints its `message` as the one error line and aborts; returns only when no rank failed. */
void ft_die_first(int failed, int code, const char *message);

/* ---- Waits with a deadline ---- */

extern double ft_timeout_s; /* seconds; set by ft_parse_timeout (-T) */

/* Parse -T SECONDS: a number > 0 and <= FT_MAX_TIMEOUT_S. Dies (usage) on anything else. */
void ft_parse_timeout(const char *text);

/* Wait for `n` requests (their statuses into `statuses`, may be MPI_STATUSES_IGNORE) / one
 * request (its status into `status`, may be MPI_STATUS_IGNORE), testing them; `extra_s` seconds are added to the deadline (a wait that
 * also covers a programmed delay). `quiet`: sleep 200 us between tests, leaving the core to
 * others (ranks that only wait); else spin, as MPI_Waitall does. On the deadline: one line
 * naming `what` (printf format) and MPI_Abort(FT_EXIT_TIMEOUT). */
void ft_waitall(int n, MPI_Request *reqs, MPI_Status *statuses, double extra_s, int quiet,
                const char *what, ...) __attribute__((format(printf, 6, 7)));
void ft_wait(MPI_Request *req, MPI_Status *status, double extra_s, int quiet, const char *what,
             ...) __attribute__((format(printf, 5, 6)));
/* MPI_Barrier over MPI_COMM_WORLD with the deadline (spinning). */
void ft_barrier(const char *what);
/* For a wait loop of the program's own: the seconds after which this rank gives up
 * (ft_timeout_s + extra_s + the rank's stagger), and the one line and abort when it does. */
double ft_deadline_s(double extra_s);
void ft_timed_out(double waited, const char *what, ...)
    __attribute__((noreturn, format(printf, 2, 3)));

/* Parse a non-negative integer with an optional binary suffix (k, m, g: 2^10, 2^20, 2^30).
 * Returns 0 on success, -1 when `text` is not such a number or exceeds `max`. */
int ft_parse_size(const char *text, long long max, long long *out);

/* The number of ranks on this rank's node (MPI_COMM_TYPE_SHARED), and this rank's index there. */
void ft_node_layout(int *local_rank, int *local_size);

/* ---- Buffers: host memory or GPU memory (CUDA or ROCm builds) ---- */

/* "CUDA", "ROCm" or NULL for a host-only build. */
const char *ft_gpu_api(void);

/* Parse "host" or "device" (-d option). Dies on anything else, or on "device" in a host-only
 * build. */
ft_mem_kind ft_parse_mem_kind(const char *text);
const char *ft_mem_kind_name(ft_mem_kind kind);

/* Select this rank's GPU (local rank modulo the number of GPUs) when kind is FT_MEM_DEVICE,
 * checking that a GPU, its driver and a GPU-aware MPI are there; dies with one line naming
 * what is missing otherwise. No-op for host memory. */
void ft_mem_init(ft_mem_kind kind, int local_rank);

void *ft_mem_alloc(ft_mem_kind kind, size_t bytes);
void ft_mem_free(ft_mem_kind kind, void *ptr);
/* Copy `bytes` from host memory `src` into buffer `dst` of `kind`. */
void ft_mem_put(ft_mem_kind kind, void *dst, const void *src, size_t bytes);
/* Copy `bytes` from buffer `src` of `kind` into host memory `dst`. */
void ft_mem_get(ft_mem_kind kind, void *dst, const void *src, size_t bytes);
/* Fill a buffer of `kind` with the byte `value`. */
void ft_mem_set(ft_mem_kind kind, void *dst, int value, size_t bytes);

#endif
