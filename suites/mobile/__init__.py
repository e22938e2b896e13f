"""The mobile sample suite: small phone-sized web apps, scripted agents, labels from app state.

``apps/`` holds the web apps (notes, contacts, settings, shop) the Chromium phone shows; ``tasks``
the tasks with their starting data, checks and scripted runs; ``recorder`` records a run through
the device MCP server; ``build`` writes ``datasets/mobile`` (``python -m suites.mobile``).
"""
