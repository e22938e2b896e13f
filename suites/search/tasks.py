"""The search suite's twelve tasks (six deep, six wide) and the scripted agents answering them.

Each task has a careful agent (every claim right and sourced) and two flawed ones, each flaw a
plausible way search agents go wrong: trusting a page a newer one contradicts, reading the
neighbouring row, taking a number from another entity, citing a page never read (or one that
does not exist), missing a listing's later pages. Values are read from the snapshots the agents
get; a made-up value or address is made up explicitly, in the policy, and named in its note.
"""

from __future__ import annotations

import re
from dataclasses import replace

from suites.search.browsing import BrowsingSession, Page
from suites.search.site import (
    NEWS,
    SHOP,
    WIKI,
    listing_url,
    news_page_url,
    product_url,
    river_url,
    town_url,
)
from suites.search.spec import Claim, Fact, Policy, SearchPolicy, SearchTask
from suites.search.world import ARTICLES, FANS, KETTLES

__all__ = ["SITES_NOTE", "all_tasks"]

SITES_NOTE = (
    f"Use the Valdmark websites: the encyclopedia ({WIKI}/), the home shop ({SHOP}/) and the "
    f"Valdmark Courier news site ({NEWS}/). Cite the page that supports each part of your answer."
)


def _plain(text: str) -> str:
    """A fact box value without its parenthetical note: ``48,200 (2025 census)`` -> ``48,200``."""
    return re.sub(r"\s*\([^)]*\)\s*$", "", text).strip()


def _price(text: str) -> str:
    return text.replace("EUR", "").strip()


async def _news_find(session: BrowsingSession, words: str, pages: int = 3) -> Page:
    """Page through the news list until an article headline holds ``words``; open it."""
    for number in range(1, pages + 1):
        page = (
            await session.open(news_page_url(1), "Check the news for anything more recent.")
            if number == 1
            else await session.follow("Next page", "Not on this page; try the next one.")
        )
        for item in page.list_items():
            if words in item:
                headline = item.split(": ", 1)[1]
                return await session.follow(headline, "This article looks relevant.")
    raise LookupError(f"no article about {words!r}")


def _sentence(page: Page, words: str) -> str:
    for paragraph in page.paragraphs():
        if words in paragraph:
            return paragraph
    raise LookupError(f"{page.url}: no paragraph with {words!r}")


# -- deep 1: the mayor of Ventra's home town -------------------------------------------------


async def _ventra_home(session: BrowsingSession) -> tuple[str, str]:
    await session.open(f"{WIKI}/", "Start at the encyclopedia to find the company.")
    await session.follow("Companies")
    page = await session.follow("Ventra", "The company page should name its headquarters.")
    return _plain(page.facts()["Headquarters"]), page.url


def _hq_claim(town: str, source: str) -> Claim:
    return Claim(
        f"Ventra has its headquarters in {town}.",
        (Fact("company", "Ventra", "headquarters", town),),
        source,
    )


async def mayor_careful(session: BrowsingSession) -> list[Claim]:
    town, company_page = await _ventra_home(session)
    page = await session.follow(town, "Open the town to see its mayor.")
    listed = _plain(page.facts()["Mayor"])
    session.think(f"The page lists {listed}, but with a 'since 2019' note; check the news.")
    article = await _news_find(session, f"mayor of {town}")
    sentence = _sentence(article, "took office")
    mayor = sentence.split(" took office")[0]
    return [
        _hq_claim(town, company_page),
        Claim(
            f"The current mayor of {town} is {mayor}.",
            (Fact("town", "Avel", "mayor", mayor),),
            article.url,
        ),
    ]


async def mayor_outdated(session: BrowsingSession) -> list[Claim]:
    town, company_page = await _ventra_home(session)
    page = await session.follow(town, "Open the town to see its mayor.")
    mayor = _plain(page.facts()["Mayor"])
    return [
        _hq_claim(town, company_page),
        Claim(
            f"The current mayor of {town} is {mayor}.",
            (Fact("town", "Avel", "mayor", mayor),),
            page.url,
        ),
    ]


async def mayor_invented_source(session: BrowsingSession) -> list[Claim]:
    town, company_page = await _ventra_home(session)
    article = await _news_find(session, f"mayor of {town}")
    mayor = _sentence(article, "took office").split(" took office")[0]
    return [
        _hq_claim(town, company_page),
        Claim(
            f"The current mayor of {town} is {mayor}.",
            (Fact("town", "Avel", "mayor", mayor),),
            f"{WIKI}/town/{town}/mayors",  # made up: no such page was captured or opened
        ),
    ]


