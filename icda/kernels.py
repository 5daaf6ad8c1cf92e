"""The CPU kernel path: the same float results on every x86-64 CPU with AVX2 and FMA, Intel or AMD.

PyTorch picks its float kernels by CPU: ATen's vectorised kernels by instruction set (AVX2 or
AVX-512), MKL's BLAS by CPU and vendor, oneDNN's by instruction set and cache sizes, and the
split of a reduction over threads by the thread count. Each choice changes the last bits of a
sum, and the ICDA loop turns last bits into other selections (docs/reproducibility.md). The
``fixed`` path (the default) removes every choice:

* ``ATEN_CPU_CAPABILITY=avx2``: ATen's AVX2 kernels, also on AVX-512 CPUs;
* matrix products (``mm``, ``addmm``, ``bmm``, ``baddbmm``, ``addmv``, ``dot``: every
  ``nn.Linear``, attention product and their gradients) in numpy's OpenBLAS on its Haswell
  kernels (``OPENBLAS_CORETYPE=Haswell``: AVX2 and FMA, the same code on every such CPU, Intel or
  AMD, one thread): :func:`route_matrix_products`;
* ``MKL_CBWR=COMPATIBLE``: MKL's conditional-numerical-reproducibility branch that gives the same
  results on Intel and non-Intel CPUs (``MKL_CBWR=AVX2`` does not on non-Intel ones), for what
  still reaches MKL (its random numbers and vector maths, a product that is not routed). Its
  matrix products run on SSE2 alone, about 4 times slower than MKL's AVX-512 ones, which is
  why the products are routed (docs/reproducibility.md: cost);
* ``OMP_NUM_THREADS=1``: one intra-op thread unless a command's ``--threads`` asks for more
  (``train_threads``: then the thread count is part of the configuration; the matrix products
  stay on one OpenBLAS thread);
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
import sys
import warnings

from icda.errors import ConfigError

#: the environment variable that chooses the kernel path
ENV = "ICDA_KERNELS"
PATHS = ("fixed", "native")
#: what the fixed path sets, overriding the environment (OPENBLAS_CORETYPE only on a CPU with AVX2
#: and FMA, where OpenBLAS's Haswell kernels run: :func:`fix_environment`)
FIXED_ENVIRONMENT = {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "COMPATIBLE", "OMP_NUM_THREADS": "1",
                     "OPENBLAS_NUM_THREADS": "1", "OPENBLAS_CORETYPE": "Haswell"}
#: the ATen operators whose CPU kernels :func:`route_matrix_products` replaces
ROUTED_OPERATORS = ("mm", "mm.out", "addmm", "addmm.out", "addmm_", "bmm", "bmm.out", "baddbmm",
                    "baddbmm.out", "baddbmm_", "addmv", "addmv.out", "addmv_", "dot", "dot.out")

log = logging.getLogger(__name__)


def kernel_path() -> str:
    """``"fixed"`` or ``"native"``, from ``ICDA_KERNELS`` (default ``"fixed"``).

    Raises:
        ConfigError: ``ICDA_KERNELS`` holds another value.
    """
    value = os.environ.get(ENV, "fixed").strip().lower() or "fixed"
    if value not in PATHS:
        raise ConfigError(f"{ENV}={os.environ[ENV]!r}: use one of {', '.join(PATHS)} (docs/reproducibility.md). "
                          f"Fix: unset {ENV} (the fixed path) or set it to native")
    return value


def kernel_id() -> str:
    """What a number computed here depends on, for cache keys: ``"native"``, or ``"fixed-2"``
    (the fixed path's second definition: matrix products on OpenBLAS's Haswell kernels; the first
    ran them on MKL's COMPATIBLE branch and gave other last bits)."""
    return "fixed-2" if kernel_path() == "fixed" else "native"


def cpu_flags() -> set[str]:
    """The CPU's feature flags from ``/proc/cpuinfo`` (empty where it cannot be read)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("flags"):
                    return set(line.partition(":")[2].split())
    except OSError:
        pass
    return set()


def fix_environment() -> None:
    """On the fixed path, set :data:`FIXED_ENVIRONMENT` (child processes inherit it); leave
    ``OPENBLAS_CORETYPE`` alone on a CPU without AVX2 and FMA, where the Haswell kernels cannot run.
    Where torch or numpy was imported first, the thread counts those variables set come too late
    for the libraries already loaded: :func:`limit_threads` sets them now.

    Raises:
        ConfigError: ``ICDA_KERNELS`` holds an unknown value (:func:`kernel_path`).
    """
    if kernel_path() == "fixed":
        os.environ.update(FIXED_ENVIRONMENT)
        if not {"avx2", "fma"} <= cpu_flags():
            os.environ.pop("OPENBLAS_CORETYPE")
        if {"torch", "numpy"} & sys.modules.keys():
            limit_threads()


def limit_threads() -> None:
    """One thread in the thread pools already loaded, as ``OMP_NUM_THREADS=1`` and
    ``OPENBLAS_NUM_THREADS=1`` give a process that imports ``icda`` first: torch's intra-op
    threads (``torch.set_num_threads(1)``; ``--threads`` of a command sets its own count later)
    and every BLAS and OpenMP pool threadpoolctl finds (numpy's OpenBLAS, torch's OpenMP). A
    thread count splits reductions otherwise, and so changes the last bits of the results."""
    from threadpoolctl import threadpool_limits

    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "set_num_threads"):
        torch.set_num_threads(1)
    threadpool_limits(limits=1)
    log.debug("torch or numpy was imported before icda: their thread pools set to one thread now")


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
    route_matrix_products(torch)
    core = openblas_core()
    if core != "Haswell":
        log.warning("the fixed kernel path runs numpy's BLAS on %s kernels, not OpenBLAS's Haswell ones: results "
                    "may differ from other machines'. On a CPU with AVX2 and FMA, torch or numpy was imported "
                    "before icda (import torch loads numpy): import icda first (docs/reproducibility.md)", core)


def openblas_core() -> str:
    """The kernels numpy's BLAS runs: OpenBLAS's core name (``"Haswell"`` on the fixed path), or
    the BLAS's name where it is not OpenBLAS."""
    from threadpoolctl import threadpool_info

    blas = [lib for lib in threadpool_info() if lib.get("user_api") == "blas"]
    if not blas:
        return "no BLAS found"
    return blas[0].get("architecture") or blas[0].get("internal_api", "unknown")


_ROUTES = []  # the torch.library.Library that holds the replacement kernels, kept alive


def route_matrix_products(torch) -> None:
    """Replace the CPU kernels of :data:`ROUTED_OPERATORS` by numpy's ``matmul``/``dot``, so that
    every matrix product (forward and backward; autograd's formulas call these operators) runs on
    the BLAS numpy loaded: OpenBLAS on its Haswell kernels on the fixed path, whose results do not
    depend on the CPU. ``addmm``-like operators compute ``beta * input + alpha * (a @ b)`` (``beta``
    0: ``input`` ignored). Idempotent. The replaced kernels raise ``RuntimeError`` on operands of
    the wrong number of dimensions or of shapes that cannot be multiplied, as ATen's do.

    Args:
        torch: the imported ``torch`` module.
    """
    if _ROUTES:
        return
    import numpy as np

    def array(t):
        return t.detach().resolve_conj().resolve_neg().numpy()

    def shapes(a, b):  # for error messages only: a product's hot path formats nothing
        return f"{'x'.join(map(str, a.shape))} and {'x'.join(map(str, b.shape))}"

    def product(a, b, dims, dot=False):
        """a @ b, where a and b have ``dims`` dimensions (ATen's checks, which the kernels held)."""
        if (a.dim(), b.dim()) != dims:
            raise RuntimeError(f"expected tensors of {dims[0]} and {dims[1]} dimensions, got {shapes(a, b)}")
        if a.dtype in (torch.bfloat16, torch.float16):  # accumulated in float32, as ATen's (numpy has no bf16)
            return product(a.float(), b.float(), dims, dot).to(a.dtype)
        try:
            out = np.asarray(np.dot(array(a), array(b)) if dot else np.matmul(array(a), array(b)))
        except ValueError as error:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({shapes(a, b)})") from error
        return torch.from_numpy(out if out.flags.c_contiguous else np.ascontiguousarray(out))

    def scaled(r, input, beta, alpha):
        if alpha != 1:
            r = r * alpha
        if beta == 0:
            return r
        return r + (input if beta == 1 else input * beta)

    def into(out, r):
        return out.resize_(r.shape).copy_(r)

    kernels = {
        "mm": lambda a, b: product(a, b, (2, 2)),
        "bmm": lambda a, b: product(a, b, (3, 3)),
        "dot": lambda a, b: product(a, b, (1, 1), dot=True),
        "addmm": lambda input, a, b, *, beta=1, alpha=1: scaled(product(a, b, (2, 2)), input, beta, alpha),
        "baddbmm": lambda input, a, b, *, beta=1, alpha=1: scaled(product(a, b, (3, 3)), input, beta, alpha),
        "addmv": lambda input, a, v, *, beta=1, alpha=1: scaled(product(a, v, (2, 1)), input, beta, alpha),
    }
    library = torch.library.Library("aten", "IMPL")
    for name in ROUTED_OPERATORS:
        base = name.split(".")[0].rstrip("_")
        if name.endswith(".out"):
            kernel = (lambda f: lambda *args, out, **kw: into(out, f(*args, **kw)))(kernels[base])
        elif name.endswith("_"):
            kernel = (lambda f: lambda self, *args, **kw: self.copy_(f(self, *args, **kw)))(kernels[base])
        else:
            kernel = kernels[base]
        with warnings.catch_warnings():  # "Overriding a previously registered kernel": the point
            warnings.simplefilter("ignore", UserWarning)
            library.impl(name, kernel, "CPU")
    _ROUTES.append(library)
