"""KaVE Enriched Event Streams (Visual Studio interaction data, MSR 2018 mining challenge).

Each event is Json.NET JSON typed by ``"$type": "KaVE.Commons.Model.Events.<...>.<Type>Event,
KaVE.Commons"`` with the base fields ``IDESessionUUID, KaVEVersion, TriggeredAt, TriggeredBy,
Duration ("[d.]hh:mm:ss[.fffffff]"), ActiveWindow, ActiveDocument``. Three input shapes:

- the data set's zips, ``<date>/<user>.zip`` with one ``<i>.json`` event a member, read directly;
  ``user_id`` is the zip's stem and ``attrs.zip_member`` the member name;
- a JSON document: an array of events (pretty-printed or not), one event, or events concatenated;
- JSON Lines, one event a line (chosen when the first non-empty line is a whole ``{...}``).

Accounting unit: one event. In JSON Lines that is one line and ``source_line`` is the line
number; in a document or a zip ``source_line`` is the 1-based position of the event (zip members
in archive order). A corrupt zip member, a non-JSON member, invalid UTF-8 or a bad event is one
rejected unit; malformed JSON in a document ends it and its unread rest is one more rejected
unit. A file that is not a zip at all is an unreadable file (``ValueError``).

Each event gives one ``events`` row: ``session_id`` = ``IDESessionUUID``, ``ide`` =
``visualstudio``, ``duration_ms`` from ``Duration``, ``file_path`` and ``language`` from the
document name (``"0Doc:CSharp \\\\Proj\\\\File.cs"`` -> ``\\\\Proj\\\\File.cs``, csharp; a
DocumentEvent's own ``Document`` wins over ``ActiveDocument``). The action by type: Command by its
command name (:data:`COMMANDS`), Document 0/1/2 -> file.open/save/close, Completion
TerminatedState 0/1/2 -> completion.accepted/rejected/rejected with ``filtered: true`` (3, or
none, -> completion.shown), Build -> build (``success`` in attrs), TestRun -> test.run,
Navigation -> editor.navigate, Find -> editor.find, Edit -> editor.edit, Activity ->
ide.activity, IDEState -> ide.state, Error -> ide.error, Window -> window.focus, VersionControl
-> vcs.commit when one of its actions is a commit, else vcs.action; Debugger, Info, System,
UserProfile, Install, Solution and Update -> ``other:<Type>``. ``attrs`` keeps ``raw_action``
(the command id, else the type), ``kave_type``, enum values by name, the event's other scalar
fields in snake_case and a few derived counts; the code context (``Context2``) is dropped.
"""

from __future__ import annotations

import re
import zipfile
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from logmine.formats._base import (
    Batch,
    RecordError,
    attrs_json,
    check_type,
    head_lines,
    iter_json_records,
    language_from_path,
    latency,
    normalise_language,
    optional,
    parse_ts,
    reject,
    require,
)
from logmine.formats._jsondoc import iter_json_values, looks_like_jsonl, map_action, read_document
from logmine.records import (
    REJECT_MISSING_FIELD,
    REJECT_OVERSIZED,
    REJECT_UNKNOWN_RECORD,
    REJECT_UNREADABLE_FILE,
    REJECT_WRONG_TYPE,
    Reject,
)

NAME = "kave"
BATCH_EVENTS = 20_000
MAX_MEMBER_BYTES = 64 * 1024 * 1024
"""A zip member larger than this (uncompressed) is rejected unread."""

EVENT_TYPES = (
    "Activity", "Command", "Completion", "Error", "Info", "Navigation", "System", "TestRun", "UserProfile",
    "VersionControl", "Build", "Debugger", "Document", "Edit", "Find", "IDEState", "Install", "Solution", "Update",
    "Window",
)
"""The 20 event types of the KaVE data set."""

