"""report.md of ``engines cost``: the cost beside the benefit, one row per
concurrency level and cache state, then the numbers of every arm."""

from __future__ import annotations

from conformbench.records.markdown_escape import md_code, md_text
from conformbench.records.results import Rate
from conformbench.serving.report import MIN_ANSWERS, ArmStats, CostReport, Latency, RatioSpread

__all__ = ["cost_markdown"]

_EXCLUDED_SHOWN = 50


def _ratio(r: RatioSpread) -> str:
    if r.median is None:
        return f"n/a (< {MIN_ANSWERS} answers)" if r.thin_repeats else "-"
    if len(r.per_repeat) < 2:
        return f"{r.median:.2f}"
    return f"{r.median:.2f} ({r.low:.2f}–{r.high:.2f})"


def _rate(r: Rate) -> str:
    if not r.n:
        return "-"
    return f"{100 * r.rate:.0f}% [{100 * r.ci95[0]:.0f}, {100 * r.ci95[1]:.0f}] ({r.k}/{r.n})"


def _ms(lat: Latency) -> str:
    return " / ".join("-" if v is None else f"{v:.1f}" for v in (lat.p50_ms, lat.p90_ms, lat.p99_ms))


def _num(v: float | None) -> str:
    return "-" if v is None else f"{v:.3g}"


def _settings(report: CostReport) -> list[str]:
    s = report.settings
    arrivals = "closed loop (all at once, the concurrency paces them)" if s.get("rate") is None \
        else f"Poisson at {s['rate']} req/s (seed {s.get('seed')})"
    server = report.server
    model = md_text(str(s.get('model') or '(not named)'))
    where = f"Backend llamacpp in this process (one request at a time), model {model}, grammar engine " \
        f"{md_text(str(server.get('engine')))}." if s.get("backend") == "llamacpp" else \
        f"Server {md_text(str(server.get('base_url')))}, model {model}, structured-output dialect " \
        f"{md_text(str(server.get('dialect')))}."
    return [
        where,
        f"{s.get('n')} prompts ({md_text(str(s.get('prompts')))}), concurrency {s.get('levels')}, "
        f"{s.get('repeats')} repeat(s), arrivals {arrivals}, max {s.get('max_tokens')} tokens, greedy.",
        "Cache: *warm* = each schema as it is, sent once before it is measured; *cold* = each request's schema "
        "made unique (a fresh `$comment` nonce), so no grammar cache keyed by the schema hits.",
        "",
    ]


def _glance(report: CostReport) -> list[str]:
    lines = ["## Cost and benefit at a glance", "",
             "Ratios are grammar on / off, the median over the repeats (their range in brackets); "
             "TTFT and TPOT ratios are of the medians. Validity: the share of answers valid against the full "
             "schema, 95% Wilson interval; paired: prompts valid only with the grammar on / only off. The req/s ratio "
             "mixes the grammar's cost with the answers' length (a grammar that shortens answers raises it): "
             "TPOT is the cost per token.", "",
             "| concurrency | cache | req/s ratio | tok/s ratio | TTFT ratio | TPOT ratio | validity off | "
             "validity on | paired on-only / off-only |",
             "|---|---|---|---|---|---|---|---|---|"]
    for c in report.comparisons:
        lines.append(f"| {c.concurrency} | {c.cache} | {_ratio(c.throughput_ratio)} | {_ratio(c.tok_s_ratio)} | "
                     f"{_ratio(c.ttft_ratio)} | {_ratio(c.tpot_ratio)} | {_rate(c.validity_off)} | "
                     f"{_rate(c.validity_on)} | {c.pairs.only_on_valid} / {c.pairs.only_off_valid} |")
    return [*lines, ""]


def _tokens_per_answer(a: ArmStats) -> str:
    answered = a.n - a.errors
    return f"{a.output_tokens / answered:.1f}" if answered else "-"


def _arm_row(a: ArmStats) -> str:
    return (f"| {a.concurrency} | {'on' if a.grammar else 'off'} | {a.cache} | {a.n} | {a.errors} | "
            f"{_num(a.requests_per_s)} | {_num(a.output_tokens_per_s)} | {_tokens_per_answer(a)} | {_ms(a.ttft)} | {_ms(a.tpot)} | "
            f"{_rate(a.validity)} | {a.tokens_from}"
            + (f" ({a.usage_distrusted} server counts not believed)" if a.usage_distrusted else "") + " |")


def _dropped(report: CostReport) -> list[str]:
    lines = ["## Keywords the grammar dropped", "",
             "Answers made with the grammar on that parse as JSON, validated against the full schema: each "
             "keyword they break, counted once per answer, over the parsed answers whose schema uses it "
             "(`format` is an annotation, as in validity). `engines probe` tests a keyword on its own.", ""]
    for arm in report.dropped:
        lines.append(f"*{md_text(arm.arm)} cache*: {arm.parsed} of {arm.answered} answers parsed as JSON; "
                     + ("no keyword broken." if not arm.keywords else "broken:"))
        if arm.keywords:
            lines += ["", "| keyword | answers breaking it | of answers under it | first prompts |", "|---|---|---|---|"]
            lines += [f"| {md_code(k.keyword)} | {k.broken} | {k.under} | {md_text(', '.join(k.examples))} |"
                      for k in arm.keywords]
        lines.append("")
    return lines


def _excluded(report: CostReport) -> list[str]:
    shown = report.excluded[:_EXCLUDED_SHOWN]
    more = len(report.excluded) - len(shown)
    return ["## Schemas left out", "", f"{len(report.excluded)} schemas of the corpus were not sent, each with why"
            + (f" (the first {len(shown)}; all in report.json)" if more else "") + ":", "",
            *[f"- {md_text(e.source)} ({md_text(e.id)}): {md_text(e.reason)}" for e in shown], ""]


def cost_markdown(report: CostReport, chart: str | None) -> str:
    where = "in this process" if report.settings.get("backend") == "llamacpp" else "on this server"
    lines = [f"# What the grammar costs {where}", "", *_settings(report)]
    if not report.complete:
        lines += ["**Incomplete**: some batches were not measured (see requests.jsonl); rerun the same "
                  "command to finish them.", ""]
    if report.lost:
        lines += [f"**{report.lost} requests gave no answer** (errors, cut or filtered streams; each in "
                  f"requests.jsonl, the first: {md_text(report.lost_example or '')}): they count in *errors* and "
                  f"in no latency or validity; a ratio whose arm kept fewer than {MIN_ANSWERS} answers in a "
                  "repeat leaves that repeat out.", ""]
    lines += _glance(report)
    lines += ["## Every level and arm", "",
              "Pooled over the repeats. TTFT: send to first text; TPOT: first to last text over the output "
              "tokens after the first; both in ms, p50 / p90 / p99.", "",
              "| concurrency | grammar | cache | N | errors | req/s | output tok/s | tokens/answer | TTFT ms | TPOT ms | "
              "validity | tokens from |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    lines += [_arm_row(a) for a in sorted(report.arms, key=lambda a: (a.concurrency, a.grammar, a.cache))]
    if chart:
        lines += ["", f"![latency against concurrency]({chart})"]
    lines.append("")
    if report.dropped:
        lines += _dropped(report)
    if report.excluded:
        lines += _excluded(report)
    lines += ["Each request (its clock, tokens, text and error) is in requests.jsonl.", ""]
    return "\n".join(lines)
