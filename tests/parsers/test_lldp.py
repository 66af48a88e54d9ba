"""LLDP neighbours, NIC addresses, name lookups, the cabling inventory and Slurm's node lines:
the parsers stage 1 reads, on verbatim public outputs (HPE's Slingshot host software documents
and lldpd's issues: tests/data/real-outputs/SOURCES-project.md), this machine's lldpd
(tests/data/real-outputs-local/SOURCES.md), every cut of them and hostile variants."""

from __future__ import annotations

import pytest
from recordings import read, recordings

from fabrictest.parsers import ParseError
from fabrictest.parsers.getent import parse_ahosts, parse_hosts
from fabrictest.parsers.inventory import inventory_text, parse_inventory
from fabrictest.parsers.ip_addr import parse_ip_addr
from fabrictest.parsers.lldp import missing, normalise_mac, parse_lldpctl, parse_lldptool
from fabrictest.parsers.slurm_node import parse_slurm_nodes

LLDPTOOL = {  # file -> (system name, port as its description's last word, port MAC)
    "lldptool-t-n-slingshot-hsn0-x6107c0r48b0.txt": ("x6107c0r48b0", "ros0p42",
                                                     "02:fe:00:00:07:ea"),
    "lldptool-t-n-slingshot-hsn1-x6107c0r47b0.txt": ("x6107c0r47b0", "ros0p43",
                                                     "02:fe:00:00:07:ab"),
    "lldptool-t-n-slingshot-hsn0-ama-mismatch.txt": ("x6102c0r45b0", "ros0p27",
                                                     "02:fe:00:00:03:1b"),
    "lldptool-n-i-t-slingshot-hsn0-unindented.txt": ("x3000c0r24b0", "ros0p31",
                                                     "02:fe:00:00:00:1f"),
}
LOCAL_LLDPCTL = recordings("lldpctl-*.txt", "real-outputs-local")
NOISE = ["", "uan01-nmn:~ # lldptool -n -i hsn0 -t", "WARN: something\n\n", "\t \n# >"]


def test_every_lldp_recording_is_read_here():
    public = {p.name for p in recordings("lldp*.txt", "real-outputs")}
    assert set(LLDPTOOL) | {"lldpctl-neighbors-portid-local-lldpd372.txt",
                            "lldpctl-keyvalue-0.5.7-excerpt-lldpd27.txt"} == public
    assert len(LOCAL_LLDPCTL) >= 3


@pytest.mark.parametrize("name", sorted(LLDPTOOL))
def test_lldptool_recordings(name):
    sysname, port, mac = LLDPTOOL[name]
    report = parse_lldptool(read(name), "hsn0")
    assert missing(report) == []
    [n] = report.of("hsn0")
    assert (n.sysname, n.port_names()[-1], n.port_mac()) == (sysname, port, mac)
    assert (n.port_id_type, n.chassis_id_type, n.ttl) == ("mac", "mac", 120)
    assert n.describe() == f"{sysname} port {port}"


def test_unindented_lldptool_reads_as_the_indented_one():
    text = read("lldptool-n-i-t-slingshot-hsn0-unindented.txt")
    indented = "\n".join(line if line.endswith("TLV") else "\t" + line
                         for line in text.splitlines()) + "\n"
    assert parse_lldptool(text, "hsn0").of("hsn0") == parse_lldptool(indented, "hsn0").of("hsn0")


@pytest.mark.parametrize("name", sorted(LLDPTOOL))
def test_lldptool_cut_before_its_closing_line_is_not_whole(name):
    text = read(name)
    end = text.index("End of LLDPDU TLV")
    for cut in range(1, end + len("End of LLDPDU TLV")):
        piece = text[:cut]
        try:
            report = parse_lldptool(piece, "hsn0")
        except ParseError:
            continue
        assert missing(report), f"cut at {cut} reads as whole: {piece[-40:]!r}"


