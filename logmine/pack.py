"""Template packs: the versioned, hash-checked artefact that `logmine compress` writes and the
serving layer reads.

A pack is a directory::

    pack/pack.json        the templates (field names are a public contract)
    pack/manifest.json    sha256 of every other file in the pack

Packs come from elsewhere to the serving hosts, so :func:`load_pack` treats them as untrusted:
it checks the manifest hashes, the format version (older ones are migrated, newer refused) and
the schema (pydantic, ``extra="forbid"``). :func:`write_pack` is atomic: it writes a sibling
temporary directory and renames it into place, so a killed run never leaves half a pack.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from logmine.errors import FormatVersionError, OutputPathError, PackError
from logmine.hashing import content_id, file_sha256  # noqa: F401 - content_id: part of the pack's API

PACK_FORMAT_VERSION = 2
"""2: templates carry their render plan (``plan``, ``lossless_source``); a version 1 pack reads as one without plans."""
PACK_FILE = "pack.json"
MANIFEST_FILE = "manifest.json"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Placeholder(_Strict):
    """A variable slot of a template."""

    name: str = Field(description="the Jinja2 variable name, e.g. prefix")
    type: Literal["code", "text", "path", "language", "identifier", "number", "secret", "other"] = Field(
        description="what the slot holds; code slots may be trimmed, never rewritten"
    )


class Thresholds(_Strict):
    """The thresholds the pack was built with."""

    edit_similarity: float = Field(ge=0, le=1, description="normalised edit similarity for merging templates")
    semantic_similarity: float = Field(ge=-1, le=1, description="embedding cosine for merging templates")
    min_fidelity: float = Field(ge=0, le=1, description="the lossy stage's fidelity gate")


class SharedPrefix(_Strict):
    """Static text that starts several templates, cached once by the server."""

    id: str
    text: str
    tokens: int = Field(ge=0)
    template_ids: list[str]


TrimRole = Literal["prefix", "suffix", "declarations"]
ContextInput = Literal["language", "file_path", "recent_files"]


class SlotPlan(_Strict):
    """How the pack runtime prepares one code-context slot's value before the template is filled."""

    slot: str = Field(description="the slot (a placeholder name of the template)")
    role: TrimRole = Field(description="its code-context role: the code before the cursor, after it, or other files' declarations")
    policy: Literal["trim", "verbatim"] = Field(
        description="trim: keep the code units the completion most likely needs within budget_tokens (logmine.runtime); "
                    "verbatim: the value is sent as given")
    budget_tokens: int | None = Field(None, ge=0, description="the trimming budget (words and punctuation); null when verbatim")
    inputs: list[ContextInput] = Field(
        default_factory=list, description="request context the policy reads (language, file_path, recent_files)")
    fallback: str | None = Field(None, description="what the policy does when serving lacks those inputs")


class ContextStep(_Strict):
    """A lossless step over the slot values of one render."""

    step: Literal["dedup_file_blocks"] = Field(
        description="dedup_file_blocks: a file block (a line opening with a file separator or '+++++ ' and the lines up to "
                    "the next such line) that occurs again later in the prompt is sent once, at its last occurrence")
    slots: list[str] = Field(description="the slots the step reads, in the order they appear in the template")


class RenderPlan(_Strict):
    """What the pack runtime does between a request's slot values and the prompt, besides filling in ``source``.

    Measurement (the pack's rendered and uncached token figures) and serving run the same plan
    through the same code (:func:`logmine.runtime.render`)."""

    slots: list[SlotPlan] = Field(default_factory=list, description="code-context slots, trimmed or sent verbatim")
    context_steps: list[ContextStep] = Field(default_factory=list, description="lossless steps, run before the slot policies")


