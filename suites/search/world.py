"""The search suite's ground truth: a small invented region, its shop and its news.

Everything the three sites say is rendered from these records (``suites.search.site``), and every
claim of a recorded answer is labelled against them (``suites.search.build``). Where two pages
disagree, the record keeps both the current value and the stale one a page still shows
(``stale_*``); the truth is always the current value, which the newest dated source states.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

__all__ = [
    "ARTICLES",
    "COMPANIES",
    "FANS",
    "KETTLES",
    "PEOPLE",
    "REGION",
    "RIVERS",
    "TOWNS",
    "Article",
    "Company",
    "Person",
    "Product",
    "River",
    "Town",
    "fact",
]

REGION = "Valdmark"

T = TypeVar("T")


@dataclass(frozen=True)
class Town:
    """A town of the region."""

    name: str
    population: int
    """2025 census, as the current encyclopedia page states it."""
    founded: int
    river: str
    mayor: str
    """The mayor now; the encyclopedia may still show ``stale_mayor``."""
    founder: str
    stale_mayor: str | None = None
    """The previous mayor, still on the encyclopedia page (the news reports the change)."""
    old_population: int | None = None
    """A 2016 figure shown by an old revision of the town's page."""


@dataclass(frozen=True)
class River:
    """A river, the towns along it from source to mouth."""

    name: str
    length_km: int
    """The latest measurement (a 2026 survey reported in the news, where there is one)."""
    towns: tuple[str, ...]
    stale_length_km: int | None = None
    """The older figure the encyclopedia still gives."""

    @property
    def source_town(self) -> str:
        """The town at the river's source."""
        return self.towns[0]


@dataclass(frozen=True)
class Person:
    """A founder of towns."""

    name: str
    born: int
    founded: tuple[str, ...]


@dataclass(frozen=True)
class Company:
    """A maker of the shop's products."""

    name: str
    founded: int
    headquarters: str


@dataclass(frozen=True)
class Product:
    """An item of the shop."""

    slug: str
    name: str
    brand: str
    price: str
    """The current price (the product page), as shown, in euros."""
    rating: str
    stale_price: str | None = None
    """A price the category listing still shows after a price cut."""


@dataclass(frozen=True)
class Article:
    """A news article."""

    slug: str
    date: str
    headline: str
    body: tuple[str, ...]
    town: str | None = None
    """The town the article is about, when it is about one."""


TOWNS: tuple[Town, ...] = (
    Town("Avel", 48200, 1204, "Selka", "Oda Lenz", "Ilsa Marren", stale_mayor="Piet Harrow"),
    Town("Gallow", 31050, 1288, "Marrow", "Henrik Saal", "Garret Holm"),
    Town("Brenwick", 23750, 1311, "Selka", "Tomas Veld", "Garret Holm", old_population=19400),
    Town("Fennick", 15900, 1422, "Marrow", "Lena Ostrow", "Ansel Brook"),
    Town("Jorra", 12660, 1467, "Tarn", "Sofie Lund", "Petra Voss"),
    Town("Hessa", 9480, 1390, "Marrow", "Yara Doon", "Petra Voss"),
    Town("Dornhal", 6120, 1150, "Selka", "Mira Quist", "Ansel Brook"),
    Town("Istvel", 4310, 1501, "Tarn", "Emil Brandt", "Petra Voss"),
)
"""Ordered by population, largest first (the encyclopedia's town table keeps this order)."""

RIVERS: tuple[River, ...] = (
    River("Selka", 208, ("Dornhal", "Avel", "Brenwick"), stale_length_km=212),
    River("Marrow", 131, ("Fennick", "Gallow", "Hessa")),
    River("Tarn", 87, ("Istvel", "Jorra")),
)

PEOPLE: tuple[Person, ...] = (
    Person("Ilsa Marren", 1171, ("Avel",)),
    Person("Garret Holm", 1262, ("Gallow", "Brenwick")),
    Person("Ansel Brook", 1118, ("Dornhal", "Fennick")),
    Person("Petra Voss", 1359, ("Hessa", "Jorra", "Istvel")),
)

COMPANIES: tuple[Company, ...] = (
    Company("Kessel Works", 1958, "Brenwick"),
    Company("Aurelo", 1991, "Gallow"),
    Company("Ventra", 2004, "Avel"),
)

KETTLES: tuple[Product, ...] = (
    Product("kessel-classic", "Kessel Classic 1.7L", "Kessel Works", "39.90", "4.6"),
    Product("kessel-mini", "Kessel Mini", "Kessel Works", "24.50", "4.1"),
    Product("aurelo-steam", "Aurelo Steam", "Aurelo", "54.00", "4.8"),
    Product("orla-glass", "Orla Glass", "Aurelo", "34.00", "4.5", stale_price="42.00"),
    Product("kessel-pro", "Kessel Pro", "Kessel Works", "69.00", "4.7"),
    Product("aurelo-compact", "Aurelo Compact", "Aurelo", "29.90", "3.9"),
    Product("kessel-travel", "Kessel Travel", "Kessel Works", "19.90", "3.6"),
    Product("aurelo-retro", "Aurelo Retro", "Aurelo", "47.50", "4.4"),
    Product("kessel-smart", "Kessel Smart", "Kessel Works", "89.00", "4.2"),
)
"""In listing order, three to a page."""

