/*
 * congestion: a victim pair measured isolated and then while aggressors load the network,
 * in one job (the idea of GPCNeT's network_load_test, at any size).
 *
 * Ranks are numbered round-robin over NODES nodes (rank r on node r % NODES, as the suite's
 * launchers place them). Rank 0 (node 0) is the victim's sender, rank 1 (node 1) its receiver.
 * The aggressors are every rank on nodes 2 .. NODES-1:
 *   -m incast      each aggressor streams to the sink, the lowest other rank on node 1: they
 *                  share the victim receiver's link;
 *   -m all-to-all  each aggressor streams to every aggressor on another node: they load only
 *                  their own links, none of the victim's.
 * The other ranks (on nodes 0 and 1) stay idle.
 *
 * Victim probes, each phase: latency, a ping-pong of -l BYTES, -i iterations (half the round
 * trip; average and 99th percentile), then bandwidth, -s samples of a window of -w messages of
 * -b BYTES from rank 0 to rank 1 ended by a 1-byte acknowledgement (the median of the
 * samples' rates: one sample slowed by a busy core does not move it). Phase "isolated": the
 * aggressors wait; phase "loaded": they start, each tells rank 0 once a window of its messages
 * is out, and the victim waits -W seconds more for their streams to fill the queues before
 * probing; when its probes end rank 0 tells them to stop. Output of rank 0:
 *
 *   # congestion: nodes 4, ranks 8, aggressors incast (4 ranks), victim node01 -> node02
 *   # latency: 8 bytes x 200 iterations; bandwidth: 5 samples x 8 x 262144 bytes; warm-up 1.0 s
 *   phase isolated lat_avg_us 101.23 lat_p99_us 150.00 bw_gbps 0.1901
 *   phase loaded lat_avg_us 3123.40 lat_p99_us 5100.00 bw_gbps 0.0402
 *   aggressors: 4 ranks, 1234567 bytes in 2.10 s, 0.0940 Gbps
 *   congestion: done
 *
 * Errors: one line "congestion: error: ..." on stderr and MPI_Abort (common.h's exit codes).
 * Timeout (-T SEC, common.h): every exchange and barrier is tested until complete; a rank that
 * has not had its answer within SEC seconds (the warm-up added where a wait covers it; for an
 * aggressor, SEC without any of its messages moving) ends the job with one line (exit 5). The
 * ranks outside the victim wait at a barrier while it probes one phase: SEC must cover that.
 */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TAG_LAT 1
#define TAG_BW 2
#define TAG_ACK 3
#define TAG_DATA 4
#define TAG_DONE 5
#define TAG_STOP 6
#define TAG_READY 7
#define AGG_WINDOW 8 /* outstanding sends (and receives) per aggressor */
#define MAX_MSG (1LL << 28)

enum mode { INCAST, ALL_TO_ALL };

struct opts {
    int nodes;
    enum mode mode;
    long long lat_bytes, lat_iters, bw_bytes, bw_window, bw_samples, agg_bytes;
    double warmup_s;
};

struct probe {
    double lat_avg_us, lat_p99_us, bw_gbps;
};

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: %s -n NODES -m incast|all-to-all [OPTION]...\n"
            "  -n NODES  nodes of the job (ranks are numbered round-robin over them)\n"
            "  -m MODE   aggressors: incast (into the victim's receiving node) or all-to-all\n"
            "            (among the nodes other than the victim's)\n"
            "  -l BYTES  latency message (default 8)      -i N  latency iterations (default 200)\n"
            "  -b BYTES  bandwidth message (default 256k) -w N  messages per sample (default 8)\n"
            "  -s N      bandwidth samples (default 5)    -a BYTES  aggressor message (default 256k)\n"
            "  -W SEC    warm-up of the aggressors before the loaded probes (default 1.0)\n"
            "  -T SEC    end the job when a rank has not answered within SEC seconds (default "
            "%g)\n"
            "  -h        print this help\n",
            ft_prog, FT_DEFAULT_TIMEOUT_S);
}

