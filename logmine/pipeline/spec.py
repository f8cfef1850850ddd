"""The pipeline file: a TOML document parsed into strict pydantic models.

Relative paths in the file are read relative to the file's own directory; ``~`` and
``$VARIABLES`` are expanded. Every input path holds a ``{date}`` placeholder: the files it
matches are grouped into one *partition* per date, the unit a nightly run adds, replaces or
skips. An unknown key or a bad value is an :class:`PipelineFileError` naming the file and key.
"""

from __future__ import annotations

import hashlib
import os
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from logmine.errors import InputPathError, LogmineError
from logmine.formats.registry import FORMAT_NAMES

FORMAT_VERSION = 1
DATE_PLACEHOLDER = "{date}"


class PipelineFileError(LogmineError):
    """A pipeline file that cannot be read or does not validate."""

    def __init__(self, path: Path | str, problem: str) -> None:
        self.path = Path(path)
        super().__init__(f"{path}: {problem}")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class InputSpec(_Strict):
    """One log source: globs with a ``{date}`` placeholder, and the format to read them as."""

    name: str = Field(min_length=1)
    """A short name, shown in run records."""
    paths: list[str] = Field(min_length=1)
    """Globs (``**`` allowed) each holding ``{date}``, e.g. ``logs/{date}/continue/*.jsonl``."""
    format: str | None = None
    """Read every file as this format (default: detect per file)."""
    date_format: str = "%Y-%m-%d"
    """How ``{date}`` is written in the paths (``%Y``, ``%m``, ``%d`` and literal characters)."""

    @field_validator("paths")
    @classmethod
    def _has_date(cls, paths: list[str]) -> list[str]:
        for p in paths:
            if p.count(DATE_PLACEHOLDER) != 1:
                raise ValueError(f"{p!r} must hold the placeholder {DATE_PLACEHOLDER} exactly once")
        return paths

    @field_validator("format")
    @classmethod
    def _known_format(cls, value: str | None) -> str | None:
        if value is not None and value not in FORMAT_NAMES:
            raise ValueError(f"unknown format {value!r}; one of {', '.join(sorted(FORMAT_NAMES))}")
        return value

    @field_validator("date_format")
    @classmethod
    def _date_format(cls, value: str) -> str:
        import re

        directives = set(re.findall(r"%(.)", value))
        if not {"Y", "m", "d"} <= directives or directives - {"Y", "m", "d"}:
            raise ValueError("must use exactly the directives %Y, %m and %d")
        return value


class IngestStage(_Strict):
    enabled: bool = True
    force: bool = False
    """Re-ingest files even when their size and hash are unchanged."""


class FlowsStage(_Strict):
    enabled: bool = True
    idle_gap_s: float | None = Field(1800.0, ge=0)
    """Split a session where consecutive events are further apart than this."""
    ngram_min: int = Field(2, ge=1, le=8)
    ngram_max: int = Field(5, ge=1, le=8)
    ngram_min_sessions: int = Field(1, ge=1)
    window_events: int | None = Field(5, ge=1)
    window_seconds: float | None = Field(None, ge=0)
    outcome_max_n: int = Field(3, ge=0)
    patterns: bool = False
    """Mine sequential patterns too: not additive, so mined over every retained event each run."""
    min_support: float = Field(0.01, gt=0, le=1)
    max_pattern_length: int = Field(4, ge=1)
    graph_edges: int = Field(60, ge=1)

    @model_validator(mode="after")
    def _ngram_range(self) -> FlowsStage:
        if self.ngram_min > self.ngram_max:
            raise ValueError("ngram_min must not exceed ngram_max")
        return self


class HeatmapStage(_Strict):
    enabled: bool = True
    alpha: float = Field(0.01, gt=0, lt=0.5)
    chunk_fraction: float = Field(0.5, ge=0, le=1)
    keep_tokens: bool = True
    html: bool = True
    """Write the heatmap stage's own page (OUT/heatmap/index.html) too."""
    png: bool = False
    slow_examples: int = Field(12, ge=0)


class TemplatesStage(_Strict):
    enabled: bool = True
    miner: Literal["prompts", "lines"] = "prompts"
    """``prompts``: the prompt miner (record values and code become placeholders); ``lines``: the plain line miner on ``column``."""
    find_code: bool = True
    """Prompts: find code by its shape (fences, FIM regions, parsable paragraphs) and make it slots."""
    column: Literal["prompt", "completion", "prefix"] = "prompt"
    """Lines: the llm_requests column whose texts are mined."""
    collapse_spaces: bool = False
    typed_masks: bool = False
    max_units: int = Field(50_000, ge=100)
    """Signatures a partition holds before the miner consolidates (above it shards merge approximately)."""


