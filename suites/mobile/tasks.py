"""The mobile suite's tasks: instruction, starting data, check and two scripted runs each.

Checks are plain functions copied into each task's ``verify.py``; they read only the phone's
state (``checks.app_state``) and print one line per condition (``report``). Scripted agents:
``scripted-careful`` always succeeds, ``scripted-steady`` sometimes, ``scripted-hasty`` never, so
the suite can rank agents as well as judge runs.
"""

from __future__ import annotations

from typing import Any

from dataset.models import AppSnapshotState, Task
from suites.ds.tasks.checks import report
from suites.mobile.checks import app_state
from suites.mobile.spec import (
    MobilePolicy,
    MobileTask,
    done,
    key,
    open_app,
    scroll,
    tap,
    type_into,
)

NOTES_DEFAULT: dict[str, Any] = {"notes": [], "next_id": 1}
CONTACTS_DEFAULT: dict[str, Any] = {"contacts": [], "next_id": 1}
SETTINGS_DEFAULT: dict[str, Any] = {
    "wifi": True,
    "bluetooth": False,
    "airplane": False,
    "dark": False,
    "font": "default",
}
SHOP_DEFAULT: dict[str, Any] = {"cart": [], "orders": [], "next_order": 1001}

CAREFUL, STEADY, HASTY = "scripted-careful", "scripted-steady", "scripted-hasty"

THREE_NOTES: dict[str, Any] = {
    "notes": [
        {"id": 1, "title": "Old ideas", "body": "a podcast about teapots", "pinned": False},
        {"id": 2, "title": "Trip packing list", "body": "passport, charger", "pinned": False},
        {"id": 3, "title": "Meeting notes", "body": "Agenda: budget", "pinned": False},
    ],
    "next_id": 4,
}
TWO_CONTACTS: dict[str, Any] = {
    "contacts": [
        {
            "id": 1,
            "name": "Ben Ortiz",
            "phone": "555-0100",
            "email": "ben@example.com",
            "favourite": False,
        },
        {
            "id": 2,
            "name": "Chloe Park",
            "phone": "555-0199",
            "email": "chloe@example.com",
            "favourite": False,
        },
    ],
    "next_id": 3,
}


def _task(task_id: str, instruction: str, apps: list[str]) -> Task:
    return Task(
        id=task_id,
        domain="mobile",
        subdomain="android",
        instruction=instruction,
        initial_state=AppSnapshotState(
            path="device", packages=[f"com.agentjudge.{a}" for a in apps]
        ),
        verifier=None,  # set by the builder with the script it writes
        metadata={"apps": apps, "suite": "mobile"},
    )


