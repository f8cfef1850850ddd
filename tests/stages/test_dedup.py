"""Near-duplicate merge: both thresholds, blocking, evidence, stable family ids, the cache."""

from __future__ import annotations

import numpy as np
import pytest

from logmine.stages.templates.dedup import (
    DedupConfig,
    Embedder,
    MemoryCache,
    SentenceEmbedder,
    edit_similarity,
    lsh_pairs,
    merge_near_duplicates,
    minhash_signatures,
    neighbour_pairs,
    normalise,
    sentinel_frame,
    static_swap,
    turn_frame,
)
from logmine.embedding import HashingEmbedder

REWRITE = "You are an expert programmer. Rewrite the code to satisfy this request: <*>\n```{language}\n{code}\n```"
TEMPLATES = {
    "t1": REWRITE,
    "t2": REWRITE.replace("expert programmer", "expert developer"),  # a changed word
    "t3": REWRITE.replace("<*>", "{{{userInput}}}").replace("{language}", "${language}"),  # another placeholder syntax
    "t4": "Generate a commit message for the above set of changes. First, give a single sentence.\n{diff}",
    "t5": "Generate a commit message for the above set of changes. First, give one short sentence.\n{diff}",
    "t6": "<fim_prefix>{prefix}<fim_suffix>{suffix}<fim_middle>",
}


def test_embedder_protocol() -> None:
    assert isinstance(HashingEmbedder(), Embedder)
    vectors = HashingEmbedder(64)(["a b c", "a b c", ""])
    assert vectors.shape == (3, 64) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors[:2], axis=1), 1.0) and not vectors[2].any()
    assert np.array_equal(vectors[0], vectors[1])


def test_placeholders_of_any_syntax_are_one_symbol() -> None:
    assert normalise("a {{{x}}} b ${y} c {prefix} d <*> e {{z}} f <NUM>") == "a \x00 b \x00 c \x00 d \x00 e \x00 f \x00"
    assert edit_similarity(TEMPLATES["t1"], TEMPLATES["t3"]) == 1.0


def test_both_thresholds_must_hold() -> None:
    result = merge_near_duplicates(TEMPLATES, HashingEmbedder(), DedupConfig(edit_threshold=0.9, semantic_threshold=0.8), {"t2": 5})
    families = sorted(sorted(m) for m in result.members.values())
    assert families == [["t1", "t2", "t3"], ["t4", "t5"], ["t6"]]
    fam = result.family_of["t1"]
    assert result.representative[fam] == "t2"  # the most traffic
    assert result.members[fam] == ["t2", "t1", "t3"]
    strict = merge_near_duplicates(TEMPLATES, HashingEmbedder(), DedupConfig(edit_threshold=0.9, semantic_threshold=0.999))
    assert sorted(sorted(m) for m in strict.members.values()) == [["t1", "t3"], ["t2"], ["t4"], ["t5"], ["t6"]]
    by_edit = merge_near_duplicates(TEMPLATES, HashingEmbedder(), DedupConfig(edit_threshold=0.99, semantic_threshold=-1.0))
    assert sorted(sorted(m) for m in by_edit.members.values()) == [["t1", "t3"], ["t2"], ["t4"], ["t5"], ["t6"]]


def test_merge_evidence_holds_both_scores() -> None:
    result = merge_near_duplicates(TEMPLATES, HashingEmbedder(), DedupConfig(semantic_threshold=0.8))
    edges = {(e.a, e.b): e for e in result.edges}
    assert set(edges) >= {("t1", "t2"), ("t1", "t3"), ("t4", "t5")}
    e = edges[("t1", "t3")]
    assert e.edit_similarity == 1.0 and e.semantic_similarity is not None and e.semantic_similarity > 0.99
    assert 0.9 <= edges[("t4", "t5")].edit_similarity < 1.0


def test_without_embeddings_edit_similarity_decides() -> None:
    result = merge_near_duplicates(TEMPLATES, None)
    assert result.embeddings_computed == 0 and result.embedding_model is None
    assert all(e.semantic_similarity is None for e in result.edges)
    assert result.family_of["t1"] == result.family_of["t2"] == result.family_of["t3"]


def test_family_ids_are_content_hashes_of_the_members() -> None:
    a = merge_near_duplicates(TEMPLATES, HashingEmbedder(), DedupConfig(semantic_threshold=0.8))
    b = merge_near_duplicates(dict(reversed(list(TEMPLATES.items()))), HashingEmbedder(), DedupConfig(semantic_threshold=0.8), {"t1": 9})
    assert a.family_of == b.family_of
    assert a.family_of["t6"].startswith("b2:") and a.members[a.family_of["t6"]] == ["t6"]


