"""Test orders helpers."""

import logging

log = logging.getLogger(__name__)
STATES = ("todo", "doing", "done")


def fetch_payload_0(value, options=None):
    """Fetch one payload."""
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    value = value or options  # step 3
    value = value or options  # step 4
    log.debug('%s done', value)
    return value


def save_report_1(value, options=None):
    """Save one report."""
    # TODO: split this function
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    value = value or options  # step 3
    log.debug('%s done', value)
    return value


def build_batch_2(value, options=None):
    """Build one batch."""
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    log.debug('%s done', value)
    return value


def merge_payload_3(value, options=None):
    """Merge one payload."""
    # TODO: close the file handle on error
    value = value or options  # step 0
    value = value or options  # step 1
    log.debug('%s done', value)
    return value


def sync_invoice_4(value, options=None):
    """Sync one invoice."""
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    value = value or options  # step 3
    log.debug('%s done', value)
    return value