def test_lldpctl_plain_public_neighbor_without_a_system_name():
    report = parse_lldpctl(read("lldpctl-neighbors-portid-local-lldpd372.txt"))
    [n] = report.of("ens3f0")
    assert (n.chassis_id_type, n.chassis_id) == ("mac", "a4:8c:db:6a:09:00")
    assert (n.port_id_type, n.port_id, n.sysname, n.port_descr) == ("local", "34", None, None)
    assert n.port_mac() == "a4:8c:db:6a:09:00"  # the chassis MAC: the port ID is no MAC
    assert n.describe() == "chassis a4:8c:db:6a:09:00 port 34"
    assert missing(report) == []  # no dashed rules in it: nothing to close


def test_lldpctl_keyvalue_public_excerpt():
    report = parse_lldpctl(read("lldpctl-keyvalue-0.5.7-excerpt-lldpd27.txt"))
    [eth2] = report.of("eth2")
    assert (eth2.port_id_type, eth2.port_id, eth2.sysname) == (
        "ifname", "TenGigabitEthernet0/2", None)
    [eth4] = report.of("eth4")
    assert (eth4.sysname, eth4.port_id, eth4.chassis_id) == (None, None, None)


@pytest.mark.parametrize("path", LOCAL_LLDPCTL, ids=lambda p: p.name)
def test_local_lldpctl_recordings(path):
    report = parse_lldpctl(path.read_text())
    assert missing(report) == []
    [n] = report.of("eth0")
    assert (n.sysname, n.port_descr, n.port_mac()) == ("sw1", "p1", "02:fe:00:00:00:41")


@pytest.mark.parametrize("path", [p for p in LOCAL_LLDPCTL if "keyvalue" not in p.name],
                         ids=lambda p: p.name)
def test_local_plain_lldpctl_cut_before_its_last_rule_is_not_whole(path):
    text = path.read_text()
    last = text.rstrip("\n").rfind("\n")  # the closing rule is the last line
    for cut in range(text.index("Interface:") + 1, last + 1):
        try:
            report = parse_lldpctl(text[:cut])
        except ParseError:
            continue
        assert missing(report), f"cut at {cut} reads as whole"


def test_two_neighbours_on_one_port_are_both_kept():
    """lldpd lists a neighbour per block: after a cable moves, the old one until its TTL
    runs out (lldpd issue 502 shows one port with two blocks)."""
    one = read("lldptool-t-n-slingshot-hsn0-x6107c0r48b0.txt")
    kv = "\n".join(["lldp.hsn0.via=LLDP", "lldp.hsn0.chassis.name=sw1", "lldp.hsn0.port.descr=p1",
                    "lldp.hsn0.via=LLDP", "lldp.hsn0.chassis.name=sw2",
                    "lldp.hsn0.port.descr=p3"]) + "\n"
    assert [n.sysname for n in parse_lldpctl(kv).of("hsn0")] == ["sw1", "sw2"]
    assert len(parse_lldptool(one, "hsn0").of("hsn0")) == 1


def test_keyvalue_multiline_description_continues_without_a_key():
    text = ("lldp.eth0.via=LLDP\nlldp.eth0.chassis.mac=00:1c:0f:5f:c7:c0\n"
            "lldp.eth0.chassis.name=c6500\nlldp.eth0.chassis.descr=Cisco IOS Software\n"
            "Technical Support: http://www.cisco.com/techsupport\n"
            "lldp.eth0.port.ifname=Gi3/36\n")
    [n] = parse_lldpctl(text).of("eth0")
    assert (n.sysname, n.port_id, n.chassis_id) == ("c6500", "Gi3/36", "00:1c:0f:5f:c7:c0")


@pytest.mark.parametrize("text", ["", "   \n", "Chassis ID\n", "hello world\n",
                                  "lldp.\n", "Interface eth0\n", '{"lldp": {}}\n'])
