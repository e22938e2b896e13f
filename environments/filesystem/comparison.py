"""How the filesystem kind's recorded and replayed outputs are compared.

On top of the rules every kind shares (``environments.comparison``: root, line ends,
date-times, UUIDs), the reference filesystem server's answers get:

- **File times.** In ``get_file_info`` output the ``created``, ``modified`` and ``accessed``
  lines keep their name only (the replayed file's times are the replay's, by design).
- **Order that nothing fixes.** Lines of ``list_directory`` and ``search_files`` output are
  sorted (the reference server returns them in directory order); ``directory_tree`` JSON is
  compared with children sorted by name and keys in any order.
- **Directory sizes.** A directory's size is the filesystem's business (tmpfs, ext4 and overlay
  report different ones), so in ``list_directory_with_sizes`` sorted by size the ``[DIR]``
  lines are taken out of the order and listed after the files, by name; and in
  ``get_file_info`` of a directory the ``size`` line keeps its name only.
"""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any

from environments.comparison import DATETIME_MARK, common_lines, mask_datetimes, mask_uuids

SORTED_LINE_TOOLS = frozenset({"list_directory", "search_files"})
"""Tools whose output lines come in an order nothing guarantees."""

_FILE_TIME_LINE = re.compile(r"^(created|modified|accessed): .*$", re.MULTILINE)
_SIZE_LINE = re.compile(r"(?m)^size: \d+$")


def _directories_after_files(text: str) -> str:
    """The entries of a size-sorted listing with the ``[DIR]`` lines moved to the end."""
    lines = text.split("\n")
    end = lines.index("") if "" in lines else len(lines)
    entries, rest = lines[:end], lines[end:]
    directories = sorted(line for line in entries if line.startswith("[DIR]"))
    files = [line for line in entries if not line.startswith("[DIR]")]
    return "\n".join([*files, *directories, *rest])


def _sorted_json(value: Any) -> Any:
    if isinstance(value, dict):
        result = {key: _sorted_json(item) for key, item in sorted(value.items())}
        children = result.get("children")
        if isinstance(children, list):
            result["children"] = sorted(children, key=json.dumps)
        return result
    if isinstance(value, list):
        return [_sorted_json(item) for item in value]
    return value


def normalise_filesystem_output(
    text: str, *, tool: str, arguments: dict[str, Any] | None = None, root: str = ""
) -> str:
    """Every rule above, after the shared ones, for one output (recorded or replayed)."""
    text = common_lines(text, root)
    if tool == "get_file_info":
        text = _FILE_TIME_LINE.sub(lambda match: f"{match.group(1)}: {DATETIME_MARK}", text)
        if "\nisDirectory: true" in text:
            text = _SIZE_LINE.sub("size: <SIZE>", text)
    text = mask_uuids(mask_datetimes(text))
    if tool in SORTED_LINE_TOOLS:
        text = "\n".join(sorted(text.split("\n")))
    elif tool == "list_directory_with_sizes" and (arguments or {}).get("sortBy") == "size":
        text = _directories_after_files(text)
    elif tool == "directory_tree":
        with contextlib.suppress(ValueError):
            text = json.dumps(_sorted_json(json.loads(text)), indent=2, sort_keys=True)
    return text
