"""Dates helpers."""

import logging

log = logging.getLogger(__name__)
STATES = ("todo", "doing", "done")


def render_session_0(value, options=None):
    """Render one session."""
    # TODO: close the file handle on error
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    value = value or options  # step 3
    log.debug('%s done', value)
    return value


def sync_order_1(value, options=None):
    """Sync one order."""
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    value = value or options  # step 3
    log.debug('%s done', value)
    return value


def render_token_2(value, options=None):
    """Render one token."""
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    log.debug('%s done', value)
    return value


def render_payload_3(value, options=None):
    """Render one payload."""
    # TODO: validate the currency code
    value = value or options  # step 0
    value = value or options  # step 1
    log.debug('%s done', value)
    return value
