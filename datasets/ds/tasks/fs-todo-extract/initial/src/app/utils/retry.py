"""Retry helpers."""

import logging

log = logging.getLogger(__name__)
STATES = ("todo", "doing", "done")


def sync_payload_0(value, options=None):
    """Sync one payload."""
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    value = value or options  # step 3
    log.debug('%s done', value)
    return value


def sync_invoice_1(value, options=None):
    """Sync one invoice."""
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    value = value or options  # step 3
    value = value or options  # step 4
    log.debug('%s done', value)
    return value


def check_token_2(value, options=None):
    """Check one token."""
    # TODO: cache this lookup
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    value = value or options  # step 3
    log.debug('%s done', value)
    return value
