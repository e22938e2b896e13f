import unittest

from text import excerpt, slugify


class TextTests(unittest.TestCase):
    def test_simple_title(self) -> None:
        self.assertEqual(slugify("Hello World"), "hello-world")

    def test_punctuation_between_words(self) -> None:
        self.assertEqual(slugify("Tips, tricks"), "tips-tricks")

    def test_excerpt(self) -> None:
        self.assertEqual(excerpt("a b c", words=2), "a b")
