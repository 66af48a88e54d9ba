/*
 * alltomany: all-to-many personalised communication with MPI_Isend, MPI_Irecv, MPI_Waitall.
 *
 * Written for fabrictest from the documented behaviour of the isendrecv benchmark
 * (Northwestern University, 2018): same command line (-p -b -n) and the same summary block.
 *
 * Roles: one receiver per node, the ranks r with r % ppn == 0 (receiver index j = r / ppn);
 * every rank, receivers included, sends one message to every receiver in each iteration.
 *
 * Message sizes: the message from sender s to receiver j is
 *     unit * ((s + j) % R + 1) bytes,   R = number of receivers = world size / ppn,
 * so sizes differ between the ranks of a node and between receivers, are multiples of the
 * unit size, and range from 1 unit to R units (Cori notes: 512 ranks, -p 64 -b 32: R = 8, min 32,
 * max 256 bytes).
 *
 * Timing: each iteration times posting the MPI_Irecv calls (receivers), posting the MPI_Isend
 * calls and MPI_Waitall; the loop holds no other MPI call. The end-to-end time runs from the
 * barrier before the loop to its end. Each is summed over the iterations on each rank, and
 * the block shows the maximum over all ranks (MPI_Reduce with MPI_MAX).
 *
 * Repetitions (-r R, default 1): the whole timed loop runs R times, each after a barrier. The
 * block's four times (the notes' "%.4f sec") are those of the median repetition by end-to-end
 * time, for people; one "alltomany-times" line per repetition gives all four at full
 * precision, for parsers, so that the spread between repetitions (the noise) can be measured.
 *
 * Fault injection (-i K:USEC): from iteration K on (counted from 1 in each repetition), every
 * receiver spends USEC microseconds more posting its receives, inside the posting-irecv time:
 * the all-to-many (Cori) notes' symptom (posting MPI_Irecv slower once a run passes 16
 * iterations), made on purpose to see the scaling check fail.
 *
 * Payload check: every message carries a pattern that depends on sender, receiver and byte
 * offset; receivers check the received size of every message of every iteration and, after
 * the loop, every byte of the last iteration's messages.
 *
 * Timeout (-T SEC, common.h): every wait, MPI_Waitall of the timed loop included (tested until
 * complete, as MPI_Waitall spins), ends the job with one line when a rank has not answered
 * within SEC seconds (plus twice the injected delay).
 */
#include "common.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_UNIT 10
#define DEFAULT_ITERS 100
#define TAG 1001
#define DASHES "-----------------------------------------------------------"

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: %s [OPTION]...\n"
            "   [-h] Print help\n"
            "   [-p] number of MPI processes per node (default: the ranks on rank 0's node)\n"
            "   [-b] message block unit size in bytes (default: %d; k/m suffixes accepted)\n"
            "   [-n] number of iterations (default: %d)\n"
            "   [-d] buffer memory: host or device (device needs a CUDA or ROCm build; default: "
            "%s)\n"
            "   [-r] repetitions of the timed loop (default: 1); the block shows the median "
            "one,\n"
            "        an 'alltomany-times' line each one at full precision\n"
            "   [-i] K:USEC fault injection: from iteration K on, each receiver spends USEC\n"
            "        microseconds more posting its receives (see the scaling check fail)\n"
            "   [-x] corrupt one byte sent by rank 0, to see the payload check fail\n"
            "   [-T] SEC: end the job when a rank has not answered within SEC seconds\n"
            "        (default: %g)\n"
            "Receivers are the ranks r with r %% ppn == 0; every rank sends to every receiver.\n"
            "The message from rank s to receiver j has unit * ((s + j) %% receivers + 1) bytes.\n",
            ft_prog, DEFAULT_UNIT, DEFAULT_ITERS, ft_gpu_api() ? "device" : "host",
            FT_DEFAULT_TIMEOUT_S);
}

static inline unsigned char pattern(int sender, int receiver, size_t k)
{
    return (unsigned char)((sender * 131u + receiver * 17u + (unsigned)k * 7u + 11u) % 251u);
}

