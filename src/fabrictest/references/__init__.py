"""Loading and checking ``reference/<system>.yaml`` (the suite's performance references).

A reference file is ReFrame's external-reference YAML (the format ReFrame reads for
``reference = {'$ref': FILE}``) plus one top-level block, ``$provenance`` (ReFrame only looks up
the test's class name; ``$provenance`` can never be one), saying where every number came from
and what it was measured with. The suite's tests do not hand ReFrame the file: they load it
once through :func:`load` and hand ReFrame the ``$index`` reference :func:`for_reframe` builds
from it (only the entry of the test, only the figures it is judged on):

.. code-block:: yaml

    $provenance:
      TxRxTest:                       # per test class ...
        seren:                        # ... and system: the block's source
          document: seeds/000_bc14321ba763bb8c.txt
          table: "One transmitter and one receiver on the same node, output"
          note: "97.6 Gbps per stream on 100 GbE"
          measured_with:              # the shaping variables' values behind these figures
            msg_size: 65536
            num_blks: 10
            num_cmsgs: 100
            nmsg: [100000, 1000000]   # a list: the figure holds for each of these values
          values:                     # optional per-value entries (dotted key path below the
            many-to-one.rdma.host.stream_gbps:   # system, as written in the file, + figure);
              note: "..."             # they inherit the block's fields and override them
              measured_with: {nmsg: 1000000}     # merged over the block's measured_with
    TxRxTest:
      $index: ['$system', 'scenario', 'method', 'buffer']
      seren:
        same-node:
          rdma:
            host:
              stream_gbps: [97.0, -0.1, null, Gbps]   # [ref, lower, upper, unit]

Keys below ``$system`` are the values of the test parameters/variables named in ``$index``
(ReFrame treats a key that does not match exactly as an anchored regex, e.g. ``'.*'``, but only
for string values: integer parameters such as ``iterations`` need their exact keys).
Thresholds are fractions of the reference: a value below ``ref * (1 + lower)`` or above
``ref * (1 + upper)`` fails the test; ``null`` means unbounded.

**A reference must be able to fail.** :func:`load` refuses, with one line naming the file, the
key path and the figure: both bounds null; a zero reference (relative bounds of zero are zero);
a lower bound <= -1 (it accepts every non-negative value) or > 0; an upper bound < 0; a
non-finite reference or bound; a negative reference. The ReFrame base's references plugin
(``reframe_tests/fabric_references.py``) loads the file only through :func:`load`, so a bad file
fails the test, and checks at run time that each reference's unit is its performance function's.

**What a figure was measured with.** A variable that changes what is measured (message size,
message count, sizes, iterations, ranks per node, nodes, ...) is a *shaping variable*: each test
family lists its own in ``shaped_by`` and reports their effective values for a run (``nmsg=0``
resolved to the count the size profile chose). Each one is either a level of ``$index`` or
listed in ``$provenance.<Class>.<system>.measured_with`` (with per-value overrides under
``values``): a value, a list of values the figure holds for, or ``null`` (the variable did not
apply, e.g. ``transport`` for ``--method mpi``; a run where it applies gets no reference). A
run whose value (``None`` in ``shaping()``: does not apply to this run, not checked) is not the
one (or one of the list) the reference was measured with gets **no reference** for that
figure: ``no reference for msg_size=1024`` (failing the test unless ``-S
missing_reference=warn``), instead of being judged against another size's value. A shaping
variable neither indexed nor listed also means no reference. :func:`check_against`
(run by ``tests/reframe/test_references.py``) reports files that do not list every shaping
variable of a class. A calibration command writing a file must write ``measured_with`` with the
values of its run. A shaping variable in ``$index`` is looked up by its effective value
(``BisectionTest``'s ``num_nodes`` is None, the partition's nodes, and 16 is what ran: the
vcluster file holds its figures at ``4`` and ``16``), by the tests and by ``calibrate`` alike.
``measured_with`` may also describe the bed (``BED_KEYS``: ``host_cores``, ``bed_nodes``, for
nodes that share one host's cores): no test variable, read by ``fabric-sweep --expect-from``,
which refuses such a reference at another number of nodes.

Where things are: :mod:`.model` (what a loaded file is: :class:`Reference`, one checked
figure with its provenance, :class:`ClassReferences`, :class:`ReferenceFile`), :mod:`.loading`
(:func:`load` parses and validates one file, the only parse of it, :func:`load_all`,
:func:`for_reframe`: the ``$index`` reference a test hands ReFrame, made from the loaded
file's :class:`Reference` objects), :mod:`.entry_lookup` (:func:`lookup` / :func:`resolve`:
the loaded references ReFrame will use for a test's parameters, and their key path;
:func:`coverage`), :mod:`.location` (:func:`reference_dir`: the one lookup of the reference
directory),
:mod:`.judging` (:func:`refusals`: which figures of a run have no usable reference;
:func:`unit_mismatches`), :mod:`.consistency` (:func:`check_against`: a file against the
tests' parameters, variables, units and shaping variables). Every name is importable from this
package.
"""

from .consistency import TestSpec, check_against
from .entry_lookup import coverage, lookup, resolve
from .judging import refusals, unit_mismatches
from .loading import for_reframe, load, load_all, parse_entry, read_yaml
from .location import reference_dir, reference_file
from .model import (
    BED_KEYS,
    INDEX_KEY,
    MEASURED_WITH,
    PROVENANCE_FIELDS,
    PROVENANCE_KEY,
    ClassReferences,
    Reference,
    ReferenceError,
    ReferenceFile,
    band,
)

__all__ = [
    "BED_KEYS",
    "INDEX_KEY",
    "MEASURED_WITH",
    "PROVENANCE_FIELDS",
    "PROVENANCE_KEY",
    "ClassReferences",
    "Reference",
    "ReferenceError",
    "ReferenceFile",
    "band",
    "TestSpec",
    "check_against",
    "coverage",
    "for_reframe",
    "load",
    "load_all",
    "lookup",
    "parse_entry",
    "read_yaml",
    "refusals",
    "resolve",
    "unit_mismatches",
    "reference_dir",
    "reference_file",
]
