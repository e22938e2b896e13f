"""The search suite's web, snapshot reading and claim labels, without a browser."""

from __future__ import annotations

from collections import Counter

from suites.search.browsing import Page
from suites.search.build import label_claim, page_texts
from suites.search.site import NEWS, SHOP, WIKI, listing_url, product_url, site_pages, town_url
from suites.search.spec import Claim, Fact
from suites.search.tasks import all_tasks
from suites.search.world import FANS, KETTLES, TOWNS, fact


def test_the_web_has_three_sites_and_at_least_forty_pages() -> None:
    pages = site_pages()
    assert len(pages) >= 40
    hosts = Counter(url.split("/")[2] for url in pages)
    assert set(hosts) == {WIKI[7:], SHOP[7:], NEWS[7:]}
    assert min(hosts.values()) >= 10
    # Paginated listings: every page but the last links to the next.
    kettle_pages = [url for url in pages if url.startswith(f"{SHOP}/kettles?page=")]
    assert len(kettle_pages) == -(-len(KETTLES) // 3)
    assert "Next page" in pages[listing_url("kettles", 1)]
    assert "Next page" not in pages[listing_url("kettles", len(kettle_pages))]
    for page in pages.values():
        assert "<table>" in page or "<ul>" in page or "<dl>" in page or "<p>" in page


def test_pages_contradict_each_other_where_the_world_says_so() -> None:
    texts = page_texts()
    # The encyclopedia keeps Avel's previous mayor, the news has the new one.
    assert "Piet Harrow" in texts[town_url("Avel")]
    assert fact("town", "Avel", "mayor") == "Oda Lenz"
    assert "Oda Lenz" in texts[f"{NEWS}/article/avel-new-mayor"]
    # The listing shows the Orla Glass kettle's old price, its product page the new one.
    assert "42.00" in texts[listing_url("kettles", 2)]
    assert "34.00" in texts[product_url("orla-glass")]
    # An old revision of Brenwick's page has an outdated population.
    assert "19,400" in texts[town_url("Brenwick", 2016)]
    assert f"{TOWNS[2].population:,}" in texts[town_url("Brenwick")]
    # The river page's length is older than the survey in the news.
    assert "212 km" in texts[f"{WIKI}/river/Selka"]
    assert "208 km" in texts[f"{NEWS}/article/selka-survey"]


def test_claims_are_labelled_by_value_and_by_what_the_source_says() -> None:
    texts = page_texts()
    right = Claim(
        "Avel's mayor is Oda Lenz.",
        (Fact("town", "Avel", "mayor", "Oda Lenz"),),
        f"{NEWS}/article/avel-new-mayor",
    )
    assert label_claim(right, texts)[0] == "PASS"
    stale = Claim(
        "Avel's mayor is Piet Harrow.",
        (Fact("town", "Avel", "mayor", "Piet Harrow"),),
        town_url("Avel"),
    )
    assert label_claim(stale, texts) == ("FAIL", "town Avel mayor is Oda Lenz, not Piet Harrow")
    unsupported = Claim(
        "Avel's mayor is Oda Lenz.", (Fact("town", "Avel", "mayor", "Oda Lenz"),), town_url("Avel")
    )
    assert label_claim(unsupported, texts) == ("FAIL", "no cited page states 'Oda Lenz'")
    invented = Claim("x", (Fact("town", "Avel", "mayor", "Oda Lenz"),), f"{WIKI}/nowhere")
    assert label_claim(invented, texts)[1].startswith("cites http://wiki.valdmark.test/nowhere")
    unknown = Claim(
        "x", (Fact("product", "ventra-max", "price", "129.00"),), product_url(FANS[0].slug)
    )
    assert label_claim(unknown, texts) == ("FAIL", "there is no product 'ventra-max'")
    hidden = Claim(
        "Jorra ranks fifth.", (Fact("town", "Jorra", "rank", "5", shown=False),), f"{WIKI}/towns"
    )
    assert label_claim(hidden, texts)[0] == "PASS"


SNAPSHOT = """
```yaml
- generic [active] [ref=e1]:
  - main [ref=e2]:
    - table "Fans" [ref=e3]:
      - rowgroup [ref=e4]:
        - row [ref=e5]:
          - columnheader "Product" [ref=e6]
          - columnheader "Price" [ref=e7]
      - rowgroup [ref=e8]:
        - row [ref=e9]:
          - cell [ref=e10]:
            - link "Ventra Mini" [ref=e11] [cursor=pointer]:
              - /url: http://shop.valdmark.test/product/ventra-mini
          - cell "18.50 EUR" [ref=e12]
    - term [ref=e13]: Founded
    - definition [ref=e14]: "2004"
    - list [ref=e15]:
      - listitem [ref=e16]:
        - text: "2026-02-14:"
        - 'link "Census: a title with a colon" [ref=e17] [cursor=pointer]':
          - /url: http://news.valdmark.test/article/x
```
"""


def test_snapshots_are_read_back_into_links_tables_facts_and_lists() -> None:
    page = Page("http://shop.valdmark.test/fans?page=2", SNAPSHOT)
    assert page.table() == [["Ventra Mini", "18.50 EUR"]]
    assert page.facts() == {"Founded": "2004"}
    assert page.list_items() == ["2026-02-14: Census: a title with a colon"]
    assert page.link("Census: a title with a colon") == "e17"
    assert page.link("Ventra Mini") == "e11"


def test_twelve_tasks_each_with_a_careful_and_two_flawed_agents() -> None:
    tasks = all_tasks()
    assert len(tasks) >= 12
    assert {task.subdomain for task in tasks} == {"deep", "wide"}
    for task in tasks:
        intents = sorted(policy.intent for policy in task.policies)
        assert intents == ["FAIL", "FAIL", "PASS"], task.id
        assert all(policy.flaws for policy in task.policies if policy.intent == "FAIL")
        if task.subdomain == "wide":
            assert task.columns
