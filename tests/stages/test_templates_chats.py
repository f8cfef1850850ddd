"""Chat logs mined for their templates: a chat as ingest renders it (``role: text`` turns) with no
record values, so every variable is found in the text."""

from __future__ import annotations

import random
import re
from collections import Counter

from test_templates_anchors import CODE

from logmine.stages.templates.anchors import (
    INLINE,
    TURN,
    _anchor_lines,
    _signature,
    _variable_lines,
)
from logmine.stages.templates.cluster import ClusterParams, cluster, turns
from logmine.stages.templates.frames import MAX_FRAME_BUCKET, frame_buckets
from logmine.stages.templates.last_turn import (
    LABEL_WORDS,
    MAX_REQUEST_WORDS,
    last_turn_heads,
    last_turns_request,
    opening_request,
)
from logmine.stages.templates.line_forms import _forms
from logmine.stages.templates.prompts import mine_prompts, prompt_template_regex

VERBS = ["Fix", "Rename", "Explain", "Document"]
THINGS = ["the parser", "this function", "the error handling", "these imports", "the loop"]
TAILS = ["", " and keep the behaviour the same", " because the reviewer asked for it", " with type hints",
         " to avoid the race when two threads call it at once"]
SYSTEM = ("system: You are an expert programmer. Answer with code only, in one fenced block, and keep the comments "
          "of the code you were given.")
ASK = "Rewrite the code above to satisfy this request: \"{request}\". Leave existing comments in place."


def requests(rng: random.Random) -> str:
    return f"{rng.choice(VERBS)} {rng.choice(THINGS)}{rng.choice(TAILS)}"


def chat(rng: random.Random, files: int, system: str = SYSTEM) -> str:
    """A chat of a system turn, ``files`` attached files (a fence with the file's path) and the user's request."""
    turns_ = [system]
    for _ in range(files):
        code = f"{rng.choice(CODE)}\nlimit = {rng.randrange(10**6)}"  # every attached file's code its own
        turns_.append(f"user: ```src/acme/m{rng.randrange(100)}.py\n{code}\n```")
    turns_.append("user: " + ASK.format(request=requests(rng)))
    return "\n".join(turns_)


def test_turn_labels_are_read_in_order() -> None:
    assert turns(("system:", "You", "are", "user:", "```x", "user:", "Fix", "the", "user:x")) == ("system:", "user:", "user:")


def test_units_of_one_length_with_turns_at_other_positions_are_never_one_template() -> None:
    """A chat with one attached file and a 6-word request has as many tokens as one with two files
    and a 2-word request: compared position by position they would be one template of wildcards."""
    rng = random.Random(1)

    def unit(files: int, words: int) -> tuple[str, ...]:
        out = ["system:", "Be", "brief", "and", "kind."]
        for _ in range(files):
            out += ["user:", f"```src/m{rng.randrange(99)}.py", "{code:" + "".join(rng.choice("abcdefgh") for _ in range(8)) + "}", "```"]
        return (*out, "user:", "Please", *(rng.choice(["fix", "the", "parser", "loop", "now", "tests"]) for _ in range(words)))

    units = [unit(1, 6) for _ in range(8)] + [unit(2, 2) for _ in range(8)]
    assert len({len(u) for u in units}) == 1
    mixed = cluster(units, [1] * len(units), ClusterParams(chat_turns=False))
    assert any(len({turns(units[i]) for i in g.members}) > 1 for g in mixed)  # log lines: no turns, position by position
    for g in cluster(units, [1] * len(units), ClusterParams(chat_turns=True)):
        assert len({turns(units[i]) for i in g.members}) == 1


def test_turn_labels_are_anchors_whatever_their_count() -> None:
    text = "system: Be brief.\nuser: ```src/a.py\n{code}\n```\nuser: Fix it"
    lines = _anchor_lines(text)
    assert [a for a in lines if a.startswith(TURN)] == [TURN + "system: ", TURN + "user: ", TURN + "user: "]
    signature = _signature(lines, Counter())  # no line is frequent: the turns alone are anchors
    assert [a for a in signature if a.startswith(TURN)] == [TURN + "system: ", TURN + "user: ", TURN + "user: "]


