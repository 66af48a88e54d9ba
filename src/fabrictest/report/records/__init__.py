"""The floor every command stands on: the records read from run reports, stored sessions and
perflogs, their units, statistics, directions, and the files a command reads and writes."""
