"""JetBrains Feature Usage Statistics: ``jetbrains/<user>/event-log-data/logs/FUS/<day>.log``.

One JSON object a line as ``LogEventSerializer`` writes it (``recorder_version, session,
build, bucket, time, group{id, version}, event{count, data, id}``). Consecutive identical
events are merged into one line with ``"count": N``, as the recorder does. Actions go to the
``actions`` group (``action.invoked`` with ``action_id``), file open/close/edit to
``file.types.usage``, inline completions to ``inline.completion`` (``invoked``, then ``shown``
with ``finish_type`` SELECTED / ESCAPE_PRESSED / TYPED). FUS logs no prompts and no chat.
"""

from __future__ import annotations

from typing import Any

import orjson

from logmine.sample.model import Event, Request, Session
from logmine.sample.writers._base import ABSURD_MS, Writer, day, deep

BUILDS = ("IU-243.22562.218", "PY-243.24978.54", "IU-251.23774.435")
ACTION_IDS = {
    "file.save": ("SaveAll", "Ctrl+S"), "editor.format": ("ReformatCode", "Ctrl+Alt+L"), "editor.undo": ("$Undo", "Ctrl+Z"),
    "run.start": ("Run", "Shift+F10"), "debug.start": ("Debug", "Shift+F9"), "build": ("CompileDirty", "Ctrl+F9"),
    "test.run": ("RerunTests", "Ctrl+F5"), "editor.navigate": ("GotoDeclaration", "Ctrl+B"), "editor.find": ("Find", "Ctrl+F"),
    "vcs.commit": ("CheckinProject", "Ctrl+K"),
}
FILE_EVENTS = {"file.open": "open", "file.close": "close", "editor.edit": "edit"}
LANG = {"python": "Python", "java": "JAVA", "javascript": "JavaScript", "typescript": "TypeScript", "go": "go", "rust": "Rust"}
FILE_TYPE = {"python": "Python", "java": "JAVA", "javascript": "JavaScript", "typescript": "TypeScript", "go": "Go", "rust": "Rust"}
GROUP_VERSIONS = {"actions": "78", "file.types.usage": "69", "inline.completion": "31", "lifecycle": "70"}


class JetBrainsWriter(Writer):
    NAME = "jetbrains"
    IDES = ("intellij", "pycharm")

    def write(self, session: Session) -> None:
        user = session.user
        self.rel = f"jetbrains/{user.person.login}/event-log-data/logs/FUS/{day(session.start)}.log"
        self.base = {"recorder_version": "58", "session": session.session_id.replace("-", "")[:12],
                     "build": BUILDS[user.index % len(BUILDS)], "bucket": str(user.index * 37 % 256)}
        self.pending: tuple[bytes, dict[str, Any]] | None = None
        self.request_no = 0
        requests: dict[str, Request] = {}
        for item in session.items:
            if isinstance(item, Request):
                if item.kind == "completion":
                    requests[item.request_id] = item
                    self._completion_invoked(item)
            else:
                self._event(item, requests)
        self._flush()

    def _event(self, e: Event, requests: dict[str, Request]) -> None:
        lang = e.language or ""
        if e.action in FILE_EVENTS:
            self._line(e.ts, "file.types.usage", FILE_EVENTS[e.action],
                       {"file_type": FILE_TYPE.get(lang, "PLAIN_TEXT"), "plugin_type": "platform"})
        elif e.action in ACTION_IDS:
            action_id, shortcut = ACTION_IDS[e.action]
            self._line(e.ts, "actions", "action.invoked", {
                "action_id": action_id, "class": "com.intellij.openapi.actionSystem.AnAction", "context_menu": False,
                "input_event": shortcut, "place": "MainMenu", "plugin": "com.intellij", "plugin_type": "platform",
                "lang": LANG.get(lang, "TEXT"),
            })
        elif e.action == "window.focus":
            self._line(e.ts, "lifecycle", "frame.activated", {})
        elif e.action in ("completion.accepted", "completion.rejected") and e.attrs:
            r = requests.get(str(e.attrs["request_id"]))
            if r is not None and r.timing is not None:
                finish = "SELECTED" if e.action == "completion.accepted" else self.draw.pick(("ESCAPE_PRESSED", "TYPED"))
                shown = r.ts + r.timing.total_ms
                self._line(e.ts, "inline.completion", "shown", {
                    "request_id": r.request_id.replace("-", "")[:12], "finish_type": finish, "lang": LANG.get(lang, "TEXT"),
                    "time_to_start_showing": int(round(r.timing.ttft_ms)), "duration_shown": max(1, int(e.ts - shown)),
                    "suggestion_length": len(r.completion), "lines": r.completion.count("\n") + 1,
                })

    def _completion_invoked(self, r: Request) -> None:
        data: dict[str, Any] = {
            "request_id": r.request_id.replace("-", "")[:12], "event": "DocumentChange",
            "provider": "com.example.assistant.InlineProvider", "lang": LANG.get(r.language or "", "TEXT"),
            "outcome": "EXCEPTION" if r.outcome == "error" else "SHOW",
        }
        if r.timing is not None:
            data["time_to_compute"] = int(round(r.timing.total_ms))
        self._line(r.ts, "inline.completion", "invoked", data)

    def _line(self, ts: int, group: str, event_id: str, data: dict[str, Any]) -> None:
        key = orjson.dumps([group, event_id, data])
        if self.pending is not None and self.pending[0] == key:
            self.pending[1]["event"]["count"] += 1
            return
        self._flush()
        obj = {**self.base, "time": ts, "group": {"id": group, "version": GROUP_VERSIONS[group]},
               "event": {"count": 1, "data": data, "id": event_id}}
        self.pending = (key, obj)

    def _flush(self) -> None:
        if self.pending is not None:
            self.files.line(self.rel, self.pending[1], weight=self.pending[1]["event"]["count"])
            self.pending = None

    def corrupt(self, obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
        obj = deep(obj)
        if kind == "wrong_type":
            choice = self.draw.below(3)
            if choice == 0:
                obj["time"] = "yesterday"
            elif choice == 1:
                obj["group"] = obj["group"]["id"]
            else:
                obj["event"]["count"] = "1"
            return obj
        if kind == "negative_latency":
            data = obj["event"]["data"]
            key = "time_to_compute" if "time_to_compute" in data else "time_to_start_showing" if "time_to_start_showing" in data else None
            if obj["group"]["id"] == "inline.completion" and key is None:
                return None
            data[key or "duration_ms"] = -self.draw.between(1, 500)
            return obj
        if kind == "absurd_timestamp":
            obj["time"] = self.draw.pick(ABSURD_MS)
            return obj
        return None
