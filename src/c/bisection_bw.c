/*
 * bisection_bw: MPI bisection bandwidth.
 *
 * Written for fabrictest from the documented behaviour of the HPE Slingshot acceptance
 * bisection test: an even number n of ranks; rank i exchanges with partner i + n/2 (and
 * i - n/2 for the upper half). For each message size from START to STOP (doubling): one
 * untimed warm-up exchange, a barrier, then NUM_REPS timed rounds of MPI_Isend + MPI_Recv +
 * MPI_Wait with the partner, a barrier, and one line on rank 0:
 *
 *   N Ranks, Msg Size: %9.2d bytes, Node BW: %9.2f MB/sec/node,  Aggregate BW: %6.2f GB/sec
 *
 * where MB = n * NUM_REPS * size / 1e6 bytes moved, t = rank 0's time between the barriers,
 * Node BW = MB / t / nodes (nodes = n / PPN) and Aggregate BW = MB / 1000 / t.
 * With -v, one line per pair: "Pair (i<->j) Elapsed time = %9.2f sec (%9.2f MB/sec)", the
 * lower rank's own loop time and (MB / (n/2)) / that time.
 *
 * Command line as the original: `bisection_bw PPN NUM_REPS`, plus options of ours.
 * Payload check: after each size's loop every rank checks the size and every byte of the
 * last message it received; a mismatch ends the job (exit 4) with one line naming it.
 *
 * Timeout (-T SEC, common.h): every exchange and barrier is tested until complete; a rank that
 * has not had its answer within SEC seconds ends the job with one line (exit 5). The barrier
 * after a size's timed loop waits for the slowest pair's whole loop: SEC must cover it.
 */
#include "common.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TAG 42
#define DEFAULT_START 1024
#define DEFAULT_STOP (2 * 1024 * 1024)
#define MAX_MSG (1LL << 30)

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: %s [OPTION]... PPN NUM_REPS\n"
            "  PPN       number of processes per node (must divide the number of ranks)\n"
            "  NUM_REPS  timed exchanges per message size\n"
            "  Needs an even number of ranks; rank i exchanges with rank i +/- n/2.\n"
            "Options:\n"
            "  -h        print this help\n"
            "  -s BYTES  first message size (default %d; k/m/g suffixes accepted)\n"
            "  -e BYTES  last message size, reached by doubling (default %d)\n"
            "  -v        print the elapsed time and bandwidth of every pair\n"
            "  -d MEM    buffer memory: host or device (device needs a CUDA or ROCm build; "
            "default %s)\n"
            "  -x        corrupt one byte sent by rank 0, to see the payload check fail\n"
            "  -T SEC    end the job when a rank has not answered within SEC seconds (default "
            "%g)\n",
            ft_prog, DEFAULT_START, DEFAULT_STOP, ft_gpu_api() ? "device" : "host",
            FT_DEFAULT_TIMEOUT_S);
}

