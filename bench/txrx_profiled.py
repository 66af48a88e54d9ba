#!/usr/bin/env python3
"""Run one txrx rank under cProfile and write its statistics to PREFIX.RANK (for
bench/bench_txrx.py --profile).

usage: mpirun -np 2 python bench/txrx_profiled.py PREFIX [txrx options...]
"""

from __future__ import annotations

import cProfile
import os
import sys


def world_rank() -> str:
    for name in ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"):
        if os.environ.get(name, "").isdigit():
            return os.environ[name]
    return "0"


def main() -> int:
    prefix, argv = sys.argv[1], sys.argv[2:]
    from fabrictest.txrx.cli import run_main

    prof = cProfile.Profile()
    code = prof.runcall(run_main, argv)
    prof.dump_stats(f"{prefix}.{world_rank()}")
    return code


if __name__ == "__main__":
    sys.exit(main())
