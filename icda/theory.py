"""Binary-variable theory of ICDA: operators J and R, the map psi = R o J, its fixed points.

Paper (Plyler & Chi, AAAI 2025): sections "Helpful Counterfactual Generation Errors" (equation
``new_augmented_cond``, Figure 1), "Iterative Counterfactual Data Augmentation" (equations
``iter_alpha``, ``R``, ``J``, ``alpha_a``, Definition ``binary_rat``, Theorem ``convergence``,
Figure 2) and the appendix "Additional Notes on ICDA Convergence".

Setting and conventions used throughout:

* ``X1`` (the target signal, the rationale), ``X2`` (the spurious signal) and the label ``Y1`` are
  binary with ``p(X1) = p(X2) = p(Y1) = 1/2``. ``p(Y1|Xi)`` is the probability that ``Y1``
  agrees with ``Xi`` (a binary symmetric channel), so ``I(Xi;Y1) = 1 - H_b(p(Y1|Xi))`` bits.
* ``alpha`` is the selector's error rate (it picks ``X2`` instead of ``X1``); ``beta`` is the
  probability that the counterfactual inserts the correct ``1 - X1`` text. The paper sets
  ``beta = 1 - alpha^k`` in the iteration; ``beta=None`` below means exactly that.
* The MMI rationale scheme (Definition ``binary_rat``) sees ``n`` observations and selects the
  variable that agrees with ``Y1`` more often; ties are broken by a fair coin. Its expected error
  is ``alpha = P(A2 > A1) + P(A2 = A1) / 2`` with agreement counts ``A1 ~ Binomial(n, p(Y1|X1))``
  and ``A2 ~ Binomial(n, p(Y1|X2))``, assumed independent (``X1`` and ``X2`` conditionally
  independent given ``Y1``, as in the paper's simulation). :func:`mmi_error_exact` sums the two
  binomials; :func:`mmi_error_mc` simulates it (60,000 simulations in the paper).

Operator ``R`` maps a difference in mutual information ``delta`` to an error ``alpha``. With
binary variables the error depends on both conditionals, not only on their information gap, so
``R`` of ``delta`` alone needs a convention: :func:`operator_R` holds ``p(Y1|X1)`` fixed (the
paper's Figure 2b is "R for P(Y1|X1) = .95") and chooses ``p(Y1|X2) >= 1/2`` so that
``I(X1;Y1) - I(X2;Y1) = delta``. The iteration map :func:`psi` does not go through ``delta``:
it applies the MMI error to the augmented conditionals themselves, ``psi(alpha) =
mmi_error(p1^a(alpha), p2^a(alpha), n)``, which is exact and is what ``R(J(alpha))`` means when
both augmented conditionals are carried along.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, NamedTuple

import numpy as np
from scipy import optimize, special, stats
from tqdm import tqdm

#: p(Y1): the label is balanced in the binary setting
P_Y1 = 0.5
#: simulations behind the paper's Monte Carlo operator R
PAPER_SIMULATIONS = 60_000

#: seconds a loop runs before its progress bar appears (``progress=True``): quick runs stay quiet
PROGRESS_DELAY = 2.0

ArrayLike = float | np.ndarray
RngLike = np.random.Generator | int | np.random.SeedSequence | None


# ----------------------------------------------------------------------------- validation


def _probability(name: str, value: ArrayLike, low: float = 0.0) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    if not np.all(np.isfinite(arr)) or np.any(arr < low) or np.any(arr > 1.0):
        raise ValueError(f"{name} must lie in [{low:g}, 1]; got {value!r}")
    return arr


def _observations(n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n (observations seen by the MMI scheme) must be an integer >= 1; got {n!r}")
    return int(n)


def _simulations(simulations: int) -> int:
    if isinstance(simulations, bool) or not isinstance(simulations, (int, np.integer)) or simulations < 2:
        raise ValueError(f"simulations must be an integer >= 2; got {simulations!r}")
    return int(simulations)


# ----------------------------------------------------------------------------- information


def binary_entropy(p: ArrayLike) -> np.ndarray:
    """``H_b(p) = -p log2 p - (1-p) log2 (1-p)`` in bits, elementwise, with ``H_b(0) = H_b(1) = 0``.

    Raises ``ValueError`` if ``p`` is outside [0, 1].
    """
    p = _probability("p", p)
    return (special.entr(p) + special.entr(1.0 - p)) / math.log(2.0)


def mutual_information(p_agree: ArrayLike) -> np.ndarray:
    """``I(X;Y1)`` in bits for binary ``X``, ``Y1`` with ``p(X) = p(Y1) = 1/2`` and
    ``p(Y1 = X) = p_agree``: ``1 - H_b(p_agree)``. Same shape as ``p_agree``.
    """
    return 1.0 - binary_entropy(p_agree)


def conditional_for_information(information: ArrayLike) -> np.ndarray:
    """Inverse of :func:`mutual_information` on the branch ``p >= 1/2``.

    ``information`` in bits, in [0, 1]; returns ``p(Y1|X)`` in [1/2, 1] with
    ``mutual_information(p) == information``. Raises ``ValueError`` outside [0, 1].
    """
    info = _probability("information (bits)", information)
    out = np.empty_like(info)
    for idx, target in np.ndenumerate(info):
        if target <= 0.0:
            out[idx] = 0.5
        elif target >= 1.0:
            out[idx] = 1.0
        else:
            out[idx] = optimize.brentq(
                lambda p: float(mutual_information(p)) - target, 0.5, 1.0, xtol=1e-15, rtol=1e-15
            )
    return out


# ----------------------------------------------------------------------------- operator J


def augmented_conditionals(
    p1: ArrayLike, p2: ArrayLike, alpha: ArrayLike, beta: ArrayLike | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(p(Y1^a|X1^a), p(Y1^a|X2^a))`` in the augmented dataset: equation ``new_augmented_cond``.

    ``p1 = p(Y1|X1)``, ``p2 = p(Y1|X2)`` in the original data, ``alpha`` the selector's error rate,
    ``beta`` the probability of inserting the correct counterfactual text (``None``:
    ``beta = 1 - alpha``, which reduces the equation to ``p1^a = alpha p(Y1) + (1 - alpha) p1`` and
    ``p2^a = (1 - alpha) p(Y1) + alpha p2``). All arguments broadcast; values in [0, 1], else
    ``ValueError``.
    """
    p1 = _probability("p(Y1|X1)", p1)
    p2 = _probability("p(Y1|X2)", p2)
    alpha = _probability("alpha", alpha)
    beta = 1.0 - alpha if beta is None else _probability("beta", beta)
    keep_x1 = -alpha / 2 + 0.5 + beta / 2  # weight of p(Y1|X1) in p(Y1^a|X1^a)
    keep_x2 = alpha / 2 + 0.5 - beta / 2  # weight of p(Y1|X2) in p(Y1^a|X2^a)
    p1_aug = (1.0 - keep_x1) * P_Y1 + keep_x1 * p1
    p2_aug = (1.0 - keep_x2) * P_Y1 + keep_x2 * p2
    return p1_aug, p2_aug