static inline unsigned char pattern(int sender, long long size, size_t k)
{
    return (unsigned char)((sender * 131u + (unsigned)(size % 997) * 29u + (unsigned)k * 7u + 3u) %
                           251u);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv, "bisection_bw");

    long long start = DEFAULT_START, stop = DEFAULT_STOP;
    int verbose = 0, corrupt = 0, help = 0;
    ft_mem_kind mem = ft_gpu_api() ? FT_MEM_DEVICE : FT_MEM_HOST;
    int opt;
    opterr = 0;
    while ((opt = getopt(argc, argv, ":hs:e:vd:xT:")) != -1) {
        switch (opt) {
        case 'h': help = 1; break;
        case 's':
            if (ft_parse_size(optarg, MAX_MSG, &start) != 0 || start < 1)
                ft_die_all(FT_EXIT_USAGE, "-s expects a message size from 1 byte to 1g, not '%s'",
                           optarg);
            break;
        case 'e':
            if (ft_parse_size(optarg, MAX_MSG, &stop) != 0 || stop < 1)
                ft_die_all(FT_EXIT_USAGE, "-e expects a message size from 1 byte to 1g, not '%s'",
                           optarg);
            break;
        case 'v': verbose = 1; break;
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
    if (argc - optind != 2)
        ft_die_all(FT_EXIT_USAGE, "expected the two arguments PPN NUM_REPS, got %d (see -h)",
                   argc - optind);
    long long ppn, reps;
    if (ft_parse_size(argv[optind], INT_MAX, &ppn) != 0 || ppn < 1)
        ft_die_all(FT_EXIT_USAGE, "PPN must be a number of processes per node >= 1, not '%s'",
                   argv[optind]);
    if (ft_parse_size(argv[optind + 1], INT_MAX, &reps) != 0 || reps < 1)
        ft_die_all(FT_EXIT_USAGE, "NUM_REPS must be a number of repetitions >= 1, not '%s'",
                   argv[optind + 1]);
    if (start > stop)
        ft_die_all(FT_EXIT_USAGE, "-s %lld is larger than -e %lld", start, stop);

    const int num_procs = ft_size, my_rank = ft_rank;
    if (num_procs % 2 != 0)
        ft_die_all(FT_EXIT_USAGE, "needs an even number of MPI processes, got %d", num_procs);
    if (num_procs % ppn != 0)
        ft_die_all(FT_EXIT_USAGE, "PPN %lld does not divide the number of MPI processes (%d)", ppn,
                   num_procs);
    const int num_nodes = num_procs / (int)ppn;
    const int half = num_procs / 2;
    const int partner = my_rank < half ? my_rank + half : my_rank - half;

    int local_rank, local_size;
    ft_node_layout(&local_rank, &local_size);
    ft_mem_init(mem, local_rank);

    if (my_rank == 0) {
        /* the original's header, as rank 0 printed it */
        printf("\n Number of Process %d", num_procs);
        printf("PPN: %lld, Number of nodes: %d, Num_reps = %lld\n\n", ppn, num_nodes, reps);
        fflush(stdout);
    }

    unsigned char *host = malloc((size_t)stop);
    unsigned char *sendbuf = ft_mem_alloc(mem, (size_t)stop);
    unsigned char *recvbuf = ft_mem_alloc(mem, (size_t)stop);
    double *elapsed = malloc(sizeof(double) * num_procs);
    if (!host || !elapsed)
        ft_die(FT_EXIT_RUNTIME, "rank %d: out of host memory", my_rank);

    for (long long size = start; size <= stop; size *= 2) {
        const int count = (int)size;
        for (size_t k = 0; k < (size_t)size; k++)
            host[k] = pattern(my_rank, size, k);
        if (corrupt && my_rank == 0)
            host[size / 2] ^= 0x5a;
        ft_mem_put(mem, sendbuf, host, (size_t)size);
        ft_mem_set(mem, recvbuf, 0xff, (size_t)size);

        MPI_Status status;
        MPI_Request req, rreq;
        /* warm-up, not timed: one exchange with the partner */
        MPI_Irecv(recvbuf, count, MPI_BYTE, partner, TAG, MPI_COMM_WORLD, &rreq);
        MPI_Isend(sendbuf, count, MPI_BYTE, partner, TAG, MPI_COMM_WORLD, &req);
        ft_wait(&rreq, &status, 0, 0, "rank %d's warm-up message of %lld bytes", partner, size);
        ft_wait(&req, MPI_STATUS_IGNORE, 0, 0, "rank %d to take the warm-up message", partner);

        {
            MPI_Request breq;
            MPI_Ibarrier(MPI_COMM_WORLD, &breq);
            ft_wait(&breq, MPI_STATUS_IGNORE, 0, 0, "the barrier before the %lld-byte loop", size);
        }
        double begin_time = MPI_Wtime();
        double my_start = begin_time;
        for (long long i = 0; i < reps; i++) {
            MPI_Isend(sendbuf, count, MPI_BYTE, partner, TAG, MPI_COMM_WORLD, &req);
            MPI_Irecv(recvbuf, count, MPI_BYTE, partner, TAG, MPI_COMM_WORLD, &rreq);
            ft_wait(&rreq, &status, 0, 0, "rank %d's message %lld of %lld bytes", partner, i + 1,
                    size);
            ft_wait(&req, MPI_STATUS_IGNORE, 0, 0, "rank %d to take message %lld", partner, i + 1);
        }
        double my_time = MPI_Wtime() - my_start;
        {
            MPI_Request breq;
            MPI_Ibarrier(MPI_COMM_WORLD, &breq);
            ft_wait(&breq, MPI_STATUS_IGNORE, 0, 0,
                    "the other pairs to finish the %lld-byte loop", size);
        }
        double final_time = MPI_Wtime();

        /* payload check of the last message received */
        int got = -1;
        MPI_Get_count(&status, MPI_BYTE, &got);
        if (got != count)
            ft_die(FT_EXIT_PAYLOAD, "rank %d: received %d bytes from rank %d, expected %d", my_rank,
                   got, partner, count);
        ft_mem_get(mem, host, recvbuf, (size_t)size);
        for (size_t k = 0; k < (size_t)size; k++)
            if (host[k] != pattern(partner, size, k))
                ft_die(FT_EXIT_PAYLOAD,
                       "rank %d: message of %lld bytes from rank %d differs at byte %zu "
                       "(expected 0x%02x, got 0x%02x)",
                       my_rank, size, partner, k, pattern(partner, size, k), host[k]);

        double mbytes_xfered = (double)num_procs * (double)reps * (double)size / (1000.0 * 1000.0);
        if (my_rank == 0) {
            double t = final_time - begin_time;
            printf("%d Ranks, Msg Size: %9.2d bytes, Node BW: %9.2f MB/sec/node,  Aggregate BW: "
                   "%6.2f GB/sec\n",
                   num_procs, count, mbytes_xfered / t / num_nodes, (mbytes_xfered / 1000) / t);
            fflush(stdout);
        }
        if (verbose) {
            MPI_Request greq;
            MPI_Igather(&my_time, 1, MPI_DOUBLE, elapsed, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, &greq);
            ft_wait(&greq, MPI_STATUS_IGNORE, 0, 0, "the pairs' times of the %lld-byte loop", size);
            if (my_rank == 0) {
                for (int i = 0; i < half; i++)
                    printf("Pair (%d<->%d) Elapsed time = %9.2f sec (%9.2f MB/sec)\n", i, i + half,
                           elapsed[i], (mbytes_xfered / half) / elapsed[i]);
                fflush(stdout);
            }
        }
        if (size > stop / 2)
            break; /* doubling again would pass stop (and might overflow) */
    }

    ft_mem_free(mem, sendbuf);
    ft_mem_free(mem, recvbuf);
    free(host);
    free(elapsed);
    ft_barrier("the other ranks to finish"); /* MPI_Finalize may wait for every rank */
    ft_finalize();
    return 0;
}
