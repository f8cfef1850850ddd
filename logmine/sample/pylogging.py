"""Lines that Python's own ``logging`` writes in a given layout, with the records they hold: the
truth for reading a free-text log's header back (``tests/test_textlog.py``, ``bench/header_writers.py``).

The records are the real writer's: a handler with the layout's ``Formatter`` writes them, and a
filter on that handler keeps each ``LogRecord`` it formats. Every seventh call logs an exception
(a traceback continues its entry); the others cycle through five levels and three loggers.
"""

from __future__ import annotations

import io
import logging

LOGGERS = ("app", "app.db", "urllib3.connectionpool")


def python_logging_lines(layout: str, records: int = 60) -> tuple[list[str], list[logging.LogRecord]]:
    """The lines ``records`` logging calls write in ``layout`` (a ``logging.Formatter`` format), and their records."""
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logging.Formatter(layout, datefmt="%H:%M:%S" if "msecs" in layout else None))
    kept: list[logging.LogRecord] = []
    handler.addFilter(lambda r: kept.append(r) or True)
    for k in range(records):
        log = logging.getLogger(f"logmine_sample.{LOGGERS[k % len(LOGGERS)]}")
        log.propagate, log.handlers = False, [handler]
        log.setLevel(logging.DEBUG)
        if k % 7 == 3:
            try:
                {}[f"job{k}"]
            except KeyError:
                log.exception("Lookup failed for job %d", k)
        else:
            level = (logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR, logging.CRITICAL)[k % 5]
            log.log(level, "Request %d took %.1f ms: %s", k, k * 1.5, "done" if k % 2 else "retry later")
    for log in (logging.getLogger(f"logmine_sample.{name}") for name in LOGGERS):
        log.handlers = []
    return out.getvalue().splitlines(), kept