def operator_J(
    p1: ArrayLike, p2: ArrayLike, alpha: ArrayLike, beta: ArrayLike | None = None
) -> np.ndarray:
    """Operator ``J`` (equation ``J``): ``delta^a = I(X1^a;Y1^a) - I(X2^a;Y1^a)`` in bits.

    Arguments as in :func:`augmented_conditionals` (``beta=None`` is the paper's
    ``beta = 1 - alpha^k``); returns an array of the broadcast shape. ``J(0) = I(X1;Y1)``
    (``X2`` becomes uninformative) and, with ``beta = 1 - alpha``, ``J(1) = -I(X2;Y1)``.
    """
    p1_aug, p2_aug = augmented_conditionals(p1, p2, alpha, beta)
    return mutual_information(p1_aug) - mutual_information(p2_aug)


def cda_criterion(p1: ArrayLike, p2: ArrayLike, alpha: ArrayLike, beta: ArrayLike) -> np.ndarray:
    """CDA success criterion ``Delta I^a(X2,Y1) - Delta I^a(X1,Y1)`` in bits (equation ``Idelta``).

    ``Delta I^a(Xi,Y1) = I(Xi;Y1) - I(Xi^a;Y1^a)``; CDA helps where the result is positive
    (paper Figure 1, plotted against ``alpha`` for several fixed ``beta``). Arguments broadcast.
    """
    p1_aug, p2_aug = augmented_conditionals(p1, p2, alpha, beta)
    drop_x1 = mutual_information(p1) - mutual_information(p1_aug)
    drop_x2 = mutual_information(p2) - mutual_information(p2_aug)
    return drop_x2 - drop_x1


