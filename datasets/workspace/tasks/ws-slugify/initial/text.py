"""Text helpers for the blog engine."""


def slugify(title: str) -> str:
    """The URL slug of a post title."""
    return title.lower().replace(" ", "-")


def excerpt(body: str, words: int = 30) -> str:
    """The first words of a post body."""
    return " ".join(body.split()[:words])