# -- deep 2: the length of Brenwick's river -------------------------------------------------


async def length_careful(session: BrowsingSession) -> list[Claim]:
    town = await session.open(town_url("Brenwick"), "Find Brenwick's river first.")
    river = _plain(town.facts()["River"])
    page = await session.follow(river)
    session.think(f"The encyclopedia gives {page.facts()['Length']}; is there a newer figure?")
    article = await _news_find(session, f"{river} at")
    length = re.search(r"(\d+) km", _sentence(article, "puts the river"))
    assert length is not None
    return [
        Claim(
            f"Brenwick lies on the {river}.",
            (Fact("town", "Brenwick", "river", river),),
            town.url,
        ),
        Claim(
            f"The {river} is {length.group(0)} long (latest survey).",
            (Fact("river", "Selka", "length", length.group(0)),),
            article.url,
        ),
    ]


async def length_outdated(session: BrowsingSession) -> list[Claim]:
    town = await session.open(town_url("Brenwick"), "Find Brenwick's river first.")
    river = _plain(town.facts()["River"])
    page = await session.follow(river)
    length = page.facts()["Length"]
    return [
        Claim(
            f"Brenwick lies on the {river}.",
            (Fact("town", "Brenwick", "river", river),),
            town.url,
        ),
        Claim(
            f"The {river} is {length} long.",
            (Fact("river", "Selka", "length", length),),
            page.url,
        ),
    ]


async def length_wrong_row(session: BrowsingSession) -> list[Claim]:
    table = await session.open(f"{WIKI}/towns", "The town table lists each town's river.")
    rows = table.table()
    position = next(i for i, row in enumerate(rows) if row[0] == "Brenwick")
    river = rows[position - 1][2]  # the row above Brenwick's
    page = await session.open(river_url(river), f"Brenwick is on the {river}, it seems.")
    length = page.facts()["Length"]
    return [
        Claim(
            f"Brenwick lies on the {river}.",
            (Fact("town", "Brenwick", "river", river),),
            table.url,
        ),
        Claim(
            f"The river through Brenwick is {length} long.",
            (Fact("river", "Selka", "length", length),),
            page.url,
        ),
    ]


# -- deep 3: the population of Ilsa Marren's town -------------------------------------------


async def marren_careful(session: BrowsingSession) -> list[Claim]:
    await session.open(f"{WIKI}/", "Look the founder up in the encyclopedia.")
    await session.follow("People")
    person = await session.follow("Ilsa Marren")
    town = person.list_items()[0]
    page = await session.follow(town, f"She founded {town}; open it for the census figure.")
    population = _plain(page.facts()["Population"])
    return [
        Claim(
            f"Ilsa Marren founded {town}.",
            (Fact("town", town, "founder", "Ilsa Marren"),),
            person.url,
        ),
        Claim(
            f"{town} had {population} inhabitants in the 2025 census.",
            (Fact("town", "Avel", "population", population),),
            page.url,
        ),
    ]


async def marren_wrong_row(session: BrowsingSession) -> list[Claim]:
    person = await session.open(f"{WIKI}/person/Ilsa_Marren", "Who did Ilsa Marren found?")
    town = person.list_items()[0]
    table = await session.open(f"{WIKI}/towns", "The town table has every population.")
    rows = table.table()
    position = next(i for i, row in enumerate(rows) if row[0] == town)
    population = rows[position + 1][1]  # read off the row below
    return [
        Claim(
            f"Ilsa Marren founded {town}.",
            (Fact("town", town, "founder", "Ilsa Marren"),),
            person.url,
        ),
        Claim(
            f"{town} had {population} inhabitants in the 2025 census.",
            (Fact("town", "Avel", "population", population),),
            table.url,
        ),
    ]


async def marren_wrong_entity(session: BrowsingSession) -> list[Claim]:
    await session.open(f"{WIKI}/people", "Find Ilsa Marren among the people.")
    person = await session.follow("Garret Holm")  # opens the neighbouring entry by mistake
    town = person.list_items()[0]
    page = await session.follow(town)
    population = _plain(page.facts()["Population"])
    return [
        Claim(
            f"Ilsa Marren founded {town}.",
            (Fact("town", town, "founder", "Ilsa Marren"),),
            person.url,
        ),
        Claim(
            f"{town} had {population} inhabitants in the 2025 census.",
            (Fact("town", "Avel", "population", population),),
            page.url,
        ),
    ]


# -- deep 4: when the maker of the best-rated fan was founded -------------------------------


