"""The trajectory server: a judge's read-only view of the recorded run it is judging.

Two tools over one ``Trajectory``: ``VIEW_TRAJECTORY_STEP`` (one step in full, screenshot as an
image) and ``trajectory_overview`` (task, agent, one line per step, final response). ``server``
owns the tools and ``trajectory_server``; ``overview`` the overview's wording and limits (a step
is worded by ``dataset.rendering``, as in the judge's prompt); ``loading`` reading a trajectory
file and its task for ``python -m mcp_servers.trajectory FILE``. Must never reveal the
ground truth (label, claim labels, annotator notes) nor anything that spells it, such as the
trajectory id.
"""

from mcp_servers.trajectory.loading import (
    LoadedTrajectory,
    load_trajectory_file,
    trajectory_file_in_dataset,
)
from mcp_servers.trajectory.server import (
    OVERVIEW_TOOL,
    TOOLS,
    VIEW_STEP_TOOL,
    TrajectoryContext,
    trajectory_server,
)

__all__ = [
    "OVERVIEW_TOOL",
    "TOOLS",
    "VIEW_STEP_TOOL",
    "LoadedTrajectory",
    "TrajectoryContext",
    "load_trajectory_file",
    "trajectory_file_in_dataset",
    "trajectory_server",
]