def test_a_chat_with_one_more_attached_file_is_another_template() -> None:
    """Two chat shapes that differ only in their number of attached files: the turn labels are
    structure, so no variable spans one, and requests of any length stay one variable."""
    rng = random.Random(3)
    records = [{"prompt": chat(rng, files)} for files in (1, 2) * 15]
    result = mine_prompts(records)
    by_files: dict[int, set[str]] = {1: set(), 2: set()}
    for files, tid in zip((1, 2) * 15, result.assignments):
        by_files[files].add(tid)
    assert len(by_files[1]) == 1 and len(by_files[2]) == 1 and by_files[1] != by_files[2]
    for tid in result.templates:
        template = result.templates[tid]
        assert template.startswith(SYSTEM + "\nuser: ```")
        assert template.count("\nuser: ") in (2, 3)
    assert all(prompt_template_regex(result.templates[t]).match(r["prompt"]) for t, r in zip(result.assignments, records))


LONG_SYSTEM = ("system: You are a careful reviewer of code changes.\nRead every file the user adds before you answer, "
               "and say which file each remark is about.\n\nAlways reply to the user in {lang}.\n\n"
               "Keep each answer short and friendly.\nNever invent an API that is not there, and say so when you "
               "are not sure.\n")


def _summary_chats(rng: random.Random, langs: list[str], weights: list[int], n: int) -> list[str]:
    return [LONG_SYSTEM.format(lang=rng.choices(langs, weights=weights)[0])
            + f"user: ```src/acme/m{rng.randrange(100)}.py\n{rng.choice(CODE)}\nlimit = {rng.randrange(10**6)}\n```\n"
            f"user: {requests(rng)}." for _ in range(n)]


def test_a_word_placeholder_in_a_long_system_prompt_is_one_template() -> None:
    """A system prompt's line ``Always reply to the user in {language}.`` with languages of skewed
    frequency: the frequent ones' lines are anchors, the rare ones' are not, so the chats were a
    template per rare language. Templates that are the same but for that one word, with five or
    more words there, are one template (``merge_one_word``)."""
    rng = random.Random(3)
    langs = ["Rust", "Go", "Kotlin", "Swift", "Python", "Ruby", "Haskell", "Lua", "Java", "Scala"]
    prompts = _summary_chats(rng, langs, [20, 10, 8, 5, 5, 3, 3, 2, 2, 2], 60)
    result = mine_prompts({"prompt": p} for p in prompts)
    assert len(result.templates) == 1
    template = next(iter(result.templates.values()))
    assert re.search(r"\nAlways reply to the user in <\*>\.?\n", template)
    assert all(prompt_template_regex(template).match(p) for p in prompts)


def test_a_word_of_few_values_stays_static_text() -> None:
    """Two templates that differ in one word only (``in Rust.`` / ``in Go.``, each frequent) stay
    apart: a word of few values is a constant, as in the clustering."""
    prompts = _summary_chats(random.Random(5), ["Rust", "Go"], [1, 1], 40)
    result = mine_prompts({"prompt": p} for p in prompts)
    assert sorted(re.findall(r"in (\w+)\.\n", t)[0] for t in result.templates.values()) == ["Go", "Rust"]


def test_the_users_words_that_end_a_chat_are_one_variable() -> None:
    """A last turn of a short label and the user's request (``user: USER QUERY: ...``): the turn's
    end frames the region as the label does. Its requests share phrases (``because the reviewer
    asked for it``) that the word-level miner read as static text of templates of their own."""
    rng = random.Random(7)
    prompts = [f"user: USER QUERY: {requests(rng)}" for _ in range(40)]
    result = mine_prompts({"prompt": p} for p in prompts)
    assert list(result.templates.values()) == ["user: USER QUERY: <*>"]


