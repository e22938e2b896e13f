"""An agent judge (scripted model, real everything else) on a replayed phone: it opens the app
and finds what the run's last screen hid. The model's replies are scripted (``mock``); the
assertions check what it was shown against the apps' recorded final state."""

from __future__ import annotations

import json
from pathlib import Path

from dataset.store import TRAJECTORIES_DIR, load_dataset
from environments.android.kind import KIND
from environments.backends import ProviderSet
from environments.kind import JudgeServerOptions
from judge_agent.conversation import JudgeLimits
from judge_agent.loop import JudgeSettings, judge_trajectory
from judge_agent.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    GenerateConfig,
    ToolInfo,
)
from judge_agent.providers.mock import ScriptedModel, reply, tool_call
from judge_agent.toolbox import Toolbox
from mcp_servers.trajectory.server import trajectory_server
from replay.frozen import FrozenReplays

MOBILE = Path(__file__).resolve().parents[3] / "datasets" / "mobile"
TWO_MUGS = "shop-order-blue-mug--two-mugs"


def text_of(message: ChatMessageTool) -> str:
    if isinstance(message.content, str):
        return message.content
    return "".join(getattr(block, "text", "") for block in message.content)


def element_index(listing: str, text: str) -> int:
    for line in listing.splitlines():
        if (
            line.startswith("UI element ")
            and json.loads(line.split(": ", 1)[1]).get("text") == text
        ):
            return int(line.split(":", 1)[0].removeprefix("UI element "))
    raise AssertionError(f"{text!r} is not on the screen the judge was shown")


def inspect_the_orders(
    messages: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
) -> ChatMessageAssistant:
    """Look at the phone, open the shop, open its orders, and judge by what they say."""
    shown = [message for message in messages if isinstance(message, ChatMessageTool)]
    if not shown:
        return reply(
            "The last screen shows no quantities; look at the phone.", tool_call("get_screen")
        )
    if len(shown) == 1:
        return reply("", tool_call("open_app", app_name="Shop"))
    if len(shown) == 2:
        return reply("", tool_call("click", index=element_index(text_of(shown[-1]), "Orders")))
    one_mug = "Blue mug \u00d7 1 to 12 Harbour Street" in text_of(shown[-1])
    verdict = "PASS" if one_mug else "FAIL"
    return reply(
        "", tool_call("submit_verdict", verdict=verdict, confidence=0.9, reasoning="orders checked")
    )


async def test_an_agent_judge_finds_the_second_mug_the_last_screen_hid() -> None:
    mobile = load_dataset(MOBILE)
    trajectory = mobile.trajectories[TWO_MUGS]
    task = mobile.tasks[trajectory.task_id]
    final = json.loads((MOBILE / TRAJECTORIES_DIR / TWO_MUGS / "final_state.json").read_text())
    [order] = json.loads(final["storage"]["shop"]["state"])["orders"]
    assert order["items"] == [{"sku": "mug-blue", "qty": 2}]
    last = trajectory.steps[-1].observation
    assert last is not None
    assert "\u00d7" not in (last.accessibility_tree or "")  # the run's last screen: no quantity
    model = ScriptedModel(respond=inspect_the_orders)
    async with (
        ProviderSet() as providers,
        FrozenReplays(mobile, providers, verify=False) as replays,
    ):
        view = await replays.environment(TWO_MUGS, writable=False)
        assert view is not None
        async with KIND.judge_servers(view, JudgeServerOptions(writable=False)) as servers:
            recording = trajectory_server(trajectory, task=task, base_dir=MOBILE / TRAJECTORIES_DIR)
            box = await Toolbox.open([*servers, recording])
            try:
                verdict = await judge_trajectory(
                    task,
                    trajectory,
                    model=model,
                    settings=JudgeSettings(mode="agent", limits=JudgeLimits(turn_limit=6)),
                    base_dir=MOBILE / TRAJECTORIES_DIR,
                    toolbox=box,
                )
            finally:
                await box.aclose()
    assert [call.name for call in verdict.tool_calls] == ["get_screen", "open_app", "click"]
    assert verdict.verdict == "FAIL"
    assert trajectory.label is not None
    assert trajectory.label.value == "FAIL"
    shown = [m for m in model.calls[-1].messages if isinstance(m, ChatMessageTool)]
    assert "Thank you" in text_of(shown[0])  # the frozen phone reopened on the run's last screen
    assert "Order #1001: Blue mug \u00d7 2 to 12 Harbour Street" in text_of(shown[-1])
    offered = {tool.name for tool in model.calls[0].tools}
    assert {"click", "open_app", "get_screen", "VIEW_TRAJECTORY_STEP", "submit_verdict"} <= offered
