"""Plain ``AutoModelForCausalLM.generate`` on the prompts of a replay, and
the classification of an answer that differs from another side's.

The prompt is the replay's own (messages and assistant prefix), rendered by
the tokenizer's chat template with the generation prompt, as the backends
render it. ``stop_strings`` (transformers' ``StopStringCriteria``) carries
the task's stop strings, so plain generate stops where the backends do: a
stop string is a stopping criterion on both backends, and a candidate that
meets it leaves the running beams (issue #54: without it, plain generate
went on past cc_gen-0018's closing fence).

Both sides must condition on the same prompt token ids, or the comparison
measures the tokenizers, not the searches: the tokenizer transformers
builds from the GGUF splits some whitespace runs differently from
llama.cpp's (issue #54, seed 7 cc_gen-0010: "\n" and 8 spaces is one token
in llama.cpp, two in transformers, 267 against 269 prompt tokens), so
``LlamaPrompts`` tokenizes each prompt as the llamacpp backend does and
plain ``generate`` is given those ids.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["LlamaPrompts", "PlainGenerate"]

NEAR_TIE = 1e-4


class PlainGenerate:
    def __init__(self, model: Path, threads: int = 1) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        torch.set_num_threads(threads)
        kw: dict[str, Any] = {"gguf_file": model.name, "trust_remote_code": False}
        self.tok = AutoTokenizer.from_pretrained(model.parent, **kw)
        self.model = AutoModelForCausalLM.from_pretrained(model.parent, dtype=torch.float32, **kw).eval()

    def prompt_ids(self, prompt: dict[str, Any]) -> list[int]:
        text = self.tok.apply_chat_template(prompt["messages"], tokenize=False, add_generation_prompt=True)
        return [int(t) for t in self.tok(str(text) + prompt.get("assistant_prefix", ""),
                                         add_special_tokens=False)["input_ids"]]

    def generate(self, ids: list[int], beams: int, max_tokens: int, stops: tuple[str, ...]) -> str:
        import torch

        x = torch.tensor([ids])
        kw: dict[str, Any] = {"do_sample": False, "max_new_tokens": max_tokens}
        if beams > 1:
            kw |= {"num_beams": beams, "length_penalty": 1.0, "early_stopping": False}
        if stops:
            kw |= {"stop_strings": list(stops), "tokenizer": self.tok}
        with torch.no_grad():
            out = self.model.generate(x, attention_mask=torch.ones_like(x), **kw)
        text = str(self.tok.decode(out[0, len(ids):].tolist(), skip_special_tokens=True,
                                   clean_up_tokenization_spaces=False))
        cuts = [i for i in (text.find(s) for s in stops) if i >= 0]
        return text[:min(cuts)] if cuts else text

    def mean_logprob(self, ids: list[int], answer: list[int]) -> float:
        """``answer``'s summed log-probability after ``ids`` over its length
        under this float32 model: a finished hypothesis' score at
        ``length_penalty=1.0`` (the stop string's and EOS tokens, cut from
        the text, are not counted)."""
        import torch

        if not answer:
            return float("nan")
        with torch.no_grad():
            logits = self.model(torch.tensor([ids + answer])).logits[0].float()
        logp = torch.log_softmax(logits, dim=-1)
        return float(sum(logp[len(ids) - 1 + i, t] for i, t in enumerate(answer))) / len(answer)

    def classify(self, ids: list[int], ours: list[int], theirs: list[int]) -> dict[str, Any]:
        """Two answers (token ids, llama.cpp's tokenization of each text)
        compared where the search decides, by their length-normalised
        scores under this float32 model: a near-tie within 1e-4, else a
        rule. ``step``: the first differing token, for reference only (a
        beam that loses a step can win at the end)."""
        k = next((i for i, (x, y) in enumerate(zip(ours, theirs)) if x != y), min(len(ours), len(theirs)))
        sa, sb = self.mean_logprob(ids, ours), self.mean_logprob(ids, theirs)
        return {"step": k, "ours": [len(ours), sa], "theirs": [len(theirs), sb], "gap": abs(sa - sb),
                "kind": "near-tie" if abs(sa - sb) <= NEAR_TIE else "rule"}


class LlamaPrompts:
    """Prompt token ids exactly as the llamacpp backend tokenizes them."""

    def __init__(self, model: Path) -> None:
        from conformbench.backends.llamacpp.backend import LlamaCppBackend
        from conformbench.records.generation import BackendConfig

        self.backend = LlamaCppBackend(BackendConfig(model=str(model), threads=1, n_ctx=512))

    def ids(self, prompt: dict[str, Any]) -> list[int]:
        from conformbench.records.prompt import Message, Prompt

        messages = tuple(Message(**m) for m in prompt["messages"])
        return list(self.backend.tokenize_prompt(Prompt(messages, prompt.get("assistant_prefix", ""))))

    def answer(self, text: str) -> list[int]:
        """``text`` (an answer, no special tokens) as llama.cpp tokenizes it."""
        return [int(t) for t in self.backend.llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)]

    def close(self) -> None:
        self.backend.close()


def replay_prompts(replay: Path) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for line in replay.read_text(encoding="utf-8").split("\n"):
        if line.startswith('{"kind":"generation"'):
            rec = json.loads(line)
            out[rec["item_id"]] = rec["prompt"]
    return out
