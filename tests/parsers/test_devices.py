"""ibv_devinfo, rdma link, sysfs, sinfo and ping parsers."""

from __future__ import annotations

import pytest
from recordings import read, recordings

from fabrictest.parsers import ParseError
from fabrictest.parsers.hostlists import expand as expand_hostlist
from fabrictest.parsers.ibv_devinfo import (
    infer_mofed_gid_kinds,
    normalise_phys_state,
    normalise_state,
    parse_ibv_devinfo,
)
from fabrictest.parsers.ping import parse_ping
from fabrictest.parsers.rdma_link import parse_rdma_link
from fabrictest.parsers.sinfo import parse_sinfo
from fabrictest.parsers.sysfs import roce_active_mtu
from fabrictest.sysinfo import list_ports, read_hcas_from_sysfs, read_port_from_sysfs

IBV = recordings("ibv_devinfo*.txt", "real-outputs")
RDMA = recordings("rdma-link-*.txt", "real-outputs")
SINFO = recordings("sinfo-*.txt", "real-outputs")




@pytest.mark.parametrize("path", IBV, ids=[p.name for p in IBV])
def test_every_ibv_devinfo_file_parses(path):
    hcas = parse_ibv_devinfo(path.read_text())
    assert hcas and all(h.ports and h.transport == "InfiniBand" and h.fw_ver for h in hcas)
    for h in hcas:
        for p in h.ports:
            assert p.state in ("PORT_ACTIVE", "PORT_DOWN")
            assert p.link_layer in ("InfiniBand", "Ethernet")
            assert p.active_mtu in (1024, 4096) and p.max_mtu == 4096
            assert p.device == h.name
            verbose = "-v-" in path.name
            assert (p.phys_state is not None) == verbose
            assert (p.rate_gbps is not None) == verbose


def test_ib_two_hcas_port2_down():
    hcas = parse_ibv_devinfo(read("ibv_devinfo-ib-cx3-mlx4-port2-down.txt"))
    assert [h.name for h in hcas] == ["mlx4_1", "mlx4_0"]
    h = hcas[0]
    assert (h.fw_ver, h.node_guid, h.board_id, h.vendor_part_id) == (
        "2.42.5000",
        "7cfe:9003:00a5:95c0",
        "MT_1090120019",
        4099,
    )
    assert [(p.port, p.state, p.lid) for p in h.ports] == [
        (1, "PORT_ACTIVE", 22),
        (2, "PORT_DOWN", 0),
    ]
    assert hcas[1].port(1).lid == 32 and hcas[1].port(1).sm_lid == 18
    assert h.port(1).gids == [] and h.port(1).phys_state is None


def test_roce_plain_two_ports():
    (h,) = parse_ibv_devinfo(read("ibv_devinfo-roce-cx3-mlx4-2port.txt"))
    assert [(p.port, p.state, p.link_layer, p.active_mtu) for p in h.ports] == [
        (1, "PORT_ACTIVE", "Ethernet", 1024),
        (2, "PORT_ACTIVE", "Ethernet", 1024),
    ]


def test_verbose_ib_polling():
    (h,) = parse_ibv_devinfo(read("ibv_devinfo-v-ib-cx3-mlx4-port2-down-polling.txt"))
    (p,) = h.ports
    assert (p.port, p.state, p.phys_state, p.link_layer) == (
        2,
        "PORT_DOWN",
        "POLLING",
        "InfiniBand",
    )
    assert (p.active_width, p.active_speed_gbps, p.rate_gbps) == (4, 2.5, 10.0)
    assert p.gids[0].gid == "fe80:0000:0000:0000:7cfe:9003:00a5:95c2" and p.gids[0].kind is None
    assert not p.active and p.link_up is False


def test_verbose_roce_with_spaces_instead_of_tabs():
    (h,) = parse_ibv_devinfo(read("ibv_devinfo-v-roce-cx4lx-mofed4-spaces.txt"))
    assert (h.name, h.fw_ver, h.board_id, h.vendor_part_id) == (
        "mlx5_3",
        "14.27.1016",
        "MT_2420110004",
        4117,
    )
    (p,) = h.ports
    assert (p.state, p.phys_state, p.link_layer) == ("PORT_ACTIVE", "LINK_UP", "Ethernet")
    assert (p.active_mtu, p.max_mtu, p.active_width, p.active_speed_gbps, p.rate_gbps) == (
        1024,
        4096,
        1,
        10.0,
        10.0,
    )
    assert [g.index for g in p.gids] == [0, 1, 2, 3]
    assert all(g.kind is None for g in p.gids)  # MOFED 4 prints no types
    assert [g.kind for g in infer_mofed_gid_kinds(p)] == [
        "RoCE v1",
        "RoCE v2",
        "RoCE v1",
        "RoCE v2",
    ]
    assert p.active and p.link_up


