"""Tabby's event log: ``tabby/events/YYYY-MM-DD.json`` (JSON Lines, one server for all users).

``{"user": str|null, "ts": unix ms, "event": {<variant>: {...}}}`` as
``crates/tabby-common/src/api/event.rs`` serialises it: ``completion`` (the final rendered
prompt, segments, choices), then ``view`` when the client shows it and ``select`` or
``dismiss`` with ``elapsed`` ms; chats and slash commands are ``chat_completion``. Tabby logs
no latencies; errors and edits are not logged.
"""

from __future__ import annotations

from typing import Any

from logmine.sample.model import Request, Session
from logmine.sample.writers._base import ABSURD_MS, Writer, completion_pairs, day, deep

USER_AGENTS = {
    "vscode": "tabby-agent/1.10.0 vscode/1.96.4 tabby-vscode/1.20.0",
    "intellij": "tabby-agent/1.10.0 intellij-idea/2024.3.2 tabby-intellij/1.11.0",
}


class TabbyWriter(Writer):
    NAME = "tabby"
    IDES = ("vscode", "intellij")

    def write(self, session: Session) -> None:
        person = session.user.person
        user = person.email if session.user.index % 5 else None
        self.truth.person(self.NAME, person.login, person.email, person.home, "user (e-mail), prompts")
        outcomes = completion_pairs(session)
        for item in session.items:
            if not isinstance(item, Request) or item.outcome == "error" or item.kind == "edit":
                continue
            rel = f"tabby/events/{day(item.ts)}.json"
            if item.kind == "chat":
                self._line(rel, user, item.ts + _total(item), "chat_completion", {
                    "completion_id": "chatcmpl-" + item.request_id,
                    "input": [{"role": "user" if role == "prompt" else role, "content": text} for role, text in item.messages],
                    "output": {"role": "assistant", "content": item.completion},
                })
                self.truth.prompt(self.NAME, item)
                continue
            self._completion(rel, user, session, item)
            outcome = outcomes.get(item.request_id)
            if item.outcome != "success" or outcome is None:
                continue
            cid = "cmpl-" + item.request_id
            view_id = "view-" + self.draw.uuid()
            shown = item.ts + _total(item)
            self._line(rel, user, shown, "view", {"completion_id": cid, "choice_index": 0, "view_id": view_id})
            body: dict[str, Any] = {"completion_id": cid, "choice_index": 0, "view_id": view_id,
                                    "elapsed": max(1, int(outcome.ts - shown))}
            if outcome.action == "completion.accepted":
                if self.draw.chance(0.2):
                    body["kind"] = "line"
                self._line(rel, user, outcome.ts, "select", body)
            else:
                self._line(rel, user, outcome.ts, "dismiss", body)

    def _completion(self, rel: str, user: str | None, session: Session, r: Request) -> None:
        path = r.file_path or ""
        marker = f"/src/{r.values['repo']}/"
        segments: dict[str, Any] = {
            "prefix": r.values["prefix"], "suffix": r.values["suffix"],
            "filepath": path.split(marker, 1)[-1], "git_url": f"https://github.com/example/{r.values['repo']}.git",
        }
        if self.draw.chance(0.05):
            segments["clipboard"] = r.values["prefix"][-80:]
        self._line(rel, user, r.ts, "completion", {
            "completion_id": "cmpl-" + r.request_id, "language": r.language, "prompt": r.prompt, "segments": segments,
            "choices": [{"index": 0, "text": r.completion}], "user_agent": USER_AGENTS[session.ide],
        })
        self.truth.prompt(self.NAME, r)

    def _line(self, rel: str, user: str | None, ts: float, variant: str, body: dict[str, Any]) -> None:
        self.files.line(rel, {"user": user, "ts": int(ts), "event": {variant: body}})

    def corrupt(self, obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
        obj = deep(obj)
        if kind == "wrong_type":
            if self.draw.chance(0.5):
                obj["ts"] = str(obj["ts"])
            else:
                obj["event"] = [obj["event"]]
            return obj
        if kind == "negative_latency":
            body = obj["event"].get("select") or obj["event"].get("dismiss")
            if body is None:
                return None
            body["elapsed"] = -abs(body["elapsed"])
            return obj
        if kind == "absurd_timestamp":
            obj["ts"] = self.draw.pick(ABSURD_MS)
            return obj
        return None


def _total(r: Request) -> float:
    return r.timing.total_ms if r.timing else 0.0
