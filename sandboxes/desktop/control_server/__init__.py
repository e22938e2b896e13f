"""The desktop's own control server: OSWorld's HTTP protocol, served from inside a desktop.

Owns everything that runs *inside* a desktop (a bubblewrap box on the host, or a container): the
processes of a desktop session (``session``: Xvfb, a session D-Bus, the AT-SPI bus, a window
manager, LibreOffice), the X screen (``screen``: screenshots, pointer, windows), the accessibility
tree in OSWorld's XML (``accessibility``) and the HTTP endpoints (``http_api``). It is written
from OSWorld's documented protocol, so the runtime's client drives this server and an OSWorld VM
alike.

It runs with the desktop's system ``python3`` and Debian packages only (``python3-gi`` with
``gir1.2-atspi-2.0``, ``python3-xlib``, ``python3-pil``), plus pyautogui for recorded code
(``pyautogui_runner``); nothing here imports the runtime, so the folder can be copied or
bind-mounted into a container and started with ``python3 -m control_server``.
"""