def test_rdma_core_gid_types():
    text = (
        "hca_id:\tmlx5_0\n\ttransport:\t\t\tInfiniBand (0)\n\tfw_ver:\t\t\t\t22.31.1014\n"
        "\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tmax_mtu:\t\t4096 (5)\n"
        "\t\t\tactive_mtu:\t\t4096 (5)\n\t\t\tlink_layer:\t\tEthernet\n"
        "\t\t\tactive_width:\t\t4X (2)\n\t\t\tactive_speed:\t\t25.0 Gbps (32)\n"
        "\t\t\tphys_state:\t\tLINK_UP (5)\n"
        "\t\t\tGID[  0]:\t\tfe80:0000:0000:0000:b226:28ff:fe3a:22c6, RoCE v1\n"
        "\t\t\tGID[  1]:\t\tfe80::b226:28ff:fe3a:22c6, RoCE v2\n"
        "\t\t\tGID[  3]:\t\t::ffff:192.168.1.4, RoCE v2\n"
    )
    (p,) = parse_ibv_devinfo(text)[0].ports
    assert p.rate_gbps == 100.0
    assert [(g.index, g.kind) for g in p.gids] == [(0, "RoCE v1"), (1, "RoCE v2"), (3, "RoCE v2")]
    assert [g.gid for g in p.rocev2_gids()] == ["fe80::b226:28ff:fe3a:22c6", "::ffff:192.168.1.4"]


def test_no_devices_and_wrong_tool():
    assert parse_ibv_devinfo("No IB devices found\n") == []
    for text in ("", read("rdma-link-show-irdma-e810.txt"), "# OSU MPI Latency Test v5.7\n"):
        with pytest.raises(ParseError):
            parse_ibv_devinfo(text)


def test_state_normalisation():
    assert normalise_state("4: ACTIVE") == normalise_state("PORT_ACTIVE (4)") == "PORT_ACTIVE"
    assert normalise_state("1: DOWN") == normalise_state("DOWN") == "PORT_DOWN"
    assert normalise_phys_state("5: LinkUp") == normalise_phys_state("LINK_UP (5)") == "LINK_UP"
    assert normalise_phys_state("2: Polling") == "POLLING"
    assert normalise_phys_state("3: Disabled") == "DISABLED"
    assert normalise_phys_state("4: PortConfigurationTraining") == "PORT_CONFIGURATION_TRAINING"


@pytest.mark.parametrize("path", RDMA, ids=[p.name for p in RDMA])
def test_every_rdma_link_file_parses(path):
    links = parse_rdma_link(path.read_text())
    assert links and all(link.state in ("ACTIVE", "DOWN") for link in links)
    assert all(link.physical_state in ("LINK_UP", "POLLING", "DISABLED") for link in links)


def test_rdma_link_formats():
    (ib,) = parse_rdma_link(read("rdma-link-show-ib-down-polling-rccl1423.txt"))
    assert (ib.device, ib.port, ib.state, ib.physical_state, ib.netdev) == (
        "mlx5_7",
        1,
        "DOWN",
        "POLLING",
        None,
    )
    assert (ib.lid, ib.sm_lid, ib.lmc, ib.subnet_prefix) == (3403, 1, 0, "fe80:0000:0000:0000")
    legacy = parse_rdma_link(read("rdma-link-show-iproute2-legacy-format-mlx5.txt"))
    assert [(x.index, x.device, x.state) for x in legacy] == [
        (0, "mlx5_0", "DOWN"),
        (2, "mlx5_2", "ACTIVE"),
        (4, "mlx5_4", "DOWN"),
        (5, "mlx5_5", "ACTIVE"),
        (7, "mlx5_3", "ACTIVE"),
        (16, "mlx5_1", "ACTIVE"),
    ]
    assert legacy[3].lid == 12 and legacy[3].sm_lid == 4
    irdma = parse_rdma_link(read("rdma-link-show-irdma-e810.txt"))
    assert [(x.device, x.active, x.link_up, x.netdev) for x in irdma] == [
        ("irdma0", False, False, "enp23s0f0"),
        ("irdma1", True, True, "enp23s0f1"),
    ]


def test_rdma_link_json_and_errors():
    js = '[{"ifindex":0,"ifname":"mlx5_0","port":1,"state":"ACTIVE","physical_state":"LINK_UP","netdev":"eth0","netdev_index":2}]'
    (link,) = parse_rdma_link(js)
    assert (link.device, link.port, link.netdev, link.active) == ("mlx5_0", 1, "eth0", True)
    for text in ("", read("sinfo-default-slurm-azure.txt"), "[not json"):
        with pytest.raises(ParseError):
            parse_rdma_link(text)