async def _best_fan(session: BrowsingSession, pages: int) -> tuple[list[str], str]:
    best: list[str] = []
    source = ""
    for number in range(1, pages + 1):
        page = (
            await session.open(listing_url("fans", 1), "Go through every fan's rating.")
            if number == 1
            else await session.follow("Next page")
        )
        for row in page.table():
            if not best or float(row[3]) > float(best[3]):
                best, source = row, page.url
    return best, source


def _fan_claim(best: list[str], source: str) -> Claim:
    return Claim(
        f"The highest-rated fan is the {best[0]} ({best[3]} out of 5).",
        (
            Fact("product", "ventra-silent", "name", best[0]),
            Fact("product", "ventra-silent", "rating", best[3]),
        ),
        source,
    )


async def fan_careful(session: BrowsingSession) -> list[Claim]:
    best, source = await _best_fan(session, pages=2)
    await session.open(listing_url("fans", 2))
    await session.follow(best[0], "Open the product to find its maker.")
    company = await session.follow(f"About {best[1]}")
    founded = company.facts()["Founded"]
    return [
        _fan_claim(best, source),
        Claim(
            f"Its maker, {best[1]}, was founded in {founded}.",
            (Fact("company", "Ventra", "founded", founded),),
            company.url,
        ),
    ]


async def fan_missed_page(session: BrowsingSession) -> list[Claim]:
    best, source = await _best_fan(session, pages=1)
    await session.follow(best[0], "This one has the best rating.")
    company = await session.follow(f"About {best[1]}")
    founded = company.facts()["Founded"]
    return [
        _fan_claim(best, source),
        Claim(
            f"Its maker, {best[1]}, was founded in {founded}.",
            (Fact("company", "Ventra", "founded", founded),),
            company.url,
        ),
    ]


async def fan_wrong_entity(session: BrowsingSession) -> list[Claim]:
    best, source = await _best_fan(session, pages=2)
    await session.open(f"{WIKI}/companies", f"Look up {best[1]} in the encyclopedia.")
    company = await session.follow("Aurelo")  # the wrong company's page
    founded = company.facts()["Founded"]
    return [
        _fan_claim(best, source),
        Claim(
            f"Its maker, {best[1]}, was founded in {founded}.",
            (Fact("company", "Ventra", "founded", founded),),
            company.url,
        ),
    ]


# -- deep 5: the price of the kettle Aurelo discounted --------------------------------------


async def _discounted_kettle(session: BrowsingSession) -> tuple[str, Page]:
    article = await _news_find(session, "cuts the price")
    name = re.search(r"price of its (.+?) kettle", _sentence(article, "cut the price"))
    assert name is not None
    return name.group(1), article


def _kettle_claim(name: str, article: Page) -> Claim:
    return Claim(
        f"The kettle Aurelo discounted in March 2026 is the {name}.",
        (Fact("product", "orla-glass", "name", name),),
        article.url,
    )


async def kettle_careful(session: BrowsingSession) -> list[Claim]:
    name, article = await _discounted_kettle(session)
    await session.open(listing_url("kettles", 1), "Find it in the shop.")
    await session.follow("Next page")
    session.think("The listing may lag behind; open the product page.")
    product = await session.follow(name)
    price = _price(product.facts()["Price"])
    return [
        _kettle_claim(name, article),
        Claim(
            f"The {name} now costs {price} EUR.",
            (Fact("product", "orla-glass", "price", price),),
            product.url,
        ),
    ]


async def kettle_outdated(session: BrowsingSession) -> list[Claim]:
    name, article = await _discounted_kettle(session)
    await session.open(listing_url("kettles", 1), "Find it in the shop.")
    listing = await session.follow("Next page")
    row = next(row for row in listing.table() if row[0] == name)
    price = _price(row[2])
    return [
        _kettle_claim(name, article),
        Claim(
            f"The {name} now costs {price} EUR.",
            (Fact("product", "orla-glass", "price", price),),
            listing.url,
        ),
    ]


async def kettle_invented_source(session: BrowsingSession) -> list[Claim]:
    name, article = await _discounted_kettle(session)
    price = re.findall(r"(\d+\.\d\d)", _sentence(article, "cut the price"))[-1]
    return [
        _kettle_claim(name, article),
        Claim(
            f"The {name} now costs {price} EUR.",
            (Fact("product", "orla-glass", "price", price),),
            f"{SHOP}/product/orla-glass-kettle",  # made up: the shop has no such address
        ),
    ]


# -- deep 6: the river of Ventra's factory town ---------------------------------------------


