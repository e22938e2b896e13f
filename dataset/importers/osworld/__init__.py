"""Import OSWorld result folders (and AJ-Bench's GUI layout of them) into the unified format.

OSWorld writes one folder per example run, usually at
``<results>/<action_space>/<observation_type>/<model>/<domain>/<example_id>/``, holding
``traj.jsonl`` (one line per executed action), ``step_<n>_<timestamp>.png`` (the screen after
each action), ``result.txt`` (the evaluator's score) and ``recording.mp4``. Its task files live
apart, at ``evaluation_examples/examples/<domain>/<example_id>.json`` (instruction, setup steps,
evaluator). AJ-Bench keeps each judged run with its task file in
``<app>/<task_id>/{true,false}/``, the folder name being the human label.

The modules: ``discovery`` (run folders and what their path says), ``steps`` (``traj.jsonl`` to
steps, for both action spaces), ``task_config`` (task JSON: instruction, domain, the files its
setup downloads and which document it opens), ``labels`` (recorded scores and human label files)
and ``importer`` (the import as a whole).
"""

from dataset.importers.osworld.importer import (
    OSWORLD_DOMAINS,
    ImportReport,
    NeededFile,
    import_osworld,
)
from dataset.importers.osworld.labels import read_label_file

__all__ = [
    "OSWORLD_DOMAINS",
    "ImportReport",
    "NeededFile",
    "import_osworld",
    "read_label_file",
]