def test_sentinel_frames() -> None:
    assert sentinel_frame("{code}<fim_prefix>{prefix}<fim_suffix>{suffix}<fim_middle>") == (
        "\x00", "<fim_prefix>", "\x00", "<fim_suffix>", "\x00", "<fim_middle>")
    assert sentinel_frame("<|im_start|>user\n{{{x}}} and ${y}<|im_end|>") == ("<|im_start|>", "\x00", "<|im_end|>")
    assert sentinel_frame("Explain <*> in {code} (<NUM> lines)") == ()  # no sentinel: no frame


def test_templates_whose_sentinel_frames_differ_never_merge() -> None:
    fim = {
        "plain": "<fim_prefix>{prefix}<fim_suffix>{suffix}<fim_middle>",
        "mustache": "<fim_prefix>{{{prefix}}}<fim_suffix>{{{suffix}}}<fim_middle>",
        "context": "{code}<fim_prefix>{prefix}<fim_suffix>{suffix}<fim_middle>",  # one character more once normalised
        "other": "<|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|>",
    }
    result = merge_near_duplicates(fim, HashingEmbedder(), DedupConfig(edit_threshold=0.8, semantic_threshold=0.5))
    assert sorted(sorted(m) for m in result.members.values()) == [["context"], ["mustache", "plain"], ["other"]]
    assert edit_similarity(fim["plain"], fim["context"]) >= 0.95  # the edit threshold alone would have merged them


def test_turn_frames() -> None:
    assert turn_frame("system: Be brief.\nuser: ```py\n{code}\n```\nuser: {query}") == ("system", "user", "user")
    assert turn_frame("Reply as the user: {query}") == ()  # a role inside a line is no turn
    assert turn_frame("user:{x}") == ()  # nor a role glued to its text


def test_chats_whose_turns_differ_never_merge_however_long_the_prompt_they_share() -> None:
    system = "system: " + " ".join(f"Rule {i}: answer the question in the house style, step {i}." for i in range(30))
    chats = {
        "one file": f"{system}\nuser: ```\n<*>\n```\nuser: <*>",
        "two files": f"{system}\nuser: ```\n<*>\n```\nuser: ```\n<*>\n```\nuser: <*>",
        "one file again": f"{system}\nuser: ```\n<*>\n```\nuser: Please <*>",
        "one text": system.removeprefix("system: ") + "\n```\n<*>\n```\n<*>",  # another logger's record: no turns
    }
    result = merge_near_duplicates(chats, HashingEmbedder(), DedupConfig(semantic_threshold=0.5))
    assert sorted(sorted(m) for m in result.members.values()) == [["one file", "one file again", "one text"], ["two files"]]
    assert edit_similarity(chats["one file"], chats["two files"]) >= 0.95  # the edit threshold alone would have merged them


COMMIT = "Write a one-line commit message for the change below. Use the imperative mood.\nDiff:\n<*>"
DIFF = (
    "diff --git a/src/plural.py b/src/plural.py\n@@ -4,4 +4,4 @@\n def c2py(plural):\n-    return a\n"
    "+    return a {language} function that evaluates the expression for every count it is given"
)  # a value ending in prose that holds another value: the miner read it as static text
STRAY = COMMIT.replace("<*>", DIFF)


def test_a_rare_rendering_that_a_common_template_generates_joins_its_family() -> None:
    templates = {"common": COMMIT, "stray": STRAY}
    assert edit_similarity(COMMIT, STRAY) < DedupConfig().edit_threshold  # the edit threshold alone keeps them apart
    joined = merge_near_duplicates(templates, None, weights={"common": 50, "stray": 3})
    assert joined.family_of["stray"] == joined.family_of["common"]
    (edge,) = joined.edges
    assert (edge.a, edge.b) == ("stray", "common") and edge.edit_similarity == round(edit_similarity(COMMIT, STRAY), 6)
    apart = merge_near_duplicates(templates, None, weights={"common": 12, "stray": 3})  # not STRAY_RATIO times rarer
    assert apart.family_of["stray"] != apart.family_of["common"] and not apart.edges