class PackTemplate(_Strict):
    """One compressed template and the numbers that justify it."""

    id: str = Field(description="content hash of the original template text")
    name: str
    source: str = Field(description="the compressed template, Jinja2 syntax")
    original_source: str = Field(description="the mined template, Jinja2 syntax")
    placeholders: list[Placeholder]
    shared_prefix_id: str | None = Field(
        None, description="the shared prefix (in shared_prefixes) that source starts with, cached once by the server")
    n_requests: int = Field(ge=0)
    share: float = Field(ge=0, le=1)
    static_tokens_before: int = Field(ge=0, description="tokens of the original's own text, slots excluded")
    static_tokens_after: int = Field(
        ge=0, description="tokens of the compressed template's own text, slots and its shared prefix excluded")
    rendered_tokens_before: float = Field(ge=0)
    rendered_tokens_after: float = Field(ge=0)
    uncached_tokens_after: float = Field(ge=0)
    fidelity: float = Field(ge=0, le=1)
    lossy: bool
    lossless_source: str | None = Field(
        None, description="the template after the lossless steps alone (what ships when the compressed form fails validation)")
    plan: RenderPlan | None = Field(
        None, description="the render plan of source; null: slots are filled verbatim (packs of format 1)")
    fallback: str | None = Field(
        None, description="why the finished-template gate (meaning guard, then fidelity >= min_fidelity) shipped a less compressed "
                          "form: 'lossless: ...' or 'original: ...'; null when source is the template as compressed")
    family_id: str | None = None
    validation: dict[str, Any] | None = Field(
        None, description="serving validation results, when run: the form that ships and each form's agreement with the logged prompt")
    static_tokens_after_lossless: int | None = Field(
        None, ge=0, description="static tokens after the lossless steps alone (its shared prefix excluded too)")
    rendered_tokens_after_lossless: float | None = Field(
        None, ge=0, description="mean rendered tokens with the lossless template, code slots untrimmed")
    rendered_tokens_after_untrimmed: float | None = Field(
        None, ge=0, description="mean rendered tokens with the compressed template, code slots untrimmed")
    uncached_tokens_before: float | None = Field(
        None, ge=0, description="rendered tokens of the original not inside a prefix it shares with another original")
    trimmed_slots: dict[str, Literal["prefix", "suffix", "declarations"]] | None = Field(
        None, description="code-context slots trimmed to the pack's trimming budget: slot name -> role")
    measured_requests: int | None = Field(None, ge=0, description="logged requests the rendered token figures are means over")


class PackTotals(_Strict):
    """Traffic-weighted totals over the pack."""

    templates: int = Field(ge=0)
    requests: int = Field(ge=0)
    static_tokens_before: float = Field(ge=0)
    static_tokens_after: float = Field(ge=0)
    rendered_tokens_before: float = Field(ge=0)
    rendered_tokens_after: float = Field(ge=0)
    uncached_tokens_after: float = Field(ge=0)
    fidelity: float = Field(ge=0, le=1)
    secrets_redacted: dict[str, int] = Field(default_factory=dict)
    static_tokens_after_lossless: float | None = Field(None, ge=0)
    rendered_tokens_after_lossless: float | None = Field(None, ge=0)
    rendered_tokens_after_untrimmed: float | None = Field(None, ge=0)
    uncached_tokens_before: float | None = Field(None, ge=0)
    kv_block_share_before: float | None = Field(
        None, ge=0, le=1, description="share of logged prompt tokens in 16-token KV blocks another logged prompt also starts with")
    kv_block_share_after: float | None = Field(None, ge=0, le=1, description="the same for the compressed, trimmed renderings")


class TrimSettings(_Strict):
    """Context trimming of code-context slots: the budgets the pack's figures were measured with."""

    prefix_budget_tokens: int = Field(ge=0)
    suffix_budget_tokens: int = Field(ge=0)
    declarations_budget_tokens: int = Field(ge=0)
    token_unit: Literal["words-and-punctuation"] = Field(
        "words-and-punctuation", description="what the budgets count (an approximation of model tokens)")
    ast_weight: float = Field(ge=0, le=1, description="weight of AST importance in a unit's score (recency gets the rest)")
    options: dict[str, int | float] | None = Field(
        None, description="the trimmer's other options (logmine.runtime.trim.TrimConfig fields), so serving trims as measured")