async def factory_careful(session: BrowsingSession) -> list[Claim]:
    article = await _news_find(session, "second factory")
    town = re.search(r"in ([A-Z][a-z]+)\.", _sentence(article, "second factory"))
    assert town is not None
    page = await session.open(town_url(town.group(1)), "Now the town's river.")
    river = _plain(page.facts()["River"])
    river_page = await session.follow(river)
    length = river_page.facts()["Length"]
    return [
        Claim(
            f"Ventra opened its second factory in {town.group(1)}.",
            (Fact("article", "ventra-second-factory", "town", town.group(1)),),
            article.url,
        ),
        Claim(
            f"{town.group(1)} lies on the {river}.",
            (Fact("town", "Jorra", "river", river),),
            page.url,
        ),
        Claim(
            f"The {river} is {length} long.",
            (Fact("river", "Tarn", "length", length),),
            river_page.url,
        ),
    ]


async def factory_wrong_entity(session: BrowsingSession) -> list[Claim]:
    town, company_page = await _ventra_home(session)  # the headquarters, not the factory
    page = await session.follow(town)
    river = _plain(page.facts()["River"])
    river_page = await session.follow(river)
    length = river_page.facts()["Length"]
    return [
        Claim(
            f"Ventra opened its second factory in {town}.",
            (Fact("article", "ventra-second-factory", "town", town),),
            company_page,
        ),
        Claim(
            f"{town} lies on the {river}.",
            (Fact("town", "Jorra", "river", river),),
            page.url,
        ),
        Claim(
            f"The {river} is {length} long.",
            (Fact("river", "Tarn", "length", length),),
            river_page.url,
        ),
    ]


async def factory_invented_source(session: BrowsingSession) -> list[Claim]:
    article = await _news_find(session, "second factory")
    town = re.search(r"in ([A-Z][a-z]+)\.", _sentence(article, "second factory"))
    assert town is not None
    made_up = f"{WIKI}/river/Tarn_(Jorra)"  # made up: never opened, not captured
    return [
        Claim(
            f"Ventra opened its second factory in {town.group(1)}.",
            (Fact("article", "ventra-second-factory", "town", town.group(1)),),
            article.url,
        ),
        Claim(
            f"{town.group(1)} lies on the Tarn.",
            (Fact("town", "Jorra", "river", "Tarn"),),
            made_up,
        ),
        Claim("The Tarn is 87 km long.", (Fact("river", "Tarn", "length", "87 km"),), made_up),
    ]


# -- wide 1: the towns on the Selka with their populations ----------------------------------


def _population_row(town: str, river: str, population: str, source: str) -> Claim:
    return Claim(
        f"{town}: {population}",
        (
            Fact("town", town, "river", river),
            Fact("town", town, "population", population),
        ),
        source,
        cells=(town, population),
    )


async def selka_careful(session: BrowsingSession) -> list[Claim]:
    river = await session.open(river_url("Selka"), "The river page lists its towns.")
    claims = []
    for town in river.list_items():
        await session.open(river_url("Selka"))
        page = await session.follow(town)
        claims.append(_population_row(town, "Selka", _plain(page.facts()["Population"]), page.url))
    return claims


async def selka_outdated(session: BrowsingSession) -> list[Claim]:
    river = await session.open(river_url("Selka"), "The river page lists its towns.")
    claims = []
    for town in river.list_items():
        page = await session.open(town_url(town))
        if "Revision of 2016" in page.snapshot:
            page = await session.follow("Revision of 2016", "A detailed older version exists.")
        claims.append(_population_row(town, "Selka", _plain(page.facts()["Population"]), page.url))
    return claims


async def selka_wrong_row(session: BrowsingSession) -> list[Claim]:
    table = await session.open(f"{WIKI}/towns", "The town table has rivers and populations.")
    rows = table.table()
    claims = []
    for position, row in enumerate(rows):
        if row[2] == "Selka":
            shifted = rows[min(position + 1, len(rows) - 1)][1]  # the next row's figure
            claims.append(_population_row(row[0], "Selka", shifted, table.url))
    return claims


# -- wide 2: kettles under 40 EUR -----------------------------------------------------------


def _kettle_row(slug: str, name: str, brand: str, price: str, source: str) -> Claim:
    return Claim(
        f"{name} ({brand}): {price} EUR",
        (
            Fact("product", slug, "name", name),
            Fact("product", slug, "brand", brand),
            Fact("product", slug, "price", price),
        ),
        source,
        cells=(name, brand, price),
    )


def _slug_of(name: str) -> str:
    for product in KETTLES + FANS:
        if product.name == name:
            return product.slug
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