FANS: tuple[Product, ...] = (
    Product("ventra-breeze", "Ventra Breeze", "Ventra", "45.00", "4.3"),
    Product("aurelo-desk", "Aurelo Desk Fan", "Aurelo", "22.00", "4.0"),
    Product("aurelo-pedestal", "Aurelo Pedestal", "Aurelo", "59.00", "4.5"),
    Product("ventra-mini", "Ventra Mini", "Ventra", "18.50", "3.8"),
    Product("ventra-tower", "Ventra Tower", "Ventra", "79.00", "4.6"),
    Product("ventra-silent", "Ventra Silent", "Ventra", "99.00", "4.9"),
)
"""In listing order, three to a page."""

ARTICLES: tuple[Article, ...] = (
    Article(
        "ventra-second-factory",
        "2026-03-15",
        "Ventra opens its second factory in Jorra",
        (
            "The fan maker Ventra opened its second factory on Monday, in Jorra.",
            "The plant will build the Ventra Tower and Ventra Silent models.",
        ),
        town="Jorra",
    ),
    Article(
        "orla-price-cut",
        "2026-03-02",
        "Aurelo cuts the price of the Orla Glass kettle",
        (
            "Aurelo has cut the price of its Orla Glass kettle from 42.00 to 34.00 euros.",
            "Some shop listings may show the old price for a few days.",
        ),
    ),
    Article(
        "istvel-flood-defences",
        "2026-02-28",
        "Flood defences on the Tarn completed in Istvel",
        ("Istvel, near the source of the Tarn, finished its new flood walls this week.",),
    ),
    Article(
        "avel-new-mayor",
        "2026-02-14",
        "Oda Lenz sworn in as mayor of Avel",
        (
            "Oda Lenz took office as mayor of Avel today, succeeding Piet Harrow.",
            "Lenz won the January election with 54 percent of the vote.",
        ),
    ),
    Article(
        "selka-survey",
        "2026-01-20",
        "Survey re-measures the Selka at 208 km",
        (
            "A new survey of the Selka puts the river's length at 208 km.",
            "Older references give 212 km, a figure based on maps from before the river was "
            "straightened near Brenwick.",
        ),
    ),
    Article(
        "brenwick-census",
        "2025-12-10",
        "Census: Brenwick grows to 23,750",
        ("The 2025 census counted 23,750 residents in Brenwick, up from 19,400 in 2016.",),
    ),
    Article(
        "gallow-bridge",
        "2025-11-05",
        "Gallow opens a new bridge over the Marrow",
        ("Mayor Henrik Saal opened the new Marrow bridge in Gallow.",),
    ),
    Article(
        "kessel-anniversary",
        "2025-10-01",
        "Kessel Works marks 67 years",
        ("The Brenwick kettle maker Kessel Works, founded in 1958, celebrated 67 years.",),
    ),
)
"""Newest first (the news site lists them three to a page in this order)."""


def _by_name(records: tuple[T, ...], name: str, field: str = "name") -> T:
    for record in records:
        if getattr(record, field) == name:
            return record
    raise KeyError(name)


def fact(kind: str, name: str, attribute: str) -> str:
    """The true value of one fact, as text: e.g. ``fact("town", "Avel", "mayor")``.

    Kinds: ``town``, ``river``, ``person``, ``company``, ``product`` (by slug), ``article``
    (by slug). Numbers are written as the sites write them (``48,200``, ``208 km``)."""
    if kind == "town":
        town = _by_name(TOWNS, name)
        values = {
            "rank": str(TOWNS.index(town) + 1),
            "population": f"{town.population:,}",
            "founded": str(town.founded),
            "river": town.river,
            "mayor": town.mayor,
            "founder": town.founder,
        }
    elif kind == "river":
        river = _by_name(RIVERS, name)
        values = {"length": f"{river.length_km} km", "source": river.source_town}
    elif kind == "person":
        person = _by_name(PEOPLE, name)
        values = {"born": str(person.born)}
    elif kind == "company":
        company = _by_name(COMPANIES, name)
        values = {"founded": str(company.founded), "headquarters": company.headquarters}
    elif kind == "product":
        product = _by_name(KETTLES + FANS, name, "slug")
        values = {
            "name": product.name,
            "brand": product.brand,
            "price": product.price,
            "rating": product.rating,
        }
    elif kind == "article":
        article = _by_name(ARTICLES, name, "slug")
        values = {"date": article.date, "headline": article.headline, "town": article.town or ""}
    else:
        raise KeyError(kind)
    return values[attribute]
