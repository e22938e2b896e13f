"""ws-slugify (feature): a URL slug from any title."""

from __future__ import annotations

from suites.workspace.spec import CodingTask, edits

_TEXT = '''"""Text helpers for the blog engine."""


def slugify(title: str) -> str:
    """The URL slug of a post title."""
    return title.lower().replace(" ", "-")


def excerpt(body: str, words: int = 30) -> str:
    """The first words of a post body."""
    return " ".join(body.split()[:words])
'''

_VISIBLE = """import unittest

from text import excerpt, slugify


class TextTests(unittest.TestCase):
    def test_simple_title(self) -> None:
        self.assertEqual(slugify("Hello World"), "hello-world")

    def test_punctuation_between_words(self) -> None:
        self.assertEqual(slugify("Tips, tricks"), "tips-tricks")

    def test_excerpt(self) -> None:
        self.assertEqual(excerpt("a b c", words=2), "a b")
"""

TASK = CodingTask(
    id="ws-slugify",
    family="feature",
    instruction=(
        "In text.py, make slugify turn any post title into a URL slug: only lowercase ASCII "
        "letters and digits are kept, every run of other characters becomes a single '-', and "
        "the slug never starts or ends with '-'. Leave excerpt as it is."
    ),
    files={"text.py": _TEXT, "tests/__init__.py": "", "tests/test_text.py": _VISIBLE},
    fix=edits(
        "text.py",
        [
            (
                '"""Text helpers for the blog engine."""\n',
                '"""Text helpers for the blog engine."""\n\nimport re\n',
            ),
            (
                'return title.lower().replace(" ", "-")',
                'return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")',
            ),
        ],
    ),
    partial=edits(
        "text.py",
        [
            (
                '"""Text helpers for the blog engine."""\n',
                '"""Text helpers for the blog engine."""\n\nimport re\n',
            ),
            (
                'return title.lower().replace(" ", "-")',
                'return re.sub(r"[^a-z0-9]+", "-", title.lower())',
            ),
        ],
    ),
    partial_failure="partial",
    partial_note="dashes at the start and end are not stripped",
    author_tests="""import unittest


class SlugTests(unittest.TestCase):
    def test_words(self) -> None:
        from text import slugify

        self.assertEqual(slugify("Hello World"), "hello-world")

    def test_runs_of_separators(self) -> None:
        from text import slugify

        self.assertEqual(slugify("C++ &  Rust -- 2024"), "c-rust-2024")

    def test_no_dash_at_the_ends(self) -> None:
        from text import slugify

        self.assertEqual(slugify("  (Draft) Release notes!  "), "draft-release-notes")
        self.assertEqual(slugify("!!!"), "")

    def test_excerpt_unchanged(self) -> None:
        from text import excerpt

        self.assertEqual(excerpt("one two three four", words=3), "one two three")
""",
    checks="slugs of titles with punctuation runs and separators at both ends; excerpt kept",
)
