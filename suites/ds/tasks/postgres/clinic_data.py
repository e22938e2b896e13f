"""The authored ``clinic`` schema: departments, doctors, patients and their appointments.

Everything lives in the schema ``clinic`` (not ``public``), so unqualified names miss. ``generate``
makes the data deterministically: 7 departments (Radiology has no doctors), 36 doctors (the last
one has no appointments yet), 1,800 patients (some without phone or email) and 8,000
appointments over 2023-2024 with a status (completed, no_show, cancelled, scheduled) and a fee.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

from suites.ds.tasks.postgres.common import Value, cents, insert_rows

SEED = 7301
DEPARTMENTS = (
    "Cardiology",
    "Dermatology",
    "General Practice",
    "Neurology",
    "Orthopedics",
    "Pediatrics",
    "Radiology",
)
STAFFED = 6
"""Departments 1..6 have doctors; Radiology (7) has none."""
DOCTORS = 36
PATIENTS = 1800
APPOINTMENTS = 8000
STATUSES = ("completed", "no_show", "cancelled", "scheduled")
STATUS_WEIGHTS = (65, 10, 12, 13)

FIRST = [
    "Amara",
    "Benedikt",
    "Cora",
    "Dario",
    "Esme",
    "Felix",
    "Greta",
    "Hugo",
    "Ines",
    "Jakob",
    "Keira",
    "Luca",
    "Mira",
    "Nils",
    "Olga",
    "Pavel",
    "Rhea",
    "Sven",
    "Thea",
    "Uri",
    "Valentina",
    "Wim",
    "Yara",
    "Zeno",
    "Alma",
    "Boris",
    "Clio",
    "Emil",
]
LAST = [
    "Abbott",
    "Brandt",
    "Castillo",
    "Dubois",
    "Eriksen",
    "Fischer",
    "Gallo",
    "Horvat",
    "Ibsen",
    "Jovanovic",
    "Keller",
    "Lindqvist",
    "Marsh",
    "Nowak",
    "Ortega",
    "Pereira",
    "Quinn",
    "Rossi",
    "Schmidt",
    "Torres",
    "Urban",
    "Vidal",
    "Weber",
    "Young",
    "Zeller",
]
STREETS = [
    "Oak",
    "Mill",
    "Station",
    "Church",
    "Harbour",
    "Garden",
    "Bridge",
    "Market",
    "Hill",
    "Park",
]
CITIES = ("Aarhus", "Bergen", "Graz", "Linz", "Malmo", "Odense", "Tampere", "Uppsala")


@dataclass(frozen=True)
class Doctor:
    id: int
    full_name: str
    department_id: int
    login_name: str

    def row(self) -> tuple[Value, ...]:
        return (self.id, self.full_name, self.department_id, self.login_name)


@dataclass(frozen=True)
class Patient:
    id: int
    full_name: str
    birth_date: date
    phone: str | None
    email: str | None
    street: str
    city: str
    postcode: str

    def row(self) -> tuple[Value, ...]:
        return (
            self.id,
            self.full_name,
            self.birth_date,
            self.phone,
            self.email,
            self.street,
            self.city,
            self.postcode,
        )


@dataclass(frozen=True)
class Appointment:
    id: int
    patient_id: int
    doctor_id: int
    scheduled_on: date
    status: str
    fee: Decimal

    def row(self) -> tuple[Value, ...]:
        return (
            self.id,
            self.patient_id,
            self.doctor_id,
            self.scheduled_on,
            self.status,
            self.fee,
        )


@dataclass(frozen=True)
class Clinic:
    """The clinic's rows, each list in id order."""

    departments: list[tuple[int, str]]
    doctors: list[Doctor]
    patients: list[Patient]
    appointments: list[Appointment]


COLUMNS = {
    "clinic.departments": ("id", "name"),
    "clinic.doctors": ("id", "full_name", "department_id", "login_name"),
    "clinic.patients": (
        "id",
        "full_name",
        "birth_date",
        "phone",
        "email",
        "street",
        "city",
        "postcode",
    ),
    "clinic.appointments": ("id", "patient_id", "doctor_id", "scheduled_on", "status", "fee"),
}
"""Every table's columns in order (all keyed by ``id``)."""


