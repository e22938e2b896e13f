import unittest


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
