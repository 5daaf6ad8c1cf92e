"""The CPU kernel path: the same float results on every x86-64 CPU with AVX2, Intel or AMD.

PyTorch picks its float kernels by CPU: ATen's vectorised kernels by instruction set (AVX2 or
AVX-512), MKL's BLAS by CPU and vendor, oneDNN's by instruction set and cache sizes, and the
split of a reduction over threads by the thread count. Each choice changes the last bits of a
sum, and the ICDA loop turns last bits into other selections (docs/reproducibility.md). The
``fixed`` path (the default) removes every choice:

* ``ATEN_CPU_CAPABILITY=avx2``: ATen's AVX2 kernels, also on AVX-512 CPUs;
* ``MKL_CBWR=COMPATIBLE``: MKL's conditional-numerical-reproducibility branch that gives the same
  results on Intel and non-Intel CPUs (``MKL_CBWR=AVX2`` does not on non-Intel ones);
* ``OMP_NUM_THREADS=1``: one intra-op thread unless a command's ``--threads`` asks for more
  (``train_threads``: then the thread count is part of the configuration);
* oneDNN off (``torch.backends.mkldnn.enabled = False``).

The environment variables must be set before torch computes anything (ATen and MKL read them
once): :func:`fix_environment` runs when ``icda`` is imported (``import icda`` comes first in
``python -m icda``, every workflow job, local or SLURM, and the tests), and
:func:`configure_torch` when :mod:`icda.encoder`, which every module that computes with torch
imports, imports torch. ``ICDA_KERNELS=native`` leaves all of it to PyTorch (faster on AVX-512
CPUs, results differ by CPU). GPUs and other torch versions are not covered.
"""

from __future__ import annotations

import logging
import os

#: the environment variable that chooses the kernel path
ENV = "ICDA_KERNELS"
PATHS = ("fixed", "native")
#: what the fixed path sets, overriding the environment
FIXED_ENVIRONMENT = {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "COMPATIBLE", "OMP_NUM_THREADS": "1"}

log = logging.getLogger(__name__)


def kernel_path() -> str:
    """``"fixed"`` or ``"native"``, from ``ICDA_KERNELS`` (default ``"fixed"``).

    Raises:
        ValueError: ``ICDA_KERNELS`` holds another value.
    """
    value = os.environ.get(ENV, "fixed").strip().lower() or "fixed"
    if value not in PATHS:
        raise ValueError(f"{ENV}={os.environ[ENV]!r}: use one of {', '.join(PATHS)} (docs/reproducibility.md)")
    return value


def fix_environment() -> None:
    """On the fixed path, set :data:`FIXED_ENVIRONMENT` (child processes inherit it)."""
    if kernel_path() == "fixed":
        os.environ.update(FIXED_ENVIRONMENT)


def configure_torch(torch) -> None:
    """On the fixed path, turn oneDNN off and check that ATen runs its AVX2 kernels (or the
    generic ones on a CPU without AVX2, which then gives other results: a warning says so).

    Args:
        torch: the imported ``torch`` module.
    """
    if kernel_path() != "fixed":
        return
    torch.backends.mkldnn.enabled = False
    capability = torch.backends.cpu.get_cpu_capability()
    if capability != "AVX2":
        log.warning("the fixed kernel path runs ATen's %s kernels, not AVX2 (a CPU without AVX2, or torch "
                    "computed before icda was imported): results may differ from other machines' "
                    "(docs/reproducibility.md)", capability)
