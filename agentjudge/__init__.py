"""The ``agentjudge`` command line: parses arguments, calls the layer that does the work, prints.

Owns no logic of its own: every command delegates to ``dataset``, ``replay``, ``judge_agent`` or
``bench``. Must not hold state between commands or import heavy layers before a command needs them.
"""
