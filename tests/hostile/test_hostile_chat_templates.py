"""#49 defect 4: no chat template is compiled outside the bounded sandbox,
and the six operations that allocated before their check are refused first."""

from __future__ import annotations

import resource
from pathlib import Path

import pytest

_BOMBS = {
    "star-width": "{{ '%*d' % (1500000000, 1) }}",
    "nested-format-width": "{{ '{:>{}}'.format(1, 1500000000) }}",
    "nested-format-width-text": "{{ '{:>{}}'.format(1, '1500000000') }}",
    "str-replace": "{% set s = 'x' * 4000000 %}{{ s.replace('x', 'yyyyyyyyyy') }}",
    "str-join": "{% set s = 'x' * 4000000 %}{{ s.join(['a', 'b', 'c'] * 100) }}",
    "join-filter": "{% set s = 'x' * 4000000 %}{{ (['a'] * 1000)|join(s) }}",
    "indent-string-width": "{% set s = 'x' * 4000000 %}{{ ('a\\n' * 1000)|indent(s) }}",
    "repeat": "{{ 'x' * 1500000000 }}",
}


@pytest.mark.parametrize("template", list(_BOMBS.values()), ids=list(_BOMBS))
def test_an_operation_is_bounded_before_it_allocates(template: str) -> None:
    from conformbench.backends.chat_template import TemplateTooCostly, bounded_template

    usage = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(TemplateTooCostly):
        bounded_template(template).render()
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - usage < 100_000  # KiB


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
    template = _BOMBS["repeat"]
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
