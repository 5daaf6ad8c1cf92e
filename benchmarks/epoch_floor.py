"""How far a training epoch of the default network is from its floor on this CPU.

A training step of the rationale network (forward, backward, fused AdamW; one thread, as in a
workflow job) on restaurant-shaped documents: 5 to 16 sentences, P(n) ∝ 2^-(n-5) (mean ≈ 6,
as the restaurant training set), with sentence dropout 0.5 and shuffling as in training
(``icda.train``). Variants, interleaved in one invocation on the same documents, each reported
as CPU ms per 1,000 training documents and as a ratio to the default:

- ``batch 64 (default)``: ``train.batch_size`` of config/config.yaml;
- ``batch 128``, ``batch 256``: fewer, larger steps; what is left of a step's cost that does
  not grow with its size (Python, autograd, launching small kernels) shows as the saving;
- ``bf16 matmuls``: the default under ``torch.autocast("cpu", dtype=torch.bfloat16)``, which
  runs the matrix products in bfloat16 (fast on CPUs with AVX512-BF16 or AMX; slower where
  they are emulated).

Each variant changes the numbers the model learns (the batch size changes the optimisation; bf16
rounds every product to 8 bits of mantissa): these are costs, not drop-in speed-ups.

``--readouts`` instead times the default batch with the selector's read-outs (departure 27): the
default (the last layer, 384 wide), ``selector_input: centred``, ``encoder.layers: 3`` (1,152
wide) and both (the hotel aspects' setting), each a ratio to the default.

``--kernels`` instead times the default variant on the two CPU kernel paths (icda/kernels.py):
the fixed one (the default: ATen AVX2, matrix products on OpenBLAS's Haswell kernels, MKL
COMPATIBLE, oneDNN off) and this machine's native one (``ICDA_KERNELS=native``), and between them
the first fixed path (the same without the routed products: MKL's COMPATIBLE branch computes them),
each in its own process (a process keeps the path it started with), interleaved round by round,
and prints each cost as a ratio to the native one.

    PYTHONPATH=. .venv/bin/python benchmarks/epoch_floor.py
    PYTHONPATH=. .venv/bin/python benchmarks/epoch_floor.py --documents 4096 --repeat 5
    PYTHONPATH=. .venv/bin/python benchmarks/epoch_floor.py --kernels
    PYTHONPATH=. .venv/bin/python benchmarks/epoch_floor.py --readouts --documents 1024
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import icda  # noqa: F401  (first: the kernel path's variables before torch loads numpy's BLAS)
import torch
import torch.nn.functional as F
import yaml

from icda.kernels import FIXED_ENVIRONMENT, kernel_path, openblas_core
from icda.model import CachedSentences, RationaleNetwork
from icda.settings import ModelSettings
from icda.train import drop_sentences, shuffle_sentences, trim
from icda.guard import parse_arguments  # noqa: E402

CONFIG = yaml.safe_load((Path(__file__).resolve().parents[1] / "config/config.yaml").read_text())


def documents(n: int, max_sentences: int, generator: torch.Generator) -> torch.Tensor:
    """ids [n, max_sentences]: restaurant-shaped documents of 5 to ``max_sentences`` sentences."""
    sizes = torch.arange(5, max_sentences + 1)
    weights = 0.5 ** (sizes - 5).double()
    lengths = sizes[torch.multinomial(weights, n, replacement=True, generator=generator)]
    ids = torch.randint(0, 5000, (n, max_sentences), generator=generator)
    ids[torch.arange(max_sentences) >= lengths[:, None]] = -1
    return ids


def epoch_cpu_seconds(model: RationaleNetwork, ids: torch.Tensor, labels: torch.Tensor, batch_size: int,
                      bf16: bool, dropout: float, seed: int) -> float:
    """CPU seconds of one training epoch over ids [D, N] (labels [D])."""
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=CONFIG["train"]["lr"], fused=True)
    cast = torch.autocast("cpu", dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()
    model.train()
    start = time.process_time()
    for at in range(0, len(ids), batch_size):
        x = trim(shuffle_sentences(drop_sentences(ids[at: at + batch_size], dropout, generator), generator))
        with cast:
            loss = F.cross_entropy(model(x).logits.float(), labels[at: at + batch_size])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return time.process_time() - start


def build_parser() -> argparse.ArgumentParser:
    """The command line of :func:`main` (its path arguments declared for the output guard, icda.guard)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=2048, help="training documents per epoch")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved rounds; the fastest is kept")
    parser.add_argument("--kernels", action="store_true", help="fixed vs native CPU kernel path (default batch)")
    parser.add_argument("--readouts", action="store_true", help="the selector's read-outs (default batch)")
    parser.add_argument("--one-epoch", action="store_true", help=argparse.SUPPRESS)  # a --kernels round
    parser.add_argument("--onednn-off", action="store_true", help=argparse.SUPPRESS)  # with --one-epoch
    return parser


