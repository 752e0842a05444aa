"""The loop stop: end a generation that has fallen into a degenerate loop
(SmolLM2 writes ``"type": "json"`` nested forever, or one line again and
again) instead of spending the rest of the token budget on it.

A loop is the text's tail repeating one unit exactly: for some period p (in
characters, at most ``max_period``) the last ``span`` characters equal the
``span`` characters p earlier, where ``span`` is at least ``min_span`` and
at least ``min_repeats`` periods. The check is a few hundred slice compares
of the tail, cheap enough to run every few tokens.

The rule is conservative on purpose: it must never cut an answer the model
would have finished within its budget. The thresholds were checked on
generations run both ways (docs/concodeeval.md, "The loop stop"): every
sample that ended on its own without the stop is identical with it. Over
every shipped and regenerated replay (6,607 samples that ended on their
own), the longest exactly periodic tail of 8 or more repeats any of them
ever had was 284 characters (an XML sample repeating one indented line),
the next longest 31; the 350-character span sits above both.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_LOOP_RULE", "LoopRule", "loop_check_due", "loop_period"]


@dataclass(frozen=True)
class LoopRule:
    #: the repeated tail must cover at least this many characters ...
    min_span: int = 350
    #: ... and at least this many whole periods
    min_repeats: int = 8
    #: longest repeated unit considered, in characters
    max_period: int = 256
    #: run the check every this many generated tokens
    check_every: int = 16


DEFAULT_LOOP_RULE = LoopRule()


def loop_period(text: str, rule: LoopRule = DEFAULT_LOOP_RULE) -> int | None:
    """The period of the loop the text ends in, or None when it ends in none."""
    n = len(text)
    for period in range(1, rule.max_period + 1):
        span = max(rule.min_span, rule.min_repeats * period)
        if span + period > n:
            if rule.min_repeats * period > n:
                break  # longer periods need even more text
            continue
        if text[n - span :] == text[n - span - period : n - period]:
            return period
    return None


def loop_check_due(n_tokens: int, budget: int, rule: LoopRule = DEFAULT_LOOP_RULE) -> bool:
    """Whether the decoder checks for a loop after ``n_tokens``: every
    ``check_every`` tokens, and on the last token of the budget, so that an
    answer whose budget runs out inside a loop is recorded as looped, not as
    one the budget cut short (the text is the same either way)."""
    return n_tokens % rule.check_every == 0 or n_tokens >= budget