def titles(notes: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The notes by their trimmed title."""
    return {str(note["title"]).strip(): note for note in notes["notes"]}


def contact(contacts: dict[str, Any], name: str) -> dict[str, Any] | None:
    """The contact called ``name``, if any."""
    return next((c for c in contacts["contacts"] if str(c["name"]).strip() == name), None)


# -- notes -----------------------------------------------------------------------------------


def check_groceries(phone: dict[str, Any]) -> bool:
    """A note titled Groceries holds milk, eggs, bread; the meeting note is still there."""
    notes = titles(app_state(phone, "notes", NOTES_DEFAULT))
    groceries = notes.get("Groceries")
    ok = report(groceries is not None, "a note titled Groceries exists")
    if groceries is not None:
        text = str(groceries["body"]).strip()
        ok &= report(text == "milk, eggs, bread", "its text is 'milk, eggs, bread': " + repr(text))
    ok &= report("Meeting notes" in notes, "the note Meeting notes is kept")
    return ok


def check_old_ideas_deleted(phone: dict[str, Any]) -> bool:
    """The note Old ideas is gone; Trip packing list and Meeting notes remain."""
    notes = titles(app_state(phone, "notes", NOTES_DEFAULT))
    ok = report("Old ideas" not in notes, "Old ideas is deleted")
    for kept in ("Trip packing list", "Meeting notes"):
        ok &= report(kept in notes, kept + " is kept")
    return ok


def check_trip_pinned(phone: dict[str, Any]) -> bool:
    """Trip packing list is pinned and no other note is."""
    notes = titles(app_state(phone, "notes", NOTES_DEFAULT))
    trip = notes.get("Trip packing list")
    ok = report(trip is not None and bool(trip["pinned"]), "Trip packing list is pinned")
    others = sorted(
        title for title, note in notes.items() if note["pinned"] and title != "Trip packing list"
    )
    return ok & report(not others, "no other note is pinned " + str(others))


# -- contacts --------------------------------------------------------------------------------


def check_ana_added(phone: dict[str, Any]) -> bool:
    """A contact Ana Silva with phone 555-0142 exists; Ben Ortiz and Chloe Park are unchanged."""
    contacts = app_state(phone, "contacts", CONTACTS_DEFAULT)
    ana = contact(contacts, "Ana Silva")
    ok = report(ana is not None, "Ana Silva exists")
    if ana is not None:
        ok &= report(ana["phone"] == "555-0142", "her phone is 555-0142: " + repr(ana["phone"]))
    for name, phone_number in (("Ben Ortiz", "555-0100"), ("Chloe Park", "555-0199")):
        other = contact(contacts, name)
        ok &= report(other is not None and other["phone"] == phone_number, name + " unchanged")
    return ok


def check_ben_phone(phone: dict[str, Any]) -> bool:
    """Ben Ortiz's phone is 555-0123; Chloe Park keeps 555-0199."""
    contacts = app_state(phone, "contacts", CONTACTS_DEFAULT)
    ben, chloe = contact(contacts, "Ben Ortiz"), contact(contacts, "Chloe Park")
    ok = report(ben is not None and ben["phone"] == "555-0123", "Ben Ortiz's phone is 555-0123")
    return ok & report(
        chloe is not None and chloe["phone"] == "555-0199", "Chloe Park keeps 555-0199"
    )


def check_chloe_favourite(phone: dict[str, Any]) -> bool:
    """Chloe Park is a favourite and Ben Ortiz is not."""
    contacts = app_state(phone, "contacts", CONTACTS_DEFAULT)
    ben, chloe = contact(contacts, "Ben Ortiz"), contact(contacts, "Chloe Park")
    ok = report(chloe is not None and bool(chloe["favourite"]), "Chloe Park is a favourite")
    return ok & report(ben is not None and not ben["favourite"], "Ben Ortiz is not a favourite")


# -- settings --------------------------------------------------------------------------------


def check_bluetooth_on(phone: dict[str, Any]) -> bool:
    """Bluetooth is on."""
    settings = app_state(phone, "settings", SETTINGS_DEFAULT)
    return report(bool(settings["bluetooth"]), "Bluetooth is on")


def check_font_large(phone: dict[str, Any]) -> bool:
    """The font size is Large and the dark theme is still off."""
    settings = app_state(phone, "settings", SETTINGS_DEFAULT)
    ok = report(settings["font"] == "large", "font size is large: " + str(settings["font"]))
    return ok & report(not settings["dark"], "dark theme unchanged (off)")


def check_wifi_off_dark_on(phone: dict[str, Any]) -> bool:
    """Wi-Fi is off and the dark theme is on."""
    settings = app_state(phone, "settings", SETTINGS_DEFAULT)
    ok = report(not settings["wifi"], "Wi-Fi is off")
    return ok & report(bool(settings["dark"]), "dark theme is on")


# -- shop ------------------------------------------------------------------------------------


def check_blue_mug_order(phone: dict[str, Any]) -> bool:
    """One order of exactly one Blue mug, to 12 Harbour Street."""
    shop = app_state(phone, "shop", SHOP_DEFAULT)
    orders = shop["orders"]
    ok = report(len(orders) == 1, "exactly one order: " + str(len(orders)))
    if orders:
        items = orders[0]["items"]
        ok &= report(
            items == [{"sku": "mug-blue", "qty": 1}], "it holds one Blue mug: " + str(items)
        )
        ok &= report(orders[0]["address"] == "12 Harbour Street", "delivered to 12 Harbour Street")
    return ok


def check_honey_and_tray(phone: dict[str, Any]) -> bool:
    """The cart holds one Honey jar and one Bamboo tray and nothing else; nothing is ordered."""
    shop = app_state(phone, "shop", SHOP_DEFAULT)
    cart = sorted((line["sku"], line["qty"]) for line in shop["cart"])
    ok = report(cart == [("honey", 1), ("tray", 1)], "cart is one honey and one tray: " + str(cart))
    return ok & report(not shop["orders"], "nothing was ordered")


# -- the tasks -------------------------------------------------------------------------------


def _open_notes(reason: str = "Open the Notes app.") -> list[Any]:
    return [open_app(reason, "Notes")]


def all_tasks() -> list[MobileTask]:
    """Every task of the suite, in a fixed order."""
    return [
        MobileTask(
            _task(
                "notes-create-groceries",
                "In the Notes app, create a note titled 'Groceries' whose text is "
                "'milk, eggs, bread'.",
                ["notes"],
            ),
            {"notes": {"notes": [THREE_NOTES["notes"][2] | {"id": 1}], "next_id": 2}},
            check_groceries,
            [
                MobilePolicy(
                    "careful",
                    CAREFUL,
                    [
                        *_open_notes(),
                        tap("Start a new note.", "new-note"),
                        type_into("Type the title.", "title", "Groceries"),
                        type_into("Type the note's text.", "body", "milk, eggs, bread"),
                        tap("Save the note.", "save"),
                        done("The Groceries note is saved and listed."),
                    ],
                    "PASS",
                    "creates and saves the note",
                    final_response="I created the note Groceries with milk, eggs, bread.",
                ),
                MobilePolicy(
                    "unsaved",
                    HASTY,
                    [
                        *_open_notes(),
                        tap("Start a new note.", "new-note"),
                        type_into("Type the title.", "title", "Groceries"),
                        type_into("Type the note's text.", "body", "milk, eggs, bread"),
                        done("The note shows the right title and text, so I am done."),
                    ],
                    "FAIL",
                    "types title and text but never saves: the editor looks right",
                    hard_case="last-screen-misleads",
                    final_response="Done: the Groceries note has milk, eggs, bread.",
                ),
            ],
        ),
        MobileTask(
            _task(
                "notes-delete-old-ideas",
                "Delete the note 'Old ideas' in the Notes app and keep the other notes.",
                ["notes"],
            ),
            {"notes": THREE_NOTES},
            check_old_ideas_deleted,
            [
                MobilePolicy(
                    "steady",
                    STEADY,
                    [
                        *_open_notes(),
                        tap("Open the note Old ideas.", "Old ideas", "text"),
                        tap("Delete it.", "delete"),
                        done("Old ideas is no longer listed."),
                    ],
                    "PASS",
                    "opens Old ideas and deletes it",
                ),
                MobilePolicy(
                    "wrong-note",
                    HASTY,
                    [
                        *_open_notes(),
                        tap("Open the first note I see.", "Trip packing list", "text"),
                        tap("Delete it.", "delete"),
                        done("The note is deleted."),
                    ],
                    "FAIL",
                    "deletes Trip packing list instead",
                ),
            ],
        ),
        MobileTask(
            _task(
                "notes-pin-trip",
                "Pin the note 'Trip packing list' in the Notes app, then go back to the home "
                "screen.",
                ["notes"],
            ),
            {"notes": THREE_NOTES},
            check_trip_pinned,
            [
                MobilePolicy(
                    "careful",
                    CAREFUL,
                    [
                        *_open_notes(),
                        tap("Open Trip packing list.", "Trip packing list", "text"),
                        tap("Pin it.", "pin"),
                        key("The button now says Unpin: pinned. Go home.", "navigate_home"),
                        done("Pinned, and back on the home screen."),
                    ],
                    "PASS",
                    "pins the note, then goes home: the pin shows only mid-run",
                    hard_case="success-mid-trajectory",
                ),
                MobilePolicy(
                    "double-tap",
                    STEADY,
                    [
                        *_open_notes(),
                        tap("Open Trip packing list.", "Trip packing list", "text"),
                        tap("Pin it.", "pin"),
                        tap("Make sure it is pinned.", "pin"),
                        key("Go home.", "navigate_home"),
                        done("The note is pinned."),
                    ],
                    "FAIL",
                    "pins, then taps again and unpins; ends on the home screen",
                    hard_case="success-mid-trajectory",
                ),
            ],
        ),
        MobileTask(
            _task(
                "contacts-add-ana",
                "Add a contact named Ana Silva with the phone number 555-0142.",
                ["contacts"],
            ),
            {"contacts": TWO_CONTACTS},
            check_ana_added,
            [
                MobilePolicy(
                    "steady",
                    STEADY,
                    [
                        open_app("Open Contacts.", "Contacts"),
                        tap("Add a new contact.", "add"),
                        type_into("Name.", "name", "Ana Silva"),
                        type_into("Phone number.", "phone", "555-0142"),
                        tap("Save.", "save"),
                        done("Ana Silva is saved with 555-0142."),
                    ],
                    "PASS",
                    "adds the contact",
                ),
                MobilePolicy(
                    "typo",
                    HASTY,
                    [
                        open_app("Open Contacts.", "Contacts"),
                        tap("Add a new contact.", "add"),
                        type_into("Name.", "name", "Ana Silva"),
                        type_into("Phone number.", "phone", "555-0124"),
                        tap("Save.", "save"),
                        done("Ana Silva is saved."),
                    ],
                    "FAIL",
                    "saves the contact with two digits swapped (555-0124)",
                    hard_case="last-screen-misleads",
                ),
            ],
        ),
        MobileTask(
            _task(
                "contacts-edit-ben-phone",
                "Change Ben Ortiz's phone number to 555-0123.",
                ["contacts"],
            ),
            {"contacts": TWO_CONTACTS},
            check_ben_phone,
            [
                MobilePolicy(
                    "careful",
                    CAREFUL,
                    [
                        open_app("Open Contacts.", "Contacts"),
                        tap("Open Ben Ortiz.", "Ben Ortiz", "text"),
                        tap("Edit the contact.", "edit"),
                        type_into("Replace the number.", "phone", "555-0123", clear=True),
                        tap("Save.", "save"),
                        done("Ben's number is now 555-0123."),
                    ],
                    "PASS",
                    "edits Ben's number",
                ),
                MobilePolicy(
                    "wrong-contact",
                    HASTY,
                    [
                        open_app("Open Contacts.", "Contacts"),
                        tap("Open the contact.", "Chloe Park", "text"),
                        tap("Edit the contact.", "edit"),
                        type_into("Replace the number.", "phone", "555-0123", clear=True),
                        tap("Save.", "save"),
                        done("The number is now 555-0123."),
                    ],
                    "FAIL",
                    "changes Chloe Park's number instead: the last screen shows 555-0123",
                    hard_case="last-screen-misleads",
                ),
            ],
        ),
        MobileTask(
            _task(
                "contacts-favourite-chloe",
                "Mark Chloe Park as a favourite contact, then return to the home screen.",
                ["contacts"],
            ),
            {"contacts": TWO_CONTACTS},
            check_chloe_favourite,
            [
                MobilePolicy(
                    "steady",
                    STEADY,
                    [
                        open_app("Open Contacts.", "Contacts"),
                        tap("Open Chloe Park.", "Chloe Park", "text"),
                        tap("Add her to favourites.", "favourite"),
                        key("Done; go home.", "navigate_home"),
                        done("Chloe Park is a favourite."),
                    ],
                    "PASS",
                    "marks Chloe, then goes home: the star shows only mid-run",
                    hard_case="success-mid-trajectory",
                ),
                MobilePolicy(
                    "wrong-star",
                    HASTY,
                    [
                        open_app("Open Contacts.", "Contacts"),
                        tap("Open the contact.", "Ben Ortiz", "text"),
                        tap("Add to favourites.", "favourite"),
                        key("Go home.", "navigate_home"),
                        done("The contact is a favourite."),
                    ],
                    "FAIL",
                    "stars Ben Ortiz instead, then goes home",
                    hard_case="change-not-on-last-screen",
                ),
            ],
        ),
        MobileTask(
            _task(
                "settings-bluetooth-on",
                "Turn Bluetooth on, then go back to the home screen.",
                ["settings"],
            ),
            {"settings": SETTINGS_DEFAULT},
            check_bluetooth_on,
            [
                MobilePolicy(
                    "careful",
                    CAREFUL,
                    [
                        open_app("Open Settings.", "Settings"),
                        tap("Switch Bluetooth on.", "bluetooth"),
                        key("It is on; go home.", "navigate_home"),
                        done("Bluetooth is on."),
                    ],
                    "PASS",
                    "switches Bluetooth on, then goes home",
                    hard_case="success-mid-trajectory",
                ),
                MobilePolicy(
                    "airplane",
                    STEADY,
                    [
                        open_app("Open Settings.", "Settings"),
                        tap("Switch Bluetooth on.", "bluetooth"),
                        tap("Also tidy up the network settings.", "airplane"),
                        key("Go home.", "navigate_home"),
                        done("Bluetooth is on."),
                    ],
                    "FAIL",
                    "switches Bluetooth on, then airplane mode, which turns it off again",
                    hard_case="change-not-on-last-screen",
                ),
            ],
        ),
        MobileTask(
            _task(
                "settings-font-large",
                "Set the font size to Large in Settings > Display.",
                ["settings"],
            ),
            {"settings": SETTINGS_DEFAULT},
            check_font_large,
            [
                MobilePolicy(
                    "steady",
                    STEADY,
                    [
                        open_app("Open Settings.", "Settings"),
                        tap("Open Display.", "display"),
                        tap("Choose Large.", "Large", "text"),
                        done("The font size is Large."),
                    ],
                    "PASS",
                    "selects Large",
                ),
                MobilePolicy(
                    "dark-too",
                    HASTY,
                    [
                        open_app("Open Settings.", "Settings"),
                        tap("Open Display.", "display"),
                        tap("Choose Large.", "Large", "text"),
                        key("Back to the main list.", "navigate_back"),
                        tap("Dark text is easier to read, switch the theme too.", "dark"),
                        done("The font size is Large."),
                    ],
                    "FAIL",
                    "selects Large but also switches the dark theme on",
                ),
            ],
        ),
        MobileTask(
            _task(
                "settings-wifi-off-dark-on",
                "Turn Wi-Fi off and turn the dark theme on.",
                ["settings"],
            ),
            {"settings": SETTINGS_DEFAULT},
            check_wifi_off_dark_on,
            [
                MobilePolicy(
                    "careful",
                    CAREFUL,
                    [
                        open_app("Open Settings.", "Settings"),
                        tap("Switch Wi-Fi off.", "wifi"),
                        tap("Switch the dark theme on.", "dark"),
                        done("Wi-Fi is off and the theme is dark."),
                    ],
                    "PASS",
                    "does both",
                ),
                MobilePolicy(
                    "half",
                    STEADY,
                    [
                        open_app("Open Settings.", "Settings"),
                        tap("Switch the dark theme on.", "dark"),
                        done("The theme is dark and the settings are as asked."),
                    ],
                    "FAIL",
                    "switches the theme only; the screen changed visibly, Wi-Fi is still on",
                    hard_case="last-screen-misleads",
                ),
            ],
        ),
        MobileTask(
            _task(
                "shop-order-blue-mug",
                "In the Shop app, order one Blue mug to be delivered to 12 Harbour Street.",
                ["shop"],
            ),
            {"shop": SHOP_DEFAULT},
            check_blue_mug_order,
            [
                MobilePolicy(
                    "steady",
                    STEADY,
                    [
                        open_app("Open the Shop.", "Shop"),
                        tap("Add the Blue mug.", "add-mug-blue"),
                        tap("Go to the cart.", "cart"),
                        tap("Check out.", "checkout"),
                        type_into("Delivery address.", "address", "12 Harbour Street"),
                        tap("Place the order.", "place-order"),
                        done("The order is placed."),
                    ],
                    "PASS",
                    "orders one mug",
                ),
                MobilePolicy(
                    "two-mugs",
                    HASTY,
                    [
                        open_app("Open the Shop.", "Shop"),
                        tap("Add the Blue mug.", "add-mug-blue"),
                        tap(
                            "Add the Blue mug (the first tap may not have registered).",
                            "add-mug-blue",
                        ),
                        tap("Go to the cart.", "cart"),
                        tap("Check out.", "checkout"),
                        type_into("Delivery address.", "address", "12 Harbour Street"),
                        tap("Place the order.", "place-order"),
                        done("The order is placed."),
                    ],
                    "FAIL",
                    "orders two mugs; the confirmation screen does not show quantities",
                    hard_case="change-not-on-last-screen",
                ),
            ],
        ),
        MobileTask(
            _task(
                "shop-cart-honey-tray",
                "Put one Honey jar and one Bamboo tray in the Shop cart. Do not place an order.",
                ["shop"],
            ),
            {"shop": SHOP_DEFAULT},
            check_honey_and_tray,
            [
                MobilePolicy(
                    "careful",
                    CAREFUL,
                    [
                        open_app("Open the Shop.", "Shop"),
                        scroll("Both items are further down the list.", "down"),
                        tap("Add the Honey jar.", "add-honey"),
                        tap("Add the Bamboo tray.", "add-tray"),
                        done("Both are in the cart."),
                    ],
                    "PASS",
                    "scrolls and adds both",
                ),
                MobilePolicy(
                    "neighbour",
                    STEADY,
                    [
                        open_app("Open the Shop.", "Shop"),
                        scroll("Both items are further down the list.", "down"),
                        tap("Add the Honey jar.", "add-honey"),
                        tap("Add the Bamboo tray.", "add-towel"),
                        done("Both are in the cart: it says Cart (2)."),
                    ],
                    "FAIL",
                    "adds the Tea towel instead of the tray; the cart badge says 2 as expected",
                    hard_case="last-screen-misleads",
                ),
            ],
        ),
    ]
