"""Continue's dev data: ``continue/<user>/dev_data/0.2.0/<eventName>.jsonl``.

One file per event name, the base fields (``eventName, schema, timestamp, userId, userAgent,
selectedProfileId``) on every record, as ``core/data/log.ts`` writes them. Completions become
``autocomplete`` (only those shown: errors and mid-stream cancels are never logged), chats and
slash commands ``chatInteraction`` (+ ``chatFeedback``), edits ``editInteraction`` +
``editOutcome``; every answered request also gives ``tokensGenerated``. Users with the
``noCode`` privacy level get records without prompt, completion and code fields.
"""

from __future__ import annotations

from typing import Any

from logmine.sample.model import Event, Request, Session
from logmine.sample.writers._base import ABSURD_ISO, Writer, completion_pairs, deep, iso_ms

USER_AGENTS = {
    "vscode": ("Visual Studio Code/1.96.4 (Continue/0.9.256)", "Visual Studio Code/1.97.2 (Continue/1.0.1)"),
    "jetbrains": ("IntelliJ IDEA/2024.3.2 (Continue/0.0.86)", "PyCharm/2024.3.1 (Continue/0.0.88)"),
}
_CODE_FIELDS = ("prompt", "completion", "prefix", "suffix", "previousCode", "newCode")


class ContinueDevWriter(Writer):
    NAME = "continue"
    IDES = ("vscode", "jetbrains")
    NO_CODE_SHARE = 0.1

    def write(self, session: Session) -> None:
        user = session.user
        user_id = user.person.email if user.index % 2 == 0 else user.user_id
        self.truth.person(self.NAME, user.person.login, user.person.email, user.person.home,
                          "userId (e-mail for half the users), filepath")
        base = {
            "schema": "0.2.0", "userId": user_id, "userAgent": USER_AGENTS[session.ide][user.index % 2],
            "selectedProfileId": "local",
        }
        self.dir = f"continue/{user.person.login}/dev_data/0.2.0"
        outcomes = completion_pairs(session)
        for item in session.items:
            if not isinstance(item, Request) or item.outcome == "error":
                continue
            if item.kind == "completion":
                if item.outcome == "success":
                    self._autocomplete(item, base, user.no_code)
            elif item.kind == "chat":
                self._chat(item, base, session, outcomes.get(item.request_id), user.no_code)
            else:
                self._edit(item, base, outcomes.get(item.request_id), user.no_code)
            self._emit("tokensGenerated", item.ts + _total(item), base, {
                "model": item.model.name, "provider": item.model.provider, "promptTokens": item.prompt_tokens,
                "generatedTokens": len(item.token_texts),
            }, no_code=False)

    def _emit(self, name: str, ts: float, base: dict[str, Any], fields: dict[str, Any], no_code: bool) -> None:
        obj = {"eventName": name, **base, "timestamp": iso_ms(ts), **fields}
        if no_code:
            for key in _CODE_FIELDS:
                obj.pop(key, None)
        self.files.line(f"{self.dir}/{name}.jsonl", obj)

    def _autocomplete(self, r: Request, base: dict[str, Any], no_code: bool) -> None:
        fields = {
            "prefix": r.values["prefix"], "suffix": r.values["suffix"], "prompt": r.prompt, "completion": r.completion,
            "accepted": bool(r.accepted), "time": int(round(_total(r))), "modelProvider": r.model.provider,
            "modelName": r.model.name, "cacheHit": self.draw.chance(0.05), "filepath": "file://" + (r.file_path or ""),
            "gitRepo": f"https://github.com/example/{r.values['repo']}.git", "completionId": r.request_id,
            "uniqueId": r.request_id, "maxPromptTokens": 1024, "debounceDelay": 350, "maxSuffixPercentage": 0.2,
            "prefixPercentage": 0.3, "useCache": True, "onlyMyCode": True, "useRecentlyEdited": True,
            "useImports": True, "multilineCompletions": "auto", "modelTimeout": 150,
        }
        self._emit("autocomplete", r.ts + _total(r), base, fields, no_code)
        if not no_code:
            self.truth.prompt(self.NAME, r)

    def _chat(self, r: Request, base: dict[str, Any], session: Session, feedback: Event | None, no_code: bool) -> None:
        fields = {
            "modelProvider": r.model.provider, "modelName": r.model.name, "modelTitle": _title(r), "prompt": r.prompt,
            "completion": r.completion, "sessionId": session.session_id, "tools": [], "rules": [],
        }
        self._emit("chatInteraction", r.ts + _total(r), base, fields, no_code)
        if not no_code:
            self.truth.prompt(self.NAME, r)
        if feedback is not None and feedback.attrs:
            self._emit("chatFeedback", feedback.ts, base, {**fields, "feedback": bool(feedback.attrs["feedback"])}, no_code)

    def _edit(self, r: Request, base: dict[str, Any], outcome: Event | None, no_code: bool) -> None:
        fields = {
            "modelProvider": r.model.provider, "modelName": r.model.name, "modelTitle": _title(r), "prompt": r.prompt,
            "completion": r.completion, "filepath": "file://" + (r.file_path or ""),
        }
        self._emit("editInteraction", r.ts + _total(r), base, fields, no_code)
        if not no_code:
            self.truth.prompt(self.NAME, r)
        if outcome is not None:
            old, new = r.values["code"], _unfence(r.completion)
            self._emit("editOutcome", outcome.ts, base, {
                **fields, "previousCode": old, "newCode": new, "previousCodeLines": old.count("\n") + 1,
                "newCodeLines": new.count("\n") + 1, "lineChange": new.count("\n") - old.count("\n"),
                "accepted": outcome.action == "edit.accepted",
            }, no_code)

    def corrupt(self, obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
        obj = deep(obj)
        if kind == "wrong_type":
            if obj["eventName"] == "autocomplete" and self.draw.chance(0.5):
                obj["accepted"] = "true"
            else:
                obj["timestamp"] = self.draw.pick((True, 1.5, ["2025-03-03"]))
            return obj
        if kind == "negative_latency":
            if obj["eventName"] != "autocomplete":
                return None
            obj["time"] = -abs(obj.get("time") or 120)
            return obj
        if kind == "absurd_timestamp":
            obj["timestamp"] = self.draw.pick(ABSURD_ISO)
            return obj
        return None


def _total(r: Request) -> float:
    return r.timing.total_ms if r.timing else 0.0


def _title(r: Request) -> str:
    return {"gpt-4o-mini": "GPT-4o mini", "codestral-latest": "Codestral"}.get(r.model.name, r.model.name.split(":")[0].title())


def _unfence(text: str) -> str:
    lines = text.split("\n")
    if lines and lines[0].startswith("```"):
        lines = lines[1:]
    if lines and lines[-1].startswith("```"):
        lines = lines[:-1]
    return "\n".join(lines)
