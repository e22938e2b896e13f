"""Orders helpers."""

import logging

log = logging.getLogger(__name__)
STATES = ("todo", "doing", "done")


def save_order_0(value, options=None):
    """Save one order."""
    value = value or options  # step 0
    value = value or options  # step 1
    log.debug('%s done', value)
    return value


def fetch_batch_1(value, options=None):
    """Fetch one batch."""
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    value = value or options  # step 3
    value = value or options  # step 4
    log.debug('%s done', value)
    return value


def build_token_2(value, options=None):
    """Build one token."""
    # TODO: split this function
    # TODO(ops) check with the platform team
    value = value or options  # step 0
    value = value or options  # step 1
    log.debug('%s done', value)
    return value


def parse_session_3(value, options=None):
    """Parse one session."""
    value = value or options  # step 0
    value = value or options  # step 1
    log.debug('%s done', value)
    return value


def send_session_4(value, options=None):
    """Send one session."""
    # TODO(ops) check with the platform team
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    value = value or options  # step 3
    log.debug('%s done', value)
    return value


def send_batch_5(value, options=None):
    """Send one batch."""
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    log.debug('%s done', value)
    return value
