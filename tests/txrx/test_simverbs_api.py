"""The simulated provider's classes expose pyverbs' API, checked against the installed pyverbs.

Every public attribute of a simulated object must exist on the pyverbs class it stands for,
and every method (constructors included) must take the same parameters: the same names in
the same order, as many required and at most as many positional ones, and **kwargs where
pyverbs documents them. pyverbs is compiled Cython without signatures, so its parameters are
read from how its argument parsing rejects calls that never reach the function's body (a
probe object from `__new__`, an unknown keyword that always fails); the probes run in a
subprocess so that a crash would fail the test instead of pytest."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys

import pytest

pytest.importorskip("pyverbs.wr")

from fabrictest import simverbs  # noqa: E402
from fabrictest.simverbs import device  # noqa: E402

PAIRS = [  # simulated class, pyverbs class, whether users construct it (then __init__ counts)
    (simverbs.Context, "pyverbs.device.Context", True),
    (simverbs.PD, "pyverbs.pd.PD", True),
    (simverbs.MR, "pyverbs.mr.MR", True),
    (simverbs.CQ, "pyverbs.cq.CQ", True),
    (simverbs.QP, "pyverbs.qp.QP", True),
    (simverbs.QPInitAttr, "pyverbs.qp.QPInitAttr", True),
    # only handed out by the library (query_port, query_device, get_device_list)
    (simverbs.PortAttr, "pyverbs.device.PortAttr", False),
    (simverbs.DeviceAttr, "pyverbs.device.DeviceAttr", False),
    (device.Device, "pyverbs.device.Device", False),
]

PROBE = r'''
import importlib, json, re, sys

def call(f, *a, **k):
    try:
        f(*a, **k)
        return "returned"
    except BaseException as e:
        return str(e)

def real_shape(f, o):
    """(max positional, required, names check) of a pyverbs method from its arg parsing."""
    args = (o,) if o is not None else ()
    many = call(f, *args, *range(20))
    if "takes no arguments" in many:
        top = 0
    elif "takes exactly one argument" in many:
        top = 1
    else:
        m = re.search(r"takes (?:at most|exactly) (\d+) positional", many)
        top = int(m.group(1)) if m else None
    none = call(f, *args, zz_probe=1)
    m = re.search(r"takes (?:at least|exactly) (\d+) positional", none)
    if m:
        required = int(m.group(1))
    elif "exactly one argument" in many:
        required = 1
    else:
        required = 0
    return top, required

def names_ok(f, o, names):
    args = (o,) if o is not None else ()
    bad = []
    for i, name in enumerate(names):
        kw = {name: None, **{n: None for n in names[i + 1:]}, "zz_probe": 1}
        got = call(f, *args, *[None] * (i + 1), **kw)
        if f"multiple values for keyword argument '{name}'" not in got:
            bad.append(f"parameter {i + 1} is not {name!r} ({got})")
    return bad

out = []
for check in json.load(sys.stdin):
    mod, _, cls_name = check["real"].rpartition(".")
    cls = getattr(importlib.import_module(mod), cls_name)
    for attr in check["attributes"]:
        if not hasattr(cls, attr):
            out.append(f"{check['real']} has no attribute {attr!r}")
    for meth in check["methods"]:
        name = meth["name"]
        f = getattr(cls, name, None)
        if f is None:
            out.append(f"{check['real']} has no method {name!r}")
            continue
        o = cls.__new__(cls)
        top, required = real_shape(f, o)
        where = f"{check['real']}.{name}"
        if top != meth["max"]:
            out.append(f"{where}: at most {top} positional parameters, the stand-in takes {meth['max']}")
        if required != meth["required"]:
            out.append(f"{where}: {required} required, the stand-in requires {meth['required']}")
        if meth["names"] and "one argument" not in call(f, o, *range(20)):
            out += [f"{where}: {b}" for b in names_ok(f, o, meth["names"])]
        doc = f.__doc__ or ""
        if (":param kwargs:" in doc) != meth["varkw"]:
            out.append(f"{where}: **kwargs {'documented' if ':param kwargs:' in doc else 'absent'} in pyverbs")
print(json.dumps(out))
'''


def shape(func) -> dict:
    params = list(inspect.signature(func).parameters.values())[1:]  # without self
    positional = [p for p in params if p.kind == p.POSITIONAL_OR_KEYWORD]
    return {
        "name": func.__name__,
        "max": len(positional),
        "required": sum(p.default is p.empty for p in positional),
        "names": [p.name for p in positional],
        "varkw": any(p.kind == p.VAR_KEYWORD for p in params),
    }


def exposed(obj, constructed: bool) -> tuple[list[str], list[dict]]:
    """Public attributes and methods of a simulated object (its class and its instance)."""
    attrs, methods = [], [shape(type(obj).__init__)] if constructed else []
    for name in sorted(set(dir(obj))):
        if name.startswith("_"):
            continue
        value = getattr(type(obj), name, None)
        if inspect.isfunction(value):
            methods.append(shape(value))
        else:
            attrs.append(name)
    return attrs, methods


@pytest.fixture
def instances(tmp_path, monkeypatch):
    monkeypatch.setenv("FABRICTEST_VERBS_SIM_DIR", str(tmp_path))
    from fabrictest.txrx.transports.rdma import verbs

    pv = verbs.provider({"FABRICTEST_VERBS": "sim"})
    ctx = pv.Context(name="simverbs0")
    pd = pv.PD(ctx)
    cq = pv.CQ(ctx, 16, None, None, 0)
    cap = pv.QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1, max_recv_sge=1)
    init = pv.QPInitAttr(qp_type=verbs.E("IBV_QPT_UC"), scq=cq, rcq=cq, cap=cap, sq_sig_all=0)
    return {
        simverbs.Context: ctx, simverbs.PD: pd, simverbs.MR: pv.MR(pd, 64, 1), simverbs.CQ: cq,
        simverbs.QP: pv.QP(pd, init), simverbs.QPInitAttr: init,
        simverbs.PortAttr: ctx.query_port(1), simverbs.DeviceAttr: ctx.query_device(),
        device.Device: simverbs.get_device_list()[0],
    }  # fmt: skip


def test_every_simulated_class_matches_installed_pyverbs(instances):
    checks = []
    for sim_cls, real, constructed in PAIRS:
        attrs, methods = exposed(instances[sim_cls], constructed)
        checks.append({"real": real, "attributes": attrs, "methods": methods})
    assert sum(len(c["methods"]) for c in checks) >= 20  # the probe looked at something
    proc = subprocess.run([sys.executable, "-c", PROBE], input=json.dumps(checks),
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == []


def test_get_device_list_takes_no_arguments_as_in_pyverbs():
    import pyverbs.device

    assert inspect.signature(simverbs.get_device_list).parameters == {}
    with pytest.raises(TypeError, match="takes no arguments"):
        pyverbs.device.get_device_list(1)


def test_the_probe_notices_a_drifted_signature(instances):
    # a stand-in whose CQ.poll took `count` instead of `num_entries`, and a CQ attribute
    # pyverbs does not have, must be caught
    def poll(self, count=1):
        pass

    checks = [{"real": "pyverbs.cq.CQ", "attributes": ["cqe", "depth"],
               "methods": [shape(poll)]}]  # fmt: skip
    proc = subprocess.run([sys.executable, "-c", PROBE], input=json.dumps(checks),
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    found = json.loads(proc.stdout)
    assert any("no attribute 'depth'" in x for x in found)
    assert any("poll: parameter 1 is not 'count'" in x for x in found), found
