"""The judge: an LLM loop with a turn budget that ends in a ``Verdict``.

Owns model providers, the tool-using and tool-free loops, verdict parsing and run logs. Must not
build environments (it is handed MCP sessions) and must not score verdicts against labels.
"""
