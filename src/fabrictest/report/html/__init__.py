"""`fabric-report html`: one offline page of a run or a comparison."""
