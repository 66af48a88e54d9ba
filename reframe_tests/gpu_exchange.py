"""Our exchange with device buffers on one GPU node, against the same exchange with host
buffers (the Crusher GPU notes' case: 8 ranks on one node, one GPU each, the device-to-device
gather-scatter at 10.9 GB/s per rank against 19.5 GB/s host-to-host).

``GpuExchangeTest`` (``+gpu`` partitions), one job, ``program``:

* ``bisection_bw``: ``bisection_bw -d host -s 4k -e 4m N REPS`` then ``-d device``: rank i
  exchanges with rank i + N/2, every rank on this node;
* ``alltomany``: ``alltomany -d host -p 1 -b 20k -n 50 -r 5`` then ``-d device``: every rank
  sends to every other (``-p 1``: each rank is a receiver), messages of 20 KiB to N x 20 KiB,
  the notes' gather-scatter sizes (up to ~20,000 double words).

N is the node's GPUs (``devices`` of type ``gpu``; ``--gpus-per-task=1 --gpu-bind=closest``
binds one to each rank under Slurm), at least 2: on a node with one GPU both ranks share it,
and the description says so. Sanity: both runs whole (the parsers' ``missing``), payloads
checked, the host run on host memory and the device run on the partition's GPU runtime; then
the notes' rule: the device exchange reaches ``min_fraction`` (0.8) of the host exchange
(bandwidth at 4 MiB for ``bisection_bw``, the inverse of the median end-to-end time for
``alltomany``). Performance: ``dd_over_hh`` (ratio, judged) and the host and device figures
(informational: their level is the node's, not the notes').
"""

from __future__ import annotations

import statistics

import reframe as rfm
from fabric_base import FabricTest
from fabric_placement import gpus_on
from fabric_types import Count, Real
from reframe.core.builtins import parameter, performance_function, run_after, run_before, variable
from scenario_math import device_fraction

from fabrictest.parsers import ParseError
from fabrictest.parsers.alltomany import missing as alltomany_missing
from fabrictest.parsers.alltomany import parse_alltomany_all, per_iteration
from fabrictest.parsers.bisection import missing as bisection_missing
from fabrictest.parsers.bisection import parse_bisection
from fabrictest.parsers.launch import EXIT_STATUS_LINE

#: bisection_bw's sizes here: 4 KiB .. 4 MiB (gpu-check.sh's), judged at the largest
BISECTION_SIZES = [4096 << k for k in range(11)]
#: the host run's output file (the device run is the job's stdout)
HOST_OUT = "host.out"
#: what each GPU runtime's build prints on its device run (``Buffer memory = device CUDA``)
RUNTIME_API = {"cuda": "CUDA", "rocm": "ROCm"}


def ranks_on(part) -> int:
    """One rank per GPU of a node of ``part``, at least 2 (an exchange needs a peer)."""
    return max(2, gpus_on(part))


