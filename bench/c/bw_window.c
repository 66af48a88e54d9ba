/*
 * bw_window: windowed MPI bandwidth baseline for bench/bench_txrx.py.
 *
 * The same traffic as `txrx --method mpi`, written in C: rank 1 streams NMSG messages of
 * SIZE bytes to rank 0 from a ring of BLKS blocks of CMSGS message buffers, keeping up to
 * BLKS blocks of non-blocking sends in flight (a block is reused once MPI_Waitall says all its
 * sends completed); rank 0 keeps its whole ring of receives posted and re-posts a block as soon
 * as it completed. Nothing else is done per message, so this is what the MPI library can do
 * with this buffer layout: the ceiling for the Python tool.
 *
 * usage: mpirun -np 2 bw_window SIZE BLKS CMSGS NMSG
 * prints (rank 0): size=SIZE messages=NMSG elapsed=SECONDS gbps=GBPS
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static long long arg(char **argv, int i)
{
    char buf[64], *o = buf;
    const char *s = argv[i];
    for (; *s && o < buf + sizeof buf - 1; s++)
        if (*s != '_')
            *o++ = *s;
    *o = 0;
    return atoll(buf);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 5 || size != 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np 2 %s SIZE BLKS CMSGS NMSG\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    long long msg = arg(argv, 1), blks = arg(argv, 2), cm = arg(argv, 3), nmsg = arg(argv, 4);
    long long slots = blks * cm;
    if (msg <= 0 || blks <= 0 || cm <= 0 || nmsg <= 0 || msg > (1LL << 30)) {
        if (rank == 0)
            fprintf(stderr, "bw_window: bad arguments\n");
        MPI_Finalize();
        return 2;
    }
    /* 2 MiB aligned and transparent huge pages, as txrx allocates its rings (buffers.py) */
    char *ring = NULL;
    if (posix_memalign((void **)&ring, 1 << 21, (size_t)(slots * msg)))
        ring = NULL;
#ifdef MADV_HUGEPAGE
    if (ring)
        madvise(ring, (size_t)(slots * msg), MADV_HUGEPAGE);
#endif
    MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)slots);
    if (!ring || !req) {
        fprintf(stderr, "bw_window: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(ring, 1, (size_t)(slots * msg));
    for (long long i = 0; i < slots; i++)
        req[i] = MPI_REQUEST_NULL;

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (rank == 1) { /* transmitter */
        long long nwin = (nmsg + cm - 1) / cm;
        for (long long w = 0; w < nwin; w++) {
            long long b = w % blks, first = w * cm;
            long long n = nmsg - first < cm ? nmsg - first : cm;
            MPI_Waitall((int)cm, req + b * cm, MPI_STATUSES_IGNORE); /* block free again */
            for (long long i = 0; i < n; i++)
                MPI_Isend(ring + (b * cm + i) * msg, (int)msg, MPI_BYTE, 0, 1, MPI_COMM_WORLD,
                          req + b * cm + i);
        }
        MPI_Waitall((int)slots, req, MPI_STATUSES_IGNORE);
    } else { /* receiver */
        long long posted = 0, done = 0;
        for (; posted < nmsg && posted < slots; posted++)
            MPI_Irecv(ring + posted * msg, (int)msg, MPI_BYTE, 1, 1, MPI_COMM_WORLD, req + posted);
        while (done < nmsg) {
            long long slot = done % slots;
            long long n = nmsg - done < cm ? nmsg - done : cm;
            MPI_Waitall((int)n, req + slot, MPI_STATUSES_IGNORE);
            done += n;
            for (long long i = 0; i < n && posted < nmsg; i++, posted++)
                MPI_Irecv(ring + (slot + i) * msg, (int)msg, MPI_BYTE, 1, 1, MPI_COMM_WORLD,
                          req + slot + i);
        }
    }
    double elapsed = MPI_Wtime() - t0;
    if (rank == 0)
        printf("size=%lld messages=%lld elapsed=%.9f gbps=%.6f\n", msg, nmsg, elapsed,
               (double)msg * (double)nmsg * 8.0 / elapsed / 1e9);
    free(req);
    free(ring);
    MPI_Finalize();
    return 0;
}