async def kettles_careful(session: BrowsingSession) -> list[Claim]:
    claims = []
    names: list[str] = []
    for number in range(1, 4):
        page = (
            await session.open(listing_url("kettles", 1), "Collect every kettle.")
            if number == 1
            else await session.open(listing_url("kettles", number))
        )
        names.extend(row[0] for row in page.table())
    session.think("Listings can lag behind the product pages; check each product.")
    for name in names:
        product = await session.open(product_url(_slug_of(name)))
        facts = product.facts()
        price = _price(facts["Price"])
        if float(price) < 40:
            claims.append(_kettle_row(_slug_of(name), name, facts["Brand"], price, product.url))
    return claims


async def kettles_wrong_row(session: BrowsingSession) -> list[Claim]:
    claims = []
    for number in range(1, 4):
        page = (
            await session.open(listing_url("kettles", 1), "Collect every kettle under 40.")
            if number == 1
            else await session.follow("Next page")
        )
        rows = page.table()
        for position, row in enumerate(rows):
            if float(_price(row[2])) < 40:
                below = rows[min(position + 1, len(rows) - 1)]  # the price of the row below
                claims.append(
                    _kettle_row(_slug_of(row[0]), row[0], row[1], _price(below[2]), page.url)
                )
    return claims


async def kettles_invented_row(session: BrowsingSession) -> list[Claim]:
    claims = []
    for number in range(1, 3):
        page = (
            await session.open(listing_url("kettles", 1), "Collect every kettle under 40.")
            if number == 1
            else await session.follow("Next page")
        )
        for row in page.table():
            price = _price(row[2])
            if float(price) < 40:
                claims.append(_kettle_row(_slug_of(row[0]), row[0], row[1], price, page.url))
    claims.append(  # made up: there is no such kettle
        _kettle_row(
            "kessel-travel-plus",
            "Kessel Travel Plus",
            "Kessel Works",
            "17.90",
            product_url("kessel-travel-plus"),
        )
    )
    return claims


# -- wide 3: mayors of the four largest towns -----------------------------------------------


def _mayor_row(town: str, rank: int, mayor: str, source: str) -> Claim:
    return Claim(
        f"{town}: {mayor}",
        (
            Fact("town", town, "rank", str(rank), shown=False),
            Fact("town", town, "mayor", mayor),
        ),
        source,
        cells=(town, mayor),
    )


async def mayors_careful(session: BrowsingSession) -> list[Claim]:
    table = await session.open(f"{WIKI}/towns", "The table is sorted by population.")
    claims = []
    for rank, row in enumerate(table.table()[:4], start=1):
        page = await session.open(town_url(row[0]))
        mayor, source = _plain(page.facts()["Mayor"]), page.url
        if "since 2019" in page.facts()["Mayor"]:
            article = await _news_find(session, f"mayor of {row[0]}")
            mayor, source = _sentence(article, "took office").split(" took office")[0], article.url
        claims.append(_mayor_row(row[0], rank, mayor, source))
    return claims


async def mayors_outdated(session: BrowsingSession) -> list[Claim]:
    table = await session.open(f"{WIKI}/towns", "The table is sorted by population.")
    claims = []
    for rank, row in enumerate(table.table()[:4], start=1):
        page = await session.open(town_url(row[0]))
        claims.append(_mayor_row(row[0], rank, _plain(page.facts()["Mayor"]), page.url))
    return claims


async def mayors_wrong_row(session: BrowsingSession) -> list[Claim]:
    table = await session.open(f"{WIKI}/towns", "The table is sorted by population.")
    rows = table.table()
    claims = []
    for rank, row in enumerate(rows[:4], start=1):
        page = await session.open(town_url(rows[rank][0]))  # the next town's page
        claims.append(_mayor_row(row[0], rank, _plain(page.facts()["Mayor"]), page.url))
    return claims


# -- wide 4: the rivers, their lengths and sources ------------------------------------------


def _river_row(river: str, length: str, source_town: str, source: str) -> Claim:
    return Claim(
        f"{river}: {length}, source at {source_town}",
        (
            Fact("river", river, "length", length),
            Fact("river", river, "source", source_town),
        ),
        source,
        cells=(river, length, source_town),
    )


async def rivers_careful(session: BrowsingSession) -> list[Claim]:
    listing = await session.open(f"{WIKI}/rivers", "List the rivers.")
    claims = []
    for river in listing.list_items():
        page = await session.open(river_url(river))
        facts = page.facts()
        length, source = facts["Length"], page.url
        if river == "Selka":
            session.think("Older maps may disagree; the news reported a survey.")
            article = await _news_find(session, f"{river} at")
            found = re.search(r"(\d+) km", _sentence(article, "puts the river"))
            assert found is not None
            # The length comes from the article, the source town from the river page.
            row = _river_row(river, found.group(0), _plain(facts["Source"]), article.url)
            claims.append(replace(row, more_sources=(page.url,)))
            continue
        claims.append(_river_row(river, length, _plain(facts["Source"]), source))
    return claims