COMMANDS: dict[str, str] = {
    "File.SaveAll": "file.save", "File.SaveSelectedItems": "file.save",
    "File.OpenFile": "file.open", "File.Close": "file.close", "Window.CloseDocumentWindow": "file.close",
    "Edit.Undo": "editor.undo",
    "Edit.FormatDocument": "editor.format", "Edit.FormatSelection": "editor.format", "ReformatCode": "editor.format",
    "SilentCleanupCode": "editor.format", "CleanupCode": "editor.format",
    "Debug.Start": "debug.start", "Debug.StartWithoutDebugging": "run.start",
    "Edit.GoToDefinition": "editor.navigate", "Edit.NavigateTo": "editor.navigate", "View.NavigateBackward": "editor.navigate",
    "View.NavigateForward": "editor.navigate", "GotoDeclaration": "editor.navigate",
    "Edit.IncrementalSearch": "editor.find", "FindUsages": "editor.find",
    "Edit.CompleteWord": "completion.requested", "Edit.ListMembers": "completion.requested",
    "CompleteCodeBasic": "completion.requested", "CompleteCodeSmart": "completion.requested",
    "Edit.Paste": "editor.edit", "Edit.Cut": "editor.edit", "Edit.Delete": "editor.edit",
    "Edit.CommentSelection": "editor.edit", "Edit.UncommentSelection": "editor.edit",
    "TextControl.Backspace": "editor.edit", "TextControl.Delete": "editor.edit", "TextControl.Enter": "editor.edit",
}
"""Visual Studio and ReSharper command names (the part after the last ``:`` of a CommandId)."""

COMMAND_PREFIXES: tuple[tuple[str, str], ...] = (
    ("File.Save", "file.save"), ("Build.Build", "build"), ("Build.Rebuild", "build"), ("Build.Compile", "build"),
    ("TestExplorer.Run", "test.run"), ("TestExplorer.Debug", "test.run"), ("UnitTest.Run", "test.run"),
    ("UnitTestSession.Run", "test.run"), ("Edit.GoTo", "editor.navigate"), ("Goto", "editor.navigate"),
    ("Edit.Find", "editor.find"), ("Edit.Replace", "editor.find"), ("Edit.QuickFind", "editor.find"),
    ("Team.", "vcs.action"), ("TeamFoundationContextMenus.", "vcs.action"), ("Git.", "vcs.action"),
)

TRIGGERS = ("Unknown", "Click", "Shortcut", "Typing", "Automatic")
TERMINATION = ("Applied", "Cancelled", "Filtered", "Unknown")
DOCUMENT_ACTIONS = ("Opened", "Saved", "Closing")
WINDOW_ACTIONS = ("Create", "Activate", "Move", "Close", "Deactivate")
LIFECYCLE = ("Startup", "Shutdown", "Runtime")
NAVIGATION = ("Unknown", "CtrlClick", "Click", "Keyboard")
DEBUGGER_MODES = ("Design", "Run", "Break", "ExceptionThrown", "ExceptionNotHandled")
SYSTEM_EVENTS = ("Unknown", "Suspend", "Resume", "Lock", "Unlock", "RemoteConnect", "RemoteDisconnect")
TEST_RESULTS = ("Unknown", "Success", "Failed", "Error", "Ignored")
VCS_ACTIONS = (
    "Unknown", "Branch", "Checkout", "Clone", "Commit", "CommitAmend", "CommitInitial", "Merge", "Pull", "Rebase",
    "RebaseFinished", "Reset",
)

DOCUMENT_LANGUAGES = {
    "csharp": "csharp", "basic": "vb", "c/c++": "cpp", "xml": "xml", "xaml": "xaml", "html": "html", "css": "css",
    "jscript": "javascript", "javascript": "javascript", "typescript": "typescript", "json": "json", "sql": "sql",
}
"""Visual Studio document languages (the first word of a document name) -> logmine's names."""

_BASE_FIELDS = {"$type", "IDESessionUUID", "KaVEVersion", "TriggeredAt", "TriggeredBy", "Duration", "ActiveWindow",
                "ActiveDocument", "TerminatedAt"}
