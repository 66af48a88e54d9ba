# fabrictest: interconnect regression suite. BSD-3-Clause.
"""Spack recipe for perftest (ib_write_bw, ib_read_bw, ib_send_bw, *_lat, raw_ethernet_*),
which Spack's builtin repository does not have."""

from spack_repo.builtin.build_systems.autotools import AutotoolsPackage
from spack_repo.builtin.build_systems.cuda import CudaPackage
from spack_repo.builtin.build_systems.rocm import ROCmPackage

from spack.package import *


class Perftest(AutotoolsPackage, CudaPackage, ROCmPackage):
    """perftest: RDMA verbs micro-benchmarks (ib_write_bw, ib_write_lat, ib_read_bw,
    ib_read_lat, ib_send_bw, ib_send_lat, ib_atomic_bw/lat, raw_ethernet_*) for InfiniBand
    and RoCE, with optional CUDA and ROCm GPU memory (GPUDirect RDMA)."""

    homepage = "https://github.com/linux-rdma/perftest"
    # The release tarballs (`make dist`: configure included) as Debian archives them; the
    # checksums are those of Debian's signed source indices (trixie, bookworm).
    url = "https://deb.debian.org/debian/pool/main/p/perftest/perftest_25.01.0+0.80.orig.tar.gz"
    list_url = "https://deb.debian.org/debian/pool/main/p/perftest/"

    license("GPL-2.0-only OR Linux-OpenIB")

    version(
        "25.01.0-0.80", sha256="54e86b131f0b06862b8b9cd692739737295463cfef467bdda5f5aa3dae8c5b05"
    )
    version("4.5-0.17", sha256="86fc75af293a75ac7e15fed7cc5adf628e660d8992835c0ac8b91d500b63aa5f")

    depends_on("c", type="build")
    depends_on("cxx", type="build")
    depends_on("gmake", type="build")
    # libibverbs, librdmacm and libibumad
    depends_on("rdma-core")
    # configure requires pci/pci.h and libpci on Linux
    depends_on("pciutils")

    conflicts("+cuda", when="+rocm", msg="perftest uses either CUDA or ROCm memory, not both")

    def url_for_version(self, version):
        debian = str(version).replace("-", "+", 1)
        return f"https://deb.debian.org/debian/pool/main/p/perftest/perftest_{debian}.orig.tar.gz"

    def configure_args(self):
        args = []
        if self.spec.satisfies("+cuda"):
            args.append(f"CUDA_H_PATH={self.spec['cuda'].prefix.include}/cuda.h")
        if self.spec.satisfies("+rocm"):
            args += ["--enable-rocm", f"--with-rocm={self.spec['hip'].prefix}"]
        return args

    def test_help(self):
        """ib_write_bw --help"""
        exe = which(join_path(self.prefix.bin, "ib_write_bw"))
        out = exe("--help", output=str.split, error=str.split)
        assert "ib_write_bw" in out or "Usage" in out