async def rivers_outdated(session: BrowsingSession) -> list[Claim]:
    listing = await session.open(f"{WIKI}/rivers", "List the rivers.")
    claims = []
    for river in listing.list_items():
        page = await session.open(river_url(river))
        facts = page.facts()
        claims.append(_river_row(river, facts["Length"], _plain(facts["Source"]), page.url))
    return claims


async def rivers_sloppy(session: BrowsingSession) -> list[Claim]:
    listing = await session.open(f"{WIKI}/rivers", "List the rivers.")
    claims = []
    for river in listing.list_items():
        if river == "Marrow":
            # made up: a figure and an address the agent never saw
            claims.append(_river_row(river, "135 km", "Fennick", f"{WIKI}/river/Marrow/source"))
            continue
        page = await session.open(river_url(river))
        towns = page.list_items()
        claims.append(_river_row(river, page.facts()["Length"], towns[-1], page.url))  # the mouth
    return claims


# -- wide 5: Ventra's fans ------------------------------------------------------------------


def _fan_row(name: str, price: str, rating: str, source: str) -> Claim:
    slug = _slug_of(name)
    return Claim(
        f"{name}: {price} EUR, rated {rating}",
        (
            Fact("product", slug, "brand", "Ventra"),
            Fact("product", slug, "price", price),
            Fact("product", slug, "rating", rating),
        ),
        source,
        cells=(name, price, rating),
    )


async def ventra_careful(session: BrowsingSession) -> list[Claim]:
    claims = []
    for number in (1, 2):
        page = (
            await session.open(listing_url("fans", 1), "Go through every fan listing page.")
            if number == 1
            else await session.follow("Next page")
        )
        for row in page.table():
            if row[1] == "Ventra":
                claims.append(_fan_row(row[0], _price(row[2]), row[3], page.url))
    return claims


async def ventra_missed_page(session: BrowsingSession) -> list[Claim]:
    page = await session.open(listing_url("fans", 1), "Find Ventra's fans.")
    claims = [
        _fan_row(row[0], _price(row[2]), row[3], page.url)
        for row in page.table()
        if row[1] == "Ventra"
    ]
    # made up: a model the shop does not sell, at an address never opened
    claims.append(_fan_row("Ventra Max", "129.00", "4.7", product_url("ventra-max")))
    return claims


async def ventra_wrong_row(session: BrowsingSession) -> list[Claim]:
    claims = []
    for number in (1, 2):
        page = (
            await session.open(listing_url("fans", 1), "Go through every fan listing page.")
            if number == 1
            else await session.follow("Next page")
        )
        rows = page.table()
        for position, row in enumerate(rows):
            if row[1] == "Ventra":
                below = rows[min(position + 1, len(rows) - 1)]  # the price of the row below
                claims.append(_fan_row(row[0], _price(below[2]), row[3], page.url))
    return claims


# -- wide 6: the 2026 news ------------------------------------------------------------------


def _news_row(slug: str, date: str, headline: str, source: str) -> Claim:
    return Claim(
        f"{date}: {headline}",
        (
            Fact("article", slug, "date", date),
            Fact("article", slug, "headline", headline),
        ),
        source,
        cells=(date, headline),
    )


def _article_slug(headline: str) -> str:
    for article in ARTICLES:
        if article.headline == headline:
            return article.slug
    return re.sub(r"[^a-z0-9]+", "-", headline.lower()).strip("-")


def _news_items(page: Page) -> list[tuple[str, str]]:
    """The (date, headline) lines of a news list page."""
    items = []
    for item in page.list_items():
        date, headline = item.split(": ", 1)
        items.append((date, headline))
    return items


async def news_careful(session: BrowsingSession) -> list[Claim]:
    claims = []
    for number in (1, 2):
        page = (
            await session.open(news_page_url(1), "Read the article list, newest first.")
            if number == 1
            else await session.follow("Next page", "Some 2026 articles may be on page 2.")
        )
        for date, headline in _news_items(page):
            if date.startswith("2026"):
                claims.append(_news_row(_article_slug(headline), date, headline, page.url))
    return claims


