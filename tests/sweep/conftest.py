"""The sweep tests' shared fixture: a calibrated reference of one tx/rx stream on the simulated
launcher (what `fabric-sweep --expect-from` reads), written once here."""

from __future__ import annotations

from pathlib import Path

import pytest

SIM_REFERENCE = """\
$provenance:
  TxRxTest:
    sim:
      document: "calibrated (test)"
      table: "fabric-report calibrate (test)"
      measured_with: {msg_size: %(msg_size)d, num_blks: 10, num_cmsgs: 100%(bed)s}
TxRxTest:
  $index: ['$system', 'scenario', 'method', 'buffer']
  sim:
    paired:
      mpi:
        host:
          stream_gbps: [%(value)s, %(lower)s, null, Gbps]
"""


@pytest.fixture
def sim_reference(tmp_path):
    """``write(lower, msg_size, bed, value, name)``: the reference file under tmp_path (1 Gbps,
    -15 %, measured with 64 KiB messages; ``bed``: more measured_with keys, e.g. ``",
    host_cores: 2, bed_nodes: 4"``)."""

    def write(lower: str = "-0.15", msg_size: int = 65536, bed: str = "",
              value: float = 1.0, name: str = "sim.yaml") -> Path:
        path = tmp_path / name
        path.write_text(SIM_REFERENCE % {"lower": lower, "msg_size": msg_size, "bed": bed,
                                         "value": value})
        return path

    return write