class CompressStage(_Strict):
    """Compress the templates and publish the pack, the generator judging what ships (as `logmine compress`)."""

    enabled: bool = False
    """Needs the ml extra (embedding model and tokenizer)."""
    lossy: bool = True
    tokenizer: str | None = None
    embedding_model: str | None = None
    validate_: Literal["auto", False] | int = Field("auto", alias="validate")
    """``"auto"``: validate (2 requests per template) where the bundled generator is installed and templates x 2 <= 200,
    as `logmine compress` does; N: always replay N logged requests per template; ``false``: never (the run says "not validated")."""
    validate_tokens: int = Field(16, ge=1)
    """Tokens generated per prompt when validating."""
    validate_threshold: float = Field(0.9, ge=0, le=1)
    """Least mean edit similarity of the outputs for a form to ship."""
    model: str | None = None
    """A local Hugging Face causal LM directory to validate with (default: the bundled SmolLM2)."""
    device: str | None = None
    """cpu or cuda for the generator (default: cuda when present)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @field_validator("validate_", mode="before")
    @classmethod
    def _validate_choice(cls, value: Any) -> Any:
        if value == "auto" or value is False or (type(value) is int and value >= 1):
            return value
        raise ValueError('must be "auto", false, or a number of requests per template (at least 1)')


class ValidateStage(_Strict):
    enabled: bool = False
    """Needs the serving layer and a generator model."""
    per_template: int = Field(5, ge=1)
    max_tokens: int = Field(32, ge=1)
    model: str | None = None
    device: str | None = None


class ReportStage(_Strict):
    enabled: bool = True


class Stages(_Strict):
    ingest: IngestStage = IngestStage()
    flows: FlowsStage = FlowsStage()
    heatmap: HeatmapStage = HeatmapStage()
    templates: TemplatesStage = TemplatesStage()
    compress: CompressStage = CompressStage()
    validate_: ValidateStage = Field(ValidateStage(), alias="validate")
    report: ReportStage = ReportStage()

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class EngineSpec(_Strict):
    kind: Literal["local", "ray"] = "local"
    workers: int | None = Field(None, ge=1)
    """Local: processes (default 1: serial). Ray: CPUs of a Ray started by the run (default: all)."""
    ray_address: str | None = None


class PublishSpec(_Strict):
    pack: str | None = None
    """Where the template pack is written (atomically); default WORKSPACE/pack."""


class RetentionSpec(_Strict):
    days: int | None = Field(None, ge=1)
    """Keep this many days of partitions (ending at the run's date); older ones leave every table. None: keep all."""
    runs: int = Field(90, ge=1)
    """Run records kept (OUT/runs/*.json and the runs table)."""


class MetricsSpec(_Strict):
    enabled: bool = True
    textfile: str | None = None
    """Prometheus textfile path; default WORKSPACE/metrics/logmine.prom."""


class QuerySpec(_Strict):
    name: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,40}$")]
    """Becomes the workspace table ``query_<name>``."""
    file: str
    """A DuckDB SQL file (one SELECT over the workspace's views)."""
    title: str | None = None


class PipelineSpec(_Strict):
    """A whole pipeline file."""

    format_version: int = FORMAT_VERSION
    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,60}$")]
    description: str = ""
    workspace: str
    inputs: list[InputSpec] = Field(min_length=1)
    stages: Stages = Stages()
    engine: EngineSpec = EngineSpec()
    publish: PublishSpec = PublishSpec()
    retention: RetentionSpec = RetentionSpec()
    metrics: MetricsSpec = MetricsSpec()
    queries: list[QuerySpec] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique_names(self) -> PipelineSpec:
        for what, names in (("inputs", [i.name for i in self.inputs]), ("queries", [q.name for q in self.queries])):
            dupes = sorted({n for n in names if names.count(n) > 1})
            if dupes:
                raise ValueError(f"{what}: duplicate name(s) {', '.join(dupes)}")
        if self.format_version > FORMAT_VERSION:
            raise ValueError(f"format_version {self.format_version} is newer than supported {FORMAT_VERSION}; upgrade logmine")
        return self


class Pipeline:
    """A validated pipeline file with its paths resolved."""

    def __init__(self, spec: PipelineSpec, path: Path, digest: str) -> None:
        self.spec, self.path, self.digest = spec, path, digest
        self.base = path.parent

    def resolve(self, value: str) -> Path:
        """A path from the file: ``~`` and ``$VARS`` expanded, relative to the file's directory."""
        p = Path(os.path.expandvars(os.path.expanduser(value)))
        return Path(os.path.normpath(p if p.is_absolute() else self.base / p))

    @property
    def workspace(self) -> Path:
        return self.resolve(self.spec.workspace)

    @property
    def pack_dir(self) -> Path:
        return self.resolve(self.spec.publish.pack) if self.spec.publish.pack else self.workspace / "pack"

    @property
    def metrics_file(self) -> Path:
        return self.resolve(self.spec.metrics.textfile) if self.spec.metrics.textfile else self.workspace / "metrics" / "logmine.prom"


def load_pipeline(path: Path | str) -> Pipeline:
    """Read and validate a pipeline file."""
    path = Path(path)
    if not path.is_file():
        raise InputPathError(path, "no such pipeline file")
    raw = path.read_bytes()
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise PipelineFileError(path, f"invalid TOML: {exc}") from None
    try:
        spec = PipelineSpec.model_validate(data)
    except ValidationError as exc:
        raise PipelineFileError(path, _describe(exc)) from None
    return Pipeline(spec, path.resolve(), "b2:" + hashlib.blake2b(raw, digest_size=16).hexdigest())


def _describe(exc: ValidationError) -> str:
    problems = []
    for err in exc.errors():
        key = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"]).lstrip(".") or "(top level)"
        if err["type"] == "extra_forbidden":
            problems.append(f"unknown key {key!r}")
        elif err["type"] == "missing":
            problems.append(f"missing key {key!r}")
        else:
            value = err.get("input")
            shown = f" (got {value!r})" if not isinstance(value, (dict, list)) else ""
            problems.append(f"key {key!r}: {err['msg']}{shown}")
    return "; ".join(problems)


def schema() -> dict[str, Any]:
    """The JSON Schema of pipeline files."""
    return PipelineSpec.model_json_schema(by_alias=True)
