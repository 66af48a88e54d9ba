"""The fault x check matrix (issue 40 item 8): every check of the suite on one axis, every
fault a fabric, a benchmark or a careless hand brings on the other, each cell computed here
in-process from recorded outputs and the suite's own judges, or citing the test that shows it
(docs/fault-matrix.md is generated from it: ``python -m tests.matrix.generate``)."""
