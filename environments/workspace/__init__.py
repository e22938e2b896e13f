"""The ``workspace`` environment kind: a coding agent's project folder with a shell."""
