"""An F32 copy of a GGUF (every tensor dequantised to float32), so llama.cpp
and transformers compute from the same weights in the same precision: their
greedy answers then part only where float32 sums are ordered differently.

Written with the ``gguf`` package transformers itself reads GGUF with; the
copy is a measurement aid under the benchmark's --out, never shipped.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["f32_copy"]


def f32_copy(source: Path, target: Path) -> Path:
    """``target``, written once from ``source`` (reused when already there)."""
    if target.is_file():
        return target
    import gguf
    from gguf.quants import dequantize

    reader = gguf.GGUFReader(source)
    arch = str(reader.fields[gguf.Keys.General.ARCHITECTURE].contents())
    partial = target.with_suffix(".partial")
    writer = gguf.GGUFWriter(partial, arch)
    for field in reader.fields.values():
        if field.name == gguf.Keys.General.ARCHITECTURE or field.name.startswith("GGUF."):
            continue  # written by GGUFWriter itself
        if field.name == gguf.Keys.General.FILE_TYPE:
            writer.add_file_type(gguf.LlamaFileType.ALL_F32)
            continue
        kind = field.types[0]
        sub = field.types[-1] if kind == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(field.name, field.contents(), kind, sub_type=sub)
    for tensor in reader.tensors:
        weights = dequantize(tensor.data, tensor.tensor_type).astype("float32")
        # GGUF lists dims innermost first; numpy's shape is the reverse
        shape = tuple(int(d) for d in reversed(tensor.shape.tolist()))
        writer.add_tensor(tensor.name, weights.reshape(shape), raw_dtype=gguf.GGMLQuantizationType.F32)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    partial.replace(target)
    return target
