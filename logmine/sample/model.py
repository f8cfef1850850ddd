"""The pure simulator: developers' sessions of editor actions and assistant requests.

Values in, values out: a seeded numpy Generator, the code corpus and the options give
:class:`Session` objects held in memory one at a time; writers turn them into log lines.
What is planted (flow transitions, acceptance pattern, model speeds) is described by
:func:`model_truth` for ``truth.json``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from logmine.sample import texts
from logmine.sample.code import CodeFile, Corpus, block_cut, fim_cut, language_cdf, pick_file
from logmine.sample.draw import Draw, cdf
from logmine.sample.pii import SECRET_KINDS, Person, Secret, code_line, make_person, make_secret, sentence
from logmine.sample.templates import SLOTS, Template, prompt_text
from logmine.sample.timing import Timing, token_times, tokenize


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """A code model as the simulator sees it: who serves it and how fast it streams."""

    name: str
    provider: str
    family: str
    token_ms: float
    """Median gap between two IDENT tokens, ms."""
    ttft_ms: float
    """Median time to first token, ms."""
    accept_base: float
    """Chance that a completion of this model is accepted outside the planted pattern."""


MODELS = (
    ModelSpec("qwen2.5-coder:7b", "ollama", "qwen", 14.0, 190.0, 0.30),
    ModelSpec("starcoder2:15b", "ollama", "starcoder", 34.0, 420.0, 0.22),
    ModelSpec("codestral-latest", "mistral", "codestral", 11.0, 260.0, 0.33),
    ModelSpec("deepseek-coder-v2:16b", "ollama", "deepseek", 22.0, 300.0, 0.27),
    ModelSpec("gpt-4o-mini", "openai", "openai", 9.0, 350.0, 0.25),
)
COMPLETION_MODEL_CDF = cdf([3, 2, 3, 2, 1])
"""How often sessions use each model for completions (in :data:`MODELS` order)."""

PATTERN_AFTER = ("file.save", "editor.edit")
"""The planted acceptance pattern: a completion shown right after these two actions ..."""
PATTERN_ACCEPT = 0.70
"""... is accepted with this chance instead of the model's ``accept_base``."""
EDIT_ACCEPT = 0.55
ERROR_P = 0.01
"""Share of requests that fail without any token."""
CANCEL_P = 0.15
"""Share of not-accepted completions cancelled mid-stream (the user typed on)."""
OWN_TEMPLATE_P = 0.8
"""Chance a request uses its user's configured template for the slot, else any by weight."""

# Flow: state -> (next state, weight). States emit actions (see Simulator._emit).
TRANSITIONS: dict[str, dict[str, float]] = {
    "open": {"navigate": 25, "edit": 45, "complete": 15, "find": 5, "chat": 10},
    "navigate": {"edit": 45, "navigate": 15, "open": 15, "complete": 10, "find": 5, "chat": 5, "slash": 5},
    "find": {"navigate": 50, "edit": 40, "open": 10},
    "edit": {"edit": 28, "complete": 30, "save": 22, "undo": 5, "navigate": 5, "edit_req": 4, "chat": 3, "slash": 3},
    "undo": {"edit": 70, "save": 20, "complete": 10},
    "save": {"format": 35, "run": 15, "test": 15, "edit": 25, "build": 5, "commit": 5},
    "format": {"save": 45, "run": 20, "test": 25, "edit": 10},
    "run": {"edit": 45, "debug": 10, "chat": 10, "navigate": 15, "open": 10, "slash": 10},
    "test": {"edit": 40, "commit": 20, "slash": 10, "navigate": 10, "run": 10, "chat": 10},
    "debug": {"edit": 50, "navigate": 30, "run": 20},
    "build": {"run": 40, "test": 30, "edit": 30},
    "commit": {"open": 35, "edit": 30, "focus": 20, "close": 15},
    "complete": {"edit": 55, "complete": 15, "save": 20, "navigate": 10},
    "chat": {"edit": 40, "chat": 20, "slash": 10, "navigate": 20, "edit_req": 10},
    "slash": {"edit": 50, "chat": 20, "edit_req": 15, "save": 15},
    "edit_req": {"save": 40, "edit": 40, "test": 20},
    "close": {"open": 80, "focus": 20},
    "focus": {"edit": 50, "navigate": 30, "open": 20},
}
_NEXT = {s: (list(t), cdf(list(t.values()))) for s, t in TRANSITIONS.items()}

