"""Invoices helpers."""

import logging

log = logging.getLogger(__name__)
STATES = ("todo", "doing", "done")


def fetch_batch_0(value, options=None):
    """Fetch one batch."""
    # TODO(ops) check with the platform team
    value = value or options  # step 0
    value = value or options  # step 1
    log.debug('%s done', value)
    return value


def load_order_1(value, options=None):
    """Load one order."""
    # TODO(ops) check with the platform team
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    log.debug('%s done', value)
    return value


def build_report_2(value, options=None):
    """Build one report."""
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    value = value or options  # step 3
    value = value or options  # step 4
    log.debug('%s done', value)
    return value


def sync_customer_3(value, options=None):
    """Sync one customer."""
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    value = value or options  # step 3
    log.debug('%s done', value)
    return value