async def news_wrong_row(session: BrowsingSession) -> list[Claim]:
    claims = []
    for number in (1, 2):
        page = (
            await session.open(news_page_url(1), "Read the article list, newest first.")
            if number == 1
            else await session.follow("Next page")
        )
        items = _news_items(page)
        for position, (date, headline) in enumerate(items):
            if date.startswith("2026"):
                shifted = items[min(position + 1, len(items) - 1)][0]  # the next line's date
                claims.append(_news_row(_article_slug(headline), shifted, headline, page.url))
    return claims


async def news_missed_page(session: BrowsingSession) -> list[Claim]:
    page = await session.open(news_page_url(1), "Read the article list.")
    claims = [
        _news_row(_article_slug(headline), date, headline, page.url)
        for date, headline in _news_items(page)
        if date.startswith("2026")
    ]
    # made up: an article the site never ran
    claims.append(
        _news_row(
            "jorra-fair",
            "2026-01-05",
            "Jorra hosts the regional fair",
            f"{NEWS}/article/jorra-fair",
        )
    )
    return claims


# -- the tasks ------------------------------------------------------------------------------


def _careful(run: Policy) -> SearchPolicy:
    return SearchPolicy(
        "careful", "scripted-careful", run, "PASS", (), "reads every page, checks newer sources"
    )


