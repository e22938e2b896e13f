"""The real recorded files of ``../shared/real-formats`` for the browser kind's tests (the
fixture the importer tests use: skipped outside CI when the folder is missing, failed in CI)."""

from tests.dataset.importers.conftest import real_format

__all__ = ["real_format"]
