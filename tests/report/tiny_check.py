"""A tiny, self-contained ReFrame check for the report tests (not part of the suite).

It prints OSU-like size rows and tx/rx-like stream lines; `degrade` scales the bandwidth
down (and latency up) the way a degraded link would; `no_reference_for=SCENARIO` runs that
scenario without references and fails it for that, as the suite's missing-reference policy
does (reframe_tests/fabric_references.py).
"""

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, run_after, run_before, sanity_function, variable
from reframe.core.exceptions import PerformanceError

SIZES = [1, 64, 4096, 65536, 1048576]


@rfm.simple_test
class TinyFabric(rfm.RunOnlyRegressionTest):
    valid_systems = ["*"]
    valid_prog_environs = ["*"]
    scenario = parameter(["paired", "same-node"])
    degrade = variable(float, value=1.0)
    no_reference_for = variable(str, value="")
    executable = "printf"
    reference = {
        "*": {
            **{f"bw_{s}": (min(100.0, s / 1000.0), -0.2, 0.5, "MB/s") for s in SIZES},
            **{f"lat_{s}": (2.0 + s / 1e5, -0.5, 0.3, "us") for s in SIZES},
            "rx0_tx0_gbps": (0.19, -0.1, None, "Gbps"),
            "rx1_tx1_gbps": (0.19, -0.1, None, "Gbps"),
        }
    }

    @run_before("run")
    def set_output(self):
        lines = []
        for s in SIZES:
            bw = min(100.0, s / 1000.0) * self.degrade
            lat = (2.0 + s / 1e5) / self.degrade
            lines.append(f"{s} {bw:.4f} {lat:.4f}")
        for r in (0, 1):
            rate = 0.19 * (self.degrade if r == 1 else 1.0)
            lines.append(f"INFO:__main__:Rank {r} receiver from transmitter {r}, "
                         f"data rate is {rate:.4f} Gbps")
        self.executable_opts = ["'" + "\\n".join(lines) + "\\n'"]

    @sanity_function
    def ok(self):
        return sn.assert_found(r"data rate is", self.stdout)

    @run_before("performance")
    def set_perf(self):
        self.perf_variables = {}
        for s in SIZES:
            self.perf_variables[f"bw_{s}"] = sn.make_performance_function(
                sn.extractsingle(rf"^{s} (\S+) (\S+)", self.stdout, 1, float), "MB/s")
            self.perf_variables[f"lat_{s}"] = sn.make_performance_function(
                sn.extractsingle(rf"^{s} (\S+) (\S+)", self.stdout, 2, float), "us")
        for r in (0, 1):
            self.perf_variables[f"rx{r}_tx{r}_gbps"] = sn.make_performance_function(
                sn.extractsingle(rf"Rank {r} receiver .* data rate is (\S+) Gbps",
                                 self.stdout, 1, float), "Gbps")

    @run_before("performance")
    def drop_references(self):
        if self.scenario == self.no_reference_for:
            self.reference = {}

    @run_after("performance")
    def fail_without_references(self):
        if self.scenario == self.no_reference_for:
            raise PerformanceError(f"no reference for {', '.join(self.perf_variables)}")
