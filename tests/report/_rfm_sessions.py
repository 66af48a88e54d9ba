"""Helpers for the report tests: real ReFrame runs in a temporary directory (their own
settings, results database, perflogs and log), and the `fabric-report` command run as a user
runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
BIN = Path(sys.executable).parent

SETTINGS = """
site_configuration = {
    'systems': [{'name': 'tiny', 'descr': 'report tests', 'hostnames': ['.*'],
                 'partitions': [{'name': 'default', 'scheduler': 'local', 'launcher': 'local',
                                 'environs': ['builtin']}]}],
    'environments': [{'name': 'builtin'}],
    'storage': [{'enable': True, 'sqlite_db_file': '%(db)s'}],
    'logging': [{'handlers_perflog': [{
        'type': 'filelog', 'prefix': '%%(check_system)s/%%(check_partition)s', 'level': 'info',
        'basedir': '%(perflogs)s',
        'format': ('%%(check_job_completion_time)s|reframe %%(version)s|'
                   '%%(check_display_name)s|%%(check_system)s|%%(check_partition)s|'
                   '%%(check_environ)s|jobid=%%(check_jobid)s|%%(check_result)s|'
                   '%%(check_perfvalues)s'),
        'format_perfvars': ('%%(check_perf_value)s|%%(check_perf_unit)s|'
                            '%%(check_perf_ref)s|%%(check_perf_lower_thres)s|'
                            '%%(check_perf_upper_thres)s|'),
        'append': True}]}],
}
"""


def reframe(env, cwd, *args):
    exe = BIN / "reframe"
    proc = subprocess.run([str(exe), *args], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=300)
    return proc



def fabric_report(*args, env=None, cwd=None, timeout=300):
    """`fabric-report ARGS` in a subprocess: (exit status, stdout, stderr)."""
    proc = subprocess.run([str(BIN / "fabric-report"), *map(str, args)], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=timeout)
    return proc.returncode, proc.stdout, proc.stderr


def isolated_env(tmp: Path, settings: Path | None = None) -> dict:
    """The environment with ReFrame pointed at `settings` and everything it writes in `tmp`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RFM_")}
    env["RFM_CONFIG_FILES"] = str(settings or ROOT / "config" / "reframe" / "settings.py")
    env["HOME"] = str(tmp)
    env["FABRICTEST_RESULTS_DB"] = str(tmp / "results.db")
    env["FABRICTEST_RFM_LOG"] = str(tmp / "reframe.log")
    return env
