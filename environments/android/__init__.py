"""The ``android`` environment kind: a phone (a device over adb, or a phone-sized Chromium)."""
