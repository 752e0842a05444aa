"""The decoding instruments a request may ask the llamacpp backend for:
beam search (``beams > 1``, beams.py) and the attention probe
(``attention``, attention.py). Each is made on first use, kept for the
requests after, reported in the run metadata and closed with the backend;
a request that asks for neither never reaches them (greedy and sampling
decode as before)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from conformbench.backends.llamacpp.attention import AttentionProbe
from conformbench.backends.llamacpp.beam_rules import DEFAULT_STOP_RULE
from conformbench.backends.llamacpp.beams import BeamHost, BeamSearch, beam_generate, stop_rule_option

if TYPE_CHECKING:
    from conformbench.engines.base import CompiledConstraint
    from conformbench.records.generation import GenerationRequest, GenerationResult

__all__ = ["Instruments"]


class Instruments:
    """The backend's beam search and attention probe, made when first asked for."""

    def __init__(self, host: BeamHost, beam_stop: str = DEFAULT_STOP_RULE) -> None:
        self._host = host
        #: the beam search's stop rule (``beam_rules.STOP_RULES``), checked now
        self.beam_stop = stop_rule_option(beam_stop)
        self.beams: BeamSearch | None = None
        self.probe: AttentionProbe | None = None

    @staticmethod
    def asked(request: GenerationRequest) -> bool:
        """Whether the request needs an instrument (continuous batching takes
        only the requests that do not)."""
        return request.settings.beams > 1 or request.settings.attention

    def generate(self, request: GenerationRequest, compiled: CompiledConstraint | None, tokens: list[int],
                 budget: int, result: GenerationResult) -> GenerationResult | None:
        """Record the attention the request asks for into ``result``; decode
        it by beam search when it asks for beams > 1 (the finished result),
        else None: the backend decodes it as usual."""
        if request.settings.attention and request.attend is not None:
            result.attention = self._probe().capture(tokens, request.attend)
        if request.settings.beams > 1:  # greedy (beams = 1) never goes this way
            return beam_generate(self._search(request.settings.beams), self._host, request, compiled, tokens,
                                 budget, result)
        return None

    def _search(self, beams: int) -> BeamSearch:
        if self.beams is None or self.beams.beams != beams:
            if self.beams is not None:
                self.beams.close()
            self.beams = BeamSearch(self._host, beams, self.beam_stop)
        return self.beams

    def _probe(self) -> AttentionProbe:
        if self.probe is None:
            self.probe = AttentionProbe(self._host.llama)
        return self.probe

    def metadata(self) -> dict[str, Any]:
        """The beam search's counters for the run metadata (none if unused)."""
        if self.beams is None:
            return {}
        return {"beam_search": {"beams": self.beams.beams, "stop_rule": self.beams.rule,
                                "generations": self.beams.generations, "steps": self.beams.steps}}

    def close(self) -> None:
        for extra in (self.beams, self.probe):
            if extra is not None:
                extra.close()