@pytest.mark.parametrize("path", SINFO, ids=[p.name for p in SINFO])
def test_every_sinfo_file_parses(path):
    r = parse_sinfo(path.read_text())
    assert r.node_names() == ["compute000000", "compute000003"]
    assert r.partitions() == ["compute"] and r.default_partition() == "compute"
    assert r.states() == {"compute000000": "idle", "compute000003": "idle"}


def test_sinfo_formats():
    long = parse_sinfo(read("sinfo-Nel-slurm-azure.txt"))
    assert long.format == "long-node" and long.timestamp == "Fri Jul 09 16:55:43 2021"
    assert long.rows[0].fields["CPUS"] == "44" and long.rows[0].fields["REASON"] == "none"
    default = parse_sinfo(read("sinfo-default-slurm-azure.txt"))
    assert default.format == "default" and default.rows[0].nodelist == "compute[000000,000003]"
    assert (default.rows[0].avail, default.rows[0].timelimit) == ("up", "infinite")
    plain = parse_sinfo("nid001 idle\nnid002 down*\nnid003 mix\n")
    assert plain.format == "plain" and plain.nodes_in_state("down") == ["nid002"]
    assert plain.rows[1].base_state == "down"
    with pytest.raises(ParseError):
        parse_sinfo("# OSU MPI Latency Test v5.7\n# Size  Latency (us)\n0 1.07\n")


def test_sinfo_a_node_in_two_partitions_without_a_partition_column():
    """`sinfo -N -h -o '%N %T'` prints a node once per partition it is in, with its one
    state (overlapping partitions are common): accepted; the same node with two states is two
    outputs' (or one edited), refused; with a partition column, a node twice in one partition
    is refused."""
    plain = parse_sinfo("nid001 idle\nnid002 drained\nnid001 idle\nnid002 drained\n")
    assert plain.nodes_in_state("idle") == ["nid001"] and plain.nodes_in_state("drained") == [
        "nid002"]
    with pytest.raises(ParseError, match=r"node nid001 in two rows \(idle and down\)"):
        parse_sinfo("nid001 idle\nnid001 down\n")
    two = "PARTITION AVAIL TIMELIMIT NODES STATE NODELIST\n"
    ok = parse_sinfo(two + "batch* up infinite 1 idle nid001\ndebug up 30:00 1 idle nid001\n")
    assert [r.partition for r in ok.rows] == ["batch", "debug"]
    with pytest.raises(ParseError, match="node nid001 in two rows of partition batch"):
        parse_sinfo(two + "batch* up infinite 1 idle nid001\nbatch* up infinite 1 mix nid001\n")


def test_expand_hostlist():
    assert expand_hostlist("compute[000000,000003]") == ["compute000000", "compute000003"]
    assert expand_hostlist("nid[008-010,012],login1") == [
        "nid008",
        "nid009",
        "nid010",
        "nid012",
        "login1",
    ]


def _port_tree(
    tmp_path,
    dev="mlx5_0",
    port=1,
    *,
    state="4: ACTIVE",
    phys="5: LinkUp",
    layer="Ethernet",
    rate="100 Gb/sec (4X EDR)",
    gids=None,
    mtu=9000,
    ndev="ens1f0",
):
    pdir = tmp_path / "class" / "infiniband" / dev / "ports" / str(port)
    (pdir / "gids").mkdir(parents=True)
    (pdir / "gid_attrs" / "types").mkdir(parents=True)
    (pdir / "gid_attrs" / "ndevs").mkdir(parents=True)
    for name, value in (
        ("state", state),
        ("phys_state", phys),
        ("link_layer", layer),
        ("rate", rate),
        ("lid", "0x0"),
        ("sm_lid", "0x0"),
    ):
        (pdir / name).write_text(value + "\n")
    gids = (
        gids
        if gids is not None
        else [
            ("fe80:0000:0000:0000:b226:28ff:fe3a:22c6", "IB/RoCE v1"),
            ("fe80:0000:0000:0000:b226:28ff:fe3a:22c6", "RoCE v2"),
        ]
    )
    for i, (gid, kind) in enumerate(gids):
        (pdir / "gids" / str(i)).write_text(gid + "\n")
        (pdir / "gid_attrs" / "types" / str(i)).write_text(kind + "\n")
        (pdir / "gid_attrs" / "ndevs" / str(i)).write_text(ndev + "\n")
    (pdir / "gids" / str(len(gids))).write_text("0000:0000:0000:0000:0000:0000:0000:0000\n")
    (tmp_path / "class" / "infiniband" / dev / "fw_ver").write_text("22.31.1014\n")
    net = tmp_path / "class" / "net" / ndev
    net.mkdir(parents=True, exist_ok=True)
    (net / "mtu").write_text(f"{mtu}\n")
    (net / "operstate").write_text("up\n")
    return tmp_path


