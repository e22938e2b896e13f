"""The search suite's small web: an encyclopedia, a shop and a news site, as archived pages.

Rendered from ``suites.search.world``: tables (the encyclopedia's towns, the shop's listings),
lists, definition lists on entity pages, paginated listings (kettles, fans, news), links across
sites, and pages that contradict each other on purpose (a mayor the news says was replaced, a
river length a newer survey corrected, a listing price older than the product page, an old
revision of a town page). ``write_archive`` stores them as a page folder
(``sandboxes.browser.archive``): the same bytes on every run.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from suites.search.world import (
    ARTICLES,
    COMPANIES,
    FANS,
    KETTLES,
    PEOPLE,
    REGION,
    RIVERS,
    TOWNS,
    Product,
)

__all__ = [
    "CAPTURED_AT",
    "NEWS",
    "PER_PAGE",
    "SHOP",
    "WIKI",
    "company_url",
    "listing_url",
    "news_page_url",
    "person_url",
    "product_url",
    "river_url",
    "site_pages",
    "town_url",
    "write_archive",
]

WIKI = "http://wiki.valdmark.test"
SHOP = "http://shop.valdmark.test"
NEWS = "http://news.valdmark.test"
PER_PAGE = 3
"""Items per page of the shop's and the news site's listings."""
CAPTURED_AT = "2026-03-20T12:00:00Z"
"""When the archive says the pages were captured (fixed: the bytes must not change)."""


def _slug(name: str) -> str:
    return name.replace(" ", "_")


def town_url(name: str, revision: int | None = None) -> str:
    """A town's encyclopedia page (an old revision with ``revision``)."""
    return f"{WIKI}/town/{_slug(name)}" + (f"?rev={revision}" if revision else "")


def river_url(name: str) -> str:
    """A river's encyclopedia page."""
    return f"{WIKI}/river/{_slug(name)}"


def person_url(name: str) -> str:
    """A person's encyclopedia page."""
    return f"{WIKI}/person/{_slug(name)}"


def company_url(name: str) -> str:
    """A company's encyclopedia page."""
    return f"{WIKI}/company/{_slug(name)}"


def product_url(slug: str) -> str:
    """A product's page in the shop."""
    return f"{SHOP}/product/{slug}"


def listing_url(category: str, page: int) -> str:
    """A page of a shop category (``kettles`` or ``fans``)."""
    return f"{SHOP}/{category}?page={page}"


def news_page_url(page: int) -> str:
    """A page of the news site's article list (the first is the home page)."""
    return f"{NEWS}/" if page == 1 else f"{NEWS}/page/{page}"


def article_url(slug: str) -> str:
    """A news article."""
    return f"{NEWS}/article/{slug}"


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _link(url: str, text: str) -> str:
    return f'<a href="{_e(url)}">{_e(text)}</a>'


def _page(site: str, title: str, body: str) -> str:
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{_e(title)} - {_e(site)}</title></head><body>\n"
        f"<header><p>{_e(site)}</p></header>\n<main>\n<h1>{_e(title)}</h1>\n{body}\n</main>\n"
        "</body></html>\n"
    )


def _facts(rows: list[tuple[str, str]]) -> str:
    items = "".join(f"<dt>{_e(term)}</dt><dd>{value}</dd>" for term, value in rows)
    return f"<dl>{items}</dl>"


def _pages_of(count: int) -> int:
    return (count + PER_PAGE - 1) // PER_PAGE


def _pager(url_of: object, page: int, pages: int) -> str:
    assert callable(url_of)
    links = []
    if page > 1:
        links.append(_link(url_of(page - 1), "Previous page"))
    links.append(f"<span>Page {page} of {pages}</span>")
    if page < pages:
        links.append(_link(url_of(page + 1), "Next page"))
    return f'<nav aria-label="Pages">{" ".join(links)}</nav>'


# -- the encyclopedia --------------------------------------------------------------------------