def generate() -> Clinic:
    """The clinic, the same on every call."""
    rng = random.Random(SEED)
    departments = [(number, name) for number, name in enumerate(DEPARTMENTS, start=1)]
    doctors = []
    for number in range(1, DOCTORS + 1):
        first, last = rng.choice(FIRST), rng.choice(LAST)
        doctors.append(
            Doctor(number, f"{first} {last}", 1 + number % STAFFED, f"dr_{last.lower()}{number}")
        )
    patients = []
    for number in range(1, PATIENTS + 1):
        first, last = rng.choice(FIRST), rng.choice(LAST)
        phone = (
            None
            if rng.random() < 0.1
            else f"+45 {rng.randint(20, 99)} {rng.randint(100000, 999999)}"
        )
        email = (
            None
            if rng.random() < 0.15
            else f"{first.lower()}.{last.lower()}{number}@patients.example"
        )
        patients.append(
            Patient(
                number,
                f"{first} {last}",
                date(1940, 1, 1) + timedelta(days=rng.randint(0, 30000)),
                phone,
                email,
                f"{rng.randint(1, 180)} {rng.choice(STREETS)} Street",
                rng.choice(CITIES),
                f"{rng.randint(1000, 9999)}",
            )
        )
    appointments = []
    for number in range(1, APPOINTMENTS + 1):
        appointments.append(
            Appointment(
                number,
                rng.randint(1, PATIENTS),
                rng.randint(1, DOCTORS - 1),
                date(2023, 1, 1) + timedelta(days=rng.randint(0, 729)),
                rng.choices(STATUSES, STATUS_WEIGHTS)[0],
                cents(rng.randint(12, 50) * 500),
            )
        )
    return Clinic(departments, doctors, patients, appointments)


SCHEMA = """
CREATE SCHEMA clinic;

CREATE TABLE clinic.departments (
    id   integer PRIMARY KEY,
    name text    NOT NULL UNIQUE
);

CREATE TABLE clinic.doctors (
    id            integer PRIMARY KEY,
    full_name     text    NOT NULL,
    department_id integer NOT NULL REFERENCES clinic.departments (id),
    login_name    text    NOT NULL UNIQUE
);

CREATE TABLE clinic.patients (
    id         integer PRIMARY KEY,
    full_name  text    NOT NULL,
    birth_date date    NOT NULL,
    phone      text,
    email      text,
    street     text    NOT NULL,
    city       text    NOT NULL,
    postcode   text    NOT NULL
);

CREATE TABLE clinic.appointments (
    id           integer      PRIMARY KEY,
    patient_id   integer      NOT NULL REFERENCES clinic.patients (id),
    doctor_id    integer      NOT NULL REFERENCES clinic.doctors (id),
    scheduled_on date         NOT NULL,
    status       text         NOT NULL
        CHECK (status IN ('scheduled', 'completed', 'cancelled', 'no_show')),
    fee          numeric(8,2) NOT NULL
);

CREATE INDEX appointments_doctor_id_idx ON clinic.appointments (doctor_id);
CREATE INDEX appointments_patient_id_idx ON clinic.appointments (patient_id);
"""


def table_rows(clinic: Clinic) -> dict[str, list[tuple[Value, ...]]]:
    """Every table's rows, in id order, for fingerprints."""
    return {
        "clinic.departments": [(number, name) for number, name in clinic.departments],
        "clinic.doctors": [d.row() for d in clinic.doctors],
        "clinic.patients": [p.row() for p in clinic.patients],
        "clinic.appointments": [a.row() for a in clinic.appointments],
    }


def seed_sql(clinic: Clinic, title: str) -> str:
    """The psql script that builds ``clinic`` in an empty database."""
    rows = table_rows(clinic)
    parts = [
        f"-- Initial state of {title}: the clinic schema, generated deterministically.\n",
        SCHEMA,
        *(insert_rows(table, COLUMNS[table], rows[table]) for table in COLUMNS),
        "ANALYZE;\n",
    ]
    return "\n".join(parts)
