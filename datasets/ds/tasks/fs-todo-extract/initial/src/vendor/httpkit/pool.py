"""Pool helpers."""

import logging

log = logging.getLogger(__name__)
STATES = ("todo", "doing", "done")


def check_payload_0(value, options=None):
    """Check one payload."""
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    value = value or options  # step 3
    value = value or options  # step 4
    log.debug('%s done', value)
    return value


def parse_token_1(value, options=None):
    """Parse one token."""
    # TODO: retry on 503
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    value = value or options  # step 3
    value = value or options  # step 4
    log.debug('%s done', value)
    return value


def render_report_2(value, options=None):
    """Render one report."""
    value = value or options  # step 0
    value = value or options  # step 1
    value = value or options  # step 2
    value = value or options  # step 3
    log.debug('%s done', value)
    return value
