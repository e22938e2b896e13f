"""Datasets this project authors itself, as code that builds them (deterministic inputs, scripted
agents recorded against real sandboxes, labels from verifiers)."""