@rfm.simple_test
class GpuExchangeTest(FabricTest):
    descr = "our exchange with device buffers on one GPU node: D-D must reach a fraction of H-H"
    scenario = variable(str, value="gpu-exchange")
    program = parameter(["bisection_bw", "alltomany"])
    #: the device exchange must reach this fraction of the host one (the Crusher GPU notes:
    #: 10.9/19.5 = 0.56 fails)
    min_fraction = variable(Real, value=0.8)
    #: bisection_bw repetitions per size
    num_reps = variable(Count, value=50)
    #: alltomany iterations (-n) and repetitions (-r)
    iterations = variable(Count, value=50)
    repetitions = variable(Count, value=5)

    tags = {"fabric", "gpu", "gpu-aware", "acceptance", "regression"}
    shaped_by = ("num_reps", "iterations", "repetitions")
    informational_perf_vars = [r"host_\w+", r"device_\w+"]

    def needs_gpu(self) -> bool:
        return True

    def placement_on(self, part):
        return 1, ranks_on(part)

    @run_after("setup")
    def configure(self):
        ranks = ranks_on(self.current_partition)
        self.runtime = self.extra("gpu_runtime", "cuda")
        self.exe = self.binaries.program(self.program)
        if self.program == "bisection_bw":
            self.opts = ["-s", "4k", "-e", "4m", str(ranks), str(self.num_reps)]
            self.record_shaping(iterations=None, repetitions=None)
        else:
            self.opts = ["-p", "1", "-b", "20k", "-n", str(self.iterations),
                         "-r", str(self.repetitions)]
            self.record_shaping(num_reps=None)
        self.executable = self.exe
        self.executable_opts = ["-d", "device", *self.opts]
        self.place(1, ranks, round_robin=False)
        gpus = gpus_on(self.current_partition)
        sharing = ("" if gpus >= 2 else " sharing its one GPU" if gpus == 1
                   else " (the partition declares no gpu devices)")
        self.descr = f"{self.program} on one node, {ranks} ranks{sharing}: device vs host buffers"

    @run_before("run")
    def host_run_first(self):
        cmd = [self.launch_prefix(), self.exe, "-d", "host", *self.opts, ">", HOST_OUT]
        status = EXIT_STATUS_LINE.format(what="the host-buffer run", status="$?")
        self.prerun_cmds.append(" ".join(cmd) + f'; echo "{status}" >&2')

    def launch_problems(self):
        """A crashed or refused run, with the program's own reason (``bisection_bw: error:
        -d device needs a GPU, but ...``: what this node lacks)."""
        problems = super().launch_problems()
        if problems:
            own = [line.strip() for line in self.output_text(self.stderr).splitlines()
                   if line.startswith(f"{self.program}: error:")]
            problems += own[:1]
        return problems

    def parse(self, text):
        if self.program == "bisection_bw":
            return parse_bisection(text)
        blocks = parse_alltomany_all(text)
        if len(blocks) != 1:
            raise ParseError(f"all-to-many: {len(blocks)} summary blocks, expected 1")
        return blocks[0]

    def runs(self):
        return {"host": self.parsed(HOST_OUT), "device": self.result()}

    def result_problems(self):
        problems = []
        for memory, res in self.runs().items():
            if self.program == "bisection_bw":
                found = bisection_missing(res, ranks=self.num_tasks, sizes=BISECTION_SIZES)
            else:
                found = alltomany_missing(res, iterations=self.iterations, nprocs=self.num_tasks,
                                          repetitions=self.repetitions)
                check = res.extra.get("Payload check", "")
                if not check.startswith("passed"):
                    found.append(f"payload check {check or 'not printed'}")
            problems += [f"{memory} run: {p}" for p in found]
        problems += self.memory_problems()
        if problems:
            return problems
        if self.fraction() < self.min_fraction:
            problems.append(
                f"the device exchange reaches {self.fraction():.2f} of the host one, below "
                f"{self.min_fraction} (the GPU-aware MPI is not using a direct path?)")
        return problems

    def memory_problems(self) -> list[str]:
        """The runs were on the memory they claim: ``Buffer memory = host`` and ``= device
        CUDA`` (or ROCm) in alltomany's block; bisection_bw prints no such line."""
        if self.program != "alltomany":
            return []
        want = {"host": "host", "device": f"device {RUNTIME_API.get(self.runtime, self.runtime)}"}
        return [f"{memory} run: buffer memory {res.extra.get('Buffer memory')!r}, expected "
                f"{want[memory]!r}" for memory, res in self.runs().items()
                if res.extra.get("Buffer memory") != want[memory]]

    def figure(self, memory: str) -> float:
        """The run's bandwidth (bisection_bw: MB/s per node at 4 MiB) or time (alltomany: the
        median repetition's end-to-end time, s)."""
        res = self.runs()[memory]
        if self.program == "bisection_bw":
            return res.at(BISECTION_SIZES[-1]).node_mbps
        return statistics.median(per_iteration(res, "end_to_end")) * self.iterations

    def fraction(self) -> float:
        """The device exchange's speed as a fraction of the host one's."""
        if self.program == "bisection_bw":
            return device_fraction(self.figure("device"), self.figure("host"))
        return device_fraction(1 / self.figure("device"), 1 / self.figure("host"))

    @performance_function("ratio")
    def dd_over_hh(self):
        return self.fraction()

    @performance_function("MB/s")
    def host_bw(self):
        return self.figure("host")

    @performance_function("MB/s")
    def device_bw(self):
        return self.figure("device")

    @performance_function("s")
    def host_time(self):
        return self.figure("host")

    @performance_function("s")
    def device_time(self):
        return self.figure("device")

    @run_after("setup")
    def choose_perf(self):
        figures = ("bw" if self.program == "bisection_bw" else "time")
        self.perf_variables = {
            "dd_over_hh": self.dd_over_hh(),
            f"host_{figures}": getattr(self, f"host_{figures}")(),
            f"device_{figures}": getattr(self, f"device_{figures}")(),
        }
