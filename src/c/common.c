/* fabrictest C MPI benchmarks: shared helpers (errors, argument parsing, node layout). */
#include "common.h"

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *ft_prog = "fabrictest";
int ft_rank = 0;
int ft_size = 1;
double ft_timeout_s = FT_DEFAULT_TIMEOUT_S;

/* MPI_Init and MPI_Finalize wait for every rank and have no form with a deadline: an alarm of
 * the timeout stands in, its handler writing one prepared line and ending the process (mpirun
 * or srun then ends the job). No floor: a rank stopped inside MPI_Init holds the job -T
 * seconds, like any other wait (a large job's start is covered by giving it a larger -T). */
static char watchdog_line[512];

static void watchdog(int sig)
{
    (void)sig;
    ssize_t ignored = write(STDERR_FILENO, watchdog_line, strlen(watchdog_line));
    (void)ignored;
    _exit(FT_EXIT_TIMEOUT);
}

static void arm_watchdog(const char *what, const char *rank)
{
    const double seconds = ft_timeout_s;
    char host[256] = "?";
    gethostname(host, sizeof host - 1);
    snprintf(watchdog_line, sizeof watchdog_line,
             "%s: error: rank %s (%s): no answer within %.3g s waiting for %s: a rank stopped "
             "answering or the network lost it (-T sets the timeout)\n",
             ft_prog, rank, host, seconds, what);
    signal(SIGALRM, watchdog);
    /* the whole seconds of the timeout, at least 1, staggered by rank as the other waits */
    long r = strtol(rank, NULL, 10);
    alarm((unsigned)(seconds + 0.999) + (unsigned)(r > 0 ? r % 3 : 0));
}

void ft_init(int *argc, char ***argv, const char *prog)
{
    ft_prog = prog;
    /* -T before MPI_Init, for its watchdog (the options are parsed, and refused, later) */
    for (int i = 1; i + 1 < *argc; i++)
        if (strcmp((*argv)[i], "-T") == 0) {
            char *end = NULL;
            double v = strtod((*argv)[i + 1], &end);
            if (end != (*argv)[i + 1] && *end == '\0' && v > 0 && v <= FT_MAX_TIMEOUT_S)
                ft_timeout_s = v;
        }
    /* the launcher's rank, before MPI knows it (Open MPI, Slurm, MPICH/PMI) */
    const char *rank = getenv("OMPI_COMM_WORLD_RANK");
    if (rank == NULL)
        rank = getenv("SLURM_PROCID");
    if (rank == NULL)
        rank = getenv("PMI_RANK");
    arm_watchdog("MPI_Init (every rank to start)", rank ? rank : "?");
    MPI_Init(argc, argv);
    alarm(0);
    MPI_Comm_rank(MPI_COMM_WORLD, &ft_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ft_size);
}

void ft_finalize(void)
{
    char rank[32];
    snprintf(rank, sizeof rank, "%d", ft_rank);
    arm_watchdog("MPI_Finalize (every rank to finish)", rank);
    MPI_Finalize();
    alarm(0);
}

static void vprint_error(const char *fmt, va_list ap)
{
    char line[1024];
    vsnprintf(line, sizeof line, fmt, ap);
    /* one write, so that lines of different ranks do not interleave */
    fprintf(stderr, "%s: error: %s\n", ft_prog, line);
    fflush(stderr);
    fflush(stdout);
}

void ft_die(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprint_error(fmt, ap);
    va_end(ap);
    MPI_Abort(MPI_COMM_WORLD, code);
    exit(code); /* not reached with a conforming MPI */
}

/* Another rank is aborting the job: wait for that to end this one, at most the timeout (and
 * never more than a minute), then abort ourselves, so that a stopped rank cannot keep the job. */
static void await_abort(int code) __attribute__((noreturn));
static void await_abort(int code)
{
    const double wait_s = ft_timeout_s < 60.0 ? ft_timeout_s : 60.0;
    for (double waited = 0; waited < wait_s; waited += 0.1)
        usleep(100000);
    MPI_Abort(MPI_COMM_WORLD, code);
    exit(code);
}

void ft_die_all(int code, const char *fmt, ...)
{
    if (ft_rank == 0) {
        va_list ap;
        va_start(ap, fmt);
        vprint_error(fmt, ap);
        va_end(ap);
        MPI_Abort(MPI_COMM_WORLD, code);
        exit(code);
    }
    /* Rank 0 found the same error and is aborting the job: wait to be ended, and abort
     * ourselves should that not happen in time (rank 0 stopped). */
    await_abort(code);
}

void ft_parse_timeout(const char *text)
{
    char *end = NULL;
    errno = 0;
    double v = text ? strtod(text, &end) : 0;
    if (text == NULL || errno != 0 || end == text || *end != '\0' || !(v > 0) ||
        v > FT_MAX_TIMEOUT_S) /* !(v > 0) also refuses nan */
        ft_die_all(FT_EXIT_USAGE, "-T expects a timeout in seconds above 0 and at most %g, not '%s'",
                   FT_MAX_TIMEOUT_S, text ? text : "");
    ft_timeout_s = v;
}

static void sleep_200us(void)
{
    struct timespec ts = {0, 200000};
    nanosleep(&ts, NULL);
}

/* The deadline has passed: one line, then end the job. Ranks are staggered (0.2 s per rank,
 * modulo 10) so that, when several wait for the same silent peer, the first one's abort ends
 * the job before the others print. */
static void timed_out(double waited, const char *what, va_list ap)
    __attribute__((noreturn));

double ft_deadline_s(double extra_s)
{
    return ft_timeout_s + extra_s + 0.2 * (ft_rank % 10);
}

