"""The authored ``retail`` schema: a web shop's customers, products, orders, items and payments.

``generate`` makes the data deterministically (``random.Random`` with a fixed seed): 900
customers, 120 products (the last six never sold), 6,000 orders over 2023-2024 (about 3% without
items), roughly 15,000 order items (a tenth sold at a discount, so an item's price is not always
its product's list price) and a payment for every shipped or completed order. ``seed_sql`` writes
it as a psql script into the ``public`` schema. Tasks may alter the data first (the duplicate
customers of the clean-up task) and add their own DDL.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from datetime import date, timedelta
from decimal import Decimal

from suites.ds.tasks.postgres.common import Value, cents, insert_rows

SEED = 5150
CUSTOMERS = 900
PRODUCTS = 120
UNSOLD = 6
ORDERS = 6000
STATUSES = ("completed", "shipped", "pending", "cancelled")
STATUS_WEIGHTS = (60, 15, 10, 15)

FIRST = [
    "Ada",
    "Bilal",
    "Chen",
    "Dara",
    "Elif",
    "Farah",
    "Gustavo",
    "Hana",
    "Ivan",
    "Jonas",
    "Kofi",
    "Lucia",
    "Mateo",
    "Nadia",
    "Oskar",
    "Priya",
    "Quentin",
    "Rosa",
    "Samir",
    "Tala",
    "Umar",
    "Vera",
    "Wen",
    "Ximena",
    "Yusuf",
    "Zofia",
    "Aiko",
    "Bruno",
    "Carmen",
    "Dmitri",
]
LAST = [
    "Moreno",
    "Haddad",
    "Jing",
    "Okafor",
    "Demir",
    "Nasser",
    "Lima",
    "Kobayashi",
    "Petrov",
    "Berg",
    "Mensah",
    "Romano",
    "Silva",
    "Novak",
    "Larsen",
    "Iyer",
    "Fontaine",
    "Alvarez",
    "Khan",
    "Rahimi",
    "Ortiz",
    "Sato",
    "Muller",
    "Costa",
    "Popescu",
    "Ward",
]
CITIES = [
    "Lisbon",
    "Porto",
    "Madrid",
    "Valencia",
    "Lyon",
    "Nantes",
    "Turin",
    "Milan",
    "Ghent",
    "Utrecht",
    "Leipzig",
    "Bremen",
    "Krakow",
]
DOMAINS = ("example.com", "mail.example", "inbox.example")
CATEGORIES = ("books", "garden", "kitchen", "outdoor", "stationery", "toys")
NOUNS = [
    "lamp",
    "kettle",
    "notebook",
    "trowel",
    "tent",
    "puzzle",
    "mug",
    "planner",
    "hose",
    "lantern",
    "blocks",
    "skillet",
    "pen",
    "rake",
]
ADJECTIVES = ["small", "large", "classic", "deluxe", "compact", "steel", "bamboo", "travel"]


@dataclass(frozen=True)
class Customer:
    id: int
    full_name: str
    email: str
    city: str
    signed_up: date

    def row(self) -> tuple[Value, ...]:
        return (self.id, self.full_name, self.email, self.city, self.signed_up)


@dataclass(frozen=True)
class Product:
    id: int
    sku: str
    name: str
    category: str
    unit_price: Decimal

    def row(self) -> tuple[Value, ...]:
        return (self.id, self.sku, self.name, self.category, self.unit_price)


@dataclass(frozen=True)
class Order:
    id: int
    customer_id: int
    ordered_at: date
    status: str

    def row(self) -> tuple[Value, ...]:
        return (self.id, self.customer_id, self.ordered_at, self.status)


@dataclass(frozen=True)
class Item:
    id: int
    order_id: int
    product_id: int
    quantity: int
    unit_price: Decimal

    def row(self) -> tuple[Value, ...]:
        return (self.id, self.order_id, self.product_id, self.quantity, self.unit_price)

    @property
    def amount(self) -> Decimal:
        return self.quantity * self.unit_price


@dataclass(frozen=True)
class Payment:
    id: int
    order_id: int
    paid_on: date
    amount: Decimal
    method: str

    def row(self) -> tuple[Value, ...]:
        return (self.id, self.order_id, self.paid_on, self.amount, self.method)


@dataclass(frozen=True)
class Retail:
    """The shop's rows, each list in id order."""

    customers: list[Customer]
    products: list[Product]
    orders: list[Order]
    items: list[Item]
    payments: list[Payment]

    def order_totals(self) -> dict[int, Decimal]:
        """Every order's items total (0.00 for an order without items)."""
        totals = {order.id: Decimal("0.00") for order in self.orders}
        for item in self.items:
            totals[item.order_id] += item.amount
        return totals


COLUMNS = {
    "customers": ("id", "full_name", "email", "city", "signed_up"),
    "products": ("id", "sku", "name", "category", "unit_price"),
    "orders": ("id", "customer_id", "ordered_at", "status"),
    "order_items": ("id", "order_id", "product_id", "quantity", "unit_price"),
    "payments": ("id", "order_id", "paid_on", "amount", "method"),
}
"""Every table's columns in order (all keyed by ``id``)."""


