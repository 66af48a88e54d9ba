/* fabrictest C MPI benchmarks: shared helpers (errors, argument parsing, node layout). */
#include "common.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *ft_prog = "fabrictest";
int ft_rank = 0;
int ft_size = 1;

void ft_init(int *argc, char ***argv, const char *prog)
{
    ft_prog = prog;
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &ft_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ft_size);
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
     * ourselves should that not happen within a minute. */
    for (int i = 0; i < 600; i++)
        usleep(100000);
    MPI_Abort(MPI_COMM_WORLD, code);
    exit(code);
}

void ft_die_first(int failed, int code, const char *message)
{
    int mine = failed ? ft_rank : ft_size, first = ft_size;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first == ft_size)
        return;
    if (first == ft_rank)
        ft_die(code, "%s", message);
    for (int i = 0; i < 600; i++) /* wait for that rank's abort to end the job */
        usleep(100000);
    MPI_Abort(MPI_COMM_WORLD, code);
    exit(code);
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
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, ft_rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, local_rank);
    MPI_Comm_size(node, local_size);
    MPI_Comm_free(&node);
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
