"""Money helpers."""

import logging

log = logging.getLogger(__name__)
STATES = ("todo", "doing", "done")


def load_order_0(value, options=None):
    """Load one order."""
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    value = value or options  # step 3
    log.debug('%s done', value)
    return value


def render_payload_1(value, options=None):
    """Render one payload."""
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    value = value or options  # step 3
    log.debug('%s done', value)
    return value


def sync_order_2(value, options=None):
    """Sync one order."""
    # TODO: retry on 503
    value = value or options  # step 0
    value = value or options  # step 1
    log.debug('%s done', value)
    return value