SIMPLE_ACTIONS = {
    "navigate": "editor.navigate", "find": "editor.find", "edit": "editor.edit", "undo": "editor.undo", "save": "file.save",
    "format": "editor.format", "run": "run.start", "test": "test.run", "debug": "debug.start", "build": "build",
    "commit": "vcs.commit", "close": "file.close", "focus": "window.focus",
}
GAP_MS = {  # median pause after the action, ms
    "editor.navigate": 1500, "editor.find": 4000, "editor.edit": 2500, "editor.undo": 700, "file.save": 500,
    "editor.format": 900, "run.start": 2000, "test.run": 2000, "debug.start": 3000, "build": 2000, "vcs.commit": 20000,
    "file.close": 800, "window.focus": 5000, "file.open": 2000,
}
DURATION_MS = {"editor.edit": 3000, "run.start": 6000, "test.run": 14000, "debug.start": 45000, "build": 20000, "vcs.commit": 9000}
"""Median duration of actions that take time (typing burst, run, test, build ...)."""
SLASH_CDF = cdf([30, 25, 20, 15, 10])
SLASH_ORDER = ("/explain", "/test", "/fix", "/doc", "/commit")


@dataclass(frozen=True, slots=True)
class Event:
    """An editor action at ``ts`` (epoch ms)."""

    ts: int
    action: str
    file_path: str | None
    language: str | None
    duration_ms: float | None = None
    attrs: dict[str, object] | None = None


@dataclass(slots=True)
class Request:
    """One request to the assistant's model and what streamed back."""

    request_id: str
    ts: int
    kind: str  # completion | chat | edit
    model: ModelSpec
    template: Template
    messages: list[tuple[str, str]]
    prompt: str
    values: dict[str, str]
    completion: str
    token_texts: list[str]
    token_kinds: str
    timing: Timing | None
    outcome: str  # success | cancel | error
    accepted: bool | None
    prompt_tokens: int
    secrets: tuple[Secret, ...] = ()

    @property
    def file_path(self) -> str | None:
        return self.values.get("file_path")

    @property
    def language(self) -> str | None:
        return self.values.get("language")


@dataclass
class User:
    index: int
    person: Person
    user_id: str
    templates: dict[str, Template]
    project: str
    no_code: bool


@dataclass
class Session:
    session_id: str
    user: User
    ide: str
    start: int
    completion_model: ModelSpec
    chat_model: ModelSpec
    items: list[Event | Request] = field(default_factory=list)


