"""logmine's own JSONL (``native/YYYY-MM-DD.jsonl``): everything the simulator knows.

Records follow :class:`logmine.formats.native.NativeEvent` / ``NativeRequest``; requests carry
``token_times_ms`` and ``token_texts``, and ``attrs`` holds the ground truth: ``template_name``,
``template_id``, ``token_kinds`` (one letter per token, see ``truth.json``), ``outcome``.
"""

from __future__ import annotations

from typing import Any

from logmine.sample.model import Event, Request, Session
from logmine.sample.writers._base import ABSURD_ISO, ABSURD_MS, Writer, day, deep, iso_ms


class NativeWriter(Writer):
    NAME = "native"
    IDES = ("vscode", "jetbrains", "neovim")

    def write(self, session: Session) -> None:
        rel = f"native/{day(session.start)}.jsonl"
        user = session.user.person
        self.truth.person(self.NAME, user.login, user.email, user.home, "user_id, file paths")
        epoch = self.draw.chance(0.1)  # some producers write epoch ms
        base = {"session_id": session.session_id, "user_id": user.login, "ide": session.ide}
        for item in session.items:
            ts: str | int = item.ts if epoch else iso_ms(item.ts)
            if isinstance(item, Event):
                self.files.line(rel, self._event(item, ts, base))
            else:
                self.files.line(rel, self._request(item, ts, base))
                self.truth.prompt(self.NAME, item)

    def _event(self, e: Event, ts: str | int, base: dict[str, Any]) -> dict[str, Any]:
        obj: dict[str, Any] = {"type": "event", "ts": ts, "action": e.action, **base, "file_path": e.file_path,
                               "language": e.language}
        if e.duration_ms is not None:
            obj["duration_ms"] = e.duration_ms
        if e.attrs:
            obj["attrs"] = e.attrs
        return obj

    def _request(self, r: Request, ts: str | int, base: dict[str, Any]) -> dict[str, Any]:
        obj: dict[str, Any] = {
            "type": "llm_request", "ts": ts, "kind": r.kind, "request_id": r.request_id, **base, "model": r.model.name,
            "language": r.language, "file_path": r.file_path, "prompt": r.prompt,
        }
        if r.kind == "completion":
            obj["prefix"], obj["suffix"] = r.values["prefix"], r.values["suffix"]
        obj["completion"] = r.completion if r.outcome != "error" else None
        obj["accepted"] = r.accepted
        if r.timing is not None:
            obj["ttft_ms"] = r.timing.ttft_ms if r.token_texts else None
            obj["total_ms"] = r.timing.total_ms
        obj["prompt_tokens"] = r.prompt_tokens
        obj["completion_tokens"] = len(r.token_texts)
        if r.token_texts:
            obj["token_times_ms"] = r.timing.token_times_ms if r.timing else None
            obj["token_texts"] = r.token_texts
        attrs: dict[str, Any] = {
            "template_name": r.template.name, "template_id": r.template.template_id, "provider": r.model.provider,
            "outcome": r.outcome, "token_kinds": r.token_kinds,
        }
        if r.template.command:
            attrs["command"] = r.template.command
        obj["attrs"] = attrs
        return obj

    def corrupt(self, obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
        obj = deep(obj)
        d = self.draw
        if kind == "wrong_type":
            choice = d.below(3)
            if choice == 0 or obj["type"] == "event" and choice == 2:
                obj["ts"] = True
            elif choice == 1 and obj["type"] == "event":
                obj["action"] = 42
            elif choice == 1:
                obj["accepted"] = "yes"
            else:
                obj["prompt_tokens"] = str(obj.get("prompt_tokens"))
            return obj
        if kind == "negative_latency":
            if obj["type"] == "event":
                obj["duration_ms"] = -round(abs(obj.get("duration_ms") or 35.0), 1)
            elif obj.get("ttft_ms") is not None:
                obj["ttft_ms"] = -obj["ttft_ms"]
            else:
                return None
            return obj
        if kind == "absurd_timestamp":
            obj["ts"] = d.pick(ABSURD_MS) if isinstance(obj["ts"], int) else d.pick(ABSURD_ISO)
            return obj
        return None
