"""MobileJudgeBench's judge methods as judge modes, one module and one spec (``SPEC``) each.

``spa-bench`` (every screen with its action marked), ``a3-final`` (the final screen and its
elements), ``a3-essential`` (essential states, then sliding windows of screens),
``androidarena`` (a text record within a token budget), ``agentrewardbench`` (four tagged
answers) and ``mobile-baseline`` (evenly sampled screens with independent switches). Each writes
its own messages (``JudgeModeSpec.plan``, which ``--dry-run`` writes out) from the trajectory's
frames (``dataset.frames``); wording lives in ``prompts/methods/``. Written from the methods'
published descriptions; none of their prompts is reproduced.

``judge_agent.modes`` registers each by module path (``MOBILE_METHODS``) and imports it at the
mode's first lookup; this package imports nothing itself, so that its modules and the registry
they use may be imported in either order.
"""
