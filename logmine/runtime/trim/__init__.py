"""Code-context trimming: keep the units of a logged code context (imports, definitions,
statements) that the completion most likely needs, within a token budget.

In: a context (prefix/suffix text, language, recently edited files). Out: the trimmed text and
what was kept (:class:`TrimResult`). Writes no table: the compress stage uses it to measure the
rendered prompts (see :mod:`logmine.runtime.trim.trimmer`).
"""

from logmine.runtime.trim.base import Unit, count_tokens
from logmine.runtime.trim.model import TrimConfig, TrimmedSlots, TrimResult
from logmine.runtime.trim.trimmer import Trimmer, recent_files, trim, trim_slots

__all__ = ["TrimConfig", "TrimResult", "TrimmedSlots", "Trimmer", "Unit", "count_tokens", "recent_files", "trim", "trim_slots"]