def test_sysfs_roce_port(tmp_path):
    root = _port_tree(tmp_path)
    p = read_port_from_sysfs(root, "mlx5_0", 1)
    assert (p.state, p.phys_state, p.link_layer) == ("PORT_ACTIVE", "LINK_UP", "Ethernet")
    assert (p.rate_gbps, p.active_width, p.active_speed_gbps) == (100.0, 4, 25.0)
    assert [(g.index, g.kind, g.netdev) for g in p.gids] == [
        (0, "RoCE v1", "ens1f0"),
        (1, "RoCE v2", "ens1f0"),
    ]
    assert p.netdev == "ens1f0" and p.active_mtu == 4096 and p.lid == 0
    # the class directory itself works as root too
    assert read_port_from_sysfs(root / "class" / "infiniband", "mlx5_0", 1) == p
    assert list_ports(root) == [("mlx5_0", 1)]
    (hca,) = read_hcas_from_sysfs(root)
    assert hca.fw_ver == "22.31.1014" and hca.ports == [p]


def test_sysfs_ib_polling_port(tmp_path):
    root = _port_tree(
        tmp_path,
        dev="mlx5_7",
        state="1: DOWN",
        phys="2: Polling",
        layer="InfiniBand",
        rate="10 Gb/sec (4X SDR)",
        gids=[("fe80:0000:0000:0000:7cfe:9003:00a5:95c2", "IB/RoCE v1")],
    )
    p = read_port_from_sysfs(root, "mlx5_7", 1)
    assert (p.state, p.phys_state, p.rate_gbps, p.active_width) == ("PORT_DOWN", "POLLING", 10.0, 4)
    assert p.gids[0].kind is None and p.active_mtu is None
    with pytest.raises(FileNotFoundError):
        read_port_from_sysfs(root, "mlx5_7", 2)


def test_sysfs_empty(tmp_path):
    assert list_ports(tmp_path) == [] and read_hcas_from_sysfs(tmp_path) == []


def test_roce_active_mtu():
    assert [roce_active_mtu(m) for m in (1500, 4200, 9000, 600)] == [1024, 4096, 4096, 256]
    assert roce_active_mtu(200) is None


def test_ping():
    text = (
        "PING 10.0.0.2 (10.0.0.2) 56(84) bytes of data.\n"
        "64 bytes from 10.0.0.2: icmp_seq=1 ttl=64 time=0.050 ms\n\n"
        "--- 10.0.0.2 ping statistics ---\n"
        "2 packets transmitted, 2 received, 0% packet loss, time 1001ms\n"
        "rtt min/avg/max/mdev = 0.045/0.047/0.050/0.002 ms\n"
    )
    r = parse_ping(text)
    assert (r.host, r.transmitted, r.received, r.loss_percent, r.rtt_avg_ms) == (
        "10.0.0.2",
        2,
        2,
        0.0,
        0.047,
    )
    assert r.reachable
    down = parse_ping(
        "PING n2 (10.0.0.9) 56(84) bytes of data.\n\n--- n2 ping statistics ---\n"
        "1 packets transmitted, 0 received, +1 errors, 100% packet loss, time 0ms\n"
    )
    assert not down.reachable and down.loss_percent == 100.0
    with pytest.raises(ParseError):
        parse_ping("ping: unknown host n3\n")


def test_ibv_devinfo_cx6_hdr_azure_vf_and_accelerated_networking():
    """ConnectX-6 (4123) InfiniBand; an Azure HBv3 node with a ConnectX-6 VF (4124) beside a
    ConnectX-4 Lx VF (4118, RoCE, MTU 1024); the Azure accelerated-networking name `mlx5_an0`."""
    (cx6,) = parse_ibv_devinfo(read("ibv_devinfo-ib-cx6-mlx5-fw20.41-hdr.txt"))
    assert (cx6.name, cx6.vendor_part_id, cx6.fw_ver) == ("mlx5_0", 4123, "20.41.1000")
    assert (cx6.port(1).lid, cx6.port(1).link_layer) == (35, "InfiniBand")
    vf, eth = parse_ibv_devinfo(read("ibv_devinfo-ib-cx6-vf-and-cx4lx-roce-azure-hbv3.txt"))
    assert (vf.vendor_part_id, vf.port(1).lid, vf.port(1).sm_lid) == (4124, 383, 228)
    assert (eth.name, eth.vendor_part_id, eth.port(1).link_layer, eth.port(1).active_mtu) == (
        "mlx5_1", 4118, "Ethernet", 1024)
    (an,) = parse_ibv_devinfo(read("ibv_devinfo-roce-cx4lx-vf-mlx5_an0-azure-accelnet.txt"))
    assert (an.name, an.port(1).device, an.port(1).state) == ("mlx5_an0", "mlx5_an0", "PORT_ACTIVE")
