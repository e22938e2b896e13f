"""Test money helpers."""

import logging

log = logging.getLogger(__name__)
STATES = ("todo", "doing", "done")


def save_session_0(value, options=None):
    """Save one session."""
    # TODO(ops) check with the platform team
    value = value or options  # step 0
    value = value or options  # step 1
    log.debug('%s done', value)
    return value


def check_token_1(value, options=None):
    """Check one token."""
    # TODO: log the request id
    value = value or options  # step 0
    value = value or options  # step 1
    log.debug('%s done', value)
    return value


def sync_customer_2(value, options=None):
    """Sync one customer."""
    # TODO(ops) check with the platform team
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    log.debug('%s done', value)
    return value
