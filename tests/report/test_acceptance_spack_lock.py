"""The acceptance page's provenance names the Spack environment's lock the runs were built
with (issue 42: what a site keeps), or says that no case took its binaries from Spack."""

from __future__ import annotations

import pytest
from report.test_acceptance import THRESHOLDS, TOPOLOGY, Run, accept, healthy


@pytest.fixture
def env(tmp_path):
    (tmp_path / "ref" / "counters").mkdir(parents=True)
    (tmp_path / "ref" / "counters" / "vcluster.yaml").write_text(THRESHOLDS)
    (tmp_path / "topo.txt").write_text(TOPOLOGY)
    return tmp_path


def test_the_page_names_the_spack_lock_of_the_run(env):
    run = healthy(Run(env))
    for tc in run.cases:
        tc["spack_lock_sha256"] = "5e1f" * 16
    rc, out, err, twin = accept(env, "--report", run.write(), "--topology", env / "topo.txt")
    assert rc == 0, out + err
    assert twin["provenance"]["spack_lock"] == ["5e1f" * 16]
    assert "5e1f" * 16 in (env / "page" / "index.html").read_text()


def test_without_spack_the_page_says_so(env):
    rc, out, err, twin = accept(env, "--report", healthy(Run(env)).write(), "--topology",
                                env / "topo.txt")
    assert rc == 0, out + err
    assert twin["provenance"]["spack_lock"] == []
    assert "no test case of these runs took its binaries from a Spack environment" in (
        env / "page" / "index.html").read_text()
