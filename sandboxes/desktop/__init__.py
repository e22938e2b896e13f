"""Desktops: virtual screens with LibreOffice, driven through OSWorld's control protocol.

Owns the desktop sandboxes of every backend (``sandbox``), the ``local`` backend (``local``),
the client of the control protocol (``client``), observations (``observations``), the action
executor (``actions``), the memory cap (``memory``) and the control server that runs inside a
desktop (``control_server``, stdlib and Debian packages only).
"""
