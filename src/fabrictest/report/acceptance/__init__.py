"""`fabric-report acceptance`: one page over the three stages of an acceptance run, verdict
first."""