def _wiki_pages() -> dict[str, str]:
    site = f"The {REGION} Encyclopedia"
    pages: dict[str, str] = {}
    pages[f"{WIKI}/"] = _page(
        site,
        REGION,
        f"<p>{REGION} is a small region of eight towns on three rivers.</p><ul>"
        + "".join(
            f"<li>{_link(f'{WIKI}/{path}', text)}</li>"
            for path, text in (
                ("towns", "Towns"),
                ("rivers", "Rivers"),
                ("people", "People"),
                ("companies", "Companies"),
            )
        )
        + "</ul>",
    )
    rows = "".join(
        f"<tr><td>{_link(town_url(t.name), t.name)}</td><td>{t.population:,}</td>"
        f"<td>{_link(river_url(t.river), t.river)}</td><td>{t.founded}</td></tr>"
        for t in TOWNS
    )
    pages[f"{WIKI}/towns"] = _page(
        site,
        f"Towns of {REGION}",
        "<table><caption>Towns by population (2025 census)</caption><thead><tr><th>Town</th>"
        f"<th>Population</th><th>River</th><th>Founded</th></tr></thead><tbody>{rows}</tbody>"
        "</table>",
    )
    for town in TOWNS:
        mayor = town.stale_mayor or town.mayor
        body = _facts(
            [
                ("Population", f"{town.population:,} (2025 census)"),
                ("Founded", str(town.founded)),
                ("River", _link(river_url(town.river), town.river)),
                ("Mayor", _e(mayor) + (" (since 2019)" if town.stale_mayor else "")),
                ("Founder", _link(person_url(town.founder), town.founder)),
            ]
        )
        body += f"<p>{_e(town.name)} is a town on the {_e(town.river)} in {REGION}.</p>"
        if town.old_population is not None:
            body += f"<p>{_link(town_url(town.name, 2016), 'Revision of 2016')}</p>"
            pages[town_url(town.name, 2016)] = _page(
                site,
                f"{town.name} (revision of 2016)",
                "<p><strong>This is an old revision of this page.</strong> It may differ "
                f"from the {_link(town_url(town.name), 'current version')}.</p>"
                + _facts(
                    [
                        ("Population", f"{town.old_population:,} (2016 estimate)"),
                        ("Founded", str(town.founded)),
                        ("River", _e(town.river)),
                    ]
                ),
            )
        pages[town_url(town.name)] = _page(site, town.name, body)
    pages[f"{WIKI}/rivers"] = _page(
        site,
        f"Rivers of {REGION}",
        "<ul>" + "".join(f"<li>{_link(river_url(r.name), r.name)}</li>" for r in RIVERS) + "</ul>",
    )
    for river in RIVERS:
        length = river.stale_length_km or river.length_km
        towns = "".join(f"<li>{_link(town_url(t), t)}</li>" for t in river.towns)
        pages[river_url(river.name)] = _page(
            site,
            f"{river.name} (river)",
            _facts(
                [
                    ("Length", f"{length} km"),
                    ("Source", _link(town_url(river.source_town), river.source_town)),
                ]
            )
            + f"<h2>Towns along the river</h2><p>From source to mouth:</p><ol>{towns}</ol>",
        )
    pages[f"{WIKI}/people"] = _page(
        site,
        "People",
        "<ul>" + "".join(f"<li>{_link(person_url(p.name), p.name)}</li>" for p in PEOPLE) + "</ul>",
    )
    for person in PEOPLE:
        founded = "".join(f"<li>{_link(town_url(t), t)}</li>" for t in person.founded)
        pages[person_url(person.name)] = _page(
            site,
            person.name,
            _facts([("Born", str(person.born))]) + f"<h2>Towns founded</h2><ul>{founded}</ul>",
        )
    pages[f"{WIKI}/companies"] = _page(
        site,
        "Companies",
        "<ul>"
        + "".join(f"<li>{_link(company_url(c.name), c.name)}</li>" for c in COMPANIES)
        + "</ul>",
    )
    for company in COMPANIES:
        pages[company_url(company.name)] = _page(
            site,
            company.name,
            _facts(
                [
                    ("Founded", str(company.founded)),
                    ("Headquarters", _link(town_url(company.headquarters), company.headquarters)),
                ]
            ),
        )
    return pages


# -- the shop ----------------------------------------------------------------------------------