def main(argv: list[str] | None = None) -> None:
    args = parse_arguments(build_parser(), argv)
    if args.kernels:
        return compare_kernel_paths(args.documents, args.repeat)
    torch.set_num_threads(1)  # as a workflow job with train_threads: 1
    generator = torch.Generator().manual_seed(0)
    max_sentences = CONFIG["encoder"]["max_sentences"]
    ids = documents(args.documents, max_sentences, generator)
    labels = torch.randint(0, 2, (args.documents,), generator=generator)
    torch.manual_seed(0)
    model = RationaleNetwork(CachedSentences(torch.randn(5000, 384)), ModelSettings(**CONFIG["model"]),
                             max_sentences)
    default_batch = CONFIG["train"]["batch_size"]
    dropout = CONFIG["train"]["sentence_dropout"]
    if args.readouts:
        return compare_readouts(ids, labels, max_sentences, default_batch, dropout, args.repeat)
    if args.one_epoch:
        if args.onednn_off:
            torch.backends.mkldnn.enabled = False
        epoch_cpu_seconds(model, ids[:256], labels[:256], default_batch, False, dropout, 0)  # warm-up
        seconds = epoch_cpu_seconds(model, ids, labels, default_batch, False, dropout, 0)
        print(json.dumps({"seconds": seconds, "capability": torch.backends.cpu.get_cpu_capability(),
                          "mkldnn": torch.backends.mkldnn.enabled, "mkl_cbwr": os.environ.get("MKL_CBWR"),
                          "products": "OpenBLAS " + openblas_core() if kernel_path() == "fixed" else "MKL"}))
        return
    variants = {f"batch {default_batch} (default)": (default_batch, False), "batch 128": (128, False),
                "batch 256": (256, False), "bf16 matmuls": (default_batch, True)}
    epoch_cpu_seconds(model, ids[:256], labels[:256], default_batch, True, dropout, 0)  # warm-up
    best = dict.fromkeys(variants, float("inf"))
    for round_ in range(args.repeat):
        for name, (batch_size, bf16) in variants.items():
            best[name] = min(best[name], epoch_cpu_seconds(model, ids, labels, batch_size, bf16, dropout, round_))
    base = best[f"batch {default_batch} (default)"]
    print(f"{args.documents} documents, {torch.get_num_threads()} thread, fastest of {args.repeat} rounds")
    print("| variant | CPU ms per 1,000 documents | / default |")
    print("|---|---|---|")
    for name, seconds in best.items():
        print(f"| {name} | {1000 * seconds * 1000 / args.documents:.0f} | {seconds / base:.2f} |")


#: --readouts' rows: the sentence vector's width (384 per encoder layer) and model.selector_input
READOUT_ROWS = {"default (last layer)": (384, "sentence"), "selector_input centred": (384, "centred"),
                "encoder.layers 3": (1152, "sentence"), "both (the hotel aspects)": (1152, "centred")}


def compare_readouts(ids: torch.Tensor, labels: torch.Tensor, max_sentences: int, batch: int, dropout: float,
                     repeat: int) -> None:
    """CPU seconds of a training epoch with each of :data:`READOUT_ROWS`, interleaved; the fastest
    of ``repeat`` rounds, as a ratio to the default."""
    models = {}
    for name, (width, selector_input) in READOUT_ROWS.items():
        torch.manual_seed(0)
        models[name] = RationaleNetwork(CachedSentences(torch.randn(5000, width)),
                                        ModelSettings(**CONFIG["model"] | {"selector_input": selector_input}),
                                        max_sentences)
    best = dict.fromkeys(models, float("inf"))
    for round_ in range(repeat):
        for name, model in models.items():
            best[name] = min(best[name], epoch_cpu_seconds(model, ids, labels, batch, False, dropout, round_))
    base = best["default (last layer)"]
    print(f"{len(ids)} documents, batch {batch}, 1 thread, fastest of {repeat} rounds")
    print("| read-out | CPU ms per 1,000 documents | / default |\n|---|---|---|")
    for name, seconds in best.items():
        print(f"| {name} | {1000 * seconds * 1000 / len(ids):.0f} | {seconds / base:.2f} |")


#: --kernels' rows: the two paths, and the first fixed path (its variables without the routed
#: matrix products, which MKL's COMPATIBLE branch then computes on SSE2: docs/reproducibility.md),
#: each with its extra arguments
KERNEL_ROWS = {
    "fixed": ({"ICDA_KERNELS": "fixed"}, []),
    "first fixed (products on MKL COMPATIBLE)": ({"ICDA_KERNELS": "native", **FIXED_ENVIRONMENT}, ["--onednn-off"]),
    "native": ({"ICDA_KERNELS": "native"}, []),
}


def compare_kernel_paths(n_documents: int, repeat: int) -> None:
    """The default variant's epoch under each of :data:`KERNEL_ROWS`, one process each per round,
    interleaved; prints the fastest of each and its ratio to the native path."""
    best, seen = dict.fromkeys(KERNEL_ROWS, float("inf")), {}
    for _ in range(repeat):
        for row, (variables, extra) in KERNEL_ROWS.items():
            # this process imported icda, which set the fixed path's variables: each row sets its own
            env = {k: v for k, v in os.environ.items() if k not in FIXED_ENVIRONMENT} | variables
            out = subprocess.run([sys.executable, __file__, "--one-epoch", "--documents", str(n_documents), *extra],
                                 env=env, capture_output=True, text=True, check=True)
            result = json.loads(out.stdout.strip().splitlines()[-1])
            best[row] = min(best[row], result["seconds"])
            seen[row] = (f"ATen {result['capability']}, products on {result['products']}, "
                         f"MKL_CBWR {result['mkl_cbwr'] or 'unset'}, oneDNN {'on' if result['mkldnn'] else 'off'}")
    print(f"{n_documents} documents, 1 thread, fastest of {repeat} rounds")
    print("| kernel path | kernels | CPU ms per 1,000 documents | / native |")
    print("|---|---|---|---|")
    for row, seconds in best.items():
        print(f"| {row} | {seen[row]} | {1000 * seconds * 1000 / n_documents:.0f} | {seconds / best['native']:.2f} |")


if __name__ == "__main__":
    main()