def test_a_region_that_ends_a_chat_is_a_request_only_when_it_is_words() -> None:
    """The guard: inside the last turn (its label before the region), each value a sentence of
    words, no slot, sentinel or turn label, at most ``MAX_REQUEST_WORDS``."""
    head = ("system:", "Be", "brief.", "user:", "USER", "QUERY:")
    pats = [(*head, "Fix", "the", "loop"), (*head, "<*>", "with", "type", "hints"), (*head, "Explain", "{code:abcdefgh}"),
            (*head, *["word"] * (MAX_REQUEST_WORDS + 1)), (*head, "<|im_end|>"), (*head, "Hi", "user:", "Fix")]
    assert last_turns_request([0, 1], pats, head)
    assert not any(last_turns_request([0, k], pats, head) for k in (2, 3, 4, 5))
    one_text = [p[4:] for p in pats]  # prompts of one text, no turn label: the prompt's start is the turn's
    assert last_turns_request([0, 1], one_text, head[4:])
    assert not last_turns_request([0, 1], one_text, ("Fix", "the", "loop", "in", "the", "parser")[: LABEL_WORDS + 1])
    assert not last_turns_request([0, 5], one_text, head[4:])  # a member with a turn label is a chat: its last turn decides


def test_the_label_before_a_chats_last_words_is_proposed_from_each_pattern() -> None:
    """Frames for the user's words that end a chat are proposed from each pattern itself (its last
    turn label and up to ``LABEL_WORDS`` words after it), not only found between pairs of the first
    few hundred patterns of a bucket: in a log of many chats most open with ``user:``."""
    p = ("user:", "```{file_path}", "{code}", "```", "user:", "USER", "QUERY:", "Fix", "the", "loop")
    heads = {h for h, t in last_turn_heads([p]) if t == ()}
    assert p[:6] in heads and p[:7] in heads and p[:5] not in heads
    assert all(len(h) <= 5 + LABEL_WORDS for h in heads)
    assert last_turn_heads([("Fix", "the", "loop")]) == {(("Fix",), ()), (("Fix", "the"), ())}  # one text: one turn
    assert {h for h, _ in last_turn_heads([("user:", "Fix", "<*>", "now")])} == {("user:", "Fix")}  # a label stops at a wildcard


def test_the_users_words_after_a_short_label_that_opens_a_prompt_are_one_variable() -> None:
    """A prompt of one text, no chat turns: a label of a few words and the user's request to its end
    (smol-developer's ``I want a: {prompt}``). The prompt's start is the turn's start, as a chat's
    last turn label is: its requests, sentences of words from a small vocabulary that share
    phrases (``with type hints``), were templates of their own by their length and words."""
    rng = random.Random(11)
    stacks = ["in Python", "in Rust", "with Django", "with FastAPI and SQLite", "in Go", "in React with Vite"]
    apps = ["todo app", "snake game", "chat server", "URL shortener", "Discord bot", "weather dashboard", "markdown blog"]
    tails = ["", " that works offline", " with dark mode", " and deploy it", " with a README"]

    def app() -> str:
        return f"{rng.choice(VERBS)} a {rng.choice(apps)} {rng.choice(stacks)}{rng.choice(tails)}{rng.choice(['', '.'])}"

    prompts = [f" I want a: {app()} " for _ in range(30)] + [f" the app prompt is: {app()} " for _ in range(30)]
    rng.shuffle(prompts)
    result = mine_prompts({"prompt": p} for p in prompts)
    assert sorted(result.templates.values()) == [" I want a: <*> ", " the app prompt is: <*> "]


