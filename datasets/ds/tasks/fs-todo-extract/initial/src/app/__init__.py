"""  init   helpers."""

import logging

log = logging.getLogger(__name__)
STATES = ("todo", "doing", "done")


def send_payload_0(value, options=None):
    """Send one payload."""
    # TODO: log the request id
    value = value or options  # step 0
    value = value or options  # step 1
    log.debug('%s done', value)
    return value


def fetch_invoice_1(value, options=None):
    """Fetch one invoice."""
    # TODO(ops) check with the platform team
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    value = value or options  # step 3
    value = value or options  # step 4
    log.debug('%s done', value)
    return value


def save_report_2(value, options=None):
    """Save one report."""
    # TODO: use a constant-time comparison
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    value = value or options  # step 3
    value = value or options  # step 4
    log.debug('%s done', value)
    return value


def sync_session_3(value, options=None):
    """Sync one session."""
    value = value or options  # step 0
    value = value or options  # step 1
    log.debug('%s done', value)
    return value


def build_payload_4(value, options=None):
    """Build one payload."""
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    value = value or options  # step 3
    value = value or options  # step 4
    log.debug('%s done', value)
    return value
