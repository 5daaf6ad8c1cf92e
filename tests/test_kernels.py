"""The fixed CPU kernel path (icda/kernels.py): the same float results whatever kernels the
environment would pick, and a clear error for an unknown path."""

import json
import os
import subprocess
import sys

import pytest

from icda.kernels import FIXED_ENVIRONMENT, kernel_path

#: a few training steps of the rationale network and a BERT forward pass; prints their digest
WORKLOAD = r"""
import hashlib, json, sys
import icda  # sets the kernel path before torch computes anything
import torch
from transformers import BertConfig, BertModel
from icda.model import CachedSentences, RationaleNetwork
from icda.settings import ModelSettings

torch.manual_seed(0)
model = RationaleNetwork(CachedSentences(torch.randn(300, 96)), ModelSettings(d_model=64, heads=4, dff=128), 12)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
ids = torch.randint(0, 300, (48, 12))
labels = torch.randint(0, 2, (48,))
for _ in range(5):
    loss = torch.nn.functional.cross_entropy(model(ids).logits.float(), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
bert = BertModel(BertConfig(vocab_size=500, hidden_size=96, num_hidden_layers=2, num_attention_heads=4,
                            intermediate_size=192, max_position_embeddings=64)).eval()
with torch.no_grad():
    hidden = bert(input_ids=torch.randint(0, 500, (16, 24))).last_hidden_state
digest = hashlib.sha256()
for t in [*model.state_dict().values(), hidden]:
    digest.update(t.detach().float().contiguous().numpy().tobytes())
print(json.dumps({"digest": digest.hexdigest(), "capability": torch.backends.cpu.get_cpu_capability(),
                  "mkldnn": torch.backends.mkldnn.enabled, "threads": torch.get_num_threads()}))
"""


def _run(**env) -> dict:
    base = {k: v for k, v in os.environ.items() if k not in (*FIXED_ENVIRONMENT, "ICDA_KERNELS")}
    out = subprocess.run([sys.executable, "-c", WORKLOAD], env=base | env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _has_avx2() -> bool:
    try:
        return " avx2 " in f" {open('/proc/cpuinfo', encoding='utf-8').read().replace(chr(10), ' ')} "
    except OSError:
        return False


@pytest.mark.skipif(not _has_avx2(), reason="the fixed path is defined for x86-64 CPUs with AVX2")
def test_fixed_path_gives_the_same_bits_whatever_kernels_the_environment_asks_for():
    environments = [{}, {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "AVX512", "OMP_NUM_THREADS": "2"},
                    {"ATEN_CPU_CAPABILITY": "avx512", "MKL_CBWR": "COMPATIBLE"}]
    results = [_run(**env) for env in environments]
    assert {r["digest"] for r in results} == {results[0]["digest"]}, results
    assert all((r["capability"], r["mkldnn"], r["threads"]) == ("AVX2", False, 1) for r in results)


@pytest.mark.skipif(not _has_avx2(), reason="needs ATen's AVX2 kernels to compare with the generic ones")
def test_the_workload_does_tell_kernel_paths_apart():
    """Without the fixed path, ATen's generic and AVX2 kernels give other bits on this workload:
    the test above would see a path that leaked through."""
    generic = _run(ICDA_KERNELS="native", ATEN_CPU_CAPABILITY="default", OMP_NUM_THREADS="1")
    avx2 = _run(ICDA_KERNELS="native", ATEN_CPU_CAPABILITY="avx2", OMP_NUM_THREADS="1")
    assert generic["capability"] == "DEFAULT" and generic["digest"] != avx2["digest"]


def test_kernel_path_reads_icda_kernels(monkeypatch):
    monkeypatch.delenv("ICDA_KERNELS", raising=False)
    assert kernel_path() == "fixed"
    monkeypatch.setenv("ICDA_KERNELS", "Native")
    assert kernel_path() == "native"
    monkeypatch.setenv("ICDA_KERNELS", "fast")
    with pytest.raises(ValueError, match=r"ICDA_KERNELS='fast': use one of fixed, native"):
        kernel_path()
