"""Static-token accounting of the pack: a template's own text, slots excluded, and after compression
without the shared prefix factored out of it (its own pack entry, ``shared_prefixes[]``)."""

from __future__ import annotations

from logmine.redact import Redactor
from logmine.stages.compress import CompressedTemplate, Compressor, shared_prefixes
from logmine.stages.export import Family, _compress, _static_tokens
from logmine.stages.fidelity import whitespace_tokens
from logmine.stages.hashing import HashingEmbedder

SYSTEM = "system: You are a coding assistant inside the editor. Answer briefly and show code in fenced blocks.\n"


def family(source: str, compressed: str) -> Family:
    fam = Family("f", {"template_id": "t"}, [], source, [])
    fam.original = source
    fam.compressed = CompressedTemplate(compressed, source, 1.0, compressed != source, [], compressed)
    return fam


def test_static_after_excludes_the_factored_shared_prefix_and_before_counts_it() -> None:
    sources = [SYSTEM + "user: Explain {{ code }}", SYSTEM + "user: Test {{ code }} well", "Other {{ code }}"]
    families = [family(s, s) for s in sources]
    found = shared_prefixes(sources, whitespace_tokens, min_tokens=8)
    assert found == {0: SYSTEM, 1: SYSTEM}
    prefixes = {"lossless": found, "after": found}
    got = _static_tokens(families, prefixes, whitespace_tokens)
    assert got == [(23, 3, 3), (24, 4, 4), (1, 1, 1)]  # words and punctuation: the system prompt is 20


def test_a_template_without_a_shared_prefix_counts_whole() -> None:
    src = SYSTEM + "user: Explain {{ code }}"
    assert _static_tokens([family(src, src)], {"lossless": {}, "after": {}}, whitespace_tokens) == [(23, 23, 23)]


def test_fim_templates_with_stray_blank_lines_come_out_byte_identical() -> None:
    head = "<[fim-prefix]># the head of a file of the project, the same in both templates, with stray blank lines\n\n\n\n"
    sources = [head + "{{ prefix }}\n\n\n<[fim-suffix]>{{ suffix }}   \n\n<[fim-middle]>",
               head + "{{ prefix }}  <[fim-suffix]>\n\n\n{{ suffix }}<[fim-middle]>"]
    families = [Family(f"f{i}", {"template_id": f"t{i}"}, [], src, ["prefix", "suffix"]) for i, src in enumerate(sources)]
    heads = _compress(families, Compressor(HashingEmbedder(), whitespace_tokens), Redactor(), lambda *_: None)
    assert heads == {0: head, 1: head}  # a shared head, kept as it is: it is the model's protocol too
    assert [(f.compressed.source, f.compressed.lossless_source, f.compressed.lossy) for f in families] == [(s, s, False) for s in sources]
