"""Continue's LLM interaction log: ``continue-llm/<user>/llm_log-YYYY-MM-DD.jsonl``.

Items ``{interactionId, timestamp (epoch ms), kind, ...}`` as ``core/llm/logger.ts`` records
them: ``startComplete`` (the rendered FIM prompt) or ``startFim`` (prefix and suffix, when
the server's FIM endpoint is used), ``startChat`` (messages) for chats, slash commands and edits,
then ``chunk`` / ``message`` items and one ``success``, ``cancel`` or ``error`` item. A chunk's
timestamp is when its last token arrived: some requests stream one token a chunk, others
several, so per-token latency is in the chunk gaps.
"""

from __future__ import annotations

from typing import Any

from logmine.sample.model import Request, Session
from logmine.sample.writers._base import ABSURD_MS, Writer, day, deep

FIM_ENDPOINT_P = 0.3
"""Share of completions sent to a FIM endpoint (startFim: prefix and suffix, no rendered prompt)."""
MULTI_TOKEN_CHUNKS_P = 0.3
"""Share of requests whose chunks carry 2-5 tokens each."""


class ContinueLlmWriter(Writer):
    NAME = "continue-llm"
    IDES = ("vscode", "jetbrains")

    def write(self, session: Session) -> None:
        user = session.user.person
        self.truth.person(self.NAME, user.login, user.email, user.home, "file paths in prompts")
        rel = f"continue-llm/{user.login}/llm_log-{day(session.start)}.jsonl"
        for item in session.items:
            if isinstance(item, Request):
                self._request(rel, item)

    def _request(self, rel: str, r: Request) -> None:
        iid, start = r.request_id, r.ts
        options = {"model": r.model.name, "maxTokens": 256 if r.kind == "completion" else 4096,
                   "temperature": 0.01 if r.kind == "completion" else 0.5}
        line = self.files.line
        if r.kind == "completion" and r.model.provider != "openai" and self.draw.chance(FIM_ENDPOINT_P):
            line(rel, {"interactionId": iid, "timestamp": start, "kind": "startFim", "prefix": r.values["prefix"],
                       "suffix": r.values["suffix"], "options": options, "provider": r.model.provider})
            self.truth.secrets_only(self.NAME, r)
        elif r.kind == "completion":
            line(rel, {"interactionId": iid, "timestamp": start, "kind": "startComplete", "prompt": r.prompt,
                       "options": options, "provider": r.model.provider})
            self.truth.prompt(self.NAME, r)
        else:
            messages = [{"role": "user" if role == "prompt" else role, "content": text} for role, text in r.messages]
            line(rel, {"interactionId": iid, "timestamp": start, "kind": "startChat", "messages": messages,
                       "options": options, "provider": r.model.provider})
            self.truth.prompt(self.NAME, r)
        texts, times = r.token_texts, r.timing.token_times_ms if r.timing else []
        size = 1 if not self.draw.chance(MULTI_TOKEN_CHUNKS_P) else self.draw.between(2, 5)
        for i in range(0, len(texts), size):
            chunk = "".join(texts[i : i + size])
            ts = start + int(round(times[min(i + size, len(texts)) - 1]))
            if r.kind == "completion":
                line(rel, {"interactionId": iid, "timestamp": ts, "kind": "chunk", "chunk": chunk})
            else:
                line(rel, {"interactionId": iid, "timestamp": ts, "kind": "message",
                           "message": {"role": "assistant", "content": chunk}})
        end: dict[str, Any] = {"interactionId": iid, "timestamp": start + int(round(r.timing.total_ms if r.timing else 0)),
                               "kind": r.outcome, "promptTokens": r.prompt_tokens, "generatedTokens": len(texts),
                               "thinkingTokens": 0}
        if r.outcome == "error":
            end["timestamp"] = start + self.draw.between(40, 5000)
            end["name"] = "Error"
            end["message"] = self.draw.pick(("HTTP 503 Service Unavailable", "fetch failed", "Request timed out after 30000ms"))
        line(rel, end)

    def corrupt(self, obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
        obj = deep(obj)
        if kind == "wrong_type":
            obj["timestamp"] = self.draw.pick((str(obj["timestamp"]), True, [obj["timestamp"]]))
            return obj
        if kind == "negative_latency":
            if obj["kind"] not in ("chunk", "message", "success", "cancel", "error"):
                return None
            obj["timestamp"] = obj["timestamp"] - 3_600_000  # an hour before its interaction started
            return obj
        if kind == "absurd_timestamp":
            obj["timestamp"] = self.draw.pick(ABSURD_MS)
            return obj
        return None
