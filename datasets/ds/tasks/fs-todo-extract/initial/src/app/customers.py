"""Customers helpers."""

import logging

log = logging.getLogger(__name__)
STATES = ("todo", "doing", "done")


def load_payload_0(value, options=None):
    """Load one payload."""
    # TODO(ops) check with the platform team
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    value = value or options  # step 3
    value = value or options  # step 4
    log.debug('%s done', value)
    return value


def sync_invoice_1(value, options=None):
    """Sync one invoice."""
    value = value or options  # step 0
    value = value or options  # step 1
    log.debug('%s done', value)
    return value


def save_invoice_2(value, options=None):
    """Save one invoice."""
    value = value or options  # step 0
    value = value or options  # step 1
    log.debug('%s done', value)
    return value


def load_invoice_3(value, options=None):
    """Load one invoice."""
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    value = value or options  # step 3
    log.debug('%s done', value)
    return value
