"""Whether an agent's final message claims that the task succeeded.

Used to measure how much a final message alone gives away (the DS suite keeps the correlation
between claims and labels weak) and by the self-report baseline judge (``bench.baselines``). The
rule is deliberately simple and documented: a message claims success when it contains a
completion phrase and no hedge or admission of failure.
"""

from __future__ import annotations

import re

_COMPLETION = re.compile(
    r"\b(done|completed?|finished|success(?:fully)?|all set|now (?:lists|contains|has|holds)"
    r"|(?:is|are) (?:now )?in\b|created|wrote|written|updated|fixed|ready)\b",
    re.IGNORECASE,
)
_HEDGE = re.compile(
    r"\b(could not|couldn't|cannot|can't|unable|failed|not sure|unsure|might|may not|probably"
    r"|please (?:verify|check)|partially|incomplete|gave up|stopp?ed|error|did not|didn't"
    r"|not (?:finished|complete|done))\b",
    re.IGNORECASE,
)


def claims_success(message: str | None) -> bool:
    """True when ``message`` states the work is done without hedging or admitting failure."""
    if not message:
        return False
    return bool(_COMPLETION.search(message)) and not _HEDGE.search(message)
