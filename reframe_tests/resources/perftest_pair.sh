#!/bin/bash
# perftest_pair.sh SERVER_HOST COMMAND [ARGS...]
# Launched with 2 ranks: rank 0 runs COMMAND as the perftest server (output to server.out),
# rank 1 waits for it and runs COMMAND ... SERVER_HOST as the client (output to stdout).
server=$1
shift
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${PMIX_RANK:-${SLURM_PROCID:-0}}}}
if [ "$rank" = 0 ]; then
    exec "$@" > server.out 2>&1
fi
sleep "${PERFTEST_CLIENT_DELAY:-3}"
exec "$@" "$server"
