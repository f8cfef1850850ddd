"""JetBrains Feature Usage Statistics (FUS) event log: ``event-log-data/logs/FUS/*.log``.

One JSON object a line, as ``LogEventSerializer`` writes it::

    {"recorder_version": "58", "session": "b55fb4d3ae46", "build": "241.14494.240", "bucket": "130",
     "time": 1712345678901, "group": {"id": "actions", "version": "77"},
     "event": {"count": 1, "data": {"action_id": "SaveAll", ...}, "id": "action.finished"}}

Every line is one accounting unit and gives at most one ``events`` row.

- ``session`` -> ``session_id``; ``ide`` is ``jetbrains`` (the product code, when the line
  carries ``product``, and the ``build`` go to ``attrs``, so flows can be split per product).
- Action names: the ``actions`` group (``action.invoked``, ``action.finished``,
  ``custom.action.invoked``; older recorders used the action id as the event id) maps the action
  id through :data:`ACTION_IDS` / :data:`ACTION_PREFIXES` (saves, formatting, runs, builds,
  tests, navigation and caret moves, finds, VCS, completion, typing actions and refactorings,
  which are ``editor.edit``); the other collectors' events map through :data:`GROUP_EVENTS`
  (``file.types.usage`` open / close / edit / select, ``editor.typing`` typed, ``lifecycle``
  frame (de)activation, ``toolwindow`` activation and ``ui.dialogs`` show / close, which are
  ``window.focus`` as KaVE's window events are); the inline completion groups
  (``inline.completion`` and the ML recorder's ``inline.completion.v2``) map to
  ``completion.*`` by event id and ``finish_type``; a state collector's snapshot
  (``"state": true``) is ``ide.state``. Everything else is ``other:<group>/<event>``, and an
  unmapped action id is ``other:<action id>``.
- What the IDE records of work a user action started -- ``run.configuration.exec`` (the
  configuration run, with its ``executor`` and type ``id``), ``vcs`` activities (``commit.*``,
  ``update.*``, ``fetch.*``), ``refactoring`` handlers and ``productivity`` ``feature.used`` --
  is ``ide.activity``, not ``run.start`` / ``vcs.commit`` / ``editor.edit``: the action that
  started it is logged too (``Run``, ``CheckinProject``, ``RenameElement``) and already maps to
  those, and mapping both would count one run, commit or rename twice. The raw names stay in
  ``attrs`` (``group``, ``event_id``, ``data``).
- ``attrs`` holds ``raw_action``, ``group``, ``group_version``, ``event_id``, ``build``,
  ``recorder_version``, ``bucket``, ``product``, ``count`` (merged events) or ``state``, and the
  event's whole ``data`` object.
- Merged events: the recorder folds consecutive identical events into one line with
  ``"count": N``. Such a line is ONE row with ``weight = N`` (and ``attrs.count``); it is not
  expanded. Sums over flows should weight rows by ``weight``; a consumer that needs one row per
  occurrence can expand a frame with ``df.select(pl.all().repeat_by("weight").explode())``.
- Latency: ``duration_ms`` from ``data.duration_ms`` (``action.finished``, ``inserted_state``),
  ``time_to_compute`` (completion ``invoked``) or ``time_to_show`` / ``time_to_start_showing``
  (completion ``shown`` / ``session``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from logmine.formats._base import (
    Batch,
    RecordError,
    attrs_json,
    check_type,
    latency,
    normalise_language,
    optional,
    parse_ts,
    read_batches,
)
from logmine.formats._jsondoc import map_action
from logmine.records import REJECT_ABSURD_VALUE, REJECT_MISSING_FIELD, REJECT_WRONG_TYPE

NAME = "jetbrains"
BATCH_LINES = 50_000
MAX_COUNT = 10_000_000
"""A merged-event count above this is absurd for one log line."""

ACTION_IDS: dict[str, str] = {
    "SaveAll": "file.save", "SaveDocument": "file.save", "SaveAs": "file.save",
    "ReformatCode": "editor.format", "ReformatFile": "editor.format", "ShowReformatFileDialog": "editor.format",
    "AutoIndentLines": "editor.format", "OptimizeImports": "editor.format", "RearrangeCode": "editor.format",
    "$Undo": "editor.undo",
    "RunClass": "run.start", "Run": "run.start", "Rerun": "run.start", "RunConfiguration": "run.start",
    "DebugClass": "debug.start", "Debug": "debug.start",
    "CompileDirty": "build", "BuildProject": "build", "MakeModule": "build", "Compile": "build",
    "CompileProject": "build", "RebuildProject": "build", "BuildArtifact": "build",
    "RerunFailedTests": "test.run", "RerunTests": "test.run", "RunAllTests": "test.run",
    "GotoDeclaration": "editor.navigate", "GotoImplementation": "editor.navigate", "GotoTypeDeclaration": "editor.navigate",
    "GotoSuperMethod": "editor.navigate", "GotoClass": "editor.navigate", "GotoFile": "editor.navigate",
    "GotoSymbol": "editor.navigate", "GotoLine": "editor.navigate", "GotoDeclarationOnly": "editor.navigate",
    "Back": "editor.navigate", "Forward": "editor.navigate", "RecentFiles": "editor.navigate",
    "SearchEverywhere": "editor.find", "FindUsages": "editor.find", "IncrementalSearch": "editor.find",
    "CheckinProject": "vcs.commit", "CheckinFiles": "vcs.commit", "Vcs.Commit": "vcs.commit",
    "InsertInlineCompletionAction": "completion.accepted", "InsertInlineCompletionWordAction": "completion.accepted",
    "InsertInlineCompletionLineAction": "completion.accepted", "AcceptInlineCompletion": "completion.accepted",
    "EditorChooseLookupItem": "completion.accepted", "EditorChooseLookupItemReplace": "completion.accepted",
    "EditorChooseLookupItemCompleteStatement": "completion.accepted",
    "CallInlineCompletionAction": "completion.requested", "CodeCompletion": "completion.requested",
    "SmartTypeCompletion": "completion.requested",
    "EditorBackSpace": "editor.edit", "EditorEnter": "editor.edit", "EditorPaste": "editor.edit", "$Paste": "editor.edit",
    "$Cut": "editor.edit", "$Delete": "editor.edit", "EditorDelete": "editor.edit", "EditorDeleteLine": "editor.edit",
    "EditorDuplicate": "editor.edit", "CommentByLineComment": "editor.edit", "CommentByBlockComment": "editor.edit",
    "EditorCompleteStatement": "editor.edit", "EditorJoinLines": "editor.edit",
    "OpenFile": "file.open", "CloseContent": "file.close", "CloseEditor": "file.close", "CloseAllEditors": "file.close",
    "EditorTab": "editor.edit", "EditorIndentSelection": "editor.edit", "EditorUnindentSelection": "editor.edit",
    "MoveLineUp": "editor.edit", "MoveLineDown": "editor.edit", "MoveStatementUp": "editor.edit",
    "MoveStatementDown": "editor.edit", "EditorToggleCase": "editor.edit", "EditorSplitLine": "editor.edit",
    "RenameElement": "editor.edit", "ExtractMethod": "editor.edit", "IntroduceVariable": "editor.edit",
    "IntroduceField": "editor.edit", "IntroduceConstant": "editor.edit", "IntroduceParameter": "editor.edit",
    "Inline": "editor.edit", "ChangeSignature": "editor.edit", "Move": "editor.edit", "SafeDelete": "editor.edit",
    "ExtractInterface": "editor.edit", "ExtractSuperclass": "editor.edit", "MembersPullUp": "editor.edit",
    "MemberPushDown": "editor.edit",
    **{caret + selection: "editor.navigate" for caret in (
        "EditorRight", "EditorLeft", "EditorUp", "EditorDown", "EditorLineStart", "EditorLineEnd", "EditorPageUp",
        "EditorPageDown", "EditorTextStart", "EditorTextEnd", "EditorNextWord", "EditorPreviousWord",
        "EditorCodeBlockStart", "EditorCodeBlockEnd", "EditorMatchBrace") for selection in ("", "WithSelection")},
    "EditorScrollUp": "editor.navigate", "EditorScrollDown": "editor.navigate",
}
"""Well-known IntelliJ platform action ids (``IdeActions`` and the bundled plugins); caret moves
(with or without selection) are ``editor.navigate``, refactorings ``editor.edit``."""

ACTION_PREFIXES: tuple[tuple[str, str], ...] = (
    ("RunTests", "test.run"), ("Run.Tests", "test.run"), ("RerunFailed", "test.run"),
    ("Find", "editor.find"), ("Replace", "editor.find"),
    ("Goto", "editor.navigate"),
    ("Git.Commit", "vcs.commit"), ("Vcs.Commit", "vcs.commit"), ("Vcs.", "vcs.action"), ("Git.", "vcs.action"),
    ("ChangesView.", "vcs.action"), ("Activate", "window.focus"),  # ActivateProjectToolWindow, ...
)
"""Checked in order after :data:`ACTION_IDS`."""

GROUP_EVENTS: dict[tuple[str, str], str] = {
    ("file.types.usage", "open"): "file.open", ("file.types.usage", "create_by_new_file"): "file.open",
    ("file.types.usage", "close"): "file.close", ("file.types.usage", "edit"): "editor.edit",
    ("file.types.usage", "select"): "editor.navigate",  # another file's editor tab selected
    ("editor.typing", "typed"): "editor.edit",
    ("lifecycle", "frame.activated"): "window.focus", ("lifecycle", "frame.deactivated"): "window.focus",
    ("toolwindow", "activated"): "window.focus",
    ("ui.dialogs", "show"): "window.focus", ("ui.dialogs", "close"): "window.focus",
    ("ui.dialogs", "help.clicked"): "ide.activity",
}
"""``(group, event id)`` -> action for the collectors other than ``actions`` and inline completion."""
ACTIVITY_GROUPS = frozenset({"run.configuration.exec", "refactoring", "productivity"})
"""Groups whose every event records work a logged action started: ``ide.activity`` (see the module doc)."""
VCS_ACTIVITIES = ("commit.", "update.", "fetch.")
"""``vcs`` group events (IDE activities: ``<name>.started`` / ``.finished``) that are ``ide.activity``."""

_NOT_NAVIGATION = {"GotoAction"}  # "Find Action" opens the action palette; it navigates nowhere
_ACTION_EVENTS = {"action.invoked", "action.finished", "custom.action.invoked"}
_COMPLETION_GROUPS = {"inline.completion", "inline.completion.v2"}
_SHOWN_LATENCY_KEYS = ("time_to_show", "time_to_start_showing")


def sniff(path: Path, head: list[bytes]) -> bool:
    return any(b'"recorder_version"' in line and b'"group"' in line and b'"event"' in line for line in head)


def read(path: Path) -> Iterator[Batch]:
    def add_rows(batch: Batch, obj: Any, number: int) -> None:
        batch.events.append(event_row(obj, number))  # type: ignore[union-attr]

    yield from read_batches(path, add_rows, BATCH_LINES)


def event_row(obj: Any, number: int) -> dict[str, Any]:
    """The ``events`` row of one FUS log line, or :class:`RecordError`."""
    if not isinstance(obj, dict):
        raise RecordError(REJECT_WRONG_TYPE, f"a FUS log line must be a JSON object, got {type(obj).__name__}")
    group = _field(obj, "group", dict, "group")
    event = _field(obj, "event", dict, "event")
    group_id = _field(group, "id", str, "group.id")
    event_id = _field(event, "id", str, "event.id")
    data = check_type(event["data"], "event.data", dict) if event.get("data") is not None else {}
    count = _count(event)
    state = check_type(event["state"], "event.state", bool) if event.get("state") is not None else None
    action, raw_action, action_id = _action(group_id, event_id, data, bool(state))
    attrs = {
        "raw_action": raw_action, "action_id": action_id, "group": group_id, "group_version": _text(group.get("version")),
        "event_id": event_id, "build": optional(obj, "build", str), "product": optional(obj, "product", str),
        "recorder_version": _text(obj.get("recorder_version")), "bucket": _text(obj.get("bucket")),
        "count": count if "count" in event else None, "state": state, "data": data or None,
    }
    return {
        "ts": parse_ts(obj.get("time"), "time"),
        "session_id": optional(obj, "session", str),
        "ide": "jetbrains",
        "action": action,
        "language": _language(data, group_id),
        "duration_ms": _duration(group_id, event_id, data),
        "weight": count,
        "attrs": attrs_json(attrs),
        "source_line": number,
    }


def _field(obj: dict[str, Any], key: str, kind: type, label: str) -> Any:
    if obj.get(key) is None:
        raise RecordError(REJECT_MISSING_FIELD, f"required field {label!r} is missing")
    return check_type(obj[key], label, kind)


def _count(event: dict[str, Any]) -> int:
    count = event.get("count", 1)
    if isinstance(count, bool) or not isinstance(count, int):
        raise RecordError(REJECT_WRONG_TYPE, f"field 'event.count' should be an integer, got {type(count).__name__}")
    if not 1 <= count <= MAX_COUNT:
        raise RecordError(REJECT_ABSURD_VALUE, f"field 'event.count' = {count} is outside 1..{MAX_COUNT}")
    return count


def _text(value: Any) -> str | None:
    return None if value is None or isinstance(value, (dict, list)) else str(value)


def _action(group_id: str, event_id: str, data: dict[str, Any], state: bool) -> tuple[str, str, str | None]:
    """``(action, raw_action, action_id)`` of one event."""
    raw = f"{group_id}/{event_id}"
    if state:
        return "ide.state", raw, None
    if group_id == "actions":
        if event_id in _ACTION_EVENTS:
            action_id = _field(data, "action_id", str, "event.data.action_id")
        elif event_id.startswith("action."):
            return "other:" + raw, raw, None
        else:  # old recorders logged the action id as the event id
            action_id = event_id
        if action_id in _NOT_NAVIGATION:
            return "other:" + action_id, action_id, action_id
        return map_action(action_id, ACTION_IDS, ACTION_PREFIXES), action_id, action_id
    if (group_id, event_id) in GROUP_EVENTS:
        return GROUP_EVENTS[group_id, event_id], raw, None
    if group_id in ACTIVITY_GROUPS or (group_id == "vcs" and event_id.startswith(VCS_ACTIVITIES)):
        return "ide.activity", raw, None
    if group_id in _COMPLETION_GROUPS:
        return _completion_action(event_id, _flat(data)) or "other:" + raw, raw, None
    return "other:" + raw, raw, None


def _completion_action(event_id: str, data: dict[str, Any]) -> str | None:
    """The ``completion.*`` action of an inline-completion event, None when it has none."""
    if event_id == "inserted_state":  # a later look at an already accepted suggestion
        return None
    if event_id in {"invoked", "requested"}:
        return "completion.requested"
    if event_id in {"shown", "session"}:
        if data.get("was_shown") is False:
            return "completion.requested"
        finish = data.get("finish_type")
        if finish is None:
            return "completion.shown"
        if finish == "SELECTED":
            return "completion.accepted"
        return "completion.requested" if finish in {"EMPTY", "ERROR"} else "completion.rejected"
    if "insert" in event_id or "accept" in event_id:
        return "completion.accepted"
    if any(word in event_id for word in ("invalidat", "reject", "cancel", "hid", "dismiss", "escape")):
        return "completion.rejected"
    if "show" in event_id:
        return "completion.shown"
    return None


def _flat(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with the v2 session's phase objects (``inline_api_starting``, ...) merged in."""
    out = dict(data)
    for value in data.values():
        if isinstance(value, dict):
            for key, inner in value.items():
                out.setdefault(key, inner)
    return out


def _language(data: dict[str, Any], group_id: str) -> str | None:
    flat = _flat(data) if group_id in _COMPLETION_GROUPS else data
    for key in ("lang", "file_language", "file_type", "current_file"):
        value = flat.get(key)
        if isinstance(value, str) and value:
            return normalise_language(value)
    return None


def _duration(group_id: str, event_id: str, data: dict[str, Any]) -> float | None:
    if group_id in _COMPLETION_GROUPS:
        flat = _flat(data)
        keys = ("time_to_compute",) if event_id == "invoked" else (*_SHOWN_LATENCY_KEYS, "duration_ms")
        for key in keys:
            if flat.get(key) is not None:
                return latency(flat[key], f"event.data.{key}")
        return None
    return latency(data.get("duration_ms"), "event.data.duration_ms")
