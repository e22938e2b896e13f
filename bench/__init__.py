"""Bench: runs judge grids, scores verdicts against labels, and writes reports.

Owns metrics, confidence intervals, baselines, ablation grids, results files and reports. Must not
talk to models or environments directly: it drives ``replay`` and ``judge_agent``.
"""