/* Parse -i K:USEC (K >= 1 iterations; USEC microseconds, a decimal > 0 and <= 60 s). */
static int parse_injection(const char *text, long long *from, double *usec)
{
    char head[64];
    const char *colon = strchr(text, ':');
    if (colon == NULL || (size_t)(colon - text) >= sizeof head)
        return -1;
    memcpy(head, text, (size_t)(colon - text));
    head[colon - text] = '\0';
    if (ft_parse_size(head, INT_MAX, from) != 0 || *from < 1)
        return -1;
    char *end = NULL;
    errno = 0;
    *usec = strtod(colon + 1, &end);
    if (errno != 0 || end == colon + 1 || *end != '\0' || !(*usec > 0) || *usec > 60e6)
        return -1; /* !(x > 0) also refuses nan */
    return 0;
}

/* Wait `seconds` by the MPI clock: sleep all but the last 200 us (shared cores), spin the rest
 * (nanosleep overshoots by tens of microseconds, more than a short injected delay). */
static void delay(double seconds)
{
    const double until = MPI_Wtime() + seconds;
    for (double left = seconds - 200e-6; left > 0; left = until - 200e-6 - MPI_Wtime()) {
        struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
        nanosleep(&ts, NULL);
    }
    while (MPI_Wtime() < until)
        ;
}

static int by_end_to_end(const void *a, const void *b)
{
    const double x = ((const double *)a)[3], y = ((const double *)b)[3];
    return (x > y) - (x < y);
}

