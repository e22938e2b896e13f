"""Prompt templates for judges, one per domain and mode, plus the trajectory renderer's settings.

Owns the wording the judge reads. Must not contain logic beyond filling templates.
"""