void ft_timed_out(double waited, const char *what, ...)
{
    va_list ap;
    va_start(ap, what);
    timed_out(waited, what, ap);
}

static void timed_out(double waited, const char *what, va_list ap)
{
    char line[512];
    vsnprintf(line, sizeof line, what, ap);
    char host[MPI_MAX_PROCESSOR_NAME] = "?";
    int len = 0;
    MPI_Get_processor_name(host, &len);
    fprintf(stderr,
            "%s: error: rank %d (%s): no answer within %.3g s waiting for %s: a rank stopped "
            "answering or the network lost it (-T sets the timeout)\n",
            ft_prog, ft_rank, host, waited, line);
    fflush(stderr);
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, FT_EXIT_TIMEOUT);
    exit(FT_EXIT_TIMEOUT);
}

static int test_some(int n, MPI_Request *reqs, MPI_Status *statuses, int one)
{
    int done = 0;
    if (one)
        MPI_Test(reqs, &done, statuses);
    else
        MPI_Testall(n, reqs, &done, statuses);
    return done;
}

static void wait_with_deadline(int n, MPI_Request *reqs, MPI_Status *statuses, int one,
                               double extra_s, int quiet, const char *what, va_list ap)
{
    const double start = MPI_Wtime();
    const double limit = ft_deadline_s(extra_s);
    for (unsigned long polls = 0;; polls++) {
        if (test_some(n, reqs, statuses, one))
            return;
        if (quiet)
            sleep_200us();
        else if (polls % 64 != 0)
            continue; /* spin: read the clock every 64 tests */
        const double waited = MPI_Wtime() - start;
        if (waited > limit)
            timed_out(waited, what, ap);
    }
}

void ft_waitall(int n, MPI_Request *reqs, MPI_Status *statuses, double extra_s, int quiet,
                const char *what, ...)
{
    va_list ap;
    va_start(ap, what);
    wait_with_deadline(n, reqs, statuses, 0, extra_s, quiet, what, ap);
    va_end(ap);
}

void ft_wait(MPI_Request *req, MPI_Status *status, double extra_s, int quiet, const char *what,
             ...)
{
    va_list ap;
    va_start(ap, what);
    wait_with_deadline(1, req, status, 1, extra_s, quiet, what, ap);
    va_end(ap);
}

void ft_barrier(const char *what)
{
    MPI_Request req;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    ft_wait(&req, MPI_STATUS_IGNORE, 0, 0, "%s", what);
}

void ft_die_first(int failed, int code, const char *message)
{
    int mine = failed ? ft_rank : ft_size, first = ft_size;
    MPI_Request req;
    MPI_Iallreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &req);
    ft_wait(&req, MPI_STATUS_IGNORE, 0, 0, "the other ranks' start-up checks");
    if (first == ft_size)
        return;
    if (first == ft_rank)
        ft_die(code, "%s", message);
    await_abort(code); /* that rank's abort ends the job */
}

int ft_parse_size(const char *text, long long max, long long *out)
{
    if (text == NULL)
        return -1;
    while (isspace((unsigned char)*text))
        text++;
    if (!isdigit((unsigned char)*text))
        return -1; /* rejects signs, empty strings and words */
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno != 0)
        return -1;
    unsigned long long mult = 1;
    switch (*end) {
    case 'k': case 'K': mult = 1ULL << 10; end++; break;
    case 'm': case 'M': mult = 1ULL << 20; end++; break;
    case 'g': case 'G': mult = 1ULL << 30; end++; break;
    default: break;
    }
    while (isspace((unsigned char)*end))
        end++;
    if (*end != '\0')
        return -1;
    if (v > (unsigned long long)max / mult)
        return -1;
    *out = (long long)(v * mult);
    return 0;
}

void ft_node_layout(int *local_rank, int *local_size)
{
    /* the ranks on this rank's host, by processor name (MPI_Comm_split_type has no
     * non-blocking form, so no deadline) */
    char mine[MPI_MAX_PROCESSOR_NAME] = {0};
    int len = 0;
    MPI_Get_processor_name(mine, &len);
    char *all = malloc((size_t)ft_size * MPI_MAX_PROCESSOR_NAME);
    if (all == NULL)
        ft_die(FT_EXIT_RUNTIME, "rank %d: out of host memory", ft_rank);
    MPI_Request req;
    MPI_Iallgather(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                   MPI_COMM_WORLD, &req);
    ft_wait(&req, MPI_STATUS_IGNORE, 0, 0, "the other ranks' host names");
    *local_rank = 0;
    *local_size = 0;
    for (int r = 0; r < ft_size; r++)
        if (strcmp(all + (size_t)r * MPI_MAX_PROCESSOR_NAME, mine) == 0) {
            if (r < ft_rank)
                (*local_rank)++;
            (*local_size)++;
        }
    free(all);
}

ft_mem_kind ft_parse_mem_kind(const char *text)
{
    if (text != NULL && (strcmp(text, "host") == 0 || strcmp(text, "h") == 0 ||
                         strcmp(text, "H") == 0))
        return FT_MEM_HOST;
    if (text != NULL && (strcmp(text, "device") == 0 || strcmp(text, "d") == 0 ||
                         strcmp(text, "D") == 0)) {
        if (ft_gpu_api() == NULL)
            ft_die_all(FT_EXIT_USAGE,
                       "-d device: this build has no GPU support (rebuild with make GPU=cuda or "
                       "make GPU=rocm)");
        return FT_MEM_DEVICE;
    }
    ft_die_all(FT_EXIT_USAGE, "-d expects host or device, not '%s'", text ? text : "");
}

const char *ft_mem_kind_name(ft_mem_kind kind)
{
    return kind == FT_MEM_DEVICE ? "device" : "host";
}
