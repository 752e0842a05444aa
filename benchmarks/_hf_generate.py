"""Plain ``AutoModelForCausalLM.generate`` on the prompts of a replay, and
the classification of an answer that differs from another side's.

The prompt is the replay's own (messages and assistant prefix), rendered by
the tokenizer's chat template with the generation prompt, as the backends
render it. ``stop_strings`` (transformers' ``StopStringCriteria``) carries
the task's stop strings, so plain generate stops where the backends do: a
stop string is a stopping criterion on both backends, and a candidate that
meets it leaves the running beams (issue #54: without it, plain generate
went on past cc_gen-0018's closing fence).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["PlainGenerate"]

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

    def classify(self, ids: list[int], ours: str, theirs: str) -> dict[str, Any]:
        """The first differing token of the two answers (the llama.cpp text
        retokenized) and both candidates' summed log-probabilities there
        under this float32 model: a near-tie within 1e-4, else a rule."""
        import torch

        a = self.tok(ours, add_special_tokens=False)["input_ids"]
        b = self.tok(theirs, add_special_tokens=False)["input_ids"]
        k = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        seq = ids + list(a[:k])
        with torch.no_grad():
            logits = self.model(torch.tensor([seq])).logits[0].float()
        logp = torch.log_softmax(logits, dim=-1)
        prefix = float(sum(logp[len(ids) - 1 + i, t] for i, t in enumerate(a[:k])))
        eos = int(self.tok.eos_token_id)
        ta = a[k] if k < len(a) else eos
        tb = b[k] if k < len(b) else eos
        sa, sb = prefix + float(logp[-1, ta]), prefix + float(logp[-1, tb])
        return {"step": k, "ours": [ta, sa], "theirs": [tb, sb], "gap": abs(sa - sb),
                "kind": "near-tie" if abs(sa - sb) <= NEAR_TIE else "rule"}


def replay_prompts(replay: Path) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for line in replay.read_text(encoding="utf-8").split("\n"):
        if line.startswith('{"kind":"generation"'):
            rec = json.loads(line)
            out[rec["item_id"]] = rec["prompt"]
    return out