def test_not_lldp_output_is_refused(text):
    with pytest.raises(ParseError):
        parse_lldpctl(text)
    with pytest.raises(ParseError):
        parse_lldptool(text, "eth0")


@pytest.mark.parametrize("name", sorted(LLDPTOOL))
def test_lldptool_variants(name):
    """CRLF, a prompt or noise before it, the output repeated (a loop's output): the same
    neighbour, or a refusal, never another exception."""
    text = read(name)
    for newline in ("\r\n", "\n"):
        for noise in NOISE:
            for copies in (1, 2):
                variant = noise + "\n" + (text * copies).replace("\n", newline)
                [n] = parse_lldptool(variant, "hsn0").of("hsn0")
                assert n.sysname == LLDPTOOL[name][0]


@pytest.mark.parametrize("name", ["lldpctl-neighbors-portid-local-lldpd372.txt",
                                  "lldpctl-keyvalue-0.5.7-excerpt-lldpd27.txt"]
                         + [p.name for p in LOCAL_LLDPCTL])
def test_lldpctl_cut_anywhere_with_junk_never_raises_another_exception(name):
    base = read(name)
    for cut in range(0, len(base) + 1, 7):
        for junk in ("", "\x00\xff", "lldp.=", "Interface:  , via:", "=\n=\n"):
            try:
                parse_lldpctl(base[:cut] + junk)
            except ParseError:
                pass


# ----------------------------------------------------------------------------- ip addr
@pytest.mark.parametrize("name,nic,mac,perm,addr", [
    ("ip-addr-show-slingshot-hsn0-ama-permaddr.txt", "hsn0", "02:00:00:00:07:ea",
     "5c:bc:3d:af:cb:e3", "10.152.0.209/15"),
    ("ip-addr-show-slingshot-hsn0-ama-mismatch.txt", "hsn0", "02:00:00:00:03:7c",
     "5c:bc:3d:af:be:b7", "10.152.0.121/15"),
    ("ip-a-slingshot-hsn0-nmn0-unindented.txt", "hsn0", "02:00:00:00:00:02", None,
     "10.253.0.2/24"),
])
def test_ip_addr_recordings(name, nic, mac, perm, addr):
    iface = parse_ip_addr(read(name))[nic]
    assert (iface.mac, iface.permaddr, iface.state, iface.mtu) == (mac, perm, "UP", 9000)
    assert [a.cidr for a in iface.global_addresses()] == [addr]


def test_ip_addr_interface_without_address():
    found = parse_ip_addr(read("ip-a-slingshot-hsn0-nmn0-unindented.txt"))
    assert set(found) == {"lo", "hsn0", "nmn0", "net1"}
    assert found["net1"].global_addresses() == [] and found["net1"].state == "DOWN"
    assert found["lo"].global_addresses() == []  # host scope


def test_ip_json_and_refusals():
    js = ('[{"ifname":"eth0","address":"02:00:00:00:00:41","operstate":"UP","mtu":1500,'
          '"addr_info":[{"family":"inet","local":"10.200.1.11","prefixlen":24,'
          '"scope":"global"}]}]')
    [a] = parse_ip_addr(js)["eth0"].global_addresses()
    assert a.cidr == "10.200.1.11/24"
    for bad in ("[{]", '[{"address": "x"}]', '{"ifname": "x"}', "no interfaces\n",
                '[{"ifname":"e","addr_info":[{"local":"nope","prefixlen":1}]}]'):
        with pytest.raises(ParseError):
            parse_ip_addr(bad)


# ------------------------------------------------------------ getent, inventory, Slurm
def test_getent():
    assert parse_ahosts("10.200.1.11     STREAM node01-hsn\n10.200.1.11     DGRAM  \n"
                        "10.200.1.11     RAW    \n") == ["10.200.1.11"]
    assert parse_hosts("10.200.1.11     node01-hsn alias1\n") == ["node01-hsn", "alias1"]
    for bad in ("node01 10.0.0.1\n", "  \n"):
        with pytest.raises(ParseError):
            parse_ahosts(bad)
    with pytest.raises(ParseError):
        parse_hosts("10.0.0.1\n")