def test_the_users_words_that_open_a_prompt_before_its_static_words_are_one_variable() -> None:
    """The mirror: a prompt of one text that opens with the user's request and ends with the template's words
    (tlm's ``{prompt}. I'm using {shell} terminal on operating system: {os}``). No two requests share their
    first words, so the prompts were one template each; the words after them frame the request."""
    rng = random.Random(5)
    stacks = ["in Python", "in Rust", "with Django", "with FastAPI and SQLite", "in Go", "in React with Vite"]
    apps = ["todo app", "snake game", "chat server", "URL shortener", "Discord bot", "weather dashboard", "markdown blog"]
    tails = ["", " that works offline", " with dark mode", " and deploy it", " with a README"]
    prompts = [f"{rng.choice(VERBS)} a {rng.choice(apps)} {rng.choice(stacks)}{rng.choice(tails)}. I'm using bash terminal on "
               "operating system: linux" for _ in range(40)]
    result = mine_prompts({"prompt": p} for p in prompts)
    assert list(result.templates.values()) == ["<*> I'm using bash terminal on operating system: linux"]
    assert opening_request([0, 1], [("Fix", "it", "now", "please"), ("Add", "tests", "now", "please")], ("now", "please"))
    assert not opening_request([0, 1], [("user:", "Fix", "now", "please"), ("Add", "tests", "now", "please")], ("now", "please"))
    assert not opening_request([0, 1], [("{code}", "now", "please"), ("Add", "tests", "now", "please")], ("now", "please"))


def test_a_line_of_one_variable_word_in_a_long_system_prompt_is_one_template() -> None:
    """A system prompt's line ``Always reply to the user in {language}.`` with languages of skewed
    frequency: the frequent ones' lines are anchors, the rare ones' are not, so by their anchors the
    chats were four templates. The line, between the same two static lines with five or more words
    at one place, is read as ``Always reply to the user in <*>.``: one template."""
    rng = random.Random(3)
    langs = ["Rust", "Go", "Kotlin", "Swift", "Python", "Ruby", "Haskell", "Lua", "Java", "Scala"]
    vocab = "add fix the loop class tests docs names value error path cache list order input output file line word speed race lock".split()
    system = ("system: You are a careful reviewer of code changes.\nRead every file the user adds before you answer.\n\n"
              "Always reply to the user in {lang}.\n\nKeep each answer short and friendly.\nNever invent an API that is not there.\n")
    prompts = [system.format(lang=rng.choices(langs, weights=[20, 10, 8, 5, 5, 3, 3, 2, 2, 2])[0])
               + f"user: The summary: {' '.join(rng.choices(vocab, k=rng.randint(4, 12)))}.\n\nPlease go on with the task where you left it.\n"
               f"Last request: {' '.join(rng.choices(vocab, k=rng.randint(3, 9)))}." for _ in range(60)]
    result = mine_prompts({"prompt": p} for p in prompts)
    assert len(result.templates) == 1
    template = next(iter(result.templates.values()))
    assert "\nAlways reply to the user in <*>.\n" in template
    assert all(prompt_template_regex(template).match(p) for p in prompts)


def test_a_word_of_four_values_or_of_a_request_is_no_variable_line() -> None:
    """Four values between the same lines stay four lines (few values: constants, as in the
    clustering); a line that opens a chat's turn (a user's request) is never read so."""
    frame = ("Read every file the user adds before you answer.", "Keep each answer short and friendly.")
    four = [[frame[0], f"Always reply to the user in {w}.", frame[1]] for w in ("Rust", "Go", "Lua", "Java")]
    assert _variable_lines(four) == {}
    five = four + [[frame[0], "Always reply to the user in Ruby.", frame[1]]]
    assert set(_variable_lines(five).values()) == {"Always reply to the user in <*>."}
    turns_ = [[frame[0], TURN + "user: ", INLINE + f"Please reply in {w} today.", frame[1]] for w in ("Rust", "Go", "Lua", "Java", "Ruby")]
    assert _variable_lines(turns_) == {}