static long long size_arg(const char *text, const char *what, long long lo)
{
    long long v;
    if (ft_parse_size(text, MAX_MSG, &v) != 0 || v < lo)
        ft_die_all(FT_EXIT_USAGE, "%s: invalid value '%s' (an integer >= %lld, at most %lld)",
                   what, text ? text : "", lo, MAX_MSG);
    return v;
}

static struct opts parse_args(int argc, char **argv)
{
    struct opts o = {0, INCAST, 8, 200, 256 << 10, 8, 5, 256 << 10, 1.0};
    int have_mode = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-h") == 0) {
            if (ft_rank == 0)
                usage(stdout);
            ft_finalize();
            exit(0);
        }
        if (a[0] != '-' || a[1] == '\0' || a[2] != '\0' || strchr("nmlibwsaWT", a[1]) == NULL)
            ft_die_all(FT_EXIT_USAGE, "unknown argument '%s' (-h for help)", a);
        if (v == NULL)
            ft_die_all(FT_EXIT_USAGE, "option %s needs a value", a);
        i++;
        switch (a[1]) {
        case 'n': o.nodes = (int)size_arg(v, "-n", 1); break;
        case 'm':
            if (strcmp(v, "incast") == 0)
                o.mode = INCAST;
            else if (strcmp(v, "all-to-all") == 0)
                o.mode = ALL_TO_ALL;
            else
                ft_die_all(FT_EXIT_USAGE, "-m: unknown mode '%s' (incast or all-to-all)", v);
            have_mode = 1;
            break;
        case 'l': o.lat_bytes = size_arg(v, "-l", 1); break;
        case 'i': o.lat_iters = size_arg(v, "-i", 1); break;
        case 'b': o.bw_bytes = size_arg(v, "-b", 1); break;
        case 'w': o.bw_window = size_arg(v, "-w", 1); break;
        case 's': o.bw_samples = size_arg(v, "-s", 1); break;
        case 'a': o.agg_bytes = size_arg(v, "-a", 1); break;
        case 'T': ft_parse_timeout(v); break;
        case 'W': {
            char *end;
            o.warmup_s = strtod(v, &end);
            if (*end != '\0' || !(o.warmup_s >= 0 && o.warmup_s <= 600))
                ft_die_all(FT_EXIT_USAGE, "-W: invalid warm-up '%s' (0 to 600 seconds)", v);
            break;
        }
        }
    }
    if (o.nodes == 0 || !have_mode)
        ft_die_all(FT_EXIT_USAGE, "-n NODES and -m MODE are required (-h for help)");
    return o;
}

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* Waits without spinning (ft_waitall's quiet mode): ranks that only wait must leave the cores
 * to the victim (the nodes of a small cluster may share them). */
static void quiet_barrier(double extra_s, const char *what)
{
    MPI_Request req;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    ft_wait(&req, MPI_STATUS_IGNORE, extra_s, 1, "%s", what);
}

/* A blocking send or receive with the deadline (the victim's probes spin, as MPI does). */
static void send_to(const void *buf, long long bytes, int peer, int tag, const char *what)
{
    MPI_Request req;
    MPI_Isend(buf, (int)bytes, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &req);
    ft_wait(&req, MPI_STATUS_IGNORE, 0, 0, "rank %d to take %s", peer, what);
}

static void recv_from(void *buf, long long bytes, int peer, int tag, double extra_s,
                      const char *what)
{
    MPI_Request req;
    MPI_Irecv(buf, (int)bytes, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &req);
    if (peer == MPI_ANY_SOURCE)
        ft_wait(&req, MPI_STATUS_IGNORE, extra_s, 0, "%s", what);
    else
        ft_wait(&req, MPI_STATUS_IGNORE, extra_s, 0, "%s from rank %d", what, peer);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The victim's probes; rank 0 returns the figures, rank 1 only takes part. */
static struct probe victim_probes(const struct opts *o, char *buf, int peer)
{
    struct probe p = {0, 0, 0};
    double *half_rtt = ft_rank == 0 ? malloc(sizeof(double) * o->lat_iters) : NULL;
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * o->bw_window);
    if ((ft_rank == 0 && !half_rtt) || !reqs)
        ft_die(FT_EXIT_RUNTIME, "out of memory");
    for (long long i = -1; i < o->lat_iters; i++) { /* i = -1: untimed warm-up */
        if (ft_rank == 0) {
            double t0 = MPI_Wtime();
            send_to(buf, o->lat_bytes, peer, TAG_LAT, "a latency probe");
            recv_from(buf, o->lat_bytes, peer, TAG_LAT, 0, "a latency probe's answer");
            if (i >= 0)
                half_rtt[i] = (MPI_Wtime() - t0) * 1e6 / 2;
        } else {
            recv_from(buf, o->lat_bytes, peer, TAG_LAT, 0, "a latency probe");
            send_to(buf, o->lat_bytes, peer, TAG_LAT, "a latency probe's answer");
        }
    }
    double *rates = ft_rank == 0 ? malloc(sizeof(double) * o->bw_samples) : NULL;
    if (ft_rank == 0 && !rates)
        ft_die(FT_EXIT_RUNTIME, "out of memory");
    for (long long s = -1; s < o->bw_samples; s++) {
        double t0 = MPI_Wtime();
        for (long long k = 0; k < o->bw_window; k++) {
            if (ft_rank == 0)
                MPI_Isend(buf, (int)o->bw_bytes, MPI_BYTE, peer, TAG_BW, MPI_COMM_WORLD, &reqs[k]);
            else
                MPI_Irecv(buf, (int)o->bw_bytes, MPI_BYTE, peer, TAG_BW, MPI_COMM_WORLD, &reqs[k]);
        }
        ft_waitall((int)o->bw_window, reqs, MPI_STATUSES_IGNORE, 0, 0,
                   "a window of bandwidth probes with rank %d", peer);
        if (ft_rank == 0) {
            recv_from(buf, 1, peer, TAG_ACK, 0, "a bandwidth sample's acknowledgement");
            double t = MPI_Wtime() - t0;
            if (s >= 0)
                rates[s] = (double)o->bw_bytes * o->bw_window * 8 / t / 1e9;
        } else {
            send_to(buf, 1, peer, TAG_ACK, "a bandwidth sample's acknowledgement");
        }
    }
    if (ft_rank == 0) {
        double sum = 0;
        for (long long i = 0; i < o->lat_iters; i++)
            sum += half_rtt[i];
        qsort(half_rtt, o->lat_iters, sizeof(double), cmp_double);
        long long k = (99 * o->lat_iters + 99) / 100 - 1; /* ceil(0.99 n) - 1 */
        p.lat_avg_us = sum / o->lat_iters;
        p.lat_p99_us = half_rtt[k < 0 ? 0 : k];
        qsort(rates, o->bw_samples, sizeof(double), cmp_double);
        long long m = o->bw_samples / 2;
        p.bw_gbps = o->bw_samples % 2 ? rates[m] : (rates[m - 1] + rates[m]) / 2;
        free(half_rtt);
        free(rates);
    }
    free(reqs);
    return p;
}

/* One aggressor: stream to `dests` and take from `nsrc` senders until rank 0 says stop; then,
 * once its data are out, tell each destination it is done (after its data: MPI keeps a pair's
 * order), and return when every sender's done is in. A sink (incast) has no destinations and
 * only takes. Waits sleep between tests, to leave the cores to the victim. Returns the bytes
 * this rank sent. */
static long long aggress(const struct opts *o, const int *dests, int ndest, int nsrc)
{
    int nsend = ndest > 0 ? AGG_WINDOW : 0, nrecv = nsrc > 0 ? AGG_WINDOW : 0;
    int r0 = nsend, stop = nsend + nrecv, d0 = stop + 1, nreq = d0 + ndest;
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * nreq);
    char *sendbuf = calloc(1, o->agg_bytes), *recvbuf = malloc(o->agg_bytes * (nrecv + 1));
    if (!reqs || !sendbuf || !recvbuf)
        ft_die(FT_EXIT_RUNTIME, "out of memory for %lld-byte aggressor buffers", o->agg_bytes);
    for (int k = 0; k < nreq; k++)
        reqs[k] = MPI_REQUEST_NULL;
    char stopmsg;
    if (ndest > 0)
        MPI_Irecv(&stopmsg, 1, MPI_BYTE, 0, TAG_STOP, MPI_COMM_WORLD, &reqs[stop]);
    for (int k = 0; k < nrecv; k++)
        MPI_Irecv(recvbuf + k * o->agg_bytes, (int)o->agg_bytes, MPI_BYTE, MPI_ANY_SOURCE,
                  MPI_ANY_TAG, MPI_COMM_WORLD, &reqs[r0 + k]);
    long long sent = 0, next = 0;
    for (int k = 0; k < nsend; k++)
        MPI_Isend(sendbuf, (int)o->agg_bytes, MPI_BYTE, dests[next++ % ndest], TAG_DATA,
                  MPI_COMM_WORLD, &reqs[k]);
    int stopping = ndest == 0, in_flight = nsend, dones_posted = 0, dones = 0;
    /* the deadline runs from the last message that moved: a sink whose aggressors stopped,
     * an aggressor whose destination stopped taking, or rank 0 never saying stop */
    double moved = MPI_Wtime();
    const double limit = ft_deadline_s(0);
    for (;;) {
        if (stopping && in_flight == 0 && !dones_posted) {
            for (int d = 0; d < ndest; d++)
                MPI_Isend(NULL, 0, MPI_BYTE, dests[d], TAG_DONE, MPI_COMM_WORLD, &reqs[d0 + d]);
            dones_posted = 1;
        }
        if (dones_posted && dones == nsrc) { /* the receives still posted have no sender left */
            for (int k = r0; k < r0 + nrecv; k++)
                if (reqs[k] != MPI_REQUEST_NULL) {
                    MPI_Cancel(&reqs[k]);
                    MPI_Wait(&reqs[k], MPI_STATUS_IGNORE); /* a cancel completes locally */
                }
            ft_waitall(ndest, &reqs[d0], MPI_STATUSES_IGNORE, 0, 1,
                       "the aggressors' destinations to take their last message");
            break;
        }
        int idx, flag;
        MPI_Status st;
        MPI_Testany(nreq, reqs, &idx, &flag, &st);
        if (!flag || idx == MPI_UNDEFINED) {
            const double idle = MPI_Wtime() - moved;
            if (idle > limit)
                ft_timed_out(idle, "any aggressor message to move (%s)",
                             dones_posted ? "the other aggressors' last messages"
                             : stopping ? "sends in flight" : "streaming, or rank 0's stop");
            sleep_us(50);
            continue;
        }
        moved = MPI_Wtime();
        if (idx < nsend) {
            sent += o->agg_bytes;
            if (sent == AGG_WINDOW * o->agg_bytes) /* a window out: this stream flows */
                send_to(NULL, 0, 0, TAG_READY, "this aggressor's ready");
            if (stopping)
                in_flight--;
            else
                MPI_Isend(sendbuf, (int)o->agg_bytes, MPI_BYTE, dests[next++ % ndest], TAG_DATA,
                          MPI_COMM_WORLD, &reqs[idx]);
        } else if (idx < stop) {
            if (st.MPI_TAG == TAG_DONE)
                dones++;
            if (dones < nsrc)
                MPI_Irecv(recvbuf + (idx - r0) * o->agg_bytes, (int)o->agg_bytes, MPI_BYTE,
                          MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &reqs[idx]);
        } else if (idx == stop) {
            stopping = 1;
        }
    }
    free(reqs);
    free(sendbuf);
    free(recvbuf);
    return sent;
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv, "congestion");
    struct opts o = parse_args(argc, argv);
    int n = ft_size, nodes = o.nodes;
    if (nodes < 3 || (o.mode == ALL_TO_ALL && nodes < 4))
        ft_die_all(FT_EXIT_USAGE, "-m %s needs at least %d nodes, -n says %d",
                   o.mode == INCAST ? "incast" : "all-to-all", o.mode == INCAST ? 3 : 4, nodes);
    if (n % nodes != 0)
        ft_die_all(FT_EXIT_USAGE, "%d ranks do not fill %d nodes evenly", n, nodes);
    if (o.mode == INCAST && n / nodes < 2)
        ft_die_all(FT_EXIT_USAGE, "incast needs 2 ranks per node (the victim's receiver and the "
                                  "aggressors' sink on one node), has %d", n / nodes);

    /* Check the placement: ranks of one node index share a host, and the victim's two hosts
     * differ, unless every rank is on one host (ranks standing for nodes, for a functional
     * run without a network between them). */
    char host[MPI_MAX_PROCESSOR_NAME] = {0};
    int len;
    MPI_Get_processor_name(host, &len);
    char *hosts = malloc((size_t)n * MPI_MAX_PROCESSOR_NAME);
    if (!hosts)
        ft_die(FT_EXIT_RUNTIME, "out of memory");
    MPI_Request hreq;
    MPI_Iallgather(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, hosts, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                   MPI_COMM_WORLD, &hreq);
    ft_wait(&hreq, MPI_STATUS_IGNORE, 0, 0, "the other ranks' host names");
