"""The mask's toll on the real embedded model (llama.cpp, llguidance),
checked against numbers computed here from the model's raw logits:

- a schema admitting one answer text (a ``const``): where one token alone
  spells the rest of it, the allowed share is that token's softmax
  probability; where several tokens spell a prefix of it, the share lies
  between the chosen token's probability and theirs together; at the end,
  between the end-of-sequence token's probability and that of every
  end-of-generation token;
- a mask allowing every token gives a share of 1.0 at every step, and the
  greedy text is the unconstrained one;
- a run records the toll of each constrained answer and ``score`` on its
  replay alone gives the same report section."""

from __future__ import annotations

import ctypes
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from conformbench.backends.base import backends
from conformbench.cli.main import main
from conformbench.engines.masking import MaskProcessor, TokenMatcher
from conformbench.records.generation import BackendConfig, Constraint, DecodingSettings, GenerationRequest
from conformbench.records.prompt import Message, Prompt
from conformbench.records.replay_file import read_replay

pytestmark = [pytest.mark.slow]
PROMPT = Prompt((Message("user", "Say yes, in JSON."),))


@pytest.fixture(scope="module")
def backend() -> Iterator[Any]:
    made = backends.get("llamacpp")(BackendConfig(n_ctx=1024, threads=1))
    yield made
    made.close()


def _probabilities(llm: Any, prompt: list[int], out: list[int]) -> list[npt.NDArray[np.float64]]:
    """softmax of the raw logits before each output token and after the
    last, evaluated as the decoder does (the prompt in one batch, then one
    token at a time)."""
    import llama_cpp

    llm.reset()
    rows = []
    for batch in [prompt, *([t] for t in out)]:
        llm.eval(batch)
        ptr = llama_cpp.llama_get_logits_ith(llm.ctx, -1)
        logits = np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(ctypes.c_float)), shape=(llm.n_vocab(),))
        z = logits.astype(np.float64)
        p = np.exp(z - z.max())
        rows.append(p / p.sum())
    llm.reset()
    return rows


def test_a_const_answer_gives_the_known_shares(backend: Any) -> None:
    request = GenerationRequest(PROMPT, DecodingSettings(max_tokens=16, mask_trace=True),
                                Constraint({"const": "yes"}, "llguidance"))
    result = backend.generate(request)
    assert (result.text, result.finish_reason) == ('"yes"', "stop")
    toll = result.mask_toll
    assert toll is not None and toll.trace is not None
    prompt = backend.tokenize_prompt(PROMPT)
    out = list(backend.llama.tokenize(result.text.encode(), add_bos=False, special=False))
    assert len(out) == result.completion_tokens and toll.steps == len(out) + 1  # + the end token
    probs = _probabilities(backend.llama, prompt, out)
    pieces, target, done = backend.vocabulary.token_pieces, result.text.encode(), 0
    eos, eog = backend.vocabulary.eos, sorted(backend.vocabulary.eog_ids)
    forced = 0
    for step, p in enumerate(probs):
        share = toll.trace.shares[step]
        rest = target[done:]
        if not rest:  # the end: EOS, perhaps other end-of-generation tokens
            assert p[eos] * (1 - 1e-4) <= share <= p[eog].sum() * (1 + 1e-4)
            continue
        spelling = [t for t, piece in enumerate(pieces) if piece and rest.startswith(piece)]
        if len(spelling) == 1:
            forced += 1
            assert share == pytest.approx(p[spelling[0]], rel=1e-4), step
            assert toll.trace.top_allowed[step] == (int(np.argmax(p)) == spelling[0])
        else:
            assert p[out[step]] * (1 - 1e-4) <= share <= p[spelling].sum() * (1 + 1e-4), step
        done += len(pieces[out[step]] or b"")
    assert forced >= 2  # both quotes: one token each
    assert toll.mean_share == pytest.approx(float(np.mean(toll.trace.shares)), rel=1e-5)
    assert toll.min_share == min(toll.trace.shares)


class _AllowAll(TokenMatcher):
    def advance(self, tokens: list[int]) -> None:
        pass

    def fill_bitmask(self, bitmask: npt.NDArray[np.int32]) -> None:
        bitmask.fill(-1)


def test_a_mask_allowing_everything_takes_nothing(backend: Any) -> None:
    from llama_cpp import LogitsProcessorList

    llm, prompt = backend.llama, backend.tokenize_prompt(PROMPT)

    def greedy(processor: MaskProcessor | None) -> list[int]:
        llm.reset()
        stream = llm.generate(prompt, temp=0.0, logits_processor=LogitsProcessorList([processor]) if processor else None)
        out = [t for t, _ in zip(stream, range(8), strict=False)]
        stream.close()
        return out

    processor = MaskProcessor(_AllowAll(), len(prompt), frozenset({backend.vocabulary.eos}))
    masked, free = greedy(processor), greedy(None)
    llm.reset()
    toll = processor.toll.record(trace=True)
    assert masked == free and toll is not None and toll.trace is not None
    assert toll.steps >= 7 and toll.refused_top == 0
    assert all(abs(share - 1.0) < 1e-6 for share in toll.trace.shares)


@pytest.mark.long
def test_a_run_records_the_toll_and_score_reproduces_the_section(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert main(["run", "--task", "gsm8k", "-n", "2", "--arm", "constrained[answer]", "--threads", "1",
                 "--mask-trace", "--out", str(out), "--quiet"]) == 0
    replay = read_replay(out / "replay.jsonl")
    assert replay.header.spec.decoding.mask_trace is True
    for gen in replay.generations:
        toll = gen.mask_toll
        assert toll is not None and toll.trace is not None and len(toll.trace.shares) == toll.steps
        assert 0 < toll.min_share <= toll.mean_share <= 1
        # every token sampled under the mask, and the end token where the model wrote one
        assert toll.steps == gen.completion_tokens + (gen.finish_reason == "stop")
        if toll.first_refused_step is not None:
            assert toll.first_refused_at is not None and toll.first_refused_char is not None
    assert main(["score", str(out / "replay.jsonl"), "--out", str(tmp_path / "again"), "--quiet"]) == 0

    def section(path: Path) -> Any:
        report = json.loads((path / "report.json").read_text(encoding="utf-8"))
        return next(s for s in report["results"][0]["sections"] if s["name"] == "mask_toll")

    ran, scored = section(out), section(tmp_path / "again")
    assert ran == scored and ran["data"]["arms"][0]["measured"] == 2
    assert "The mask's toll" in (tmp_path / "again" / "report.md").read_text(encoding="utf-8")


@pytest.mark.long
def test_batched_decoding_measures_what_sequential_decoding_does(backend: Any) -> None:
    schema = {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}
    requests = [GenerationRequest(Prompt((Message("user", q),)), DecodingSettings(max_tokens=24),
                                  Constraint(schema, "llguidance")) for q in ("What is 2+2? JSON.", "What is 3*3? JSON.")]
    batched = backends.get("llamacpp")(BackendConfig(n_ctx=1024, threads=1, extra={"batched": 2}))
    try:
        together = batched.generate_many(requests)
    finally:
        batched.close()
    for one, alone in zip(together, backend.generate_many(requests), strict=True):
        assert one.text == alone.text and one.mask_toll is not None and one.mask_toll == alone.mask_toll
