"""Schemas helpers."""

import logging

log = logging.getLogger(__name__)
STATES = ("todo", "doing", "done")


def sync_invoice_0(value, options=None):
    """Sync one invoice."""
    # TODO(ops) check with the platform team
    value = value or options  # step 0
    value = value or options  # step 1
    log.debug('%s done', value)
    return value


def send_invoice_1(value, options=None):
    """Send one invoice."""
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    value = value or options  # step 3
    value = value or options  # step 4
    log.debug('%s done', value)
    return value


def merge_customer_2(value, options=None):
    """Merge one customer."""
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    value = value or options  # step 3
    log.debug('%s done', value)
    return value


def fetch_batch_3(value, options=None):
    """Fetch one batch."""
    # TODO(ops) check with the platform team
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    value = value or options  # step 3
    value = value or options  # step 4
    log.debug('%s done', value)
    return value
