"""The generator's dtype: float32 on CPU and for small models on CUDA, bf16 for big ones there."""

from __future__ import annotations

from pathlib import Path

import pytest

from logmine.errors import LogmineError
from logmine.models import SMALL_MODEL_PARAMS, _count_params, generator_dtype


@pytest.mark.parametrize(
    ("device", "n_params", "expected"),
    [
        ("cpu", None, "float32"),
        ("cpu", 70_000_000_000, "float32"),
        ("cuda", 134_515_008, "float32"),
        ("cuda:1", SMALL_MODEL_PARAMS - 1, "float32"),
        ("cuda", SMALL_MODEL_PARAMS, "bfloat16"),
        ("cuda", 7_000_000_000, "bfloat16"),
        ("cuda", None, "bfloat16"),
    ],
)
def test_auto_dtype_by_device_and_size(device: str, n_params: int | None, expected: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LOGMINE_DTYPE", raising=False)
    assert generator_dtype(device, n_params) == expected


def test_explicit_dtype_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOGMINE_DTYPE", "bfloat16")
    assert generator_dtype("cuda", 1000) == "bfloat16"
    assert generator_dtype("cpu", None) == "bfloat16"
    assert generator_dtype("cuda", 10**10, choice="float32") == "float32"


def test_unknown_dtype_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOGMINE_DTYPE", "fp8")
    with pytest.raises(LogmineError, match="unknown dtype 'fp8'"):
        generator_dtype("cuda", 1000)


def test_params_are_counted_without_loading_weights(tiny_model_dir: Path, tiny_generator) -> None:  # noqa: ANN001
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    counted = _count_params(torch, transformers, {"pretrained_model_name_or_path": str(tiny_model_dir), "local_files_only": True})
    assert counted == sum(p.numel() for p in tiny_generator.model.parameters())
    assert next(tiny_generator.model.parameters()).dtype == torch.float32
