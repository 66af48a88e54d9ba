"""``python -m fabrictest.health``: the ``fabric-health`` command."""

import sys

from .cli import main

sys.exit(main())
