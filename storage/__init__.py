"""Storage: results files on disk, and the resumable job runner that fills them.

Owns atomic file writes (``storage.files``), JSON-lines results files that survive a kill
(``storage.jsonl``) and one runner for "make every missing record of a results file" jobs
(``storage.jobs``), shared by the replay runner and the judge grid. It is the bottom layer: it
must not import any other package of the project, and knows nothing of datasets, replays or
judges.
"""

from storage.files import write_bytes_atomic, write_json_atomic, write_text_atomic
from storage.jobs import Job, JobCrash, JobPlan, JobResults, ResumableJobs
from storage.jsonl import JsonlAppender, read_jsonl

__all__ = [
    "Job",
    "JobCrash",
    "JobPlan",
    "JobResults",
    "JsonlAppender",
    "ResumableJobs",
    "read_jsonl",
    "write_bytes_atomic",
    "write_json_atomic",
    "write_text_atomic",
]
