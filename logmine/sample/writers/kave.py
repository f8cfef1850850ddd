"""KaVE enriched event streams (Visual Studio): per-user zips of ``<i>.json`` events,
``kave/<first day>/<user>.zip``, as in the MSR data set, and for every fourth user one JSON
array file ``kave/arrays/<user>.json`` instead.

Events are Json.NET objects with ``$type`` names and the base fields (``IDESessionUUID,
KaVEVersion, TriggeredAt, TriggeredBy, Duration, ActiveWindow, ActiveDocument``). Each session
starts and ends with an ``IDEStateEvent``. KaVE predates LLM assistants: a completion becomes a
``CompletionEvent`` (TerminatedState 0 Applied / 1 Cancelled); chats and edits are not logged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from logmine.sample.model import Event, Request, Session
from logmine.sample.truth import Truth
from logmine.sample.writers._base import ABSURD_ISO, Writer, day, deep, iso_offset, timespan
from logmine.sample.writers._sink import FileStats, ZipFiles

NS = "KaVE.Commons.Model.Events."
TYPES = {
    "Document": "VisualStudio.DocumentEvent", "Edit": "VisualStudio.EditEvent", "Command": "CommandEvent",
    "Navigation": "NavigationEvent", "Find": "VisualStudio.FindEvent", "Build": "VisualStudio.BuildEvent",
    "TestRun": "TestRunEvents.TestRunEvent", "VersionControl": "VersionControlEvents.VersionControlEvent",
    "Window": "VisualStudio.WindowEvent", "Completion": "CompletionEvents.CompletionEvent", "IDEState": "VisualStudio.IDEStateEvent",
}
COMMANDS = {
    "editor.format": "VsAction:1:Edit.FormatDocument", "editor.undo": "VsAction:1:Edit.Undo",
    "run.start": "VsAction:1:Debug.StartWithoutDebugging", "debug.start": "VsAction:1:Debug.Start",
}
DOCUMENT_ACTIONS = {"file.open": 0, "file.save": 1, "file.close": 2}
OFFSETS = (1, 2, -5, 9)
FIELD_KINDS = ("wrong_type", "negative_latency", "absurd_timestamp")
"""Kinds planted in JSON array files (a broken byte would break the whole document)."""


class KaveWriter(Writer):
    NAME = "kave"
    IDES = ("visualstudio",)

    def __init__(self, root: Path, rng: np.random.Generator, malformed_rate: float, truth: Truth) -> None:
        super().__init__(root, rng, malformed_rate, truth)
        self.zips = ZipFiles(root, self.planter, (2025, 3, 1, 0, 0, 0))
        self.zip_names: dict[str, str] = {}

    def write(self, session: Session) -> None:
        user = session.user
        login = user.person.login
        self.offset = OFFSETS[user.index % len(OFFSETS)]
        self.document = f"0Doc:CSharp \\{_project(user.project)}\\Program.cs"
        if user.index % 4 == 0:
            self.truth.person(self.NAME, login, user.person.email, user.person.home, "nothing personal (array file)")
            rel = f"kave/arrays/{login}.json"
            put = lambda obj: self.files.element(rel, obj, FIELD_KINDS)  # noqa: E731
        else:
            self.truth.person(self.NAME, login, user.person.email, user.person.home, "user name (zip file name)")
            rel = self.zip_names.setdefault(login, f"kave/{day(session.start)}/{login}.zip")
            put = lambda obj: self.zips.entry(rel, obj)  # noqa: E731
        self.session = session
        put(self._base("IDEState", session.start, 4, {"IDELifecyclePhase": 0, "OpenWindows": [], "OpenDocuments": []}))
        requests: dict[str, Request] = {}
        last = session.start
        for item in session.items:
            last = item.ts
            if isinstance(item, Request):
                requests[item.request_id] = item
                continue
            obj = self._event(item, requests)
            if obj is not None:
                put(obj)
        put(self._base("IDEState", last + 1000, 4, {"IDELifecyclePhase": 1, "OpenWindows": [], "OpenDocuments": []}))

    def _base(self, kind: str, ts: float, trigger: int, fields: dict[str, Any], duration: float | None = None,
              document: str | None = None) -> dict[str, Any]:
        obj: dict[str, Any] = {"$type": f"{NS}{TYPES[kind]}, KaVE.Commons", **fields,
                               "IDESessionUUID": self.session.session_id, "KaVEVersion": "0.1018-Default",
                               "TriggeredAt": iso_offset(ts, self.offset), "TriggeredBy": trigger}
        if duration is not None:
            obj["Duration"] = timespan(duration)
        obj["ActiveWindow"] = "0Win:vsWindowTypeDocument Program.cs"
        obj["ActiveDocument"] = document or self.document
        return obj

    def _event(self, e: Event, requests: dict[str, Request]) -> dict[str, Any] | None:
        a = e.action
        doc = f"0Doc:CSharp \\{_project(self.session.user.project)}\\{_class(e.file_path)}.cs"
        if a in DOCUMENT_ACTIONS:
            self.document = doc
            return self._base("Document", e.ts, 1, {"Document": doc, "Action": DOCUMENT_ACTIONS[a]})
        if a == "editor.edit":
            chars = int((e.attrs or {}).get("chars", 1))
            return self._base("Edit", e.ts, 3, {"NumberOfChanges": max(1, chars // 8), "SizeOfChanges": chars}, e.duration_ms)
        if a in COMMANDS:
            return self._base("Command", e.ts, 2, {"CommandId": COMMANDS[a]}, e.duration_ms)
        if a == "editor.navigate":
            target = f"0M:[p:void] [{_project(self.session.user.project)}.{_class(e.file_path)}, P].Run()"
            return self._base("Navigation", e.ts, 2, {"Target": target, "Location": "0General:???", "TypeOfNavigation": 1})
        if a == "editor.find":
            return self._base("Find", e.ts, 2, {"Cancelled": self.draw.chance(0.1)})
        if a == "build":
            target = {"Project": _project(self.session.user.project), "ProjectConfiguration": "Debug", "Platform": "Any CPU",
                      "SolutionConfiguration": "Debug|Any CPU", "StartedAt": iso_offset(e.ts, self.offset),
                      "Duration": timespan(e.duration_ms or 1000), "Successful": not self.draw.chance(0.1)}
            return self._base("Build", e.ts, 2, {"Scope": "Solution", "Action": "vsBuildActionBuild", "Targets": [target]},
                              e.duration_ms)
        if a == "test.run":
            attrs = e.attrs or {}
            tests = [{"TestMethod": f"0M:[p:void] [Tests.{_class(e.file_path)}Tests, Tests].Case{i}()", "Parameters": "",
                      "StartTime": iso_offset(e.ts, self.offset), "Duration": timespan(40.0 + i), "Result": 1 if i else 2}
                     for i in range(min(5, int(attrs.get("passed", 1)) + int(attrs.get("failed", 0))))]
            return self._base("TestRun", e.ts, 2, {"WasAborted": False, "Tests": tests}, e.duration_ms)
        if a == "vcs.commit":
            return self._base("VersionControl", e.ts, 1, {"Actions": [{"ExecutedAt": iso_offset(e.ts, self.offset), "ActionType": 4}],
                                                          "Solution": f"0Sln:{_project(self.session.user.project)}.sln"}, e.duration_ms)
        if a == "window.focus":
            return self._base("Window", e.ts, 1, {"Window": "0Win:vsWindowTypeDocument Program.cs", "Action": 1})
        if a in ("completion.accepted", "completion.rejected") and e.attrs:
            return self._completion(e, requests.get(str(e.attrs["request_id"])))
        return None

    def _completion(self, e: Event, r: Request | None) -> dict[str, Any] | None:
        if r is None or r.timing is None:
            return None
        words = [t for t, k in zip(r.token_texts, r.token_kinds, strict=True) if k == "I"][:3] or ["Run"]
        owner = f"{_project(self.session.user.project)}.{_class(r.file_path)}"
        names = [f"0M:[p:void] [{owner}, {_project(self.session.user.project)}].{w}()" for w in dict.fromkeys(words)]
        proposals = [{"Name": n, "Relevance": 100 - i} for i, n in enumerate(names)]
        accepted = e.action == "completion.accepted"
        selection = {"Proposal": proposals[0], "SelectedAfter": timespan(max(1.0, e.ts - r.ts)), "Index": 0}
        return self._base("Completion", r.ts, 3, {
            "ProposalCollection": proposals, "Selections": [selection], "TerminatedBy": 3 if accepted else 2,
            "TerminatedState": 0 if accepted else 1, "ProposalCount": len(proposals),
        }, e.ts - r.ts)

    def corrupt(self, obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
        obj = deep(obj)
        if kind == "wrong_type":
            key = self.draw.pick(("TriggeredAt", "$type", "Duration"))
            obj[key] = True if key == "TriggeredAt" else 42 if key == "$type" else 1.5
            return obj
        if kind == "negative_latency":
            obj["Duration"] = "-" + timespan(self.draw.between(10, 5000))
            return obj
        if kind == "absurd_timestamp":
            obj["TriggeredAt"] = self.draw.pick(ABSURD_ISO)
            return obj
        return None

    def close(self) -> dict[str, FileStats]:
        return {**self.files.close(), **self.zips.close()}


def _project(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.replace("-", "_").split("_")) or "App"


def _class(path: str | None) -> str:
    stem = (path or "Program").rsplit("/", 1)[-1].split(".", 1)[0]
    return "".join(part[:1].upper() + part[1:] for part in stem.split("_")) or "Program"