def generate() -> Retail:
    """The shop, the same on every call."""
    rng = random.Random(SEED)
    start = date(2023, 1, 1)
    customers = []
    for number in range(1, CUSTOMERS + 1):
        first, last = rng.choice(FIRST), rng.choice(LAST)
        customers.append(
            Customer(
                number,
                f"{first} {last}",
                f"{first.lower()}.{last.lower()}.{number}@{rng.choice(DOMAINS)}",
                rng.choice(CITIES),
                date(2022, 1, 1) + timedelta(days=rng.randint(0, 700)),
            )
        )
    products = []
    for number in range(1, PRODUCTS + 1):
        category = CATEGORIES[number % len(CATEGORIES)]
        name = f"{rng.choice(ADJECTIVES)} {rng.choice(NOUNS)}"
        products.append(
            Product(
                number,
                f"{category[:3].upper()}-{1000 + number}",
                name,
                category,
                cents(rng.randint(299, 18999)),
            )
        )
    orders: list[Order] = []
    items: list[Item] = []
    for number in range(1, ORDERS + 1):
        status = rng.choices(STATUSES, STATUS_WEIGHTS)[0]
        orders.append(
            Order(
                number,
                rng.randint(1, CUSTOMERS),
                start + timedelta(days=rng.randint(0, 729)),
                status,
            )
        )
        count = 0 if rng.random() < 0.03 else rng.randint(1, 4)
        for product_id in rng.sample(range(1, PRODUCTS - UNSOLD + 1), count):
            price = products[product_id - 1].unit_price
            if rng.random() < 0.1:
                price = (price * Decimal("0.9")).quantize(Decimal("0.01"))
            items.append(Item(len(items) + 1, number, product_id, rng.randint(1, 5), price))
    shop = Retail(customers, products, orders, items, [])
    totals = shop.order_totals()
    payments: list[Payment] = []
    for order in orders:
        if order.status in ("completed", "shipped") and totals[order.id] > 0:
            payments.append(
                Payment(
                    len(payments) + 1,
                    order.id,
                    order.ordered_at + timedelta(days=rng.randint(0, 3)),
                    totals[order.id],
                    rng.choice(("card", "card", "paypal", "transfer")),
                )
            )
    return replace(shop, payments=payments)


SCHEMA = """
CREATE TABLE customers (
    id        integer PRIMARY KEY,
    full_name text    NOT NULL,
    email     text    NOT NULL,
    city      text    NOT NULL,
    signed_up date    NOT NULL
);

CREATE TABLE products (
    id         integer       PRIMARY KEY,
    sku        text          NOT NULL,
    name       text          NOT NULL,
    category   text          NOT NULL,
    unit_price numeric(10,2) NOT NULL
);

CREATE TABLE orders (
    id          integer PRIMARY KEY,
    customer_id integer NOT NULL REFERENCES customers (id),
    ordered_at  date    NOT NULL,
    status      text    NOT NULL
        CHECK (status IN ('pending', 'shipped', 'completed', 'cancelled'))
);

CREATE TABLE order_items (
    id         integer       PRIMARY KEY,
    order_id   integer       NOT NULL REFERENCES orders (id),
    product_id integer       NOT NULL,
    quantity   integer       NOT NULL,
    unit_price numeric(10,2) NOT NULL
);

CREATE TABLE payments (
    id       integer       PRIMARY KEY,
    order_id integer       NOT NULL REFERENCES orders (id),
    paid_on  date          NOT NULL,
    amount   numeric(10,2) NOT NULL,
    method   text          NOT NULL
);

CREATE INDEX order_items_order_id_idx ON order_items (order_id);
CREATE INDEX payments_order_id_idx ON payments (order_id);
"""


def seed_sql(shop: Retail, title: str) -> str:
    """The psql script that builds ``shop`` in an empty database."""
    parts = [
        f"-- Initial state of {title}: the retail schema (a web shop), generated"
        " deterministically.\n",
        SCHEMA,
        insert_rows("customers", COLUMNS["customers"], (c.row() for c in shop.customers)),
        insert_rows("products", COLUMNS["products"], (p.row() for p in shop.products)),
        insert_rows("orders", COLUMNS["orders"], (o.row() for o in shop.orders)),
        insert_rows("order_items", COLUMNS["order_items"], (i.row() for i in shop.items)),
        insert_rows("payments", COLUMNS["payments"], (p.row() for p in shop.payments)),
        "ANALYZE;\n",
    ]
    return "\n".join(parts)


def table_rows(shop: Retail) -> dict[str, list[tuple[Value, ...]]]:
    """Every table's rows, in id order, for fingerprints."""
    return {
        "customers": [c.row() for c in shop.customers],
        "products": [p.row() for p in shop.products],
        "orders": [o.row() for o in shop.orders],
        "order_items": [i.row() for i in shop.items],
        "payments": [p.row() for p in shop.payments],
    }