# ----------------------------------------------------------------------------- operator R


class MonteCarloEstimate(NamedTuple):
    """Monte Carlo estimate of an error rate and its standard error (same shapes)."""

    alpha: np.ndarray
    standard_error: np.ndarray


def mmi_error_exact(p1: ArrayLike, p2: ArrayLike, n: int) -> np.ndarray:
    """Expected error of the MMI scheme with ``n`` observations, by exact binomial sums.

    ``alpha = sum_k P(A1 = k) [P(A2 > k) + P(A2 = k) / 2]`` with independent
    ``A1 ~ Binomial(n, p1)``, ``A2 ~ Binomial(n, p2)``; ``p1 = p(Y1|X1)``, ``p2 = p(Y1|X2)``
    broadcast. Raises ``ValueError`` for probabilities outside [0, 1] or ``n < 1``.
    """
    n = _observations(n)
    p1 = _probability("p(Y1|X1)", p1)
    p2 = _probability("p(Y1|X2)", p2)
    p1, p2 = np.broadcast_arrays(p1, p2)
    k = np.arange(n + 1)
    pmf1 = stats.binom.pmf(k, n, p1[..., None])
    pmf2 = stats.binom.pmf(k, n, p2[..., None])
    above = stats.binom.sf(k, n, p2[..., None])  # P(A2 > k)
    return np.clip(np.sum(pmf1 * (above + 0.5 * pmf2), axis=-1), 0.0, 1.0)


def mmi_error_mc(
    p1: ArrayLike, p2: ArrayLike, n: int, simulations: int = PAPER_SIMULATIONS, rng: RngLike = None,
    progress: str | None = None,
) -> MonteCarloEstimate:
    """Expected error of the MMI scheme with ``n`` observations, by Monte Carlo (the paper's ``R``).

    Each of ``simulations`` runs draws the agreement counts ``A1 ~ Binomial(n, p1)`` and
    ``A2 ~ Binomial(n, p2)`` (the sum of ``n`` Bernoulli agreements), selects ``X2`` when
    ``A2 > A1`` and flips a fair coin on ties; the estimate is the fraction of runs that selected
    ``X2``, with its standard error ``sd / sqrt(simulations)``. ``p1``, ``p2`` broadcast; each
    element is simulated in turn from ``rng`` (a ``numpy.random.Generator`` or a seed), so a seed
    fixes the result. ``progress``: the label of a progress bar over the elements (on standard
    error, after :data:`PROGRESS_DELAY` seconds); None: none. Raises ``ValueError`` on bad
    probabilities, ``n`` or ``simulations``.
    """
    n = _observations(n)
    simulations = _simulations(simulations)
    p1 = _probability("p(Y1|X1)", p1)
    p2 = _probability("p(Y1|X2)", p2)
    p1, p2 = np.broadcast_arrays(p1, p2)
    rng = np.random.default_rng(rng)
    mean = np.empty(p1.shape)
    se = np.empty(p1.shape)
    for idx in tqdm(np.ndindex(p1.shape), total=p1.size, desc=progress, unit="point", disable=progress is None,
                    delay=PROGRESS_DELAY, leave=False):
        agree1 = rng.binomial(n, p1[idx], size=simulations)
        agree2 = rng.binomial(n, p2[idx], size=simulations)
        coin = rng.random(simulations) < 0.5
        wrong = (agree2 > agree1) | ((agree2 == agree1) & coin)
        mean[idx] = wrong.mean()
        se[idx] = wrong.std(ddof=1) / math.sqrt(simulations)
    return MonteCarloEstimate(mean, se)


