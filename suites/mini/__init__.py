"""The ``mini`` example dataset (``datasets/examples/mini``): one hand-made task per subdomain.

``build`` writes it; ``python -m suites.mini [--output DIR]`` runs that.
"""
