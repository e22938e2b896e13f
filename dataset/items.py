"""Single-item claims of a trajectory (``Trajectory.items``): judging one of them on its own.

A search answer is scored claim by claim. To judge one claim alone, the judge receives the whole
run but with only that claim listed: ``focus_on_item`` makes that copy of the trajectory (its
``items`` reduced to the claim, its label the claim's label) and marks it, so the renderer can
say that the verdict is about the claim alone and the baselines can seed per claim.
"""

from __future__ import annotations

from dataset.models import ClaimItem, Label, Trajectory

__all__ = [
    "FOCUS_KEY",
    "focus_on_item",
    "focused_item",
    "labelled_items",
    "trajectory_label_from_items",
]

FOCUS_KEY = "judged_item"
"""Metadata key of a focused copy: the id of the one claim it is about."""


def focus_on_item(trajectory: Trajectory, item_id: str) -> Trajectory:
    """A copy of ``trajectory`` about its claim ``item_id`` alone (label: the claim's label).

    Raises ``KeyError`` naming the trajectory when it has no such claim.
    """
    for item in trajectory.items:
        if item.id == item_id:
            break
    else:
        raise KeyError(f"trajectory {trajectory.id} has no item {item_id!r}")
    label = None
    if item.label is not None:
        source = trajectory.label.source if trajectory.label is not None else "human"
        label = Label(value=item.label, source=source)
    return trajectory.model_copy(
        update={
            "items": [item],
            "label": label,
            "metadata": {**trajectory.metadata, FOCUS_KEY: item.id},
        }
    )


def focused_item(trajectory: Trajectory) -> ClaimItem | None:
    """The claim a focused copy is about; None for an ordinary trajectory."""
    item_id = trajectory.metadata.get(FOCUS_KEY)
    if not isinstance(item_id, str):
        return None
    return next((item for item in trajectory.items if item.id == item_id), None)


def labelled_items(trajectory: Trajectory) -> list[ClaimItem]:
    """The claims that carry a label (the ones that can be scored)."""
    return [item for item in trajectory.items if item.label is not None]


def trajectory_label_from_items(items: list[ClaimItem]) -> str | None:
    """PASS when every claim is labelled PASS, FAIL when any is FAIL, None when there are no
    claims or some are unlabelled and none is FAIL."""
    values = [item.label for item in items]
    if not values:
        return None
    if "FAIL" in values:
        return "FAIL"
    if None in values:
        return None
    return "PASS"