def test_a_request_between_two_static_lines_is_no_variable_line() -> None:
    """A user's request between the same two static lines, whose words recur (``Fix the loop so that
    it works on Windows too`` with five verbs): the form with the verb a wildcard is held by a small
    share of the prompts those lines frame, so it is one request of many, not a template's line."""
    frame = ("The user has requested the following change:", "Please generate the code now.")
    words = "rename split document profile rewrite extend shorten".split()
    other = [[frame[0], " ".join(words[(i + k) % 7] for k in range(17)) + f" {i}", frame[1]] for i in range(20)]  # long: no form
    five = [[frame[0], f"{v} the loop so that it works on Windows too", frame[1]] for v in ("Fix", "Test", "Add", "Make", "Clean")]
    assert _variable_lines(five) != {}
    assert _variable_lines(five + other) == {}


def test_long_prompts_that_share_only_a_length_are_no_template() -> None:
    """Prompts of one token count from different templates share no word at any position: position
    by position they are one template of wildcards (``user: <*> <*> ...``). For log lines that stays
    so; a chat's prompts of that length with nothing but their turn labels in common stay apart."""
    rng = random.Random(5)

    def words(n: int) -> list[str]:
        return ["".join(rng.choice("bcdfghjklmnpqrstvwz") for _ in range(6)) for _ in range(n)]

    units = [("user:", *words(MAX_REQUEST_WORDS + 10)) for _ in range(3)]
    assert len(cluster(units, [1, 1, 1], ClusterParams(chat_turns=False))) == 1
    assert sorted(g.members for g in cluster(units, [1, 1, 1], ClusterParams(chat_turns=True))) == [[0], [1], [2]]
    # a prompt logged as one text (no turn labels) opens with a word of its own: the first word of the
    # bucket is shared by construction, no static text of a template
    plain = [("Please", *words(MAX_REQUEST_WORDS + 10)) for _ in range(3)]
    assert len(cluster(plain, [1, 1, 1], ClusterParams(chat_turns=False))) == 1
    assert sorted(g.members for g in cluster(plain, [1, 1, 1], ClusterParams(chat_turns=True))) == [[0], [1], [2]]
    # two words that any two system prompts may open with (``You are``) are no static text of a long template either;
    # a template that shares more of its text still is one
    opening = [("You", "are", *words(MAX_REQUEST_WORDS + 10)) for _ in range(3)]
    assert sorted(g.members for g in cluster(opening, [1, 1, 1], ClusterParams(chat_turns=True))) == [[0], [1], [2]]
    shared = [("You", "are", "a", "helpful", *words(MAX_REQUEST_WORDS + 10)) for _ in range(3)]
    assert [g.members for g in cluster(shared, [1, 1, 1], ClusterParams(chat_turns=True))] == [[0, 1, 2]]


def test_long_chats_with_files_that_share_only_a_length_are_no_template() -> None:
    """The same with an attached file before the words: its fences (```` ```src/a.py ````, ```` ``` ````) and its code
    slot are a chat's structure, as the turn labels are, and no static text the prompts share."""
    rng = random.Random(6)

    def words(n: int) -> list[str]:
        return ["".join(rng.choice("bcdfghjklmnpqrstvwz") for _ in range(6)) for _ in range(n)]

    units = [("user:", "```<*>", f"{{code:{c * 8}}}", "```", "user:", *words(MAX_REQUEST_WORDS + 10)) for c in "abc"]
    assert sorted(g.members for g in cluster(units, [1, 1, 1], ClusterParams(chat_turns=True))) == [[0], [1], [2]]


def test_short_prompts_that_share_only_a_length_and_hold_code_at_other_places_are_no_template() -> None:
    """Short prompts of one token count from different templates: one a sentence and a code slot, one a code
    slot and a sentence. Position by position they share no word, but their code slots are at other places,
    which one template's prompts of one length never do: they stay apart for the later merges to place. Short
    free text with no code (a user's own messages) is still one template of wildcards."""
    units = [("user:", "I", "ran", "this:", "{code:abcdefgh}", "ok"),
             ("user:", "I", "saw", "that:", "{code:bcdefghi}", "now"),
             ("user:", "{code:cdefghij}", "Docs", "are", "in", "docs/."),
             ("user:", "Okay,", "here", "is", "some", "{code:defghijk}")]
    params = ClusterParams(chat_turns=True)
    assert sorted(g.members for g in cluster(units, [1, 1, 1, 1], params)) == [[0], [1], [2], [3]]
    assert len(cluster(units, [1, 1, 1, 1], ClusterParams(chat_turns=False))) == 1
    free = [("user:", "fix", "the", "parser"), ("user:", "rename", "this", "loop"), ("user:", "explain", "these", "imports")]
    assert [g.members for g in cluster(free, [1, 1, 1], params)] == [[0, 1, 2]]