def delta_range(p1: float) -> tuple[float, float]:
    """Interval of ``delta`` (bits) that :func:`operator_R` accepts with ``p(Y1|X1) = p1`` fixed:
    ``[I(X1;Y1) - 1, I(X1;Y1)]`` (``p(Y1|X2)`` from 1 down to 1/2)."""
    info1 = float(mutual_information(p1))
    return info1 - 1.0, info1


def operator_R(
    delta: ArrayLike,
    n: int,
    p1: float,
    *,
    simulations: int | None = None,
    rng: RngLike = None,
) -> np.ndarray | MonteCarloEstimate:
    """Operator ``R`` (equation ``R``): expected MMI error for a difference in information ``delta``.

    Convention (``R`` of ``delta`` alone is not unique for binary variables): ``p(Y1|X1) = p1``
    is held fixed, as in the paper's Figure 2b, and ``p(Y1|X2) >= 1/2`` is chosen with
    ``I(X1;Y1) - I(X2;Y1) = delta``. ``delta`` in bits, within :func:`delta_range` (else
    ``ValueError``). With ``simulations=None`` the result is exact (array shaped like ``delta``);
    otherwise a :class:`MonteCarloEstimate` from ``simulations`` runs per value.
    """
    delta = np.asarray(delta, dtype=float)
    low, high = delta_range(p1)
    if not np.all(np.isfinite(delta)) or np.any(delta < low - 1e-12) or np.any(delta > high + 1e-12):
        raise ValueError(
            f"delta must lie in [{low:.6f}, {high:.6f}] bits when p(Y1|X1) = {p1:g} is held fixed; "
            f"got {delta!r}"
        )
    info2 = np.clip(float(mutual_information(p1)) - delta, 0.0, 1.0)
    p2 = conditional_for_information(info2)
    if simulations is None:
        return mmi_error_exact(p1, p2, n)
    return mmi_error_mc(np.full_like(p2, p1), p2, n, simulations, rng)


# ----------------------------------------------------------------------------- psi and iteration


def psi(
    p1: ArrayLike, p2: ArrayLike, n: int, alpha: ArrayLike, beta: ArrayLike | None = None
) -> np.ndarray:
    """Iteration map ``alpha^{k+1} = psi(alpha^k) = R(J(alpha^k))`` (equations ``iter_alpha``,
    ``alpha_a``), exactly: the MMI error on the augmented conditionals of ``alpha^k``.

    ``p1``, ``p2``: conditionals in the original data; ``n``: observations; ``beta=None`` is
    ``beta = 1 - alpha^k``. Returns an array shaped like ``alpha``.
    """
    p1_aug, p2_aug = augmented_conditionals(p1, p2, alpha, beta)
    return mmi_error_exact(p1_aug, p2_aug, n)


def psi_mc(
    p1: float,
    p2: float,
    n: int,
    alpha: ArrayLike,
    beta: ArrayLike | None = None,
    simulations: int = PAPER_SIMULATIONS,
    rng: RngLike = None,
) -> MonteCarloEstimate:
    """:func:`psi` by Monte Carlo (``simulations`` runs per value of ``alpha``, from ``rng``)."""
    p1_aug, p2_aug = augmented_conditionals(p1, p2, alpha, beta)
    return mmi_error_mc(p1_aug, p2_aug, n, simulations, rng)


def alpha_sequence(
    p1: float, p2: float, n: int, iterations: int, beta: float | None = None
) -> np.ndarray:
    """``[alpha^0, ..., alpha^iterations]`` exactly, ``alpha^0`` being the MMI error on the original
    data (``mmi_error_exact(p1, p2, n)``) and ``alpha^{k+1} = psi(alpha^k)``. Shape
    ``(iterations + 1,)``.
    """
    if iterations < 0:
        raise ValueError(f"iterations must be >= 0; got {iterations}")
    out = [float(mmi_error_exact(p1, p2, n))]
    for _ in range(iterations):
        out.append(float(psi(p1, p2, n, out[-1], beta)))
    return np.array(out)


