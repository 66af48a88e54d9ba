"""Stage 1 before the performance stage, mixed into :class:`fabric_base.FabricCheck` (the
Slingshot acceptance notes' order: pre-flight health first, then performance).

``NicHealthTest`` (the health family, tagged ``preflight``) writes its verdict per node into
the partition's output directory, ``<output>/<system>/<partition>/stage1.json``: every node it
checked, passed or with its first failure. Every other test, before its job is submitted,
reads that record when it is at most :data:`MAX_AGE_H` hours old:

* on Slurm partitions the nodes that failed are left out (``--exclude``), and the test says so
  (``stage 1 (NicHealthTest, 12 min ago): node03 left out: eth0/- lldp: found ...``);
* a case that names its nodes (``--nodelist``: a switch's node set) and needs a node that
  failed, or needs more nodes than passed, fails before it is submitted, naming the node and
  its failure;
* where the launcher places ranks by the partition's own node list (``mpirun-hostfile``), the
  failed nodes cannot be left out: the test runs and says why it still ran with them.

No record (stage 1 has not run on the partition, or it is older): every node is used, at
debug level (``-vv``). ``-S stage1=ignore`` uses every node whatever the record says.
The acceptance order is therefore two commands (docs/health.md):
``reframe ... -r -t preflight`` then ``reframe ... -r --mode acceptance``.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import reframe as rfm
from fabric_placement import node_count, one_host
from reframe.core.builtins import run_before, variable
from reframe.core.exceptions import ReframeError
from reframe.core.logging import getlogger

from fabrictest.parsers.hostlists import expand as expand_hostlist
from fabrictest.parsers.node_sets import compress_hostlist

RECORD = "stage1.json"
FORMAT = "fabrictest-stage1/1"
#: a record older than this is not this acceptance run's stage 1
MAX_AGE_H = 12.0


def record_path(test) -> Path:
    """The partition's stage-1 record: beside the environments' output directories."""
    return Path(test.outputdir).parents[1] / RECORD


def write_record(test, verdicts: dict[str, str]) -> Path:
    """``verdicts``: node -> ``"pass"`` or its first failure (the health family's job)."""
    path = record_path(test)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"format": FORMAT, "test": test.display_name, "time": time.time(),
           "system": test.current_system.name, "partition": test.current_partition.name,
           "nodes": dict(sorted(verdicts.items()))}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    tmp.replace(path)
    return path


def read_record(path: Path, now: float | None = None) -> tuple[dict | None, str]:
    """(the record, "") or (None, why it is not used)."""
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        return None, "stage 1 has not run on this partition (no record)"
    except (OSError, ValueError) as err:
        return None, f"stage 1's record {path} is unreadable ({err})"
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(
            doc.get("nodes"), dict) or not isinstance(doc.get("time"), (int, float)):
        return None, f"stage 1's record {path} is not a {FORMAT} record"
    age_h = ((now or time.time()) - doc["time"]) / 3600
    if not math.isfinite(age_h) or age_h > MAX_AGE_H or age_h < -0.1:
        return None, f"stage 1's record is {age_h:.3g} h old (used up to {MAX_AGE_H:g} h)"
    return doc, ""


def _age(doc: dict) -> str:
    minutes = max(0.0, (time.time() - doc["time"]) / 60)
    return f"{minutes:.0f} min ago" if minutes < 120 else f"{minutes / 60:.1f} h ago"


class Stage1Gate(rfm.RegressionTestPlugin):
    """Leave the nodes that failed stage 1 out of this test (see the module docstring)."""

    #: 'use': leave out the nodes stage 1 failed; 'ignore': use every node
    stage1 = variable(str, value="use")
    #: the health family sets 'check': it is stage 1, and gates nothing
    stage1_role = "performance"

    @run_before("run")
    def leave_out_stage1_failures(self):
        if self.stage1_role != "performance" or self.stage1 == "ignore":
            return
        if one_host(self.current_partition) or not self.outputdir:
            return  # every rank on this host: no node to leave out; a dry run has no output
        doc, why = read_record(record_path(self))
        if doc is None:
            getlogger().debug(f"{self.display_name}: {why}: every node used")
            return
        failed = {n: v for n, v in doc["nodes"].items() if v != "pass"}
        head = f"stage 1 ({doc.get('test', 'NicHealthTest')}, {_age(doc)})"
        if not failed:
            getlogger().debug(f"{self.display_name}: {head}: every node passed")
            return
        said = "; ".join(f"{n}: {v}" for n, v in sorted(failed.items()))
        if not self.is_slurm:
            getlogger().warning(f"{self.display_name}: {head}: {said}; still ran with them: "
                                "this partition's launcher places ranks by its own node list "
                                "(remove them from the system's nodes to leave them out)")
            return
        self.exclude_failed_nodes(failed, head, said)

    def exclude_failed_nodes(self, failed: dict[str, str], head: str, said: str) -> None:
        named = [o.split("=", 1)[1] for o in self.job.options if o.startswith("--nodelist=")]
        needed = [n for hl in named for n in expand_hostlist(hl) if n in failed]
        if needed:
            raise ReframeError(f"{head}: this case's nodes include {', '.join(needed)}, which "
                               f"failed ({said}): not run")
        per_node = int(self.num_tasks_per_node or 0)
        nodes = math.ceil(int(self.num_tasks or 0) / per_node) if per_node > 0 else 0
        left = node_count(self.current_partition) - len(failed)
        if nodes > left:
            raise ReframeError(f"{head}: this case needs {nodes} nodes and {left} passed "
                               f"({said}): not run")
        self.job.options += [f"--exclude={compress_hostlist(sorted(failed))}"]
        getlogger().info(f"{self.display_name}: {head}: left out {said}")
