"""The fixed CPU kernel path (icda/kernels.py): the same float results whatever kernels the
environment would pick, and a clear error for an unknown path."""

import json
import os
import subprocess
import sys

from pathlib import Path

import pytest

from icda.errors import ConfigError
from icda.kernels import FIXED_ENVIRONMENT, cpu_flags, kernel_path

REPO = Path(__file__).resolve().parents[1]

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
from icda.kernels import openblas_core
print(json.dumps({"digest": digest.hexdigest(), "capability": torch.backends.cpu.get_cpu_capability(),
                  "mkldnn": torch.backends.mkldnn.enabled, "threads": torch.get_num_threads(),
                  "openblas": openblas_core()}))
"""


def _run(**env) -> dict:
    base = {k: v for k, v in os.environ.items() if k not in (*FIXED_ENVIRONMENT, "ICDA_KERNELS")}
    out = subprocess.run([sys.executable, "-c", WORKLOAD], env=base | env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


#: the fixed path's kernels run on this CPU: ATen's AVX2 ones and OpenBLAS's Haswell ones (AVX2, FMA)
FIXED_KERNELS_RUN_HERE = {"avx2", "fma"} <= cpu_flags()


@pytest.mark.slow  # three interpreters under different kernel environments (about 20 s): the slow stage
@pytest.mark.skipif(not FIXED_KERNELS_RUN_HERE, reason="the fixed path is defined for x86-64 CPUs with AVX2 and FMA")
def test_fixed_path_gives_the_same_bits_whatever_kernels_the_environment_asks_for():
    environments = [{}, {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "AVX512", "OMP_NUM_THREADS": "2",
                         "OPENBLAS_CORETYPE": "Sandybridge", "OPENBLAS_NUM_THREADS": "2"},
                    {"ATEN_CPU_CAPABILITY": "avx512", "MKL_CBWR": "COMPATIBLE", "OPENBLAS_CORETYPE": "Prescott"}]
    results = [_run(**env) for env in environments]
    assert {r["digest"] for r in results} == {results[0]["digest"]}, results
    assert all((r["capability"], r["mkldnn"], r["threads"], r["openblas"]) == ("AVX2", False, 1, "Haswell")
               for r in results)


@pytest.mark.slow  # two interpreters under different kernel environments: the slow stage, beside the test above
@pytest.mark.skipif("avx2" not in cpu_flags(), reason="needs ATen's AVX2 kernels to compare with the generic ones")
def test_the_workload_does_tell_kernel_paths_apart():
    """Without the fixed path, ATen's generic and AVX2 kernels give other bits on this workload:
    the test above would see a path that leaked through."""
    generic = _run(ICDA_KERNELS="native", ATEN_CPU_CAPABILITY="default", OMP_NUM_THREADS="1")
    avx2 = _run(ICDA_KERNELS="native", ATEN_CPU_CAPABILITY="avx2", OMP_NUM_THREADS="1")
    assert generic["capability"] == "DEFAULT" and generic["digest"] != avx2["digest"]


@pytest.mark.skipif(not FIXED_KERNELS_RUN_HERE, reason="needs OpenBLAS's Haswell kernels to compare with others")
def test_the_workload_does_tell_openblas_kernels_apart():
    """The routed matrix products are OpenBLAS's: on other OpenBLAS kernels (which the fixed path
    overrides; set by hand here, on the native path) they give other bits, so the test above would
    see kernels that leaked through."""
    script = r"""
