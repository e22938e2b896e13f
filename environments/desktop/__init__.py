"""The desktop kind: a LibreOffice desktop driven through OSWorld's control protocol.

Owns the kind's record (``kind.DesktopKind``, registered as ``desktop``) and the typed accessor
``as_desktop_sandbox``, and the replay of GUI steps (``replay``: actions performed again, screens
and trees compared with the record). The desktops are ``sandboxes.desktop``'s; this package ties
them to the rest of the runtime.
"""

from environments.desktop.kind import KIND, DesktopKind, as_desktop_sandbox

__all__ = ["KIND", "DesktopKind", "as_desktop_sandbox"]
