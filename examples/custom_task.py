"""Your own task in about 30 lines: exact-match QA over a JSONL file.

A task says what its items are, how to ask in free text, which JSON
contracts exist, how to read an answer and how to check it. The arms
(unconstrained, prompt_only[S], constrained[S], reason_then_constrain[S]),
the canary, the metrics and the reports are reused unchanged.

    python examples/custom_task.py examples/questions.jsonl [model.gguf] [--n=N]

Without a model path the embedded SmolLM2-135M is used. Reports are written
to ./conformbench-out/example-qa (report.md, report.json, ledger.csv...).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import ClassVar

import conformbench
from conformbench import ContractTask, Item, JSONValue, Schema, answer_line, normalize_text, tasks


# ---------------------------------------------------------------- the task
@tasks.register("example-qa")
class ExampleQa(ContractTask):
    name = "example-qa"
    correctness_label = "exact match"
    takes_dataset = True  # options.dataset is the JSONL path
    # contract name -> JSON Schema; property order is part of the contract
    schemas: ClassVar[dict[str, Schema]] = {"answer": {
        "type": "object", "properties": {"answer": {"type": "string"}},
        "required": ["answer"], "additionalProperties": False}}

    def load_items(self) -> list[Item]:  # every item, in a fixed order
        lines = Path(str(self.options.dataset)).read_text(encoding="utf-8").splitlines()
        rows = [json.loads(line) for line in lines if line.strip()]
        return [Item(id=f"q{i}", input={"question": row["question"]}, target=row["answer"])
                for i, row in enumerate(rows)]

    def free_prompt(self, item: Item) -> str:  # the unconstrained arm's prompt
        return f"{item.input['question']}\nEnd with a line 'Answer: <answer>'."

    def extract_free(self, item: Item, text: str) -> JSONValue:  # None: no answer
        return answer_line(text)

    # The JSON arms show the schema after the question and read value["answer"]
    # by default; override json_prompt / extract_json to change that.

    def is_correct(self, item: Item, answer: JSONValue) -> bool:
        return isinstance(answer, str) and normalize_text(answer) == normalize_text(str(item.target))


# ---------------------------------------------------------------- running it
def main(argv: list[str]) -> int:
    args = [a for a in argv if not a.startswith("--n=")]
    n = next((int(a[4:]) for a in argv if a.startswith("--n=")), None)
    if not args:
        print(__doc__)
        return 2
    done = conformbench.run({
        "models": [{"label": "model", "model": args[1] if len(args) > 1 else None}],
        "tasks": [{"name": "example-qa", "dataset": args[0], "n": n, "max_tokens": 64}],
        "out": "conformbench-out/example-qa",
    }, force=True)
    print("\n".join(done.headline()))
    for arm in done.run.results[0].arms:
        valid = "n/a" if arm.validity is None else f"{arm.validity.rate:.0%}"
        right = "n/a" if arm.accuracy is None else f"{arm.accuracy.rate:.0%}"
        print(f"{arm.key:40} valid {valid:>5}  right {right:>5}")
    print(f"reports in {done.files.markdown.parent}/")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
