"""Browser sandboxes: a headless Chromium whose every request is answered from a page archive."""
