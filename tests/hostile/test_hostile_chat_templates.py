"""#49 defect 4: no chat template is compiled outside the bounded sandbox
(the six operations that allocated before their check: test_hostile_surfaces's
template bombs)."""

from __future__ import annotations

import resource
from pathlib import Path

import pytest


def test_loading_a_gguf_compiles_none_of_its_chat_templates(tmp_path: Path, smollm_path: Path) -> None:
    """A GGUF whose template would allocate 1.5 GB when compiled (plain
    ``llama_cpp.Llama`` compiles it at load: MemoryError under a 3 GB limit
    here) loads in a few MB, and its template still reaches the sandbox."""
    gguf = pytest.importorskip("gguf")
    from gguf.scripts.gguf_new_metadata import MetadataDetails, copy_with_new_metadata

    from conformbench.backends.chat_template import TemplateTooCostly, bounded_llama_formatter
    from conformbench.backends.llamacpp.vocabulary import LlamaVocabulary

    bomb = tmp_path / "bomb.gguf"
    reader = gguf.GGUFReader(str(smollm_path), "r")
    writer = gguf.GGUFWriter(str(bomb), arch=reader.fields["general.architecture"].contents(),
                             endianess=reader.endianess)
    template = "{{ 'x' * 1500000000 }}"  # 1.5 GB if compiled
    copy_with_new_metadata(reader, writer, {gguf.Keys.Tokenizer.CHAT_TEMPLATE: MetadataDetails(
        gguf.GGUFValueType.STRING, template)}, [])
    usage = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    vocabulary = LlamaVocabulary.from_gguf(bomb)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - usage < 300_000  # KiB
    assert vocabulary.llm.metadata["tokenizer.chat_template"] == template
    assert not vocabulary.llm._chat_handlers
    with pytest.raises(TemplateTooCostly):
        bounded_llama_formatter(template, "</s>", "<s>")(messages=[{"role": "user", "content": "hi"}])


@pytest.mark.parametrize("url", [
    "http://127.0.0.1:8080/v1?api_token=SECRET", "http://127.0.0.1:8080/v1?X-Amz-Security-Token=SECRET&a=b",
    "http://127.0.0.1:8080/v1#SECRET", "http://u:SECRET@127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1?hf_token=SECRET",
])
def test_only_scheme_host_port_and_path_of_a_url_are_stored(url: str) -> None:
    """#49 defect 3 (lives here to keep one file for this branch's tests)."""
    from conformbench.records.generation import redacted_url

    assert redacted_url(url) == "http://127.0.0.1:8080/v1"
