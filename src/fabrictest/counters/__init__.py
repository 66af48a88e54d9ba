"""Counters: link, error and congestion counters of the nodes, from reading them to the verdict.

What is here, from the bottom up (the ``counters-layers`` contract, docs/counters.md):
reading the tools' texts (:mod:`.read`), one node's snapshot and the difference of two
(:mod:`.snapshot`), the verdict on a test's nodes (:mod:`.judge`), a whole run's view per node
(:mod:`.whole_run`); above them, what touches the node or the disk: :mod:`.gather` (sysfs and
the commands) and :mod:`.files` (snapshot and threshold files); and ``fabric-health counters``
(:mod:`.cli`). ``fabric-health``, ``fabric-report`` and the ReFrame plugin
(``reframe_tests/fabric_counters.py``) call it.
"""
