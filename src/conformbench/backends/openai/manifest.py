"""What the openai backend declares (its ``manifest``), importable without
aiohttp: its options, where it applies constraints and what it records."""

from __future__ import annotations

from conformbench.backends.manifest import BackendManifest, BackendOption
from conformbench.backends.openai.dialects import DIALECTS, grammar_refusal
from conformbench.registry import join_names

__all__ = ["AUTO_DIALECT", "ENDPOINTS", "MANIFEST"]

#: the API endpoints a request goes to
ENDPOINTS = ("chat", "completions")
#: the dialect setting that means "detect it" (the default)
AUTO_DIALECT = "auto"

MANIFEST = BackendManifest(
    options=(
        BackendOption("response_format_dialect", str, flag="--dialect", metavar="NAME",
                      choices=(AUTO_DIALECT, *DIALECTS),
                      help=f"Structured-output dialect: {join_names([AUTO_DIALECT, *DIALECTS])}; {AUTO_DIALECT} "
                           "(the default) finds it with the canary's request."),
        BackendOption("endpoint", str, metavar="NAME", choices=ENDPOINTS,
                      help=f"API endpoint: {join_names(ENDPOINTS)} (default chat)."),
        BackendOption("allow_dropped_tools", bool, metavar="BOOL",
                      help="Run and score the tools arms even where the server's chat template drops the tools "
                           "(the prompt is as long with them as without: the model never sees the functions)."),
        BackendOption("api_key_env", str, metavar="VAR", operational=True,
                      help="Environment variable holding the API key (default OPENAI_API_KEY, sent only if set)."),
    ),
    constraint_side="server",
    tools=True,
    distributions=("aiohttp",),
    grammar_refusal=lambda extra: grammar_refusal(extra.get("response_format_dialect")),
)
