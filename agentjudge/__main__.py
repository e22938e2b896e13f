"""Allow ``python -m agentjudge``."""

from agentjudge.cli import main

main()