def test_a_pattern_of_structure_alone_or_a_gap_with_structure_absorbs_nothing() -> None:
    chat = "user: <*>"
    asked = "user: Explain what the function does, in detail, for a reader who has never seen Python before."
    fenced = "```{language}\n<*>\n```"
    block = COMMIT.replace("<*>", "The change touches {file_path}:\n```{language}\n{code}\n```\nand nothing else in the project.")
    templates = {"chat": chat, "asked": asked, "fenced": fenced, "fenced rare": fenced.replace("<*>", "def f(x):\n    return x * 2"),
                 "commit": COMMIT, "block": block}
    result = merge_near_duplicates(templates, None, weights={"chat": 90, "fenced": 90, "commit": 90, "asked": 2, "fenced rare": 2, "block": 2})
    assert not result.edges  # the labels, the fence and the slot hold no word; the block holds three placeholders
    assert len(result.members) == len(templates)


SKILL = "<skill>\n{code}\n</skill> Follow the skill above when it applies to the task."
FILLERS = {f"filler {n}": SKILL.replace("{code}", "{code}\n" + line) for n, line in enumerate([
    "Docs are built with mkdocs from the docs folder.", "The frontend lives in its own folder and uses npm.",
    "Keep changes backwards compatible: the public API is in the package root."])}


def test_a_pattern_that_generates_many_templates_takes_them_at_a_smaller_ratio() -> None:
    # three renderings whose last line of a value looked static: the pattern's gap takes many values
    weights = {"skill": 13, "filler 0": 5, "filler 1": 4, "filler 2": 2}
    joined = merge_near_duplicates({"skill": SKILL, **FILLERS}, None, weights=weights)
    assert len(joined.members) == 1 and len(joined.edges) == 3
    # one such rendering alone is a stray only at STRAY_RATIO: 13 requests to 5 keep it apart
    alone = merge_near_duplicates({"skill": SKILL, "filler 0": FILLERS["filler 0"]}, None, weights=weights)
    assert len(alone.members) == 2 and not alone.edges
    # siblings used as often as the pattern are templates of their own, however many it generates
    siblings = merge_near_duplicates({"skill": SKILL, **FILLERS}, None, weights=dict.fromkeys(weights, 30))
    assert len(siblings.members) == 4 and not siblings.edges


def test_static_swaps() -> None:
    assert static_swap(normalise("Explain <*> to me"), normalise("Explain the code to me")) is None  # a slot filled
    assert static_swap("Fix it. Be brief.", "Fix it. Run the tests. Be brief.") is None  # a sentence added
    assert static_swap("Prepend a line before it.", "Append a line before it.") == ("\x01 a line before it.", frozenset({"Prepend", "Append"}))
    assert static_swap("Prepend a line before it.", "Append a line after it.") is False  # two words
    assert static_swap("Give a single sentence.", "Give one short sentence.") is False  # a phrase


EDITS = {
    "prepend": "Write the code to insert before the selected lines. Reply with the code only, no explanation: <*>",
    "append": "Write the code to insert after the selected lines. Reply with the code only, no explanation: <*>",
}
OS = {os: f"Translate the request into a shell command for {os}. Reply with the command only, nothing else: <*>"
      for os in ("windows", "mac", "linux")}
DAY = {"morning": (1, 5), "noon": (4, 9), "evening": (10, 12)}


def test_templates_used_side_by_side_that_swap_a_word_are_two() -> None:
    side_by_side = merge_near_duplicates(EDITS, None, spans={"prepend": DAY["morning"], "append": DAY["noon"]})
    assert side_by_side.families == 2
    assert edit_similarity(EDITS["prepend"], EDITS["append"]) >= 0.9  # the edit threshold alone would have merged them
    in_turn = merge_near_duplicates(EDITS, None, spans={"prepend": DAY["morning"], "append": DAY["evening"]})
    assert in_turn.families == 1  # a new version replaced the old one
    assert merge_near_duplicates(EDITS, None).families == 1  # no times: a near-duplicate as before


def test_a_word_swapped_three_ways_side_by_side_is_a_value() -> None:
    spans = {os: DAY["morning"] for os in OS}
    assert merge_near_duplicates(OS, None, spans=spans).families == 1
    assert merge_near_duplicates({k: OS[k] for k in ("windows", "mac")}, None, spans=spans).families == 2


FRAMES = {name: f"For the pandas dataframe ({name}) the user wants code to solve a problem. Summary statistics of dataframe "
              f"[`{name}`]: <*> Code to solve [ <*> ]?" for name in ("df", "sales", "titanic")}


