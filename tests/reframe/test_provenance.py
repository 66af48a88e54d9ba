"""What a run records of where it came from (reframe_tests/fabric_provenance.py): the Spack
environment's lock, hashed, on a ``+spack`` partition (issue 42: a later regression run is held
to the same build), nothing where the binaries do not come from Spack."""

from __future__ import annotations

import hashlib
from types import SimpleNamespace

from fabric_provenance import file_sha256, spack_lock_sha256


def _test(env_dir, features, binaries=True):
    return SimpleNamespace(
        current_partition=SimpleNamespace(features=list(features)),
        binaries=SimpleNamespace(spack_env_dir=str(env_dir)) if binaries else None)


def test_the_spack_lock_is_hashed_on_a_spack_partition(tmp_path):
    lock = tmp_path / "spack.lock"
    lock.write_text('{"_meta": {"lockfile-version": 6}, "roots": []}\n')
    want = hashlib.sha256(lock.read_bytes()).hexdigest()
    file_sha256.cache_clear()
    assert spack_lock_sha256(_test(tmp_path, ["mpi", "spack"])) == want
    lock.write_text('{"_meta": {"lockfile-version": 6}, "roots": [{"hash": "x"}]}\n')
    file_sha256.cache_clear()
    assert spack_lock_sha256(_test(tmp_path, ["mpi", "spack"])) not in ("", want)


def test_no_lock_without_spack_or_without_the_file(tmp_path):
    (tmp_path / "spack.lock").write_text("{}\n")
    file_sha256.cache_clear()
    assert spack_lock_sha256(_test(tmp_path, ["mpi"])) == ""  # binaries not from Spack
    assert spack_lock_sha256(_test(tmp_path, ["spack"], binaries=False)) == ""  # the sweep
    assert spack_lock_sha256(_test(tmp_path / "none", ["spack"])) == ""  # never concretised
