"""Search-domain importers: recorded search-agent runs and AJ-Bench's search items, each
writing a dataset plus ``urls.txt``, the pages a judge will need (the list to archive)."""

from dataset.importers.search.ajbench import import_ajbench_search
from dataset.importers.search.common import URLS_FILE, ImportReport
from dataset.importers.search.runs import import_search_runs, read_search_run

__all__ = [
    "URLS_FILE",
    "ImportReport",
    "import_ajbench_search",
    "import_search_runs",
    "read_search_run",
]
