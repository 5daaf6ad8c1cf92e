"""Training-step time of the sentence transformer on real slots only against the padded one.

``icda.model.transform_real_slots`` runs the projections, feed-forward blocks and layer norms on the
real sentences of a batch alone; the baseline is ``nn.TransformerEncoder`` with a padding mask
over every slot, which the model used before. Both run in the same invocation, interleaved, on
the same batches: documents of 1 to ``--max-sentences`` sentences with sentence dropout 0.5 and
shuffling applied as in training (``icda.train``), so about half the slots are empty.

    PYTHONPATH=. .venv/bin/python benchmarks/real_slots.py
    PYTHONPATH=. .venv/bin/python benchmarks/real_slots.py --d-model 128 --dff 256 --layers 2 --repeat 5
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import icda  # noqa: F401  (first: the kernel path's variables before torch loads numpy's BLAS)
import torch
import torch.nn.functional as F
import yaml

from icda.model import CachedSentences, RationaleNetwork
from icda.settings import ModelSettings
from icda.train import drop_sentences, shuffle_sentences, trim
from icda.guard import parse_arguments  # noqa: E402

#: the network of config/config.yaml; --d-model, --dff and --layers override it
DEFAULT_MODEL = yaml.safe_load((Path(__file__).resolve().parents[1] / "config/config.yaml").read_text())["model"]


def batches(n: int, batch_size: int, max_sentences: int, generator: torch.Generator) -> list[torch.Tensor]:
    """``n`` id matrices [batch_size, ≤ max_sentences] as a training epoch makes them."""
    out = []
    for _ in range(n):
        lengths = torch.randint(1, max_sentences + 1, (batch_size,), generator=generator)
        ids = torch.randint(0, 5000, (batch_size, max_sentences), generator=generator)
        ids[torch.arange(max_sentences) >= lengths[:, None]] = -1
        ids = shuffle_sentences(drop_sentences(ids, 0.5, generator), generator)
        out.append(trim(ids))
    return out


def step_seconds(model: RationaleNetwork, data: list[torch.Tensor], labels: torch.Tensor) -> float:
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
    model.train()
    start = time.perf_counter()
    for ids in data:
        loss = F.cross_entropy(model(ids).logits, labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return (time.perf_counter() - start) / len(data)


def build_parser() -> argparse.ArgumentParser:
    """The command line of :func:`main` (its path arguments declared for the output guard, icda.guard)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d-model", type=int, default=DEFAULT_MODEL["d_model"])
    parser.add_argument("--dff", type=int, default=DEFAULT_MODEL["dff"])
    parser.add_argument("--layers", type=int, default=DEFAULT_MODEL["layers"])
    parser.add_argument("--max-sentences", type=int, default=16)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3, help="interleaved rounds; the fastest is kept")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = parse_arguments(build_parser(), argv)
    torch.set_num_threads(1)  # as a workflow job with train_threads: 1
    generator = torch.Generator().manual_seed(0)
    settings = ModelSettings(**DEFAULT_MODEL | {"d_model": args.d_model, "dff": args.dff, "layers": args.layers})
    torch.manual_seed(0)
    model = RationaleNetwork(CachedSentences(torch.randn(5000, 384)), settings, args.max_sentences)
    data = batches(args.steps, 64, args.max_sentences, generator)
    labels = torch.randint(0, 2, (64,), generator=generator)
    real = sum(int((ids >= 0).sum()) for ids in data) / sum(ids.numel() for ids in data)

    import icda.model as model_module

    real_slots = model_module.transform_real_slots

    def padded(encoder, x, mask):
        return encoder(x, src_key_padding_mask=~mask)

    best = {"padded (baseline)": float("inf"), "real slots": float("inf")}
    step_seconds(model, data[:3], labels)  # warm-up
    for _ in range(args.repeat):
        for name, forward in (("padded (baseline)", padded), ("real slots", real_slots)):
            model_module.transform_real_slots = forward
            best[name] = min(best[name], step_seconds(model, data, labels))
    model_module.transform_real_slots = real_slots
    print(f"d_model {args.d_model}, dff {args.dff}, layers {args.layers}: {real:.0%} of the slots are real")
    base = best["padded (baseline)"]
    for name, seconds in best.items():
        print(f"{name:18s} {seconds * 1000:7.1f} ms/step  speed-up {base / seconds:4.2f}x")


if __name__ == "__main__":
    main()