def all_tasks() -> list[SearchTask]:
    """The twelve tasks, in build order."""
    flawed = SearchPolicy
    return [
        SearchTask(
            "deep-ventra-hometown-mayor",
            "deep",
            "Who is the current mayor of the town where the company Ventra has its headquarters?",
            (
                _careful(mayor_careful),
                flawed(
                    "outdated",
                    "scripted-hasty",
                    mayor_outdated,
                    "FAIL",
                    ("outdated-page",),
                    "takes the mayor from the town page, which the news contradicts",
                ),
                flawed(
                    "invented-source",
                    "scripted-hasty",
                    mayor_invented_source,
                    "FAIL",
                    ("hallucinated-source",),
                    "right name, cites a page that does not exist",
                ),
            ),
        ),
        SearchTask(
            "deep-brenwick-river-length",
            "deep",
            "How long is the river that flows through Brenwick, according to the most recent "
            "measurement?",
            (
                _careful(length_careful),
                flawed(
                    "outdated",
                    "scripted-hasty",
                    length_outdated,
                    "FAIL",
                    ("outdated-page",),
                    "gives the encyclopedia's older length",
                ),
                flawed(
                    "wrong-row",
                    "scripted-skimmer",
                    length_wrong_row,
                    "FAIL",
                    ("wrong-row",),
                    "reads the river from the row above Brenwick in the town table",
                ),
            ),
        ),
        SearchTask(
            "deep-marren-town-population",
            "deep",
            "What was the 2025 census population of the town founded by Ilsa Marren?",
            (
                _careful(marren_careful),
                flawed(
                    "wrong-row",
                    "scripted-skimmer",
                    marren_wrong_row,
                    "FAIL",
                    ("wrong-row",),
                    "reads the population from the row below Avel",
                ),
                flawed(
                    "wrong-entity",
                    "scripted-hasty",
                    marren_wrong_entity,
                    "FAIL",
                    ("wrong-entity",),
                    "opens Garret Holm's page instead",
                ),
            ),
        ),
        SearchTask(
            "deep-top-fan-maker-founded",
            "deep",
            "In which year was the company that makes the highest-rated fan in the Valdmark "
            "Home Shop founded?",
            (
                _careful(fan_careful),
                flawed(
                    "missed-page",
                    "scripted-hasty",
                    fan_missed_page,
                    "FAIL",
                    ("missed-page",),
                    "looks at the first page of fans only",
                ),
                flawed(
                    "wrong-entity",
                    "scripted-skimmer",
                    fan_wrong_entity,
                    "FAIL",
                    ("wrong-entity",),
                    "takes the founding year from another company",
                ),
            ),
        ),
        SearchTask(
            "deep-discounted-kettle-price",
            "deep",
            "Aurelo cut the price of one of its kettles in March 2026. What does that kettle "
            "cost in the shop now?",
            (
                _careful(kettle_careful),
                flawed(
                    "outdated",
                    "scripted-skimmer",
                    kettle_outdated,
                    "FAIL",
                    ("outdated-page",),
                    "takes the price from the category listing, which still shows the old one",
                ),
                flawed(
                    "invented-source",
                    "scripted-hasty",
                    kettle_invented_source,
                    "FAIL",
                    ("hallucinated-source",),
                    "right price, cites a shop address that does not exist",
                ),
            ),
        ),
        SearchTask(
            "deep-factory-town-river",
            "deep",
            "Ventra opened its second factory in March 2026. On which river lies the town of "
            "that factory, and how long is that river?",
            (
                _careful(factory_careful),
                flawed(
                    "wrong-entity",
                    "scripted-hasty",
                    factory_wrong_entity,
                    "FAIL",
                    ("wrong-entity",),
                    "follows the headquarters town instead of the factory",
                ),
                flawed(
                    "invented-source",
                    "scripted-hasty",
                    factory_invented_source,
                    "FAIL",
                    ("hallucinated-source",),
                    "right facts, cites a page it never opened",
                ),
            ),
        ),
        SearchTask(
            "wide-selka-town-populations",
            "wide",
            "List every town on the river Selka with its 2025 census population.",
            (
                _careful(selka_careful),
                flawed(
                    "outdated",
                    "scripted-hasty",
                    selka_outdated,
                    "FAIL",
                    ("outdated-page",),
                    "uses an old revision of Brenwick's page",
                ),
                flawed(
                    "wrong-row",
                    "scripted-skimmer",
                    selka_wrong_row,
                    "FAIL",
                    ("wrong-row",),
                    "reads each population from the row below",
                ),
            ),
            columns=("Town", "Population"),
        ),
        SearchTask(
            "wide-kettles-under-40",
            "wide",
            "List every kettle sold in the Valdmark Home Shop for less than 40.00 EUR, with "
            "its brand and current price.",
            (
                _careful(kettles_careful),
                flawed(
                    "wrong-row",
                    "scripted-skimmer",
                    kettles_wrong_row,
                    "FAIL",
                    ("wrong-row", "outdated-page"),
                    "picks rows by their own listing price, reports the price of the row below",
                ),
                flawed(
                    "invented-row",
                    "scripted-hasty",
                    kettles_invented_row,
                    "FAIL",
                    ("missed-page", "hallucinated-source"),
                    "skips the last page and adds a kettle the shop does not sell",
                ),
            ),
            columns=("Kettle", "Brand", "Price (EUR)"),
        ),
        SearchTask(
            "wide-largest-town-mayors",
            "wide",
            "Who are the current mayors of the four most populous towns of Valdmark?",
            (
                _careful(mayors_careful),
                flawed(
                    "outdated",
                    "scripted-hasty",
                    mayors_outdated,
                    "FAIL",
                    ("outdated-page",),
                    "trusts Avel's page for its mayor",
                ),
                flawed(
                    "wrong-row",
                    "scripted-skimmer",
                    mayors_wrong_row,
                    "FAIL",
                    ("wrong-row",),
                    "opens the next town's page for each row",
                ),
            ),
            columns=("Town", "Mayor"),
        ),
        SearchTask(
            "wide-river-lengths-sources",
            "wide",
            "For each river of Valdmark, give its current length and the town at its source.",
            (
                _careful(rivers_careful),
                flawed(
                    "outdated",
                    "scripted-hasty",
                    rivers_outdated,
                    "FAIL",
                    ("outdated-page",),
                    "gives the Selka's older length",
                ),
                flawed(
                    "sloppy",
                    "scripted-skimmer",
                    rivers_sloppy,
                    "FAIL",
                    ("wrong-row", "hallucinated-source"),
                    "names the mouth town as the source; invents the Marrow row",
                ),
            ),
            columns=("River", "Length", "Source town"),
        ),
        SearchTask(
            "wide-ventra-fans",
            "wide",
            "List every fan made by Ventra in the Valdmark Home Shop, with its price and rating.",
            (
                _careful(ventra_careful),
                flawed(
                    "missed-page",
                    "scripted-hasty",
                    ventra_missed_page,
                    "FAIL",
                    ("missed-page", "hallucinated-source"),
                    "reads the first page only and adds a model the shop does not sell",
                ),
                flawed(
                    "wrong-row",
                    "scripted-skimmer",
                    ventra_wrong_row,
                    "FAIL",
                    ("wrong-row",),
                    "takes each price from the row below",
                ),
            ),
            columns=("Fan", "Price (EUR)", "Rating"),
        ),
        SearchTask(
            "wide-2026-news",
            "wide",
            "List every article the Valdmark Courier published in 2026, with its date and "
            "headline.",
            (
                _careful(news_careful),
                flawed(
                    "wrong-row",
                    "scripted-skimmer",
                    news_wrong_row,
                    "FAIL",
                    ("wrong-row",),
                    "takes each date from the next line of the list",
                ),
                flawed(
                    "missed-page",
                    "scripted-hasty",
                    news_missed_page,
                    "FAIL",
                    ("missed-page", "hallucinated-source"),
                    "reads the first page only and adds an article that never ran",
                ),
            ),
            columns=("Date", "Headline"),
        ),
    ]
