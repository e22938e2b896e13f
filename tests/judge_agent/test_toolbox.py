"""The judge's toolbox over in-process MCP servers: routing, capping, images, failures."""

from __future__ import annotations

import base64
from pathlib import Path

from judge_agent.model import ContentImage, ContentText
from judge_agent.toolbox import Toolbox, cap_text
from mcp_servers.filesystem.server import filesystem_server
from sandboxes.filesystem.local import LocalFileTree

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(32))


def test_cap_text_keeps_head_and_tail_and_says_how_much_is_gone() -> None:
    text = "".join(f"line {index}\n" for index in range(10_000))
    capped = cap_text(text, 1_000)
    assert capped.startswith("line 0\n")
    assert capped.endswith("line 9999\n")
    assert f"of {len(text):,} characters omitted" in capped
    assert len(capped) < 1_200
    assert cap_text("short", 1_000) == "short"


async def test_toolbox_routes_caps_and_passes_images(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("x" * 50_000)
    (tmp_path / "pixel.png").write_bytes(PNG)
    box = await Toolbox.open([filesystem_server(LocalFileTree(tmp_path))], output_limit=2_000)
    try:
        assert "read_text_file" in {tool.name for tool in box.tools}
        big = await box.call("read_text_file", {"path": "big.txt"})
        assert not big.is_error
        assert "characters omitted" in big.text
        assert len(big.text) < 2_200
        image = await box.call("read_media_file", {"path": "pixel.png"})
        pictures = [block for block in image.content if isinstance(block, ContentImage)]
        assert base64.b64decode(pictures[0].data) == PNG
        missing = await box.call("nope", {})
        assert missing.is_error
        assert "no tool 'nope'" in missing.text
        refused = await box.call("read_text_file", {"path": "/etc/passwd"})
        assert refused.is_error
        assert isinstance(refused.content[0], ContentText)
        assert "Access denied" in refused.content[0].text
    finally:
        await box.aclose()
