"""Fixtures for the serving tests: a tiny random Llama and tokenizer built locally (no download),
saved as a model directory so the real loading path (`--model DIR`) is what the tests use."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("logmine_serving")

CORPUS = [
    "def add(a, b):\n    return a + b\n",
    "You are a helpful coding assistant. Complete the code.\n",
    "<fim_prefix>import os\n<fim_suffix>\n<fim_middle>",
    "function greet(name) { console.log('hi ' + name); }\n",
    "# File: src/main.py\n# Language: python\n",
]


def build_tiny_model(directory: Path) -> Path:
    """Save a 2-layer Llama with random weights (seed 0) and a byte-level BPE tokenizer to ``directory``."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<pad>", "<eos>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(CORPUS * 20, trainer)
    hf_tok = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>")
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(hf_tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096,
                         pad_token_id=hf_tok.pad_token_id, eos_token_id=hf_tok.eos_token_id, bos_token_id=None)
    model = LlamaForCausalLM(config)
    model.save_pretrained(directory)
    hf_tok.save_pretrained(directory)
    return directory


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny-llama"))


@pytest.fixture(scope="session")
def tiny_generator(tiny_model_dir: Path):  # noqa: ANN201
    from logmine_serving.generator import Generator

    return Generator.load(str(tiny_model_dir), device="cpu")
