"""The judge's prompts: template files per domain and mode, and ``build_prompt`` to fill them.

Owns the wording the judge reads (the ``.md`` files of this package) and their assembly
(``prompts.templates``). Must not contain logic beyond choosing and filling templates, and must
not import ``judge_agent``: a mode hands it a ``PromptStyle``, and the trajectory text itself
comes from ``dataset.rendering``.
"""

from prompts.templates import (
    FINAL_CALL_MESSAGE,
    MIN_EVIDENCE_CALLS,
    JudgePrompt,
    ListedTool,
    PromptPart,
    PromptStyle,
    build_prompt,
    load_template,
    render_tool_list,
)

__all__ = [
    "FINAL_CALL_MESSAGE",
    "MIN_EVIDENCE_CALLS",
    "JudgePrompt",
    "ListedTool",
    "PromptPart",
    "PromptStyle",
    "build_prompt",
    "load_template",
    "render_tool_list",
]
