from __future__ import annotations

import pytest
from recordings import read, recordings

from fabrictest.parsers import ParseError
from fabrictest.parsers.perftest import missing, parse_perftest

FILES = recordings("ib_*.txt", "real-outputs")




@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_every_perftest_file_parses(path):
    r = parse_perftest(path.read_text())
    assert r.test in ("RDMA_Write BW", "Send BW")
    assert r.transport in ("RC", "UC")
    assert r.link_layer in ("Ethernet", "IB")
    assert r.units == ("Gb/sec" if path.name.startswith("ib_write_bw") else "MB/sec")
    assert r.rows and r.peak_avg_gbps() > 0
    assert r.role == ("server" if "server" in path.name else "client")
    assert len(r.local_addresses) == len(r.remote_addresses) == r.qps
    if r.link_layer == "IB":
        assert r.gid_index is None and "GID" not in r.local
        assert r.local["LID"].startswith("0x")
    else:
        assert r.gid_index in (2, 3) and all("GID" in a for a in r.local_addresses)
    assert r.complete == ("truncated" not in path.name and "cx6dx" not in path.name)


def test_roce_gbits_client():
    r = parse_perftest(read("ib_write_bw-roce-cx6dx-gbits-q1.txt"))
    assert (r.test, r.role, r.transport, r.link_layer, r.units) == (
        "RDMA_Write BW",
        "client",
        "RC",
        "Ethernet",
        "Gb/sec",
    )
    assert (r.gid_index, r.qps, r.device, r.mtu) == (2, 1, "mlx5_0", 1024)
    first = r.rows[0]
    assert (first.bytes, first.iterations, first.bw_peak, first.bw_avg, first.msg_rate) == (
        2,
        5000,
        0.073998,
        0.072574,
        4.535869,
    )
    assert r.at(65536).bw_avg == 88.08
    assert r.peak_avg_gbps() == pytest.approx(88.08)
    assert r.local["RKey"] == "0x007e4d"
    assert r.remote["GID"] == "00:00:00:00:00:00:00:00:00:00:255:255:10:110:16:103"
    assert not r.complete  # the author cut the closing rule


def test_mb_per_sec_is_mebibytes():
    r = parse_perftest(read("ib_send_bw-ib-cx6-mbsec-client.txt"))
    assert r.largest().bw_avg == 23396.08
    assert r.peak_avg_gbps() == pytest.approx(23396.08 * 8 * 1048576 / 1e9)
    assert 190 < r.peak_avg_gbps() < 200  # HDR 200 Gb/s
    roce10 = parse_perftest(read("ib_send_bw-roce-cx4lx-mbsec-client.txt"))
    assert 9.0 < roce10.peak_avg_gbps() < 10.0  # 10 GbE


def test_server_side():
    r = parse_perftest(read("ib_send_bw-ib-cx6-mbsec-server.txt"))
    assert r.role == "server" and r.settings["RX depth"] == "512"
    assert all(row.bw_peak == 0.0 for row in r.rows)
    assert not r.duration_mode
    assert r.at(8388608).bw_avg == 23426.81 and r.at(8192).msg_rate == 2.174049


def test_cpu_frequency_warning_between_header_and_rows():
    r = parse_perftest(read("ib_send_bw-roce-cpufreq-warning-client.txt"))
    assert len(r.rows) == 1 and r.rows[0].bw_avg == 264.94 and r.rows[0].iterations == 5
    assert r.warnings and r.warnings[0].startswith("Conflicting CPU frequency")


def test_qp8_truncated():
    r = parse_perftest(read("ib_write_bw-roce-qp8-gbits-truncated.txt"))
    assert r.qps == 8 and len(r.local_addresses) == 8 and len(r.remote_addresses) == 8
    assert r.local_addresses[5]["PSN"] == "0xea49e"
    assert r.largest().bytes == 512 and r.largest().bw_avg == 19.15
    assert not r.complete


def test_duration_and_rdma_cm():
    d = parse_perftest(read("ib_write_bw-roce-slingshot-duration-D5-gbits-client.txt"))
    assert d.duration_mode and d.rows[0].bw_peak == 0.0 and d.peak_avg_gbps() == 98.03
    cm = parse_perftest(read("ib_write_bw-roce-slingshot-rdmacm-R-D5-client.txt"))
    assert cm.settings["rdma_cm QPs"] == "ON" and set(cm.local) == {"LID", "QPN", "PSN", "GID"}
    assert cm.rows[0].iterations == 560960


def test_uc_two_qps():
    r = parse_perftest(read("ib_write_bw-roce-uc-qp2-gbits.txt"))
    assert (r.transport, r.qps, r.peak_avg_gbps()) == ("UC", 2, 98.03)
    assert r.remote_addresses[1]["QPN"] == "0x1ac7e"


def test_latency_test_rows():
    text = (
        "---------------------------------------------------------------------------------------\n"
        "                    RDMA_Write Latency Test\n"
        " Dual-port       : OFF          Device         : mlx5_0\n"
        " Number of qps   : 1            Transport type : IB\n"
        " Connection type : RC           Using SRQ      : OFF\n"
        " Link type       : Ethernet\n"
        "---------------------------------------------------------------------------------------\n"
        " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n"
        " 2       1000          1.61           4.03         1.64               1.65             0.05            1.78                    4.03   \n"
        "---------------------------------------------------------------------------------------\n"
    )
    r = parse_perftest(text)
    assert r.test == "RDMA_Write Latency" and r.units is None and not r.rows
    row = r.latency_rows[0]
    assert (row.bytes, row.t_min, row.t_typical, row.p999) == (2, 1.61, 1.64, 4.03)


@pytest.mark.parametrize(
    "text",
    [
        "",
        read("ib_write_bw-roce-cx6dx-gbits-q1.txt").split(" #bytes")[0],
        "# OSU MPI Bandwidth Test v5.6.3\n# Size      Bandwidth (MB/s)\n1   6.16\n",
    ],
    ids=["empty", "header-only-client", "wrong-tool"],
)
def test_not_perftest_raises(text):
    with pytest.raises(ParseError):
        parse_perftest(text)


def test_broadcom_bnxt_re_three_qps_duration_rdma_cm():
    """A Broadcom `bnxt_re` 400G RoCE NIC: 3 QPs over rdma_cm, `-D 10`, one row, peak 0.00."""
    r = parse_perftest(read("ib_write_bw-roce-bnxt_re-qp3-rdmacm-D10-gbits-client.txt"))
    assert (r.device, r.qps, r.link_layer, r.mtu, r.gid_index) == ("bnxt_re0", 3, "Ethernet", 1024, 3)
    assert r.duration_mode and len(r.local_addresses) == len(r.remote_addresses) == 3
    assert (r.rows[0].iterations, r.peak_avg_gbps()) == (4159603, 363.47)


def test_its_own_cpu_frequency_warning_between_rows_is_no_foreign_line():
    """issue 40: with -a perftest prints its clock warning between rows; a healthy run stays
    whole, another line there stays refused."""
    name = "ib_send_bw-ib-cx6-mbsec-client.txt"
    row = " 4          1000             8.76               8.75               2.295007\n"
    warning = ("Conflicting CPU frequency values detected: 1499.707000 != 2522.763000. CPU "
               "Frequency is not max.\n")
    assert missing(parse_perftest(read(name))) == []
    assert missing(parse_perftest(read(name).replace(row, row + warning))) == []
    foreign = missing(parse_perftest(read(name).replace(row, row + "real\t0m3.214s\n")))
    assert any("a line inside its table that is not perftest's" in p for p in foreign), foreign
