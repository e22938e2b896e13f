"""The filesystem kind: a directory tree, served by the filesystem MCP server.

Owns the kind's record (``kind.FilesystemKind``, registered as ``filesystem``) and the typed
accessor ``as_filesystem_sandbox``. The sandboxes are ``sandboxes.filesystem``'s and the tools
``mcp_servers.filesystem``'s; this package only ties them to the rest of the runtime.
"""

from environments.filesystem.kind import KIND, FilesystemKind, as_filesystem_sandbox

__all__ = ["KIND", "FilesystemKind", "as_filesystem_sandbox"]
