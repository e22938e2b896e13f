"""Bench: runs judge grids, scores verdicts against labels, and writes reports.

Owns ``evaluate()`` (``bench.evaluate``), the judge grid runner (``bench.grid_runner``), metrics,
confidence intervals, baselines, ablation grids, results files and reports. Must not talk to models
or environments directly: it drives ``replay``, ``sandboxes`` and ``judge_agent``. Must not print
or parse a command line: that is ``agentjudge``'s.
"""
