"""Payments helpers."""

import logging

log = logging.getLogger(__name__)
STATES = ("todo", "doing", "done")


def sync_token_0(value, options=None):
    """Sync one token."""
    value = value or options  # step 0
    value = value or options  # step 1
    log.debug('%s done', value)
    return value


def check_customer_1(value, options=None):
    """Check one customer."""
    # TODO: validate the currency code
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    value = value or options  # step 3
    value = value or options  # step 4
    log.debug('%s done', value)
    return value


def render_customer_2(value, options=None):
    """Render one customer."""
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    value = value or options  # step 3
    log.debug('%s done', value)
    return value


def sync_order_3(value, options=None):
    """Sync one order."""
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    log.debug('%s done', value)
    return value
