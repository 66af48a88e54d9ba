# fabrictest: interconnect regression suite. BSD-3-Clause.
"""Spack's builtin gpcnet (network_test, network_load_test) with pinned versions: builtin has
only ``version("master")``, a moving branch, which an acceptance cannot name again."""

from spack_repo.builtin.packages.gpcnet.package import Gpcnet as BuiltinGpcnet

from spack.package import *


class Gpcnet(BuiltinGpcnet):
    """GPCNeT, the Global Performance and Congestion Network Tests: network_test (random and
    natural ring latency and bandwidth, allreduce, alltoall over the whole job) and
    network_load_test (the same probes isolated and beside all-to-all, incast and broadcast
    congestors on 80 % of the nodes, reporting the Congestion Impact Factor). Both take no
    arguments; message sizes and loop counts are #defines in their sources. Builtin's recipe
    (its dependencies and install) with pinned commits, a verbose variant and flags."""

    maintainers("fabrictest")

    # The project tags no release after 1.2; its sources print "v1.3" from 1.2 on. The commit
    # after the tag moves the table buffers out of network_test.h (duplicate definitions with
    # GCC 10's -fno-common default), hence the preferred version.
    version("1.3-2021-07-30", commit="c56fd950ae6552ffce7a55cfa6d5617454e983e3", preferred=True)
    version("1.2", tag="1.2", commit="15a2bc8e52baacdbea08a15f7aac1992e123e6c7")

    variant("verbose", default=False, description="Build with -DVERBOSE: more tables and tests")

    depends_on("gmake", type="build")

    def flag_handler(self, name, flags):
        if name == "cflags" and self.spec.satisfies("@1.2"):
            flags.append("-fcommon")  # tentative definitions in network_test.h (fixed after 1.2)
        return (flags, None, None)

    @property
    def build_targets(self):
        flags = ["-DVERBOSE"] if self.spec.satisfies("+verbose") else []
        flags += self.spec.compiler_flags["cflags"]
        return super().build_targets + [f"FLAGS={' '.join(flags)}"]

    def edit(self, spec, prefix):
        pass  # the Makefile takes CC and FLAGS on the command line