_TYPE_RE = re.compile(r"^KaVE\.[\w.]*\.(\w+)Event$")
_TIMESPAN_RE = re.compile(r"^(-)?(?:(\d+)\.)?(\d{1,2}):(\d{2}):(\d{2})(?:\.(\d{1,7}))?$")
_DOC_PREFIX_RE = re.compile(r"^(?:\d+Doc:|VisualStudio\.DocumentName:)")
_CAMEL_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def sniff(path: Path, head: list[bytes]) -> bool:
    return any(b'"$type"' in line and b"KaVE." in line for line in head)


def read(path: Path) -> Iterator[Batch]:
    if path.suffix.lower() == ".zip":
        yield from _read_zip(path)
    elif looks_like_jsonl(head_lines(path, 1)):
        yield from _read_lines(path)
    else:
        yield from _read_document(path)


class _Batches:
    """Fills batches unit by unit and hands each full one out."""

    def __init__(self) -> None:
        self.batch = Batch()

    def add(self, number: int, obj: Any, raw: str | bytes, extra: dict[str, Any], user_id: str | None) -> Batch | None:
        self.batch.lines_read += 1
        try:
            if isinstance(obj, RecordError):
                raise obj
            self.batch.events.append(event_row(obj, number, extra, user_id))  # type: ignore[union-attr]
            self.batch.lines_accepted += 1
        except RecordError as err:
            self.batch.rejects.append(reject(number, raw if isinstance(raw, bytes) else raw.encode("utf-8", "replace"), err))
        if self.batch.lines_read < BATCH_EVENTS:
            return None
        full, self.batch = self.batch, Batch()
        return full


def _read_lines(path: Path) -> Iterator[Batch]:
    batches = _Batches()
    for number, raw, obj in iter_json_records(path):
        if (full := batches.add(number, obj, raw, {}, None)) is not None:
            yield full
    yield batches.batch


def _read_document(path: Path) -> Iterator[Batch]:
    batches = _Batches()
    for number, (obj, raw) in enumerate(iter_json_values(read_document(path)), start=1):
        if (full := batches.add(number, obj, raw, {}, None)) is not None:
            yield full
    yield batches.batch


def _read_zip(path: Path) -> Iterator[Batch]:
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, NotImplementedError, EOFError) as exc:
        raise ValueError(f"not a readable zip archive: {exc}") from None
    batches, number, user_id = _Batches(), 0, path.stem
    with archive:
        for info in archive.infolist():
            if info.is_dir():
                continue
            for obj, raw in _member_events(archive, info):
                number += 1
                if (full := batches.add(number, obj, raw, {"zip_member": info.filename}, user_id)) is not None:
                    yield full
    yield batches.batch


def _member_events(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> Iterator[tuple[Any, str]]:
    """The events of one zip member, or one RecordError when the member cannot be read."""
    name = info.filename
    if not name.lower().endswith(".json"):
        yield RecordError(REJECT_UNKNOWN_RECORD, f"zip member {name!r} is not a .json event"), name
        return
    if info.file_size > MAX_MEMBER_BYTES:
        yield RecordError(REJECT_OVERSIZED, f"zip member {name!r} of {info.file_size} bytes exceeds {MAX_MEMBER_BYTES}"), name
        return
    try:
        data = archive.read(info)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, RuntimeError, ValueError) as exc:
        yield RecordError(REJECT_UNREADABLE_FILE, f"zip member {name!r} is corrupt: {exc}"), name
        return
    if not data.strip():
        yield RecordError(REJECT_MISSING_FIELD, f"zip member {name!r} is empty"), name
        return
    yield from iter_json_values(data)


