"""`fabric-report counters`: every node's counters over the whole run."""
