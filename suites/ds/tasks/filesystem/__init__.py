"""Filesystem tasks of the DS suite, one module per task (named after the task id without its
``fs-`` prefix); ``checks`` holds what their verifiers share, ``common`` what their scripted agents
and task records share."""

from __future__ import annotations

from suites.ds.spec import SuiteTask
from suites.ds.tasks.filesystem import (
    api_usage,
    archive_old,
    bad_config,
    chapter_wordcount,
    config_ini,
    duplicates,
    index_page,
    invoice_totals,
    kebab_names,
    largest_files,
    letters,
    loc_by_ext,
    newest_report,
    photo_sort,
    readme_assemble,
    todo_extract,
)

TASKS: list[SuiteTask] = [
    invoice_totals.TASK,
    config_ini.TASK,
    todo_extract.TASK,
    chapter_wordcount.TASK,
    photo_sort.TASK,
    kebab_names.TASK,
    archive_old.TASK,
    largest_files.TASK,
    loc_by_ext.TASK,
    newest_report.TASK,
    api_usage.TASK,
    bad_config.TASK,
    duplicates.TASK,
    letters.TASK,
    readme_assemble.TASK,
    index_page.TASK,
]