def test_a_value_said_twice_is_one_swap_a_word_swapped_at_two_places_is_not() -> None:
    """A word placeholder whose value the prompt says twice (``({dfname})`` and ``[`{dfname}`]``) swaps the same
    word at each place: one value, merged as a word swapped at one place is; two places swapped differently stay a
    rewrite."""
    assert static_swap(FRAMES["df"], FRAMES["sales"]) == (FRAMES["df"].replace("df", "\x01"), frozenset({"df", "sales"}))
    assert static_swap("Use (sales) and [sales].", "Use (orders_df) and [orders_df].") == (
        "Use (\x01) and [\x01].", frozenset({"sales", "orders_df"}))  # a name with an underscore is one word
    assert static_swap("Run (a) then [a].", "Run (b) then [c].") is False
    spans = dict.fromkeys(FRAMES, DAY["morning"])
    assert merge_near_duplicates(FRAMES, None, spans=spans).families == 1
    two = {k: FRAMES[k] for k in ("df", "sales")}
    assert merge_near_duplicates(two, None, spans=spans).families == 2  # two values side by side: too few to tell


SYSTEMS = {os: f"You help the user in a Unix shell. Keep your answers short. Here is system info about the local machine: '{os} <*> <*>'"
           for os in ("Linux", "Darwin")}


def test_a_word_swapped_inside_quotes_that_hold_a_wildcard_is_part_of_a_value() -> None:
    """Two values side by side are too few to tell a value from static text, but a word quoted with the rest
    of a value the miner found variable is the value's (``'{sysinfo}'``); quotes around the word alone are not."""
    spans = {os: DAY["morning"] for os in SYSTEMS}
    assert merge_near_duplicates(SYSTEMS, None, spans=spans).families == 1
    assert static_swap(normalise(SYSTEMS["Linux"]), normalise(SYSTEMS["Darwin"])) is None
    assert static_swap(normalise("Say 'prepend' first, then <*>"), normalise("Say 'append' first, then <*>")) == (
        "Say '\x01' first, then \x00", frozenset({"prepend", "append"}))


def test_blocking_finds_near_pairs_not_all_pairs() -> None:
    rng = np.random.default_rng(0)
    words = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta", "lambda", "zeta"]
    texts = [normalise(t) for t in TEMPLATES.values()] + [" ".join(rng.choice(words, 12)) for _ in range(40)]
    config = DedupConfig()
    pairs = lsh_pairs(minhash_signatures(texts, config), config)
    assert {(0, 1), (0, 2), (3, 4)} <= pairs
    assert len(pairs) < len(texts) * (len(texts) - 1) // 2 // 4
    vectors = HashingEmbedder()(texts)
    near = neighbour_pairs(vectors, 2)
    assert (0, 2) in near and all(i < j for i, j in near)


def test_embeddings_come_from_the_cache_the_second_time() -> None:
    cache = MemoryCache()
    calls: list[int] = []
    hashing = HashingEmbedder()

    class Counting:
        name = hashing.name

        def __call__(self, texts: list[str]) -> np.ndarray:
            calls.append(len(texts))
            return hashing(texts)

    first = merge_near_duplicates(TEMPLATES, Counting(), cache=cache)
    # t1 and t3 read the same once placeholders are one symbol: 5 texts to embed
    assert (first.embeddings_computed, first.embeddings_cached, calls) == (5, 0, [5])
    more = {**TEMPLATES, "t7": "Explain the following code:\n{code}"}
    second = merge_near_duplicates(more, Counting(), cache=cache)
    assert (second.embeddings_computed, second.embeddings_cached, calls) == (1, 5, [5, 1])
    assert second.family_of["t1"] == first.family_of["t1"]


def test_empty_input() -> None:
    result = merge_near_duplicates({}, HashingEmbedder())
    assert result.families == 0 and result.edges == []


@pytest.mark.model
def test_real_embedder_merges_paraphrases_and_keeps_different_prompts_apart() -> None:
    result = merge_near_duplicates(TEMPLATES, SentenceEmbedder(), DedupConfig(edit_threshold=0.85, semantic_threshold=0.9))
    assert result.family_of["t1"] == result.family_of["t2"] == result.family_of["t3"]
    assert result.family_of["t4"] == result.family_of["t5"] != result.family_of["t1"]
    assert result.embedding_model == "all-MiniLM-L6-v2"
