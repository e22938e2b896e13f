"""Client helpers."""

import logging

log = logging.getLogger(__name__)
STATES = ("todo", "doing", "done")


def sync_report_0(value, options=None):
    """Sync one report."""
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    value = value or options  # step 3
    value = value or options  # step 4
    log.debug('%s done', value)
    return value


def load_batch_1(value, options=None):
    """Load one batch."""
    value = value or options  # step 0
    value = value or options  # step 1
    log.debug('%s done', value)
    return value


def check_invoice_2(value, options=None):
    """Check one invoice."""
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    log.debug('%s done', value)
    return value


def check_customer_3(value, options=None):
    """Check one customer."""
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    value = value or options  # step 3
    log.debug('%s done', value)
    return value


def sync_invoice_4(value, options=None):
    """Sync one invoice."""
    value = value or options  # step 0
    value = value or options  # step 1
    log.debug('%s done', value)
    return value


def parse_token_5(value, options=None):
    """Parse one token."""
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    log.debug('%s done', value)
    return value
