"""The resident helper: a small program that lives inside every sandbox container.

It is started as the container's main process (``python3 -m resident --socket PATH``, with this
folder bind-mounted read-only from the repository, so changing it needs no image rebuild) and
serves requests on a Unix socket in a folder bind-mounted from the host: file operations on the
tree at ``/sandbox``, archives of the tree in and out, and attaching a frozen snapshot. The host
talks to it through ``sandboxes.docker.resident_link``; no ``docker exec`` per call, no TCP port.

Everything here uses the standard library only (the container's Python, not the runtime's
virtualenv) and imports its siblings relatively, so the same files run in the container as the
``resident`` package and on the host as ``sandboxes.docker.resident`` (the wire format and the
archive helpers are shared by both ends).
"""