# -- one event -> one row ---------------------------------------------------------------------------
def event_row(obj: Any, number: int, extra: dict[str, Any] | None = None, user_id: str | None = None) -> dict[str, Any]:
    """The ``events`` row of one KaVE event, or :class:`RecordError`."""
    if not isinstance(obj, dict):
        raise RecordError(REJECT_WRONG_TYPE, f"a KaVE event must be a JSON object, got {type(obj).__name__}")
    kind = event_type(require(obj, "$type", str))
    ts = parse_ts(obj.get("TriggeredAt"), "TriggeredAt")
    duration = timespan_ms(obj.get("Duration"), "Duration")
    language, file_path = document_name(optional(obj, "Document" if kind == "Document" else "ActiveDocument", str))
    mapper = _MAPPERS.get(kind)
    action, derived = mapper(obj) if mapper else ("other:" + kind, {})
    attrs: dict[str, Any] = {_snake(k): v for k, v in obj.items() if k not in _BASE_FIELDS and _scalar(v)}
    attrs.update(derived)
    attrs.update({
        "raw_action": derived.get("command_id") or kind, "kave_type": kind, "kave_version": optional(obj, "KaVEVersion", str),
        "triggered_by": _enum(obj.get("TriggeredBy"), TRIGGERS, "TriggeredBy"), "active_window": optional(obj, "ActiveWindow", str),
        **(extra or {}),
    })
    return {
        "ts": ts,
        "session_id": optional(obj, "IDESessionUUID", str),
        "user_id": user_id,
        "ide": "visualstudio",
        "action": action,
        "file_path": file_path,
        "language": language,
        "duration_ms": duration,
        "attrs": attrs_json(attrs),
        "source_line": number,
    }


def event_type(type_name: str) -> str:
    """``"KaVE.Commons.Model.Events.VisualStudio.BuildEvent, KaVE.Commons"`` -> ``"Build"``."""
    match = _TYPE_RE.match(type_name.split(",", 1)[0].strip())
    if match is None:
        raise RecordError(REJECT_UNKNOWN_RECORD, f"'$type' {type_name[:80]!r} is not a KaVE event type")
    return match.group(1)


def timespan_ms(value: Any, key: str) -> float | None:
    """A .NET TimeSpan text (``[-][d.]hh:mm:ss[.fffffff]``) in milliseconds, range-checked."""
    if value is None:
        return None
    value = check_type(value, key, str)
    match = _TIMESPAN_RE.match(value)
    if match is None:
        raise RecordError(REJECT_WRONG_TYPE, f"field {key!r} = {value[:40]!r} is not a [d.]hh:mm:ss[.fffffff] time span")
    sign, days, hours, minutes, seconds, fraction = match.groups()
    total = ((int(days or 0) * 24 + int(hours)) * 60 + int(minutes)) * 60 + int(seconds)
    ms = total * 1000 + int((fraction or "0").ljust(7, "0")) / 10_000
    return latency(-ms if sign else ms, key)


def document_name(value: str | None) -> tuple[str | None, str | None]:
    """``(language, path)`` of a KaVE document name such as ``"0Doc:CSharp \\\\P\\\\File.cs"``."""
    if not value:
        return None, None
    name = _DOC_PREFIX_RE.sub("", value)
    kind, _, path = name.partition(" ")
    if not path:
        return None, None
    language = DOCUMENT_LANGUAGES.get(kind.lower()) or language_from_path(path.replace("\\", "/"))
    return language or normalise_language(kind), path


def command_name(command_id: str) -> str:
    """``"VsAction:1:Edit.Undo"`` / ``"{guid}:684:Edit.Undo"`` -> ``"Edit.Undo"``."""
    return command_id.rsplit(":", 1)[-1] or command_id


def _enum(value: Any, names: tuple[str, ...], key: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    value = check_type(value, key, int)
    return names[value] if 0 <= value < len(names) else f"Unknown({value})"


def _scalar(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool))


def _snake(name: str) -> str:
    return _CAMEL_RE.sub("_", name).lower()


def _list(obj: dict[str, Any], key: str) -> list[Any]:
    return optional(obj, key, list) or []