def test_inventory_round_trip_and_refusals():
    text = ("# node nic switch port mac ip\nnid001 hsn0 x1000c0r0b0 ros0p31 02:00:00:00:00:1F "
            "10.253.0.31\nnid002 hsn0 x1000c0r0b0 ros0p30\nnid003 hsn0 sw p1 - 10.0.0.3\n")
    inv = parse_inventory(text)
    e = inv.get("nid001", "hsn0")
    assert (e.switch, e.port, e.mac, e.ip, e.line) == (
        "x1000c0r0b0", "ros0p31", "02:00:00:00:00:1f", "10.253.0.31", 2)
    assert inv.get("nid002", "hsn0").mac is None
    assert parse_inventory(inventory_text(inv.entries.values())).entries.keys() == \
        inv.entries.keys()
    bad = {
        "nid001 hsn0 sw\n": "3 columns",
        "nid001 hsn0 sw p1 zz:00 \n": "is not a MAC",
        "nid001 hsn0 sw p1 - 10.0.0.300\n": "is not an IP",
        "a b c d e f g\n": "7 columns",
        "nid001 hsn0 sw p1\nnid001 hsn0 sw p2\n": "already listed on line 1",
        "nid001 hsn0 sw p1\nnid002 hsn0 sw p1\n": "line 2: nid002 hsn0 on sw port p1, where "
                                                  "line 1 cables nid001 hsn0: one switch port",
        "nid001 - sw p1\n": "required",
        "# only a comment\n": "no 'node nic switch port' line",
    }
    for text, why in bad.items():
        with pytest.raises(ParseError, match=why):
            parse_inventory(text)


def test_slurm_node_lines():
    line = ("NodeName=node03 Arch=x86_64 CoresPerSocket=1 State=IDLE+DRAIN ThreadsPerCore=1 "
            "Reason=fabric-health: eth0/- lldp: found sw2 port p1, expected sw1 port p3 "
            "[root@2026-11-26T10:02:11]\nNodeName=node04 State=IDLE Reason=\n")
    nodes = parse_slurm_nodes(line)
    assert nodes["node03"].drained and not nodes["node04"].drained
    assert nodes["node03"].reason == ("fabric-health: eth0/- lldp: found sw2 port p1, "
                                      "expected sw1 port p3")
    with pytest.raises(ParseError):
        parse_slurm_nodes("NodeName=x Arch=y\n")
    with pytest.raises(ParseError):
        parse_slurm_nodes("No nodes in the system\n")


def test_normalise_mac():
    assert normalise_mac("02-FE-00-00-00-1F") == "02:fe:00:00:00:1f"
    for bad in ("02:fe:00:00:00", "02:fe:00:00:00:1g", "02:fe-00:00:00:1f", "", None):
        assert normalise_mac(bad) is None


def test_the_same_neighbour_printed_twice_by_lldptool_is_one():
    """issue 40: lldptool printing one LLDPDU twice is one neighbour; two different LLDPDUs on
    one port, or one TLV twice inside an LLDPDU, stay refused."""
    one = read("lldptool-t-n-slingshot-hsn0-x6107c0r48b0.txt")
    twice = parse_lldptool(one + one, "hsn0")
    assert missing(twice) == [] and twice.of("hsn0") == parse_lldptool(one, "hsn0").of("hsn0")
    other = one.replace("x6107c0r48b0", "x6107c0r47b0")
    assert "lldptool: 2 different neighbours printed for hsn0: which one is on the port?" in missing(
        parse_lldptool(one + other, "hsn0"))
    doubled_tlv = one.replace("System Name TLV\n", "System Name TLV\n        sw9\nSystem Name TLV\n")
    assert missing(parse_lldptool(doubled_tlv, "hsn0"))
