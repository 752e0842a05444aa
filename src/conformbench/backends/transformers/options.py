"""The transformers backend's option values (dtype, device) and their
checks, for its manifest and its loader alike (no torch, no transformers)."""

from __future__ import annotations

from conformbench.errors import UsageError
from conformbench.registry import did_you_mean

__all__ = ["DEVICES", "DTYPES", "DTYPE_NAMES", "check_device", "check_dtype"]

#: option value -> torch dtype name (bf16 is the default, as the ConCodeEval paper ran)
DTYPES = {"bf16": "bfloat16", "bfloat16": "bfloat16", "fp32": "float32", "float32": "float32",
          "fp16": "float16", "float16": "float16"}
#: the dtype values for messages and help: the short names first, then the torch names
DTYPE_NAMES: tuple[str, ...] = tuple(sorted(DTYPES, key=lambda name: name == DTYPES[name]))
#: device values besides ``cuda:N``
DEVICES = ("auto", "cpu", "cuda")


def check_dtype(value: str, what: str = "dtype") -> str:
    """The torch dtype name of option value ``value``, or a one-line
    UsageError naming the known values (``what``: the option's name, e.g.
    ``--dtype``)."""
    if value not in DTYPES:
        raise UsageError(f"{what} {value!r} is not one of {', '.join(DTYPE_NAMES)}"
                         f"{did_you_mean(value, list(DTYPE_NAMES))}")
    return DTYPES[value]


def check_device(value: str, what: str = "device") -> str:
    """``value`` when it is a device the backend takes, or a one-line
    UsageError naming them (``what`` as for ``check_dtype``)."""
    if value in DEVICES or (value.startswith("cuda:") and value[5:].isdigit()):
        return value
    raise UsageError(f"{what} {value!r} is not {', '.join(DEVICES)} or cuda:N{did_you_mean(value, list(DEVICES))}")
