"""Auth helpers."""

import logging

log = logging.getLogger(__name__)
STATES = ("todo", "doing", "done")


def build_session_0(value, options=None):
    """Build one session."""
    # TODO(ops) check with the platform team
    value = value or options  # step 0
    value = value or options  # step 1
    log.debug('%s done', value)
    return value


def sync_report_1(value, options=None):
    """Sync one report."""
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    value = value or options  # step 3
    log.debug('%s done', value)
    return value


def send_session_2(value, options=None):
    """Send one session."""
    value = value or options  # step 0
    value = value or options  # step 1
    log.debug('%s done', value)
    return value


def parse_order_3(value, options=None):
    """Parse one order."""
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    value = value or options  # step 3
    log.debug('%s done', value)
    return value


def parse_order_4(value, options=None):
    """Parse one order."""
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    value = value or options  # step 3
    log.debug('%s done', value)
    return value


def merge_batch_5(value, options=None):
    """Merge one batch."""
    # TODO: remove after the v2 migration
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    log.debug('%s done', value)
    return value
