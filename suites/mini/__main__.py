"""``python -m suites.mini [--output DIR]``: rebuild the ``mini`` example dataset."""

from suites.mini.build import main

main()