def alpha_sequence_mc(
    p1: float,
    p2: float,
    n: int,
    iterations: int,
    beta: float | None = None,
    simulations: int = PAPER_SIMULATIONS,
    rng: RngLike = None,
    progress: bool = False,
) -> MonteCarloEstimate:
    """The α sequence "in simulation" (paper Figure 2d): ``alpha^0`` and each
    ``alpha^{k+1} = psi(alpha^k)`` estimated by Monte Carlo, each step starting from the previous
    step's estimate. Shapes ``(iterations + 1,)``; standard errors are per step. ``progress``
    shows a bar over the iterations.
    """
    if iterations < 0:
        raise ValueError(f"iterations must be >= 0; got {iterations}")
    rng = np.random.default_rng(rng)
    first = mmi_error_mc(p1, p2, n, simulations, rng)
    means, ses = [float(first.alpha)], [float(first.standard_error)]
    for _ in tqdm(range(iterations), desc="α sequence (Monte Carlo)", unit="iteration", disable=not progress,
                  delay=PROGRESS_DELAY, leave=False):
        step = psi_mc(p1, p2, n, means[-1], beta, simulations, rng)
        means.append(float(step.alpha))
        ses.append(float(step.standard_error))
    return MonteCarloEstimate(np.array(means), np.array(ses))


# ----------------------------------------------------------------------------- fixed points


@dataclass(frozen=True)
class FixedPoint:
    """A solution of ``psi(alpha) = alpha``; ``slope`` is ``psi'(alpha)``; stable iff ``|slope| < 1``."""

    alpha: float
    slope: float

    @property
    def stable(self) -> bool:
        return abs(self.slope) < 1.0


def sign_change_roots(func: Callable[[float], float], grid: np.ndarray, progress: str | None = None) -> list[float]:
    """Roots of ``func`` on ``grid``'s span: grid points where it is 0 and, between neighbours of
    opposite sign, the root found by ``scipy.optimize.brentq``. Touching roots without a sign
    change are missed; use a finer grid to separate close roots. ``progress``: the label of a
    progress bar over the grid (as in :func:`mmi_error_mc`)."""
    values = np.array([func(float(x)) for x in tqdm(grid, desc=progress, unit="point", disable=progress is None,
                                                    delay=PROGRESS_DELAY, leave=False)])
    roots: list[float] = []
    for i, x in enumerate(grid):
        if values[i] == 0.0:
            roots.append(float(x))
        elif i + 1 < len(grid) and values[i] * values[i + 1] < 0.0:
            roots.append(optimize.brentq(func, float(x), float(grid[i + 1]), xtol=1e-15, rtol=4e-15))
    return sorted(set(roots))


def fixed_points(
    p1: float, p2: float, n: int, beta: float | None = None, grid_size: int = 2001, progress: bool = False
) -> list[FixedPoint]:
    """All fixed points of :func:`psi` on [0, 1] (``psi(alpha) = alpha``), in increasing order.

    ``psi(alpha) - alpha`` is scanned on ``grid_size`` evenly spaced points (each an exact sum
    over ``n + 1`` counts: the cost grows with ``n``; ``progress`` shows a bar); each sign change
    is refined with ``brentq``. The slope ``psi'`` is a central difference (one-sided at 0 and 1).
    """
    if grid_size < 2:
        raise ValueError(f"grid_size must be >= 2; got {grid_size}")

    def gap(a: float) -> float:
        return float(psi(p1, p2, n, a, beta)) - a

    points = []
    for root in sign_change_roots(gap, np.linspace(0.0, 1.0, grid_size), "fixed points of psi" if progress else None):
        h = 1e-7
        lo, hi = max(root - h, 0.0), min(root + h, 1.0)
        slope = float(psi(p1, p2, n, hi, beta) - psi(p1, p2, n, lo, beta)) / (hi - lo)
        points.append(FixedPoint(root, slope))
    return points


def threshold(points: list[FixedPoint]) -> float | None:
    """``alpha_T`` (Theorem ``convergence``): the first unstable fixed point above the lowest stable
    one, the edge of the region from which the iteration decreases to it; ``None`` if there is none.
    """
    stable = [fp.alpha for fp in points if fp.stable]
    if not stable:
        return None
    above = [fp.alpha for fp in points if not fp.stable and fp.alpha > stable[0]]
    return above[0] if above else None


