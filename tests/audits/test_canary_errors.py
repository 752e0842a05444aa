"""The canary's account of a server's error: the message of a JSON error
body, whole, never its first characters cut mid-JSON."""

from __future__ import annotations

from conformbench.audits.canary import _judge, canary_constant, server_error_text
from conformbench.records.generation import GenerationResult

OPENAI = ('HTTP 400: {"error": {"message": "Invalid schema for response_format \'canary\': In context=(), '
          '\'additionalProperties\' is required to be supplied and to be false.", "type": '
          '"invalid_request_error", "param": "response_format", "code": null}}')


def test_a_json_error_body_gives_its_message_whole() -> None:
    assert server_error_text(OPENAI) == (
        "HTTP 400: Invalid schema for response_format 'canary': In context=(), 'additionalProperties' "
        "is required to be supplied and to be false.")


def test_a_body_cut_by_the_backend_still_gives_its_message() -> None:
    cut = 'HTTP 422: {"detail":[{"type":"literal_error","loc":["body","response_format"],"msg":"Input should ' \
          'be \'text\' or \'json_object\'","input":"json_sch'
    assert server_error_text(cut) == "HTTP 422: Input should be 'text' or 'json_object'"


def test_plain_text_is_cut_at_a_word_with_an_ellipsis() -> None:
    text = server_error_text("connection refused " * 40)
    assert text.endswith(" …") and len(text) <= 245 and not text[:-2].endswith("conn")


def test_the_canary_verdict_quotes_the_message() -> None:
    constant = canary_constant(0)
    why = _judge({"canary": constant})(GenerationResult(text="", finish_reason="error", error=OPENAI))
    assert why is not None and "'additionalProperties' is required to be supplied and to be false." in why
    assert '{"error"' not in why
