"""MCP servers that expose a sandbox, or a recorded trajectory, to a judge.

Owns tool names, parameters and path/permission rules matching the public servers. Must not let a
caller reach outside its sandbox, and must not decide verdicts.
"""