class Simulator:
    """Simulates sessions for one output format from its own seeded Generator."""

    def __init__(self, rng: np.random.Generator, corpus: Corpus, *, secret_rate: float, max_prefix: int, max_suffix: int,
                 ides: tuple[str, ...], no_code_share: float = 0.0, first_secret: int = 0) -> None:
        self.rng, self.draw, self.corpus = rng, Draw(rng), corpus
        self.secret_rate, self.max_prefix, self.max_suffix, self.ides = secret_rate, max_prefix, max_suffix, ides
        self.no_code_share = no_code_share  # users whose tool logs no code (Continue's noCode); they get no secrets
        self.languages, self.language_cdf = language_cdf(corpus)
        self.secrets = {kind: [make_secret(kind, self.draw) for _ in range(3)] for kind in SECRET_KINDS}
        self.acceptance: Counter[str] = Counter()
        self.planted = first_secret - 1  # secret kinds take turns from SECRET_KINDS[first_secret] on
        self.t = 0.0
        self.file: CodeFile = corpus.files[0]
        self.session: Session | None = None
        self.last: tuple[str, str] = ("", "")

    # -- users and sessions ----------------------------------------------------------------------
    def make_user(self, index: int, project: str) -> User:
        d = self.draw
        person = make_person(d, index)
        templates = {slot: options[d.weighted(cdf([t.weight for t in options]))] for slot, options in sorted(SLOTS.items())}
        return User(index, person, d.uuid(), templates, project, no_code=d.chance(self.no_code_share))

    def run_session(self, user: User, start_ms: float, budget: int) -> Session:
        """A session of exactly ``budget`` items (events and requests) starting at ``start_ms``."""
        d = self.draw
        model = MODELS[d.weighted(COMPLETION_MODEL_CDF)]
        chat_model = MODELS[-1] if d.chance(0.6) else model
        s = Session(d.uuid(), user, d.pick(self.ides), int(start_ms), model, chat_model)
        self.session, self.t, self.last = s, start_ms, ("", "")
        state = "open"
        while len(s.items) < budget:
            self._emit(state)
            names, weights = _NEXT[state]
            state = names[d.weighted(weights)]
        del s.items[budget:]
        return s

    def _event(self, action: str, duration: float | None = None, attrs: dict[str, object] | None = None) -> None:
        assert self.session is not None
        f = self.file
        self.session.items.append(Event(int(self.t), action, self.path(f), f.language, duration, attrs))
        self.last = (self.last[1], action)

    def path(self, f: CodeFile) -> str:
        assert self.session is not None
        return f"{self.session.user.person.home}/src/{self.session.user.project}/{f.path}"

    def _pause(self, median: float, sigma: float = 0.7) -> None:
        self.t += self.draw.lognormal(median, sigma)

    def _emit(self, state: str) -> None:
        d = self.draw
        if state == "open":
            language = self.file.language if d.chance(0.7) else self.languages[d.weighted(self.language_cdf)]
            self.file = pick_file(self.corpus, d, language)
            self._event("file.open")
            self._pause(GAP_MS["file.open"])
        elif state == "complete":
            self._completion()
        elif state == "chat":
            self._chat()
        elif state == "slash":
            self._slash()
        elif state == "edit_req":
            self._edit()
        else:
            action = SIMPLE_ACTIONS[state]
            median = DURATION_MS.get(action)
            duration = round(d.lognormal(median, 0.6), 1) if median else None
            attrs: dict[str, object] | None = None
            if action == "editor.edit":
                attrs = {"chars": d.between(1, 120)}
            elif action == "test.run":
                attrs = {"passed": d.between(1, 60), "failed": 0 if d.chance(0.7) else d.between(1, 4)}
            self._event(action, duration, attrs)
            self.t += duration or 0.0
            self._pause(GAP_MS[action])

    # -- requests ----------------------------------------------------------------------------------
    def _template(self, slot: str) -> Template:
        assert self.session is not None
        if self.draw.chance(OWN_TEMPLATE_P):
            return self.session.user.templates[slot]
        options = SLOTS[slot]
        return options[self.draw.weighted(cdf([t.weight for t in options]))]

    def _secret(self) -> Secret | None:
        assert self.session is not None
        if self.session.user.no_code or not self.draw.chance(self.secret_rate):
            return None
        self.planted += 1  # kinds take turns, so a small sample still holds every kind
        return self.draw.pick(self.secrets[SECRET_KINDS[self.planted % len(SECRET_KINDS)]])

    def _request(self, kind: str, model: ModelSpec, template: Template, values: dict[str, str], answer: str,
                 secrets: tuple[Secret, ...], accept_p: float | None) -> Request:
        d = self.draw
        messages = template.render(values)
        prompt = prompt_text(messages)
        token_texts, kinds = tokenize(answer)
        outcome, accepted = "success", None
        if d.chance(ERROR_P):
            outcome, token_texts, kinds, timing = "error", [], "", None
        else:
            timing = token_times(self.rng, kinds, model.token_ms, model.ttft_ms, chat=kind != "completion")
            if accept_p is not None:
                accepted = d.chance(accept_p)
                if not accepted and kind == "completion" and len(kinds) > 2 and d.chance(CANCEL_P):
                    keep = d.between(1, len(kinds) - 1)
                    outcome, token_texts, kinds = "cancel", token_texts[:keep], kinds[:keep]
                    times = timing.token_times_ms[:keep]
                    timing = Timing(timing.ttft_ms, times, round(times[-1] + 1.0 + 5.0 * d.uniform(), 1))
        assert self.session is not None
        return Request(d.uuid(), int(self.t), kind, model, template, messages, prompt, values, "".join(token_texts),
                       token_texts, kinds, timing, outcome, accepted, max(1, len(prompt) // 4), secrets)

    def _finish(self, request: Request) -> None:
        """Append the request and move the clock past its stream."""
        assert self.session is not None
        self.session.items.append(request)
        self.t += request.timing.total_ms if request.timing else self.draw.lognormal(800, 1.0)

    def _values(self, f: CodeFile, **more: str) -> dict[str, str]:
        assert self.session is not None
        return {"file_path": self.path(f), "language": f.language, "repo": self.session.user.project, **more}

    def _completion(self) -> None:
        assert self.session is not None
        d, f, s = self.draw, self.file, self.session
        cut = fim_cut(f, d, self.max_prefix, self.max_suffix)
        prefix, secrets = cut.prefix, ()
        secret = self._secret()
        if secret is not None:
            prefix, secrets = code_line(secret, f.language) + prefix, (secret,)
        model = s.completion_model
        template = self._template(f"fim:{model.family}")
        pattern = self.last == PATTERN_AFTER
        request = self._request("completion", model, template, self._values(f, prefix=prefix, suffix=cut.suffix),
                                cut.middle or "\n", secrets, PATTERN_ACCEPT if pattern else model.accept_base)
        self._finish(request)
        if request.outcome == "error":
            return
        key = "after_save_edit" if pattern else "other"
        self.acceptance[f"{key}.shown"] += 1
        self.acceptance[f"{key}.accepted"] += bool(request.accepted)
        attrs = {"request_id": request.request_id}
        self._event("completion.shown", None, attrs)
        self.t += d.lognormal(700 if request.accepted else 1600, 0.5)
        self._event("completion.accepted" if request.accepted else "completion.rejected", None, attrs)
        self._pause(1200)

    def _chat(self) -> None:
        assert self.session is not None
        d, f = self.draw, self.file
        template = self._template("chat")
        cut = block_cut(f, d, 14, 400)
        question, secrets = texts.question(d, f), ()
        secret = self._secret()
        if secret is not None:
            question, secrets = f"{question} {sentence(secret)}", (secret,)
        self._event("chat.request")
        self._pause(400, 0.3)
        values = self._values(f, code=cut.middle, user_input=question)
        request = self._request("chat", self.session.chat_model, template, values, texts.answer(d, f, cut.middle), secrets, None)
        self._finish(request)
        if d.chance(0.08):
            self._event("chat.feedback", None, {"request_id": request.request_id, "feedback": d.chance(0.7)})
        self._pause(6000)

    def _slash(self) -> None:
        assert self.session is not None
        d, f = self.draw, self.file
        command = SLASH_ORDER[d.weighted(SLASH_CDF)]
        template = self._template(f"slash:{command}")
        cut = block_cut(f, d, 18, 400)
        problem, secrets = texts.problem(d, f), ()
        secret = self._secret() if command == "/fix" else None
        if secret is not None:
            problem, secrets = f"{problem}; {sentence(secret)}", (secret,)
        values = self._values(f, code=cut.middle, user_input=problem, diff=texts.diff(d, f, cut.middle, f.path))
        self._event("chat.request", None, {"command": command})
        self._pause(300, 0.3)
        answer = texts.slash_answer(d, f, command, cut.middle)
        self._finish(self._request("chat", self.session.chat_model, template, values, answer, secrets, None))
        self._pause(5000)

    def _edit(self) -> None:
        assert self.session is not None
        d, f = self.draw, self.file
        template = self._template("edit")
        cut = block_cut(f, d, 16, 600)
        instruction, secrets = texts.instruction(d, f), ()
        secret = self._secret()
        if secret is not None:
            instruction, secrets = f"{instruction}; {sentence(secret)}", (secret,)
        values = self._values(f, code=cut.middle, prefix=cut.prefix, suffix=cut.suffix, user_input=instruction)
        self._event("edit.request")
        self._pause(500, 0.3)
        answer = texts.rewrite(d, f, cut.middle, instruction)
        request = self._request("edit", self.session.chat_model, template, values, answer, secrets, EDIT_ACCEPT)
        self._finish(request)
        if request.outcome != "error":
            self.t += d.lognormal(4000, 0.6)
            action = "edit.accepted" if request.accepted else "edit.rejected"
            self._event(action, None, {"request_id": request.request_id, "new_lines": request.completion.count("\n") + 1})
        self._pause(2000)


def model_truth() -> dict[str, object]:
    """What the simulator plants, for ``truth.json``."""
    return {
        "models": {m.name: {"provider": m.provider, "family": m.family, "token_ms": m.token_ms, "ttft_median_ms": m.ttft_ms,
                            "accept_base": m.accept_base} for m in MODELS},
        "acceptance": {
            "pattern": {"after": list(PATTERN_AFTER), "accept_rate": PATTERN_ACCEPT,
                        "meaning": "a completion shown right after file.save then editor.edit is accepted with accept_rate; "
                                   "other completions with their model's accept_base"},
            "edit_accept_rate": EDIT_ACCEPT, "error_rate": ERROR_P, "cancel_rate_of_rejected": CANCEL_P,
        },
        "flow_transitions": TRANSITIONS,
        "flow_states": {"actions": SIMPLE_ACTIONS, "open": "file.open",
                        "complete": ["llm_request:completion", "completion.shown", "completion.accepted|completion.rejected"],
                        "chat": ["chat.request", "llm_request:chat", "(chat.feedback)"],
                        "slash": ["chat.request", "llm_request:chat"],
                        "edit_req": ["edit.request", "llm_request:edit", "edit.accepted|edit.rejected"]},
    }