def _listing(category: str, products: tuple[Product, ...]) -> dict[str, str]:
    pages: dict[str, str] = {}
    total = _pages_of(len(products))
    for page in range(1, total + 1):
        chunk = products[(page - 1) * PER_PAGE : page * PER_PAGE]
        rows = "".join(
            f"<tr><td>{_link(product_url(p.slug), p.name)}</td><td>{_e(p.brand)}</td>"
            f"<td>{_e(p.stale_price or p.price)} EUR</td><td>{_e(p.rating)}</td></tr>"
            for p in chunk
        )
        pages[listing_url(category, page)] = _page(
            "Valdmark Home Shop",
            f"{category.capitalize()} (page {page} of {total})",
            f"<table><caption>{category.capitalize()}</caption><thead><tr><th>Product</th>"
            f"<th>Brand</th><th>Price</th><th>Rating</th></tr></thead><tbody>{rows}</tbody>"
            "</table>" + _pager(lambda n: listing_url(category, n), page, total),
        )
    for product in products:
        pages[product_url(product.slug)] = _page(
            "Valdmark Home Shop",
            product.name,
            _facts(
                [
                    ("Brand", _e(product.brand)),
                    ("Price", f"{_e(product.price)} EUR"),
                    ("Rating", f"{_e(product.rating)} out of 5"),
                    ("Category", _link(listing_url(category, 1), category.capitalize())),
                ]
            )
            + f"<p>{_link(company_url(product.brand), f'About {product.brand}')}</p>",
        )
    return pages


def _shop_pages() -> dict[str, str]:
    pages = {
        f"{SHOP}/": _page(
            "Valdmark Home Shop",
            "Valdmark Home Shop",
            "<ul>"
            f"<li>{_link(listing_url('kettles', 1), 'Kettles')}</li>"
            f"<li>{_link(listing_url('fans', 1), 'Fans')}</li>"
            "</ul>",
        )
    }
    pages.update(_listing("kettles", KETTLES))
    pages.update(_listing("fans", FANS))
    return pages


# -- the news ----------------------------------------------------------------------------------


def _news_pages() -> dict[str, str]:
    pages: dict[str, str] = {}
    total = _pages_of(len(ARTICLES))
    for page in range(1, total + 1):
        chunk = ARTICLES[(page - 1) * PER_PAGE : page * PER_PAGE]
        items = "".join(
            f"<li>{_e(a.date)}: {_link(article_url(a.slug), a.headline)}</li>" for a in chunk
        )
        pages[news_page_url(page)] = _page(
            "Valdmark Courier",
            "Latest news" if page == 1 else f"News (page {page} of {total})",
            f"<ul>{items}</ul>" + _pager(news_page_url, page, total),
        )
    for article in ARTICLES:
        paragraphs = "".join(f"<p>{_e(text)}</p>" for text in article.body)
        pages[article_url(article.slug)] = _page(
            "Valdmark Courier",
            article.headline,
            f"<p>Published {_e(article.date)}</p>{paragraphs}",
        )
    return pages


def site_pages() -> dict[str, str]:
    """Every page of the three sites, URL to HTML."""
    pages = _wiki_pages()
    pages.update(_shop_pages())
    pages.update(_news_pages())
    return pages


def _file_name(url: str) -> str:
    path = re.sub(r"^https?://", "", url).rstrip("/") or "index"
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", path)
    return f"files/{name}.html"


def write_archive(folder: Path) -> int:
    """Write every page as a page folder at ``folder`` (``pages.json`` and ``files/``); returns
    the number of pages. The bytes depend on nothing but this module and the world."""
    pages = site_pages()
    (folder / "files").mkdir(parents=True, exist_ok=True)
    index = []
    for url in sorted(pages):
        name = _file_name(url)
        (folder / name).write_text(pages[url], encoding="utf-8")
        index.append(
            {
                "url": url,
                "file": name,
                "content_type": "text/html; charset=utf-8",
                "status": 200,
                "captured_at": CAPTURED_AT,
            }
        )
    if len({entry["file"] for entry in index}) != len(index):
        raise ValueError("two archived pages would share a file name")
    document = {"format": "agentjudge-page-archive", "version": 1, "pages": index}
    (folder / "pages.json").write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return len(index)
