"""Node-pair sweep: `fabric-sweep` inside one allocation of every node of a partition.

The job script runs `fabric-sweep --launcher slurm` once (local launcher); the sweep itself
starts concurrent `srun` steps, each pinned to its two nodes, both directions of every pair,
in a few rounds (2 screening, extra ones for ambiguous nodes up to `max_rounds`), and ends
with `suspect: NODE send|receive ...` lines or `suspects: none`.

Sanity (the base's, fail-closed): the sweep ran to its verdict (its exit status printed and 0
or 1, the `verdict:` line printed, `sweep.json` whole: figures and verdict). Sanity does not
judge the verdict, so that the figures are recorded whatever it is.
Performance: every figure the sweep measured (`figures` of `sweep.json`): the cluster level,
each node's own figure (`NODE`, the lower of its two directions) and each direction
(`NODE_send`, `NODE_recv`), each run (`a->b`: a sends), the rounds used and the numbers of
suspects, failed runs and undecided node-directions; `sweep.json` is kept for
`fabric-report html`. The figures are informational under the base's reference policy: the
sweep judges them itself, against the cluster's own level (and the calibrated pair rate with
`expect_from`), so they need no reference entry.
Verdict: after the figures are recorded (in the performance stage), anything but `suspects:
none` (a suspect, a run that gave no figure, an undecided node) fails the test with the verdict
lines as the message, unless `-S SweepTest.fail_on_suspect=false`. Like every judgement of
figures, `--skip-performance-check` skips it: the test then says only that the sweep ran whole.
Listed only on Slurm partitions of two or more nodes (`+rdma` ones for `method=rdma`).

`-S SweepTest.launcher=sim` runs the sweep's simulation instead (nodes `sim_nodes`, faults
in `sweep_options`, e.g. `--sim-slow=node03=0.25`) on any system: a check of this test's own
plumbing that needs no cluster.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import reframe as rfm
import reframe.utility.typecheck as typ
from fabric_base import FabricCheck
from fabric_placement import node_count
from fabric_types import Count, Flag
from reframe.core.backends import getlauncher
from reframe.core.builtins import (
    parameter,
    performance_function,
    run_after,
    run_before,
    variable,
)
from reframe.core.exceptions import SanityError

from fabrictest.parsers import ParseError
from fabrictest.sweep.expectation import ExpectationError, from_reference_file
from fabrictest.txrx.options import (
    DEFAULT_MSG_SIZE,
    DEFAULT_NUM_BLKS,
    DEFAULT_NUM_CMSGS,
    option_problem,
)

EXIT_LINE = "fabric-sweep exit status:"


def _fabric_sweep() -> str:
    cand = Path(sys.executable).parent / "fabric-sweep"
    return str(cand) if cand.exists() else (shutil.which("fabric-sweep") or "fabric-sweep")


@rfm.simple_test
class SweepTest(FabricCheck):
    descr = "node-pair sweep: isolate slow or unreachable nodes in a few rounds"
    method = parameter(["mpi", "rdma"])
    scenario = variable(str, value="sweep")
    launcher = variable(str, value="slurm")  # or "sim": the simulation, on any system
    sim_nodes = variable(str, value="node[01-08]")
    nmsg = variable(Count, value=500)
    msg_size = variable(Count, value=DEFAULT_MSG_SIZE)
    pair_timeout = variable(Count, value=120)
    rounds = variable(Count, value=2)
    max_rounds = variable(Count, value=8)
    seed = variable(Count, value=-1)
    fail_on_suspect = variable(Flag, value=True)
    sweep_options = variable(typ.List[str], value=[])
    #: the expected pair rate: 'auto' = the system's reference file when it holds the sweep's
    #: own level at this number of nodes (SweepTest cluster_level) or the tx/rx paired stream
    #: rate, for this method and size (`fabric-sweep --expect-from`, so that a
    #: uniform drop of every link fails too); '' = none (relative to the cluster only); a
    #: path = that file, its system by its name (the sweep refuses it, and the test fails,
    #: when it does not apply)
    expect_from = variable(str, value="auto")
    time_limit = "30m"
    keep_files = ["sweep.json"]
    tags = {"fabric", "sweep"}
    requires = ("slurm",)
    result_file = "sweep.json"
    # The reference policy: the sweep judges its figures itself (against the cluster's own
    # level, and the calibrated pair rate with expect_from) and its verdict fails the test, so
    # every figure is informational: recorded, never judged against a reference entry.
    informational_perf_vars = [r".+"]
    #: what the sweep's level was measured with, for its own calibrated level (`SweepTest`
    #: `cluster_level` by method and `num_nodes`, which `expect_from='auto'` prefers)
    shaped_by = ("msg_size", "num_blks", "num_cmsgs", "nmsg", "num_nodes")

    def value_problems(self) -> dict[str, str]:
        """The pair options txrx itself would refuse (its own rule), before any launch."""
        why = option_problem(self.method, msg_size=self.msg_size, nmsg=self.nmsg,
                             timeout=float(self.pair_timeout))
        return {"txrx": f"txrx would refuse the sweep's pairs: {why}"} if why else {}

    @run_after("init")
    def simulation_runs_anywhere(self):
        if self.launcher == "sim":
            self.valid_prog_environs = ["*"]

    def required_features(self) -> list[str]:
        return [] if self.launcher == "sim" else super().required_features()

    def why_not_on(self, part):
        if self.launcher == "sim":
            return None if self.method == "mpi" else "the simulation does not depend on the method"
        if part.scheduler.registered_name == "local":
            return "the sweep runs srun steps inside an allocation: needs a Slurm partition"
        nodes = node_count(part)  # every node of the partition (-S num_nodes does not apply)
        return f"has {nodes} node(s): a sweep needs at least 2" if nodes < 2 else None

    @run_after("setup")
    def check_launcher(self):
        self.skip_if(self.launcher not in ("slurm", "sim"),
                     f"launcher {self.launcher!r}: use slurm or sim")

    def job_epilogue(self):
        # one fabric-sweep and no MPI launch of ours (its srun steps are its own, each judged
        # by it): no core-file lines, and its exit status in its own line on stdout, which
        # launch_problems reads (the job script as before the sweep was on the base)
        return [], [f'echo "{EXIT_LINE} $?"']

    @run_before("run")
    def configure(self):
        self.job.launcher = getlauncher("local")()  # one fabric-sweep; it starts the steps
        self.executable = _fabric_sweep()
        opts = [
            "--test", "txrx", "--method", self.method,
            "--msg-size", str(self.msg_size), "--nmsg", str(self.nmsg),
            "--pair-timeout", str(self.pair_timeout), "--rounds", str(self.rounds),
            "--max-rounds", str(self.max_rounds), "--json", "sweep.json", "-v",
        ]  # fmt: skip
        if self.launcher == "sim":
            self.num_tasks = 1
            opts = [self.sim_nodes, "--launcher", "sim", *opts]
        else:
            self.num_tasks = node_count(self.current_partition)
            self.num_tasks_per_node = 1
            opts = ["--launcher", "slurm", *opts]
        self.record_shaping(num_blks=DEFAULT_NUM_BLKS, num_cmsgs=DEFAULT_NUM_CMSGS,
                            num_nodes=None if self.launcher == "sim" else self.num_tasks)
        if self.seed >= 0:
            opts += ["--seed", str(self.seed)]
        opts += self.expectation()
        self.executable_opts = opts + list(self.sweep_options)
        self.env_vars.setdefault("PYTHONUNBUFFERED", "1")

    def expectation(self) -> list[str]:
        """``--expect-from`` of fabric-sweep: the reference file of this system (the same path
        as every test's references) where it holds the sweep's own level at this number of
        nodes or the paired tx/rx rate for this method and size, else ``--no-reference``
        (relative to the cluster only: the sweep would otherwise look for the system's
        reference itself)."""
        if self.launcher == "sim" and self.expect_from == "auto":
            return []
        if not self.expect_from:
            return ["--no-reference"]
        if self.expect_from != "auto":
            return ["--expect-from", self.expect_from]  # its system: the file's name
        ref_file = self.reference_state.file  # loaded once, by the base, after setup
        if ref_file is None:
            return ["--no-reference"]
        try:  # the ring fabric-sweep runs txrx with by default
            from_reference_file(ref_file, self.method, {
                "msg_size": self.msg_size, "num_blks": DEFAULT_NUM_BLKS,
                "num_cmsgs": DEFAULT_NUM_CMSGS}, nodes=node_count(self.current_partition))
        except ExpectationError:  # none for this method, size or bed: relative to the cluster
            return ["--no-reference"]
        return ["--expect-from", str(ref_file.path), "--expect-system", ref_file.system]

    # -- sanity, figures, verdict ------------------------------------------------------------
    def launch_problems(self):
        """fabric-sweep swept: its exit status printed, and 0 (healthy), 1 (suspects) or 3
        (undecidable: judged by :meth:`verdict_problems`, never a pass). Its srun
        steps' failures are its verdict's business, not a failed launch."""
        status = re.search(rf"^{EXIT_LINE} (-?\d+)$", self.stdout_text(), re.MULTILINE)
        if status is None:
            return ["the job did not finish: no fabric-sweep exit status line (killed? time limit?)"]
        if int(status[1]) in (126, 127):  # the shell's: no such program, or not runnable
            said = [x.strip() for x in self.output_text(self.stderr).splitlines()
                    if "fabric-sweep" in x][-1:]
            return [f"fabric-sweep was not started (exit status {status[1]}: not found or not "
                    f"executable on the node{': ' + said[0] if said else ''})"]
        # 0 healthy, 1 suspects, 3 undecidable (the verdict fails the test after the figures)
        if int(status[1]) not in (0, 1, 3):
            return [f"fabric-sweep exited {status[1]}: it could not sweep"]
        if self.job.exitcode not in (None, 0):
            return [f"job script exited with status {self.job.exitcode}"]
        return []

    def parse(self, text):
        try:
            return json.loads(text)
        except ValueError as err:
            raise ParseError(f"sweep.json unreadable: {err}") from None

    def result_problems(self):
        """The verdict printed and `sweep.json` whole; the verdict itself is judged after the
        figures are recorded (:meth:`judge_verdict`)."""
        if not re.search(r"^verdict:$", self.stdout_text(), re.MULTILINE):
            return ["fabric-sweep printed no verdict"]
        data = self.result()
        if not data.get("figures") or not data.get("verdict"):
            return ["sweep.json has no figures or no verdict"]
        return []

    def dynamic_perf_variables(self):
        return {name: (float(value), unit) for name, (value, unit) in
                self.result()["figures"].items() if name != "cluster_level"}

    @performance_function("Gbps")
    def cluster_level(self):
        """The cluster's level (the figure the sweep's own reference holds, by its size)."""
        value, unit = self.result()["figures"].get("cluster_level") or (None, None)
        if value is None or unit != "Gbps":
            raise SanityError(f"sweep.json has no cluster level in Gbps ({value!r} {unit!r})")
        return float(value)

    @run_after("performance")
    def judge_verdict(self):
        if self.is_dry_run():
            return
        problems = self.verdict_problems()
        if problems:
            raise SanityError("; ".join(problems))

    def verdict_problems(self) -> list[str]:
        data = self.result()
        if not self.fail_on_suspect or data.get("healthy", False):
            return []
        # ReFrame copies keep_files to the output directory only for passing tests;
        # fabric-report looks for the sweep there, and a sweep that found something is the
        # one to look at
        shutil.copy2(os.path.join(self.stagedir, "sweep.json"), self.outputdir)
        return list(data["verdict"])