def test_the_words_that_end_two_templates_requests_frame_no_free_text_after_a_chats_files() -> None:
    """Two templates after attached files: ``User Request:`` and the user's words, or a paragraph and the
    user's words. The words come from the same lists, so prompts of both end alike (``... with type hints``):
    the file's fences and the turn labels before, those words after, frame a region that holds a few words in
    one template's prompts and the whole paragraph in the other's. A frame whose head is a chat's structure
    alone (turn labels, fences, slots) frames no free text: every chat has that head."""
    rng = random.Random(11)
    paragraph = ("You help the user to decide which kinds of context are needed to answer a question about "
                 "their code. Answer with a comma-separated list and nothing else.\nThe question is: ")

    def files() -> str:
        return "".join(f"user: ```src/acme/m{rng.randrange(100)}.py\n{rng.choice(CODE)}\nlimit = {rng.randrange(10**6)}\n```\n"
                       for _ in range(2))

    asks = [files() + "user: User Request:\n" + requests(rng) for _ in range(40)]
    decides = [files() + "user: " + paragraph + requests(rng) for _ in range(40)]
    result = mine_prompts({"prompt": p} for p in [*asks, *decides])
    first, second = set(result.assignments[:40]), set(result.assignments[40:])
    assert not first & second
    assert all("User Request:" in result.templates[t] for t in first)
    assert all("comma-separated list" in result.templates[t] for t in second)


def test_templates_that_share_more_than_a_first_word_are_compared_in_a_large_bucket() -> None:
    """Frames come from comparing templates that share their first word pairwise, a bounded number of them.
    In a log of many chats nearly all open with ``user:``: past the bound, the templates that share their
    first two words, three, ... are compared among themselves, so an instruction whose templates sort after
    the first few hundred still finds its frame."""
    rng = random.Random(13)
    noise = [("user:", "```<*>", f"{{code:{rng.randrange(10**8)}}}", "```") for _ in range(300)]  # sort first
    plans = [("user:", "the", "plan", "we", "agreed", "on", "is:", f"w{n}") for n in range(30)]
    pats = [*noise, *plans]
    buckets = frame_buckets(list(range(len(pats))), pats, deeper=True)
    assert all(len(b) <= MAX_FRAME_BUCKET for b in buckets)
    assert any(set(range(len(noise), len(pats))) <= set(b) for b in buckets)  # the instruction's templates, together
    small = list(range(len(noise), len(pats)))
    assert [sorted(b) for b in frame_buckets(small, pats, deeper=True)] == [small]  # within the bound: one bucket, as before


def test_an_instruction_after_several_files_is_compared_among_its_own_templates() -> None:
    """Every chat with two files opens with the same eight tokens (turn labels, fences, slots), the depth the
    large bucket is searched to: the words are read past that structure, so an instruction after the files
    still has its templates compared among themselves (butterfish's ``The user ran the command "..."``)."""
    rng = random.Random(17)
    files = ("user:", "```<*>", "{code}", "```", "user:", "```<*>", "{code2}", "```", "user:")
    noise = [(*files, "Add", f"x{rng.randrange(10**8)}") for _ in range(300)]  # sort first
    ran = [(*files, "The", "user", "ran", "the", "command", f'"w{n}",', "which", "failed.") for n in range(30)]
    pats = [*noise, *ran]
    buckets = frame_buckets(list(range(len(pats))), pats, deeper=True)
    assert all(len(b) <= MAX_FRAME_BUCKET for b in buckets)
    assert any(set(range(len(noise), len(pats))) <= set(b) for b in buckets)


