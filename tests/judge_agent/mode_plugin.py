"""A stand-in for an installed package that adds a judge mode by importing its module: the module
registers ``plugged-mode`` itself (the entry-point test names this module)."""

from __future__ import annotations

from judge_agent.conversation import single_call
from judge_agent.modes import JudgeModeSpec, register_mode
from prompts import PromptStyle

PLUGGED = register_mode(
    JudgeModeSpec(
        name="plugged-mode",
        description="registered when its module is imported",
        conversation=single_call,
        prompt=PromptStyle(),
    ),
    replace=True,
)