class PackValidation(_Strict):
    """How the generator judged the pack (`logmine compress --validate N`): its outputs on the prompts the pack
    serves against those on the logged prompts."""

    requests_per_template: int = Field(ge=1)
    max_new_tokens: int = Field(ge=1)
    threshold: float = Field(ge=0, le=1, description="least mean edit similarity of the outputs for a form to ship")
    model: str
    device: str
    templates_validated: int = Field(ge=0, description="templates with at least one logged request replayed")
    shipped: dict[str, int] = Field(description="form (compressed, lossless, original) -> templates that ship it")
    edit_similarity: float | None = Field(None, ge=0, le=1, description="traffic-weighted, of the forms that ship")
    exact_match: float | None = Field(None, ge=0, le=1, description="traffic-weighted, of the forms that ship")
    edit_similarity_compressed: float | None = Field(
        None, ge=0, le=1, description="traffic-weighted, of the compressed forms (before any fell back)")


class TemplatePack(_Strict):
    """The content of ``pack.json``."""

    format_version: int = PACK_FORMAT_VERSION
    created_at: str
    logmine_version: str
    tokenizer: str
    embedding_model: str
    thresholds: Thresholds
    templates: list[PackTemplate]
    shared_prefixes: list[SharedPrefix] = Field(default_factory=list)
    totals: PackTotals
    trimming: TrimSettings | None = Field(None, description="context trimming of code slots; absent: none")
    validation: PackValidation | None = Field(None, description="the generator's verdict on the pack; null: not validated")

    def template(self, template_id: str) -> PackTemplate:
        for t in self.templates:
            if t.id == template_id or t.name == template_id:
                return t
        raise PackError(f"pack has no template {template_id!r}")


class PackManifest(_Strict):
    """The content of ``manifest.json``: a hash for every other file of the pack."""

    format_version: int = PACK_FORMAT_VERSION
    files: dict[str, str] = Field(description="relative path -> sha256 hex")