def convergence_orders(sequence: np.ndarray, limit: float, tolerance: float = 1e-12) -> np.ndarray:
    """Empirical orders ``q_k = log(e_{k+1}/e_k) / log(e_k/e_{k-1})`` with ``e_k = |alpha^k - limit|``
    (2 for quadratic, 1 for linear convergence), for ``k = 1 .. len(sequence) - 2``; ``nan`` where
    an error is at or below ``tolerance`` (rounding noise) or the ratio is undefined.
    """
    err = np.abs(np.asarray(sequence, dtype=float) - limit)
    orders = []
    for k in range(1, len(err) - 1):
        e0, e1, e2 = err[k - 1], err[k], err[k + 1]
        if min(e0, e1, e2) <= tolerance or e1 == e0:
            orders.append(np.nan)
        else:
            orders.append(math.log(e2 / e1) / math.log(e1 / e0))
    return np.array(orders)


# ----------------------------------------------------------------------------- the whole analysis

#: independent random streams derived from one seed (numpy ``SeedSequence`` spawn keys)
STREAM_SEQUENCE, STREAM_R, STREAM_PSI = 0, 1, 2


def rng_stream(seed: int, stream: int) -> np.random.Generator:
    """Generator for one named stream of ``seed``: the same numbers whatever else is drawn."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(stream,)))


@dataclass(frozen=True)
class Analysis:
    """The binary-variable ICDA analysis for one setting (see :func:`analyse`)."""

    p1: float
    p2: float
    n: int
    beta: float | None
    simulations: int
    seed: int
    #: alpha^0 .. alpha^K, exact; shape (K + 1,)
    sequence: np.ndarray
    #: the same sequence in simulation (Figure 2d), with per-step standard errors
    sequence_mc: MonteCarloEstimate
    fixed_points: list[FixedPoint]
    #: alpha_T of Theorem ``convergence``, or None
    alpha_T: float | None
    #: psi(0); with beta = 1 - alpha^k the MMI error when X2 carries no information,
    #: R(delta^a = I(X1;Y1)), the theorem's lower bound on the limit
    psi_at_0: float
    #: psi(1); with beta = 1 - alpha^k the error when X1 carries no information, R(delta^a = -I(X2;Y1))
    psi_at_1: float
    #: empirical convergence orders of ``sequence`` towards the lowest fixed point
    orders: np.ndarray


def analyse(
    p1: float,
    p2: float,
    n: int,
    iterations: int = 10,
    beta: float | None = None,
    simulations: int = PAPER_SIMULATIONS,
    seed: int = 0,
    progress: bool = False,
) -> Analysis:
    """alpha^0, the α sequence (exact and in simulation), the fixed points of psi and alpha_T.

    ``p1 = p(Y1|X1)``, ``p2 = p(Y1|X2)``, ``n`` observations, ``iterations`` steps of psi,
    ``beta=None`` for ``beta = 1 - alpha^k``; the simulation uses stream ``STREAM_SEQUENCE`` of
    ``seed``. ``progress`` shows progress bars over the long loops (the Monte Carlo sequence, the
    scan for fixed points) on standard error. Raises ``ValueError`` on invalid arguments.
    """
    sequence = alpha_sequence(p1, p2, n, iterations, beta)
    sequence_mc = alpha_sequence_mc(
        p1, p2, n, iterations, beta, simulations, rng_stream(seed, STREAM_SEQUENCE), progress
    )
    points = fixed_points(p1, p2, n, beta, progress=progress)
    limit = points[0].alpha if points else float("nan")
    return Analysis(
        p1=p1,
        p2=p2,
        n=n,
        beta=beta,
        simulations=simulations,
        seed=seed,
        sequence=sequence,
        sequence_mc=sequence_mc,
        fixed_points=points,
        alpha_T=threshold(points),
        psi_at_0=float(psi(p1, p2, n, 0.0, beta)),
        psi_at_1=float(psi(p1, p2, n, 1.0, beta)),
        orders=convergence_orders(sequence, limit),
    )