static void print_line(const char *label, const char *value)
{
    printf("%-37s= %s\n", label, value);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv, "alltomany");

    long long ppn = -1, unit = DEFAULT_UNIT, iters = DEFAULT_ITERS, reps = 1;
    long long inject_from = 0;
    double inject_usec = 0;
    ft_mem_kind mem = ft_gpu_api() ? FT_MEM_DEVICE : FT_MEM_HOST;
    int corrupt = 0, help = 0;
    int opt;
    opterr = 0;
    while ((opt = getopt(argc, argv, ":hp:b:n:r:i:d:xT:")) != -1) {
        switch (opt) {
        case 'h': help = 1; break;
        case 'p':
            if (ft_parse_size(optarg, INT_MAX, &ppn) != 0 || ppn < 1)
                ft_die_all(FT_EXIT_USAGE, "-p expects a number of processes per node >= 1, not '%s'",
                           optarg);
            break;
        case 'b':
            if (ft_parse_size(optarg, INT_MAX, &unit) != 0 || unit < 1)
                ft_die_all(FT_EXIT_USAGE, "-b expects a unit message size >= 1 byte, not '%s'",
                           optarg);
            break;
        case 'n':
            if (ft_parse_size(optarg, INT_MAX, &iters) != 0 || iters < 1)
                ft_die_all(FT_EXIT_USAGE, "-n expects a number of iterations >= 1, not '%s'", optarg);
            break;
        case 'r':
            if (ft_parse_size(optarg, 1000000, &reps) != 0 || reps < 1)
                ft_die_all(FT_EXIT_USAGE, "-r expects a number of repetitions from 1 to 1000000, "
                           "not '%s'", optarg);
            break;
        case 'i':
            if (parse_injection(optarg, &inject_from, &inject_usec) != 0)
                ft_die_all(FT_EXIT_USAGE,
                           "-i expects K:USEC (from iteration K >= 1 on, USEC > 0 and <= 60000000 "
                           "microseconds more posting receives), not '%s'", optarg);
            break;
        case 'd': mem = ft_parse_mem_kind(optarg); break;
        case 'x': corrupt = 1; break;
        case 'T': ft_parse_timeout(optarg); break;
        case ':': ft_die_all(FT_EXIT_USAGE, "option -%c needs a value (see -h)", optopt);
        default: ft_die_all(FT_EXIT_USAGE, "unknown option -%c (see -h)", optopt);
        }
    }
    if (help) {
        if (ft_rank == 0)
            usage(stdout);
        ft_finalize();
        return 0;
    }
    if (optind < argc)
        ft_die_all(FT_EXIT_USAGE, "unexpected argument '%s' (see -h)", argv[optind]);
    /* a delay finer than the MPI clock's tick is no delay delay() can wait nor a time the run
     * can show (1e-300 us passed as a fault that injected nothing) */
    if (inject_usec > 0 && inject_usec * 1e-6 < MPI_Wtick())
        ft_die_all(FT_EXIT_USAGE,
                   "-i %lld:%g: %g microseconds is below the MPI clock's tick (MPI_Wtick() = %g "
                   "microseconds): the run cannot show it, nothing would be injected",
                   inject_from, inject_usec, inject_usec, MPI_Wtick() * 1e6);

    int local_rank, local_size;
    ft_node_layout(&local_rank, &local_size);
    if (ppn < 0) {
        int root_local = local_size;
        MPI_Request req;
        MPI_Ibcast(&root_local, 1, MPI_INT, 0, MPI_COMM_WORLD, &req);
        ft_wait(&req, MPI_STATUS_IGNORE, 0, 0, "rank 0's count of ranks per node");
        ppn = root_local;
    }
    const int nprocs = ft_size, me = ft_rank;
    if (nprocs % ppn != 0)
        ft_die_all(FT_EXIT_USAGE,
                   "-p %lld does not divide the number of MPI processes (%d): every node must run "
                   "ppn processes",
                   ppn, nprocs);
    const int nrecv = nprocs / (int)ppn;
    if (unit > INT_MAX / nrecv)
        ft_die_all(FT_EXIT_USAGE, "-b %lld: the largest message (%d units) exceeds %d bytes", unit,
                   nrecv, INT_MAX);
    const size_t max_size = (size_t)unit * (size_t)nrecv;
    const size_t min_size = (size_t)unit;
    const int is_receiver = (me % ppn) == 0;
    const int my_index = me / (int)ppn; /* receiver index when is_receiver */

    ft_mem_init(mem, local_rank);

    /* Send buffer: my messages to receivers 0..R-1, packed. */
    size_t *send_off = malloc(sizeof(size_t) * nrecv);
    int *send_len = malloc(sizeof(int) * nrecv);
    size_t send_total = 0;
    for (int j = 0; j < nrecv; j++) {
        send_len[j] = (int)(unit * ((me + j) % nrecv + 1));
        send_off[j] = send_total;
        send_total += (size_t)send_len[j];
    }
    unsigned char *host = malloc(send_total > max_size * nprocs ? send_total : max_size * nprocs);
    if (!send_off || !send_len || !host)
        ft_die(FT_EXIT_RUNTIME, "rank %d: out of host memory", me);
    for (int j = 0; j < nrecv; j++)
        for (size_t k = 0; k < (size_t)send_len[j]; k++)
            host[send_off[j] + k] = pattern(me, j, k);
    if (corrupt && me == 0)
        host[0] ^= 0x5a;
    unsigned char *sbuf = ft_mem_alloc(mem, send_total);
    ft_mem_put(mem, sbuf, host, send_total);

    /* Receive buffer (receivers): one slot of max_size per sender. */
    unsigned char *rbuf = NULL;
    if (is_receiver) {
        rbuf = ft_mem_alloc(mem, max_size * (size_t)nprocs);
        ft_mem_set(mem, rbuf, 0, max_size * (size_t)nprocs);
    }

    const int max_reqs = (is_receiver ? nprocs : 0) + nrecv;
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * max_reqs);
    MPI_Status *stats = malloc(sizeof(MPI_Status) * max_reqs);
    if (!reqs || !stats)
        ft_die(FT_EXIT_RUNTIME, "rank %d: out of host memory", me);

    long long bad_size = 0;
    /* Checkpoints: the iteration counts 1, 2, 4, ... <= iters, and iters. */
    long long at[66];
    int nat = 0;
    for (long long k = 1; k < iters; k *= 2)
        at[nat++] = k;
    at[nat++] = iters;
    /* Per repetition, this rank's: irecv, isend, waitall, end-to-end sums, then the cumulative
     * posting-irecv and end-to-end times at each checkpoint. */
    const size_t stride = 4 + 2 * (size_t)nat;
    double *mine = malloc(sizeof(double) * stride * (size_t)reps);
    double *maxs = malloc(sizeof(double) * stride * (size_t)reps);
    if (!mine || !maxs)
        ft_die(FT_EXIT_RUNTIME, "rank %d: out of host memory", me);
    const double injected = inject_usec * 1e-6;
    /* a wait of the timed loop may also cover the injected delay of a receiver */
    const double slack = 2 * injected;

    for (long long rep = 0; rep < reps; rep++) {
        double t_irecv = 0, t_isend = 0, t_wait = 0;
        double *row = mine + stride * (size_t)rep;
        int next = 0;
        {
            MPI_Request req;
            MPI_Ibarrier(MPI_COMM_WORLD, &req);
            ft_wait(&req, MPI_STATUS_IGNORE, slack, 0, "the barrier before repetition %lld",
                    rep + 1);
        }
        const double t_begin = MPI_Wtime();
        for (long long it = 0; it < iters; it++) {
            int nreq = 0;
            double t0 = MPI_Wtime();
            if (is_receiver) {
                for (int s = 0; s < nprocs; s++)
                    MPI_Irecv(rbuf + (size_t)s * max_size, (int)max_size, MPI_BYTE, s, TAG,
                              MPI_COMM_WORLD, &reqs[nreq++]);
                if (inject_usec > 0 && it + 1 >= inject_from)
                    delay(injected);
            }
            double t1 = MPI_Wtime();
            for (int j = 0; j < nrecv; j++)
                MPI_Isend(sbuf + send_off[j], send_len[j], MPI_BYTE, j * (int)ppn, TAG,
                          MPI_COMM_WORLD, &reqs[nreq++]);
            double t2 = MPI_Wtime();
            ft_waitall(nreq, reqs, stats, slack, 0,
                       "MPI_Waitall of iteration %lld of repetition %lld", it + 1, rep + 1);
            double t3 = MPI_Wtime();
            t_irecv += t1 - t0;
            t_isend += t2 - t1;
            t_wait += t3 - t2;
            if (next < nat && it + 1 == at[next]) {
                row[4 + 2 * next] = t_irecv;
                row[5 + 2 * next] = t3 - t_begin;
                next++;
            }
            if (is_receiver)
                for (int s = 0; s < nprocs; s++) {
                    int count = -1;
                    MPI_Get_count(&stats[s], MPI_BYTE, &count);
                    if (count != (int)(unit * ((s + my_index) % nrecv + 1)))
                        bad_size++;
                }
        }
        row[0] = t_irecv;
        row[1] = t_isend;
        row[2] = t_wait;
        row[3] = MPI_Wtime() - t_begin;
    }

    /* Contents of the last iteration's messages. */
    long long bad_data = 0, checked = 0;
    if (is_receiver) {
        ft_mem_get(mem, host, rbuf, max_size * (size_t)nprocs);
        for (int s = 0; s < nprocs; s++) {
            size_t len = (size_t)unit * ((s + my_index) % nrecv + 1);
            const unsigned char *msg = host + (size_t)s * max_size;
            for (size_t k = 0; k < len; k++)
                if (msg[k] != pattern(s, my_index, k)) {
                    if (bad_data == 0)
                        fprintf(stderr,
                                "%s: error: rank %d: message from rank %d differs at byte %zu "
                                "(expected 0x%02x, got 0x%02x)\n",
                                ft_prog, me, s, k, pattern(s, my_index, k), msg[k]);
                    bad_data++;
                    break;
                }
        }
        checked = (long long)nprocs * iters * reps;
    }

    MPI_Request gather[2];
    MPI_Ireduce(mine, maxs, (int)(stride * (size_t)reps), MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD,
                &gather[0]);
    long long counts[3] = {checked, bad_size, bad_data}, sums[3];
    MPI_Iallreduce(counts, sums, 3, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD, &gather[1]);
    ft_waitall(2, gather, MPI_STATUSES_IGNORE, 0, 0, "the other ranks' times and payload checks");
    const int failed = sums[1] != 0 || sums[2] != 0;

    if (me == 0) {
        char v[160];
        double *sorted = malloc(sizeof(double) * stride * (size_t)reps);
        if (!sorted)
            ft_die(FT_EXIT_RUNTIME, "rank 0: out of host memory");
        memcpy(sorted, maxs, sizeof(double) * stride * (size_t)reps);
        qsort(sorted, (size_t)reps, sizeof(double) * stride, by_end_to_end);
        const double *median = sorted + stride * (size_t)((reps - 1) / 2);
        printf("%s\n", DASHES);
        snprintf(v, sizeof v, "%d", nprocs);
        print_line("Total number of MPI processes", v);
        print_line("Total number of sender   processes", v);
        snprintf(v, sizeof v, "%d", nrecv);
        print_line("Total number of receiver processes", v);
        snprintf(v, sizeof v, "%lld", iters);
        print_line("Total number of iterations", v);
        snprintf(v, sizeof v, "%lld bytes", unit);
        print_line("Message block unit size", v);
        snprintf(v, sizeof v, "%zu bytes", max_size);
        print_line("Max message size", v);
        snprintf(v, sizeof v, "%zu bytes", min_size);
        print_line("Min message size", v);
        snprintf(v, sizeof v, "%.4f sec", median[0]);
        print_line("Max time of posting irecv", v);
        snprintf(v, sizeof v, "%.4f sec", median[1]);
        print_line("Max time of posting isend", v);
        snprintf(v, sizeof v, "%.4f sec", median[2]);
        print_line("Max time of MPI_Waitall()", v);
        snprintf(v, sizeof v, "%.4f sec", median[3]);
        print_line("Max end-to-end time", v);
        printf("(Max means the maximum among all %d processes)\n", nprocs);
        snprintf(v, sizeof v, "%lld (times above: the median by end-to-end time)", reps);
        print_line("Repetitions", v);
        if (inject_usec > 0) {
            snprintf(v, sizeof v, "%g us more posting irecv from iteration %lld on", inject_usec,
                     inject_from);
            print_line("Injected fault", v);
        }
        if (ft_gpu_api() != NULL) {
            snprintf(v, sizeof v, "%s%s%s", ft_mem_kind_name(mem),
                     mem == FT_MEM_DEVICE ? " " : "", mem == FT_MEM_DEVICE ? ft_gpu_api() : "");
            print_line("Buffer memory", v);
        }
        if (!failed)
            snprintf(v, sizeof v, "passed (%lld messages)", sums[0]);
        else
            snprintf(v, sizeof v, "FAILED (%lld wrong sizes, %lld wrong contents, %lld messages)",
                     sums[1], sums[2], sums[0]);
        print_line("Payload check", v);
        for (long long rep = 0; rep < reps; rep++) {
            const double *row = maxs + stride * (size_t)rep;
            printf("alltomany-times rep=%lld irecv=%.9e isend=%.9e waitall=%.9e end_to_end=%.9e "
                   "at=",
                   rep + 1, row[0], row[1], row[2], row[3]);
            for (int c = 0; c < nat; c++)
                printf("%s%lld", c ? "," : "", at[c]);
            printf(" irecv_at=");
            for (int c = 0; c < nat; c++)
                printf("%s%.9e", c ? "," : "", row[4 + 2 * c]);
            printf(" end_to_end_at=");
            for (int c = 0; c < nat; c++)
                printf("%s%.9e", c ? "," : "", row[5 + 2 * c]);
            printf("\n");
        }
        printf("%s\n", DASHES);
        free(sorted);
        fflush(stdout);
        if (failed) {
            fprintf(stderr,
                    "%s: error: payload check failed: %lld messages of wrong size, %lld with wrong "
                    "contents\n",
                    ft_prog, sums[1], sums[2]);
            fflush(stderr);
        }
    }

    if (rbuf)
        ft_mem_free(mem, rbuf);
    ft_mem_free(mem, sbuf);
    free(host);
    free(reqs);
    free(stats);
    free(send_off);
    free(send_len);
    free(mine);
    free(maxs);
    ft_barrier("the other ranks to finish"); /* MPI_Finalize may wait for every rank */
    ft_finalize();
    return failed ? FT_EXIT_PAYLOAD : 0;
}