def write_pack(pack: TemplatePack, directory: Path | str, extra_files: dict[str, bytes] | None = None) -> Path:
    """Write ``pack`` (and any extra files) to ``directory`` atomically; return the directory."""
    directory = Path(directory)
    tmp = directory.with_name(f".{directory.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        directory.parent.mkdir(parents=True, exist_ok=True)
        tmp.mkdir()
    except OSError as exc:
        raise OutputPathError(directory, "pack", exc) from exc
    try:
        files = {PACK_FILE: pack_json_bytes(pack), **(extra_files or {})}
        for name, data in files.items():
            (tmp / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp / name).write_bytes(data)
        manifest = PackManifest(files={name: hashlib.sha256(data).hexdigest() for name, data in sorted(files.items())})
        (tmp / MANIFEST_FILE).write_text(manifest.model_dump_json(indent=2) + "\n")
        if directory.is_dir() and _exchange(tmp, directory):
            shutil.rmtree(tmp, ignore_errors=True)  # tmp now holds the previous pack
        else:
            old = directory.with_name(f".{directory.name}.{uuid.uuid4().hex[:8]}.old")
            if directory.exists():
                os.replace(directory, old)  # a directory cannot be renamed over a non-empty one
            os.replace(tmp, directory)
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return directory


def _exchange(a: Path, b: Path) -> bool:
    """Swap two directories atomically (Linux ``renameat2(RENAME_EXCHANGE)``): readers of ``b``
    see the old pack or the new one, never no pack. False where the call is unavailable."""
    import ctypes
    import sys

    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    return renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0


def pack_json_bytes(pack: TemplatePack) -> bytes:
    """The canonical bytes of pack.json (stable key order, so equal packs are equal files)."""
    return (json.dumps(pack.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n").encode()


def load_pack(directory: Path | str, verify: bool = True) -> TemplatePack:
    """Read and check a pack: manifest hashes, format version, schema. Raise PackError if bad."""
    directory = Path(directory)
    if directory.is_file() and directory.name == PACK_FILE:
        directory = directory.parent
    pack_path = directory / PACK_FILE
    if not pack_path.is_file():
        raise PackError(f"{directory} is not a template pack (no {PACK_FILE})")
    if verify:
        verify_manifest(directory)
    try:
        raw = json.loads(pack_path.read_text())
    except ValueError as exc:
        raise PackError(f"{pack_path}: not valid JSON ({exc})") from exc
    raw = migrate(raw, pack_path)
    try:
        return TemplatePack.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise PackError(f"{pack_path}: does not match the pack schema at {where}: {first['msg']}") from exc


def verify_manifest(directory: Path) -> None:
    """Check that every file listed in the manifest is present with its hash, and no file is unlisted."""
    manifest_path = directory / MANIFEST_FILE
    if not manifest_path.is_file():
        raise PackError(f"{directory}: no {MANIFEST_FILE}; refusing an unverifiable pack")
    try:
        manifest = PackManifest.model_validate_json(manifest_path.read_text())
    except (ValidationError, ValueError) as exc:
        raise PackError(f"{manifest_path}: invalid manifest") from exc
    present = {str(p.relative_to(directory)) for p in directory.rglob("*") if p.is_file()} - {MANIFEST_FILE}
    if missing := sorted(set(manifest.files) - present):
        raise PackError(f"{directory}: files listed in the manifest are missing: {', '.join(missing)}")
    if unlisted := sorted(present - set(manifest.files)):
        raise PackError(f"{directory}: files not in the manifest: {', '.join(unlisted)}")
    for name, expected in manifest.files.items():
        if file_sha256(directory / name) != expected:
            raise PackError(f"{directory / name}: sha256 does not match the manifest; the pack was modified")


def migrate(raw: dict[str, Any], path: Path) -> dict[str, Any]:
    """Bring an older pack.json up to :data:`PACK_FORMAT_VERSION`; refuse a newer one."""
    if not isinstance(raw, dict):
        raise PackError(f"{path}: pack.json must hold a JSON object")
    found = raw.get("format_version")
    if not isinstance(found, int):
        raise PackError(f"{path}: format_version is missing or not an integer")
    if found > PACK_FORMAT_VERSION:
        raise FormatVersionError("pack", path, found, PACK_FORMAT_VERSION)
    if found == 1:
        raw = _v1_to_v2(raw)
    return raw


def _v1_to_v2(raw: dict[str, Any]) -> dict[str, Any]:
    """Format 1 had no render plans: its templates keep ``plan`` null, so they render as before (slots verbatim)."""
    return {**raw, "format_version": 2}


def pack_json_schema() -> dict[str, Any]:
    """The JSON Schema of pack.json, as checked into schemas/template_pack.schema.json."""
    schema = TemplatePack.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://logmine.dev/schemas/template_pack.schema.json"
    return schema


def diff_packs(old: TemplatePack, new: TemplatePack) -> dict[str, Any]:
    """What changed from ``old`` to ``new``: templates added, removed or changed, and totals."""
    a = {t.id: t for t in old.templates}
    b = {t.id: t for t in new.templates}
    changes: list[dict[str, Any]] = []
    for tid in sorted(b.keys() - a.keys()):
        changes.append({"change": "added", "id": tid, "name": b[tid].name, "detail": f"{b[tid].n_requests} requests"})
    for tid in sorted(a.keys() - b.keys()):
        changes.append({"change": "removed", "id": tid, "name": a[tid].name, "detail": f"{a[tid].n_requests} requests"})
    for tid in sorted(a.keys() & b.keys()):
        details = []
        if a[tid].source != b[tid].source:
            details.append("compressed source changed")
        for field in ("n_requests", "static_tokens_after", "fidelity"):
            x, y = getattr(a[tid], field), getattr(b[tid], field)
            if x != y:
                details.append(f"{field} {x} -> {y}")
        if details:
            changes.append({"change": "changed", "id": tid, "name": b[tid].name, "detail": "; ".join(details)})
    totals = {
        key: (getattr(old.totals, key), getattr(new.totals, key))
        for key in ("templates", "requests", "static_tokens_before", "static_tokens_after", "fidelity")
        if getattr(old.totals, key) != getattr(new.totals, key)
    }
    return {"templates": changes, "totals": totals}
