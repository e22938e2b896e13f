"""The device MCP server: AndroidWorld's action set on a live device (adb or Chromium phone).

``server`` owns the tools and their answers; ``__main__`` serves one device over stdio. Acts only
on the device it is given; the device itself (``sandboxes.android``) keeps the network out.
"""
