"""`fabric-report calibrate`: reference entries from 3 or more sessions, merged into the
system's reference file."""
