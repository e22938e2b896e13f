"""Sandboxes: throwaway environments (directory trees, databases, desktops, devices, archives).

Owns their lifecycle (create from an initial state, snapshot, clone, destroy) and garbage
collection of leftovers. Must not know about trajectories, judges or MCP.
"""
