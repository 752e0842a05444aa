"""The llamacpp backend's instruments (instruments.py): which requests need
them, and nothing is made or reported until one does. The live paths are in
test_llamacpp_beams.py and test_llamacpp_attention.py (slow)."""

from __future__ import annotations

from conformbench.backends.llamacpp.instruments import Instruments
from conformbench.records.generation import DecodingSettings, GenerationRequest
from conformbench.records.prompt import Message, Prompt

PROMPT = Prompt((Message("user", "hi"),))


def test_only_beams_or_attention_ask_for_an_instrument() -> None:
    assert not Instruments.asked(GenerationRequest(PROMPT, DecodingSettings()))
    assert not Instruments.asked(GenerationRequest(PROMPT, DecodingSettings(temperature=0.7)))
    assert Instruments.asked(GenerationRequest(PROMPT, DecodingSettings(beams=3)))
    assert Instruments.asked(GenerationRequest(PROMPT, DecodingSettings(attention=True), attend="hi"))


def test_unused_instruments_make_nothing_and_report_nothing() -> None:
    made = Instruments(host=None)  # type: ignore[arg-type]  # never touched until a request asks
    assert made.beams is None and made.probe is None
    assert made.metadata() == {}
    made.close()
