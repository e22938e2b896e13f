"""MobileJudgeBench's judge methods as judge modes, one module and one registration each.

``spa-bench`` (every screen with its action marked), ``a3-final`` (the final screen and its
elements), ``a3-essential`` (essential states, then sliding windows of screens),
``androidarena`` (a text record within a token budget), ``agentrewardbench`` (four tagged
answers) and ``mobile-baseline`` (evenly sampled screens with independent switches). Each writes
its own messages (``JudgeModeSpec.plan``, which ``--dry-run`` writes out) from the trajectory's
frames (``dataset.frames``); wording lives in ``prompts/methods/``. Written from the methods'
published descriptions; none of their prompts is reproduced.
"""

from judge_agent.mobile_methods import (
    a3_essential,
    a3_final,
    agent_reward_bench,
    android_arena,
    baseline,
    spa_bench,
)

__all__ = [
    "a3_essential",
    "a3_final",
    "agent_reward_bench",
    "android_arena",
    "baseline",
    "spa_bench",
]