#define HOST(r) (hosts + (size_t)(r) * MPI_MAX_PROCESSOR_NAME)
    int one_host = 1;
    for (int r = 1; r < n; r++)
        one_host &= strcmp(HOST(r), HOST(0)) == 0;
    for (int r = 0; r < n && !one_host; r++) {
        if (strcmp(HOST(r), HOST(r % nodes)) != 0)
            ft_die_all(FT_EXIT_USAGE, "rank %d is on %s but rank %d of the same node index on %s:"
                       " ranks must be placed round-robin over the %d nodes", r, HOST(r),
                       r % nodes, HOST(r % nodes), nodes);
        if (r < nodes && r > 0 && strcmp(HOST(r), HOST(0)) == 0)
            ft_die_all(FT_EXIT_USAGE, "node indices 0 and %d are both on %s", r, HOST(r));
    }

    /* Roles. */
    int is_agg = ft_rank % nodes >= 2, sink_rank = 1 + nodes; /* second rank on node 1 */
    int naggs = 0, *dests = malloc(sizeof(int) * n), ndest = 0, nsrc = 0;
    if (!dests)
        ft_die(FT_EXIT_RUNTIME, "out of memory");
    for (int r = 0; r < n; r++)
        naggs += r % nodes >= 2;
    if (is_agg && o.mode == INCAST) {
        dests[ndest++] = sink_rank;
    } else if (is_agg) {
        for (int r = 0; r < n; r++)
            if (r % nodes >= 2 && r % nodes != ft_rank % nodes)
                dests[ndest++] = r;
        nsrc = ndest;
    }

    size_t vbytes = (size_t)(o.lat_bytes > o.bw_bytes ? o.lat_bytes : o.bw_bytes);
    char *vbuf = ft_rank < 2 ? calloc(1, vbytes) : NULL;
    if (ft_rank < 2 && !vbuf)
        ft_die(FT_EXIT_RUNTIME, "out of memory for %zu-byte victim buffers", vbytes);
    if (ft_rank == 0) {
        printf("# congestion: nodes %d, ranks %d, aggressors %s (%d ranks), victim %s -> %s%s\n",
               nodes, n, o.mode == INCAST ? "incast" : "all-to-all", naggs, HOST(0), HOST(1),
               one_host ? ", one host" : "");
        printf("# latency: %lld bytes x %lld iterations; bandwidth: %lld samples x %lld x %lld "
               "bytes; aggressors: %lld bytes; warm-up %.1f s\n", o.lat_bytes, o.lat_iters,
               o.bw_samples, o.bw_window, o.bw_bytes, o.agg_bytes, o.warmup_s);
        fflush(stdout);
    }

    /* Phase isolated: only the victim. */
    struct probe iso = {0, 0, 0}, load = {0, 0, 0};
    if (ft_rank < 2)
        iso = victim_probes(&o, vbuf, 1 - ft_rank);
    quiet_barrier(0, "the victim's isolated probes");

    /* Phase loaded. */
    long long sent = 0;
    double t0 = MPI_Wtime(), t_agg = 0;
    if (ft_rank < 2) {
        if (ft_rank == 0) { /* every aggressor streams, and has for the warm-up */
            for (int r = 0; r < naggs; r++)
                recv_from(NULL, 0, MPI_ANY_SOURCE, TAG_READY, 0, "every aggressor's ready");
            sleep_us((long)(o.warmup_s * 1e6));
        }
        if (ft_rank == 1) { /* wait for rank 0's warm-up without spinning */
            char go;
            MPI_Request req;
            MPI_Irecv(&go, 1, MPI_BYTE, 0, TAG_ACK, MPI_COMM_WORLD, &req);
            ft_wait(&req, MPI_STATUS_IGNORE, o.warmup_s, 1,
                    "rank 0's go after the aggressors' warm-up");
        } else {
            char go = 1;
            send_to(&go, 1, 1, TAG_ACK, "the go after the warm-up");
        }
        load = victim_probes(&o, vbuf, 1 - ft_rank);
        if (ft_rank == 0) {
            char stop = 1;
            for (int r = 0; r < n; r++)
                if (r % nodes >= 2)
                    send_to(&stop, 1, r, TAG_STOP, "its stop");
        }
    } else if (is_agg) {
        sent = aggress(&o, dests, ndest, nsrc);
        t_agg = MPI_Wtime() - t0;
    } else if (o.mode == INCAST && ft_rank == sink_rank) {
        aggress(&o, NULL, 0, naggs);
    }
    quiet_barrier(o.warmup_s, "the loaded phase to end (after the warm-up)");
    long long sent_total = 0;
    double t_max = 0;
    MPI_Request sums[2];
    MPI_Ireduce(&sent, &sent_total, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD, &sums[0]);
    MPI_Ireduce(&t_agg, &t_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD, &sums[1]);
    ft_waitall(2, sums, MPI_STATUSES_IGNORE, 0, 1, "the aggressors' totals");
    if (ft_rank == 0) {
        printf("phase isolated lat_avg_us %.2f lat_p99_us %.2f bw_gbps %.4f\n", iso.lat_avg_us,
               iso.lat_p99_us, iso.bw_gbps);
        printf("phase loaded lat_avg_us %.2f lat_p99_us %.2f bw_gbps %.4f\n", load.lat_avg_us,
               load.lat_p99_us, load.bw_gbps);
        printf("aggressors: %d ranks, %lld bytes in %.2f s, %.4f Gbps\n", naggs, sent_total,
               t_max, t_max > 0 ? sent_total * 8 / t_max / 1e9 : 0.0);
        fflush(stdout);
    }
    quiet_barrier(0, "rank 0's figures");
    if (ft_rank == 0) {
        printf("congestion: done\n");
        fflush(stdout);
    }
    free(hosts);
    free(dests);
    free(vbuf);
    quiet_barrier(0, "the other ranks to finish"); /* MPI_Finalize may wait for every rank */
    ft_finalize();
    return 0;
}
