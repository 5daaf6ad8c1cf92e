"""Digests of the fixed kernel path's matrix products, to compare two machines' bits.

The fixed path (icda/kernels.py) computes torch's matrix products with numpy's OpenBLAS on its
Haswell kernels. This script computes products of the shapes the rationale network and the
sentence encoder use (float32: forward, both gradients' transposes, a batched product, a
matrix-vector product, a dot product, and a K larger than OpenBLAS's K-block) from fixed random
inputs and prints one sha256 per product, the OpenBLAS core type and the CPU. Run it on two
machines with the same numpy (pyproject.toml pins it) and compare the digests:

    python scripts/kernel_digests.py > mine.json            # here
    python scripts/kernel_digests.py > theirs.json          # there
    diff mine.json theirs.json                              # only "cpu" may differ

A reference is committed: docs/kernel_digests.json, recorded on a 2-core AMD EPYC on 2026-11-27
with the pinned numpy; ``diff`` against it the same way.

``--native`` leaves OpenBLAS's core type to OpenBLAS (``ICDA_KERNELS=native``), to see that
another core type does give other digests.
"""

from __future__ import annotations

import argparse
import os
import sys

if "--native" in sys.argv:
    os.environ["ICDA_KERNELS"] = "native"
import icda  # noqa: E402,F401  (first: sets OPENBLAS_CORETYPE before numpy loads)

import hashlib  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402

import numpy as np  # noqa: E402

from icda.kernels import openblas_core  # noqa: E402
from icda.guard import parse_arguments  # noqa: E402

#: (name, shape of a, shape of b, transpose a, transpose b)
PRODUCTS = [
    ("linear 1280x384 @ 384x256", (1280, 384), (256, 384), False, True),
    ("weight gradient 256x1280 @ 1280x384", (1280, 256), (1280, 384), True, False),
    ("input gradient 1280x256 @ 256x384", (1280, 256), (256, 384), False, False),
    ("feed-forward 1280x256 @ 256x1024", (1280, 256), (1024, 256), False, True),
    ("long K 64x5000 @ 5000x96", (64, 5000), (5000, 96), False, False),
]


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            return next(line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or "unknown"


def digest(x: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(x).tobytes()).hexdigest()[:16]


def build_parser() -> argparse.ArgumentParser:
    """The command line of :func:`main` (its path arguments declared for the output guard, icda.guard)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--native", action="store_true",
                        help="leave OpenBLAS's core type to OpenBLAS (ICDA_KERNELS=native)")
    return parser


def main(argv: list[str] | None = None) -> None:
    parse_arguments(build_parser(), argv)
    rng = np.random.default_rng(0)
    out = {}
    for name, shape_a, shape_b, ta, tb in PRODUCTS:
        a = rng.standard_normal(shape_a, dtype=np.float32)
        b = rng.standard_normal(shape_b, dtype=np.float32)
        out[name] = digest(np.matmul(a.T if ta else a, b.T if tb else b))
    q = rng.standard_normal((256, 40, 64), dtype=np.float32)
    out["attention 256x(40x64 @ 64x40)"] = digest(np.matmul(q, q.transpose(0, 2, 1)))
    m, v = rng.standard_normal((384, 256), dtype=np.float32), rng.standard_normal(256, dtype=np.float32)
    out["matrix-vector 384x256 @ 256"] = digest(np.matmul(m, v))
    out["dot 4096"] = digest(np.asarray(np.dot(rng.standard_normal(4096, dtype=np.float32),
                                               rng.standard_normal(4096, dtype=np.float32))))
    print(json.dumps({"openblas": openblas_core(), "numpy": np.__version__, "cpu": cpu_name(),
                      "digests": out}, indent=1))


if __name__ == "__main__":
    main()
