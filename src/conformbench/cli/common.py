"""Helpers shared by command modules."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from conformbench.errors import UsageError
from conformbench.files import read_text_file

__all__ = ["print_json", "read_json_file", "read_text_file"]


def read_json_file(path: Path) -> Any:
    """Parse a JSON file, or raise UsageError with one clear line."""
    text = read_text_file(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path} is not valid JSON: {exc.msg} at line {exc.lineno}") from None
    except RecursionError:
        raise UsageError(f"{path} is nested too deeply to read as JSON") from None


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")
