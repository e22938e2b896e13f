"""Android devices as sandboxes: a device reached over adb, or a phone-sized headless Chromium.

Owns the UI hierarchy format, AndroidWorld actions as gestures, the two device backends and
their sandboxes. Must not know about trajectories, judges or MCP.
"""
