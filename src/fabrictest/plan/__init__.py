"""`fabric-plan`: the acceptance's jobs, node-hours and wall time, printed before anything runs.

The jobs are what ``reframe --dry-run`` writes for the system (:mod:`.dry_run`: the families'
own listing and placement, over the given topology); this package reads their job scripts,
puts each in its stage of the Slingshot acceptance notes' order (:mod:`.jobs`), gives it its
expected minutes (:mod:`.minutes`), packs them onto the nodes (:mod:`.schedule`) and prints
the plan (:mod:`.output`). ``docs/plan.md`` has the figures for a 10,000-node dragonfly and fat
tree. No module here imports ReFrame or ``fabrictest.report``.
"""