import icda, json
import numpy as np, torch
from icda.kernels import openblas_core, route_matrix_products
route_matrix_products(torch)
a = torch.from_numpy(np.random.default_rng(0).standard_normal((300, 500)).astype(np.float32))
print(json.dumps([openblas_core(), (a @ a.T.contiguous()).sum(1).tolist()]))
"""
    base = {k: v for k, v in os.environ.items() if k not in (*FIXED_ENVIRONMENT, "ICDA_KERNELS")}
    outputs = [json.loads(subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                                         env=base | {"ICDA_KERNELS": "native", "OPENBLAS_NUM_THREADS": "1",
                                                     "OPENBLAS_CORETYPE": core}).stdout)
               for core in ("Haswell", "Sandybridge")]
    assert [core for core, _ in outputs] == ["Haswell", "Sandybridge"]
    assert outputs[0][1] != outputs[1][1]


def test_a_process_that_loaded_numpy_before_icda_is_warned():
    """``import torch`` loads numpy, whose OpenBLAS picks its kernels when it loads: after that,
    icda cannot move it to the Haswell kernels, and says so (unless they are the CPU's own)."""
    script = "import torch, icda\nfrom icda import encoder\nfrom icda.kernels import openblas_core\nprint(openblas_core())"
    base = {k: v for k, v in os.environ.items() if k not in (*FIXED_ENVIRONMENT, "ICDA_KERNELS")}
    proc = subprocess.run([sys.executable, "-c", script], env=base, capture_output=True, text=True, check=True)
    core = proc.stdout.strip().splitlines()[-1]
    warned = "torch or numpy was imported before icda" in proc.stderr
    assert warned == (core != "Haswell"), (core, proc.stderr)


def test_routed_matrix_products_compute_what_aten_does():
    """Every routed operator, overload, in-place and ``out=`` form, with ``alpha``/``beta`` and
    broadcast inputs, against a float64 reference; and autograd's gradients through them."""
    import torch

    from icda.kernels import route_matrix_products

    route_matrix_products(torch)
    g = torch.Generator().manual_seed(0)
    a, b, c = (torch.randn(*shape, generator=g) for shape in ((5, 3), (3, 4), (4,)))
    x, y, z = (torch.randn(*shape, generator=g) for shape in ((2, 5, 3), (2, 3, 4), (2, 5, 4)))
    v = torch.randn(3, generator=g)

    def close(got, want):
        assert got.shape == want.shape and got.dtype == torch.float32
        assert torch.allclose(got.double(), want, atol=1e-5), (got, want)

    A, B, C, X, Y, Z, V = (t.double() for t in (a, b, c, x, y, z, v))
    close(torch.mm(a, b), A @ B)
    close(torch.mm(a.T.contiguous().T, b[:, ::2]), A @ B[:, ::2])  # strided views
    close(torch.addmm(c, a, b, beta=0.5, alpha=2.0), 0.5 * C + 2.0 * (A @ B))
    close(torch.addmm(torch.full((4,), float("nan")), a, b, beta=0), A @ B)  # beta 0 ignores the input
    close(torch.bmm(x, y), X @ Y)
    close(torch.baddbmm(z, x, y, alpha=-1.0), Z - X @ Y)
    close(torch.addmv(a[:, 0], a, v, beta=2.0), 2.0 * A[:, 0] + A @ V)
    close(torch.dot(v, v), V @ V)
    close(v @ v, V @ V)
    close(a @ v, A @ V)
    out = torch.empty(0)
    assert torch.mm(a, b, out=out) is out
    close(out, A @ B)
    close(torch.zeros(5, 4).addmm_(a, b), A @ B)
    close(z.clone().baddbmm_(x, y), Z + X @ Y)
    assert torch.equal(torch.ones(2, 3, dtype=torch.long) @ torch.ones(3, 2, dtype=torch.long),
                       torch.full((2, 2), 3))
    for half in (torch.bfloat16, torch.float16):
        assert (a.to(half) @ b.to(half)).dtype == half
    with pytest.raises(RuntimeError, match=r"shapes cannot be multiplied \(5x3 and 5x3\)"):
        torch.mm(a, a)
    with pytest.raises(RuntimeError, match="expected tensors of 3 and 3 dimensions, got 5x3 and 3x4"):
        torch.bmm(a, b)
    linear = torch.nn.Linear(3, 4).double()
    assert torch.autograd.gradcheck(lambda t: linear(t).tanh() @ linear.weight, (X[0].requires_grad_(),))


def test_kernel_path_reads_icda_kernels(monkeypatch):
    monkeypatch.delenv("ICDA_KERNELS", raising=False)
    assert kernel_path() == "fixed"
    monkeypatch.setenv("ICDA_KERNELS", "Native")
    assert kernel_path() == "native"
    monkeypatch.setenv("ICDA_KERNELS", "fast")
    with pytest.raises(ConfigError, match=r"ICDA_KERNELS='fast': use one of fixed, native .*Fix: unset ICDA_KERNELS"):
        kernel_path()


def test_importing_torch_before_icda_still_runs_one_thread():
    """``import torch`` before ``icda`` loads OpenBLAS and OpenMP with the environment's thread
    counts (here 2); icda sets every pool already loaded to one thread, as the fixed path does
    in a process that imports it first."""
    script = ("import json, torch, numpy\nimport icda\nfrom icda import encoder\n"
              "from threadpoolctl import threadpool_info\n"
              "print(json.dumps({'torch': torch.get_num_threads(), "
              "'pools': {p['internal_api']: p['num_threads'] for p in threadpool_info()}}))")
    base = {k: v for k, v in os.environ.items() if k not in (*FIXED_ENVIRONMENT, "ICDA_KERNELS")}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                          env=base | {"OMP_NUM_THREADS": "2", "OPENBLAS_NUM_THREADS": "2", "MKL_NUM_THREADS": "2"})
    threads = json.loads(proc.stdout.strip().splitlines()[-1])
    assert threads["torch"] == 1 and threads["pools"] and set(threads["pools"].values()) == {1}, threads


BOGUS = ("error: ICDA_KERNELS='bogus': use one of fixed, native (docs/reproducibility.md). "
         "Fix: unset ICDA_KERNELS (the fixed path) or set it to native")


@pytest.mark.parametrize("command", [["-m", "icda", "--help"], ["-m", "icda", "prepare", "--help"],
                                     ["-c", "import icda"]])
def test_an_unknown_kernel_path_is_one_line_and_status_2(command):
    proc = subprocess.run([sys.executable, *command], capture_output=True, text=True,
                          env=os.environ | {"ICDA_KERNELS": "bogus"})
    assert (proc.returncode, proc.stderr, proc.stdout) == (2, BOGUS + "\n", "")


def test_an_unknown_kernel_path_stops_the_snakefile_with_one_line(tmp_path):
    snakemake = Path(sys.executable).with_name("snakemake")
    proc = subprocess.run([str(snakemake), "-s", str(REPO / "Snakefile"), "--directory", str(tmp_path), "-n"],
                          capture_output=True, text=True, env=os.environ | {"ICDA_KERNELS": "bogus"})
    assert proc.returncode == 2
    assert [line for line in proc.stderr.splitlines() if "Traceback" in line or line.startswith("error:")] == [BOGUS]
