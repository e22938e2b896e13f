"""The workspace kind's MCP servers: a coding agent's tools, and the judge's over the end state."""
