"""Desktops: a virtual screen with LibreOffice, driven through an OSWorld-protocol control server."""
