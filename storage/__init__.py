"""Storage: results files on disk, and the resumable job runner that fills them.

Owns atomic file writes (``storage.files``), JSON-lines results files that survive a kill
(``storage.jsonl``), the lock that keeps a results folder to one writing process
(``storage.locks``) and one runner for "make every missing record of a results file" jobs
(``storage.jobs``), shared by the replay runner and the judge grid. It is the bottom layer: it
must not import any other package of the project, and knows nothing of datasets, replays or
judges.
"""

from storage.files import write_bytes_atomic, write_json_atomic, write_text_atomic
from storage.jobs import Job, JobCrash, JobPlan, JobResults, ResumableJobs
from storage.jsonl import JsonlAppender, read_jsonl, repair_torn_tail
from storage.locks import FolderBusyError, FolderLock, ResultsFolderError, lock_folder

__all__ = [
    "FolderBusyError",
    "FolderLock",
    "Job",
    "JobCrash",
    "JobPlan",
    "JobResults",
    "JsonlAppender",
    "ResultsFolderError",
    "ResumableJobs",
    "lock_folder",
    "read_jsonl",
    "repair_torn_tail",
    "write_bytes_atomic",
    "write_json_atomic",
    "write_text_atomic",
]
