"""The filesystem tools of the reference server ``@modelcontextprotocol/server-filesystem``.

``operations`` re-implements the 14 tools over a sandbox's ``FileTree`` with the server's names,
parameters, path rule, output text and (Node.js) error text, so that replay can re-execute recorded
calls and compare outputs, and a later layer can publish the same functions as an MCP server.
Must not reach outside the tree it is given. Beside it: ``paths`` (the path rule), ``errors``
(Node.js failure text), ``content`` (reading, encoding, edits), ``formatting`` (JavaScript output
behaviours), ``glob`` (minimatch) and ``diff`` (jsdiff patches).
"""
