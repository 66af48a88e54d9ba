"""Link, error and congestion counters around every multi-node test, mixed into
:class:`fabric_base.FabricCheck` (the Slingshot acceptance notes' third stage: fabric
diagnostics *during* the performance benchmarks).

Before and after the launch, the job runs ``fabric-health counters --out-dir`` once on every
node of the job, through the partition's own launcher with one task per node, into
``counters/before/<node>.json`` and ``counters/after/<node>.json`` (the launcher's own lines go
to ``counters/{before,after}.log``, out of the test's output). At sanity time
(:meth:`CounterChecks.counter_problems`):

* a link that went down during the test fails it: ``node03 eth0: link went down 2 times during
  the test (carrier_changes 14 -> 18)``;
* an error counter that rose above its threshold fails it, naming node, port, counter and the
  increase; thresholds are data, ``counters/<system>.yaml`` (with ``$provenance``) in the
  reference directory the performance references come from (``RFM_REFERENCE_PREFIX`` moves
  both); without that file every error counts;
* a node whose counters could not be read or compared (saturated, reset, two snapshots of one
  node ...) makes the test fail saying so, or counts as a failure under the thresholds'
  ``unknown: fail``.

Congestion counters (TCP retransmissions, CNPs, ECN marks, pause frames, ``port_xmit_wait``)
become performance figures per node, ``counters_<node>_<counter>`` (e.g.
``counters_node03_RetransSegs``): informational unless the test's reference has the headline
``counters_<counter>``, against which every node's figure is then judged.

One-host partitions (``mpirun-onehost``: ranks standing for nodes share one link) and
single-node cases take no snapshots; ``-S counter_snapshots=false`` turns them off. The
snapshots are kept in the test's output directory (``keep_files``): ``fabric-report counters``
and ``fabric-report html`` put them together into each node's counters over the whole run
(:mod:`fabrictest.counters.whole_run`); everything the plugin decides is in
:mod:`fabrictest.counters`.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import reframe as rfm
import reframe.utility.sanity as sn
from fabric_placement import job_nodes, one_host
from fabric_references import reference_prefix
from fabric_types import Flag
from reframe.core.builtins import run_after, run_before, variable

from fabrictest.counters.difference import difference
from fabrictest.counters.files import read_phase, system_thresholds
from fabrictest.counters.judge import Verdict, judge
from fabrictest.counters.snapshot import SNAPSHOT_DIR
from fabrictest.counters.thresholds import Thresholds

PHASES = ("before", "after")
#: seconds a snapshot launch may take before it is killed (the test then says so)
SNAPSHOT_TIMEOUT_S = 120
FIGURE_PREFIX = "counters_"


def fabric_health() -> str:
    """``fabric-health`` beside this Python (the suite's environment), else from PATH."""
    cand = Path(sys.executable).parent / "fabric-health"
    return str(cand) if cand.exists() else "fabric-health"


def thresholds_for(system: str) -> tuple[Thresholds, str | None]:
    """The system's thresholds and the problem with its file (None when fine or absent), from
    the reference directory every reader uses (ReFrame's ``reference_prefix``, which
    ``RFM_REFERENCE_PREFIX`` sets, else the repository's ``reference/``)."""
    thresholds, problem, _path = system_thresholds(system, reference_prefix())
    return thresholds, problem


class CounterChecks(rfm.RegressionTestPlugin):
    """Counter snapshots on every node around the launch, and their verdict."""

    #: take counter snapshots around multi-node launches
    counter_snapshots = variable(Flag, value=True)
    #: the figures this plugin adds and their unit (for the reference files' checks)
    counter_figure_units = {re.escape(FIGURE_PREFIX) + r".+": "count"}

    def counter_nodes(self) -> int:
        """How many nodes the launch spans (0: no snapshots for this case)."""
        per_node = int(self.num_tasks_per_node or 0)
        if not self.counter_snapshots or per_node <= 0 or one_host(self.current_partition):
            return 0
        if getattr(self.job.launcher, "registered_name", "") == "local":
            return 0  # the job starts its own steps (the sweep): no launcher to reach nodes
        nodes = int(self.num_tasks or 0) // per_node
        return nodes if nodes >= 2 else 0

    def per_node_launch(self, nodes: int) -> str:
        """The partition's launcher with one task on each of ``nodes`` nodes."""
        saved = (self.num_tasks, self.num_tasks_per_node)
        self.num_tasks, self.num_tasks_per_node = nodes, 1
        try:
            prefix = self.launch_prefix()
        finally:
            self.num_tasks, self.num_tasks_per_node = saved
            self.brief_launcher()
        if prefix.split()[:1] == ["srun"]:  # the job's SLURM_NTASKS would start them all
            prefix = prefix.replace("srun", f"srun -n {nodes} -N {nodes} --ntasks-per-node=1", 1)
        return prefix

    def snapshot_cmd(self, launch: str, phase: str) -> str:
        out = f"{SNAPSHOT_DIR}/{phase}"
        return (f"timeout {SNAPSHOT_TIMEOUT_S} {launch} {fabric_health()} counters --out-dir "
                f"{out} > {out}.log 2>&1 || echo \"fabrictest: counters {phase} the launch: "
                f"exit status $?\" >> {out}.log")

    @run_before("run", always_last=True)
    def _counter_snapshot_cmds(self):
        """After every other prerun command (the hostfile, the Spack environment) and after
        the launch's exit status is printed."""
        nodes = self.counter_nodes()
        self.counter_launch_nodes = nodes
        if not nodes:
            return
        launch = self.per_node_launch(nodes)
        # kept in the output directory: the whole run's view (fabric-report counters) reads them
        self.keep_files = [*self.keep_files, SNAPSHOT_DIR]
        self.prerun_cmds = [*self.prerun_cmds, f"mkdir -p {SNAPSHOT_DIR}",
                            self.snapshot_cmd(launch, "before")]
        self.postrun_cmds = [*self.postrun_cmds, self.snapshot_cmd(launch, "after")]

    # -- verdict -------------------------------------------------------------------------
    def counter_verdict(self) -> Verdict | None:
        """The verdict on this run's snapshots (cached); None where none were taken."""
        if not getattr(self, "counter_launch_nodes", 0):
            return None
        cached = self.__dict__.get("counter_verdict_cache")
        if cached is not None:
            return cached
        snaps, unread = {}, []
        for phase in PHASES:
            d = Path(self.stagedir) / SNAPSHOT_DIR / phase
            snaps[phase], problems = read_phase(d) if d.is_dir() else ({}, [])
            unread += [f"{why.replace(': ', f' {phase} the test: ', 1)}" for why in problems]
        nodes = sorted(set(snaps["before"]) | set(snaps["after"]))
        expected = self.expected_counter_nodes()
        diffs = [difference(snaps["before"][n], snaps["after"][n])
                 for n in nodes if n in snaps["before"] and n in snaps["after"]]
        thresholds, problem = thresholds_for(self.current_system.name)
        verdict = judge(diffs, thresholds, expected or nodes)
        if problem:
            verdict.failures.insert(0, problem)
        verdict.unread = unread + verdict.unread
        if not expected and len(nodes) < self.counter_launch_nodes:
            verdict.unread.append(f"counters of {len(nodes)} of {self.counter_launch_nodes} nodes "
                                  f"({self.snapshot_log_tail()})")
        for n in nodes:
            for phase in PHASES:
                if n in snaps[phase]:
                    verdict.unread += [f"{n} {phase} the test: {why}"
                                       for why in snaps[phase][n].unreadable]
        self.__dict__["counter_verdict_cache"] = verdict
        return verdict

    def expected_counter_nodes(self) -> list[str]:
        nodelist = job_nodes(self)
        if len(nodelist) == self.counter_launch_nodes:
            return nodelist
        hosts = self.placed_hosts()
        return [h.split(".")[0] for h in hosts] if len(hosts) == self.counter_launch_nodes else []

    def snapshot_log_tail(self) -> str:
        lines = []
        for phase in PHASES:
            path = Path(self.stagedir) / SNAPSHOT_DIR / f"{phase}.log"
            text = path.read_text(errors="replace").strip() if path.is_file() else ""
            if text:
                lines.append(f"{phase}: {text.splitlines()[-1][:160]}")
        return "; ".join(lines) or "see counters/*.log"

    def counter_problems(self) -> list[str]:
        """Why the counters fail this test: links that went down, errors above their
        threshold, and nodes whose counters could not be read; empty when healthy or when no
        snapshots were taken."""
        verdict = self.counter_verdict()
        if verdict is None:
            return []
        problems = list(verdict.failures)
        if verdict.unread:
            problems.append("counters not read: " + "; ".join(verdict.unread))
        return problems

    # -- congestion figures --------------------------------------------------------------
    @run_after("setup")
    def _counter_figure_policy(self):
        """Congestion figures need no reference; ``counters_<counter>`` judges them all."""
        self.informational_perf_vars = [*self.informational_perf_vars,
                                        re.escape(FIGURE_PREFIX) + r".+"]

    @run_before("performance")
    def _counter_figures(self):
        verdict = self.counter_verdict() if os.path.isdir(self.stagedir) else None
        if verdict is None:
            return
        aliases = dict(self.reference_aliases)
        for node, figures in verdict.figures.items():
            for name, value in figures.items():
                var = f"{FIGURE_PREFIX}{node}_{name}"
                self.perf_variables[var] = sn.make_performance_function(sn.defer(value),
                                                                        "count")
                aliases[re.escape(FIGURE_PREFIX) + r".+_" + re.escape(name)] = (
                    FIGURE_PREFIX + name)
        self.reference_aliases = aliases
