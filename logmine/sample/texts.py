"""The words of the simulated developers and assistant: questions, instructions, problem
reports, answers, rewritten code, diffs and commit messages, filled with identifiers of the
code at hand."""

from __future__ import annotations

import re

from logmine.sample.code import CodeFile
from logmine.sample.draw import Draw

QUESTIONS = (
    "What does {a} do here?",
    "What does {a} do in this file?",
    "Why does {a} raise an exception when the input is empty?",
    "How can I make {a} faster for large inputs?",
    "Is {a} thread safe?",
    "Can you suggest a better name for {a}?",
    "How do I write a test for {a}?",
    "What is the difference between {a} and {b}?",
    "Where is {a} called from?",
    "Why is {a} None at this point?",
    "How would you refactor {a} to avoid the nested loops?",
    "Is there a standard library function that replaces {a}?",
)
INSTRUCTIONS = (
    "add type hints", "handle the empty input case", "rename {a} to something clearer", "add error handling",
    "make it async", "add logging at debug level", "extract a helper function", "simplify the conditionals",
    "use early returns", "add a short comment above {a}", "replace the loop with a comprehension",
)
PROBLEMS = (
    "it raises a KeyError on the second call", "the loop never ends when {a} is empty",
    "{a} returns the wrong value for negative numbers", "it is off by one at the end of the list",
    "tests fail with a TypeError in {a}", "{a} is called twice", "the result is not sorted",
)
ANSWER_SENTENCES = (
    "`{a}` reads its input and returns a new value without changing the argument.",
    "The problem is that `{a}` is evaluated before `{b}` has been set.",
    "You can avoid the second pass by building the result in one loop.",
    "Note that this also changes the behaviour for empty inputs.",
    "`{b}` is only used to carry state between calls, so it can become a local variable.",
    "The error comes from the call to `{a}`, which expects a string and gets None.",
    "A dictionary lookup keeps this linear instead of quadratic.",
    "Keep the public signature of `{a}` so callers do not change.",
    "This is safe as long as `{b}` is not shared between threads.",
)
CLOSINGS = ("Here is a version that keeps the same interface:", "For example:", "The change would look like this:")
COMMENT = {"python": "#", "shell": "#", "ruby": "#"}


def _idents(d: Draw, f: CodeFile) -> dict[str, str]:
    return {"a": d.pick(f.identifiers), "b": d.pick(f.identifiers)}


def question(d: Draw, f: CodeFile) -> str:
    return d.pick(QUESTIONS).format(**_idents(d, f))


def instruction(d: Draw, f: CodeFile) -> str:
    return d.pick(INSTRUCTIONS).format(**_idents(d, f))


def problem(d: Draw, f: CodeFile) -> str:
    return d.pick(PROBLEMS).format(**_idents(d, f))


def _comment(f: CodeFile) -> str:
    return COMMENT.get(f.language, "//")


def fenced(f: CodeFile, code: str) -> str:
    return f"```{f.language}\n{code}\n```"


def answer(d: Draw, f: CodeFile, code: str) -> str:
    """A chat answer: a few sentences and, often, a code block."""
    parts = [d.pick(ANSWER_SENTENCES).format(**_idents(d, f)) for _ in range(d.between(1, 4))]
    text = " ".join(parts)
    if d.chance(0.6):
        text += f"\n\n{d.pick(CLOSINGS)}\n\n{fenced(f, rewrite_code(d, f, code))}"
    return text


def rewrite_code(d: Draw, f: CodeFile, code: str, note: str | None = None) -> str:
    """``code`` changed the way an assistant would: a comment, a rename or a guard."""
    lines = code.split("\n")
    indent = lines[0][: len(lines[0]) - len(lines[0].lstrip())]
    choice = d.below(3)
    if choice == 0 or note:
        lines.insert(0, f"{indent}{_comment(f)} {note or 'simplified: ' + d.pick(f.identifiers)}")
    elif choice == 1:
        old = re.compile(rf"\b{re.escape(d.pick(f.identifiers))}\b")
        lines = [old.sub(lambda m: m.group() + "_value", line) for line in lines]
    else:
        guard = {"python": f"{indent}if not {d.pick(f.identifiers)}:\n{indent}    return None",
                 "go": f"{indent}if err != nil {{\n{indent}\treturn err\n{indent}}}",
                 "rust": f'{indent}if input.is_empty() {{\n{indent}    return Err("empty input".into());\n{indent}}}'}
        lines.insert(0, guard.get(f.language, f'{indent}if ({d.pick(f.identifiers)} == null) {{ throw new Error("missing value"); }}'))
    return "\n".join(lines)


def rewrite(d: Draw, f: CodeFile, code: str, instruction_text: str) -> str:
    return fenced(f, rewrite_code(d, f, code, instruction_text if d.chance(0.3) else None))


def diff(d: Draw, f: CodeFile, code: str, path: str) -> str:
    """A small unified diff of ``code`` against a rewritten version."""
    new = rewrite_code(d, f, code).split("\n")
    old = code.split("\n")
    body = [f"-{line}" for line in old[:6]] + [f"+{line}" for line in new[:7]]
    return f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1,{min(6, len(old))} +1,{min(7, len(new))} @@\n" + "\n".join(body)


def slash_answer(d: Draw, f: CodeFile, command: str, code: str) -> str:
    ids = _idents(d, f)
    if command == "/explain":
        steps = [f"{i}. {d.pick(ANSWER_SENTENCES).format(**_idents(d, f))}" for i in range(1, d.between(2, 5) + 1)]
        return f"This code defines how `{ids['a']}` is computed.\n\n" + "\n".join(steps)
    if command == "/test":
        return fenced(f, _test_code(f, ids["a"], ids["b"]))
    if command == "/fix":
        return f"The bug is in `{ids['a']}`. {d.pick(ANSWER_SENTENCES).format(**ids)}\n\n{fenced(f, rewrite_code(d, f, code))}"
    if command == "/doc":
        return fenced(f, _documented(f, code))
    return f"Fix {ids['a']} handling of empty input\n\nThe previous version of {ids['b']} assumed at least one item; check for it first."


def _test_code(f: CodeFile, a: str, b: str) -> str:
    if f.language == "python":
        return (f"import pytest\n\n\ndef test_{a.lower()}_empty():\n    assert {a}([]) == []\n\n\n"
                f"def test_{a.lower()}_rejects_none():\n    with pytest.raises(TypeError):\n        {a}(None)\n")
    if f.language == "go":
        return f'func Test{a.title()}(t *testing.T) {{\n\tif got := {a}(""); got != nil {{\n\t\tt.Errorf("{a}() = %v", got)\n\t}}\n}}'
    if f.language == "rust":
        return f'#[test]\nfn {a.lower()}_handles_empty() {{\n    assert!({a}("").is_empty());\n}}'
    return f'test("{a} handles empty input", () => {{\n  expect({a}([])).toEqual([]);\n  expect({b}).toBeDefined();\n}});'


def _documented(f: CodeFile, code: str) -> str:
    out = []
    starts = ("def ", "class ", "function ", "func ", "fn ", "pub fn ", "public ", "export function ", "async def ")
    for line in code.split("\n"):
        stripped = line.lstrip()
        if stripped.startswith(starts):
            indent = line[: len(line) - len(stripped)]
            name = stripped.split("(")[0].split()[-1]
            if f.language == "python":
                out.append(line)
                out.append(f'{indent}    """Describe what {name} does."""')
                continue
            out.append(f"{indent}/** Describe what {name} does. */")
        out.append(line)
    return "\n".join(out)
