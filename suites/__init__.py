"""Datasets this project authors itself, as code that builds them (deterministic inputs, scripted
agents recorded against real sandboxes, labels from verifiers): ``ds`` (the DS judging suite) and
``mini`` (the hand-made example dataset).

The builders sit above everything they use (``dataset``, ``sandboxes``, ``mcp_servers``,
``replay``); no other package imports ``suites``.
"""