# -- per-type mapping: (action, derived attrs) -------------------------------------------------------
def _command(obj: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    command_id = require(obj, "CommandId", str)
    name = command_name(command_id)
    action = map_action(name, COMMANDS, COMMAND_PREFIXES)
    if action == "vcs.action" and "Commit" in name:
        action = "vcs.commit"
    return action, {"command_id": command_id}


def _completion(obj: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    state = _enum(obj.get("TerminatedState"), TERMINATION, "TerminatedState")
    selections = [s for s in _list(obj, "Selections") if isinstance(s, dict)]
    proposals = _list(obj, "ProposalCollection")
    last = selections[-1].get("Proposal") if selections else None
    attrs = {
        "terminated_state": state, "terminated_by": _enum(obj.get("TerminatedBy"), TRIGGERS, "TerminatedBy"),
        "proposal_count": obj.get("ProposalCount", len(proposals)), "selections": len(selections),
        "selected": last.get("Name") if isinstance(last, dict) and state == "Applied" else None,
        "filtered": True if state == "Filtered" else None,
    }
    action = {"Applied": "completion.accepted", "Cancelled": "completion.rejected", "Filtered": "completion.rejected"}
    return action.get(state or "", "completion.shown"), attrs


def _document(obj: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    action = _enum(obj.get("Action"), DOCUMENT_ACTIONS, "Action")
    mapped = {"Opened": "file.open", "Saved": "file.save", "Closing": "file.close"}.get(action or "", "other:Document")
    return mapped, {"action": action}


def _build(obj: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    targets = [t for t in _list(obj, "Targets") if isinstance(t, dict)]
    flags = [t.get("Successful") for t in targets]
    success = all(flags) if flags and all(isinstance(f, bool) for f in flags) else None
    return "build", {"targets": len(targets), "success": success}


def _test_run(obj: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    tests = [t for t in _list(obj, "Tests") if isinstance(t, dict)]
    results = Counter(_enum(t.get("Result"), TEST_RESULTS, "Tests[].Result") or "Unknown" for t in tests)
    return "test.run", {"tests": len(tests), "results": dict(results) or None}


def _version_control(obj: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    actions = [_enum(a.get("ActionType"), VCS_ACTIONS, "ActionType") for a in _list(obj, "Actions") if isinstance(a, dict)]
    commit = any(a in {"Commit", "CommitAmend", "CommitInitial"} for a in actions)
    return ("vcs.commit" if commit else "vcs.action"), {"vcs_actions": actions or None}


def _ide_state(obj: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return "ide.state", {
        "ide_lifecycle_phase": _enum(obj.get("IDELifecyclePhase"), LIFECYCLE, "IDELifecyclePhase"),
        "open_windows": len(_list(obj, "OpenWindows")), "open_documents": len(_list(obj, "OpenDocuments")),
    }


def _error(obj: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    trace = [line for line in _list(obj, "StackTrace") if isinstance(line, str)]
    return "ide.error", {"stack_trace": trace[:20] or None}


def _fixed(action: str, enum_key: str | None = None, names: tuple[str, ...] = ()) -> Callable[[dict[str, Any]], tuple[str, dict[str, Any]]]:
    def mapper(obj: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        return action, ({_snake(enum_key): _enum(obj.get(enum_key), names, enum_key)} if enum_key else {})

    return mapper


_MAPPERS: dict[str, Callable[[dict[str, Any]], tuple[str, dict[str, Any]]]] = {
    "Activity": _fixed("ide.activity"),
    "Command": _command,
    "Completion": _completion,
    "Error": _error,
    "Navigation": _fixed("editor.navigate", "TypeOfNavigation", NAVIGATION),
    "System": _fixed("other:System", "Type", SYSTEM_EVENTS),
    "TestRun": _test_run,
    "VersionControl": _version_control,
    "Build": _build,
    "Debugger": _fixed("other:Debugger", "Mode", DEBUGGER_MODES),
    "Document": _document,
    "Edit": _fixed("editor.edit"),
    "Find": _fixed("editor.find"),
    "IDEState": _ide_state,
    "Window": _fixed("window.focus", "Action", WINDOW_ACTIONS),
}
"""Info, UserProfile, Install, Solution, Update and unknown types map to ``other:<Type>``."""
