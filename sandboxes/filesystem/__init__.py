"""Filesystem sandboxes: a private directory tree, on the host (``local``) or in a container."""