def test_a_prompt_of_another_templates_length_does_not_wildcard_a_template() -> None:
    """Prompts of a frequent template have the token count of unrelated one-off prompts (the user's
    words happen to have the right length). Grouped by length they would be one template of
    wildcards, and its anchors, those of most of its prompts, would merge it into the frequent one as
    ``user: <*>``; the template keeps its static text and the one-off prompts stay out of it."""
    rng = random.Random(7)
    static = ("You are a careful assistant for a team of engineers. Read the request, think about the code it names, "
              "and answer in one short paragraph followed by a fenced block of code.\n\nRequest: ")
    vocab = "fix rename document split merge the loop parser cache lock tests docs path order".split()
    prompts = ["user: " + static + " ".join(rng.choices(vocab, k=3 + i % 20)) for i in range(40)]  # two of each length
    length = len(prompts[0].split())
    odd = ["user: " + " ".join("".join(rng.choice("bcdfghjklmnpqrstvwz") for _ in range(7)) for _ in range(length - 1)) for _ in range(3)]
    result = mine_prompts({"prompt": p} for p in [*prompts, *odd])
    ours = {result.assignments[i] for i in range(len(prompts))}
    assert len(ours) == 1
    template = result.templates[next(iter(ours))]
    assert "Read the request, think about the code it names" in template
    assert not ours & set(result.assignments[len(prompts) :])


def test_a_line_whose_variable_is_one_word_or_two_in_a_long_system_prompt_is_one_template() -> None:
    """ChatDev's ``Modality: "{modality}".`` with modalities of one word (``image``) and one of two
    (``mind map``): the one-word form of the line held the first ones, the two-word value's line was
    an anchor of its own and its chats another template. A line's form may also take two plain words
    as its variable (one-word forms are tried first: ``Construct valid <*> command`` keeps ``valid``)."""
    rng = random.Random(3)
    modalities = ["image", "document", "website", "application", "dashboard", "mind map", "powerpoint", "spreadsheet"]
    vocab = "add fix the loop class tests docs names value error path cache list order input output file line word speed race lock".split()
    system = ("system: You are a careful reviewer of code changes.\nRead every file the user adds before you answer.\n\n"
              "Modality: \"{modality}\".\n\nKeep each answer short and friendly.\nNever invent an API that is not there.\n")
    prompts = [system.format(modality=rng.choices(modalities, weights=[20, 10, 8, 5, 5, 6, 3, 3])[0])
               + f"user: The summary: {' '.join(rng.choices(vocab, k=rng.randint(4, 12)))}.\n\nPlease go on with the task where you left it.\n"
               f"Last request: {' '.join(rng.choices(vocab, k=rng.randint(3, 9)))}." for _ in range(60)]
    result = mine_prompts({"prompt": p} for p in prompts)
    assert len(result.templates) == 1
    template = next(iter(result.templates.values()))
    assert "\nModality: <*>\n" in template and "mind map" not in template
    assert all(prompt_template_regex(template).match(p) for p in prompts)


def test_a_lines_two_word_forms_come_after_its_one_word_forms() -> None:
    """The first form of a line found variable is its form: one word is tried before two, so a value of
    one word keeps the static word next to it (``Construct valid <*> command``, not ``Construct <*> command``)."""
    forms = _forms('Construct valid bash command.')
    assert [v for _, v in forms] == ["Construct", "valid", "bash", "command", "Construct valid", "valid bash", "bash command"]
    assert ("Construct valid <*>.", "bash command") in forms
    assert [v for _, v in _forms('Modality: "mind map".')][-1] == '"mind map'  # punctuation after a word ends a value
    assert _forms("Be brief.")[-1] == ("Be <*>.", "brief")  # a line of two words: no two-word form (the whole line)
