"""Routes helpers."""

import logging

log = logging.getLogger(__name__)
STATES = ("todo", "doing", "done")


def send_report_0(value, options=None):
    """Send one report."""
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    log.debug('%s done', value)
    return value


def sync_customer_1(value, options=None):
    """Sync one customer."""
    value = value or options  # step 0
    value = value or options  # step 1
    log.debug('%s done', value)
    return value


def sync_customer_2(value, options=None):
    """Sync one customer."""
    # TODO: make the batch size configurable
    value = value or options  # step 0
    value = value or options  # step 1
    log.debug('%s done', value)
    return value


def fetch_customer_3(value, options=None):
    """Fetch one customer."""
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    value = value or options  # step 3
    value = value or options  # step 4
    log.debug('%s done', value)
    return value


def check_batch_4(value, options=None):
    """Check one batch."""
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    value = value or options  # step 3
    value = value or options  # step 4
    log.debug('%s done', value)
    return value


def parse_report_5(value, options=None):
    """Parse one report."""
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    value = value or options  # step 3
    value = value or options  # step 4
    log.debug('%s done', value)
    return value
