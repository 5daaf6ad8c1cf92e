"""Binary-variable theory (icda.theory, icda.report.theory_figures, ``python -m icda theory``)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from icda import theory
from icda.cli import main

P1, P2, N = 0.9, 0.85, 35  # the paper's example (section "Iterative Counterfactual Data Augmentation")


def joint_table_information(p_agree: float) -> float:
    """I(X;Y) in bits from the 2x2 joint table with uniform marginals, computed directly."""
    joint = np.array([[p_agree, 1 - p_agree], [1 - p_agree, p_agree]]) / 2
    nz = joint > 0
    return float(np.sum(joint[nz] * np.log2(joint[nz] / 0.25)))


def brute_force_error(p1: float, p2: float, n: int) -> float:
    """Expected MMI error by enumerating every pair of agreement counts (independent of scipy)."""
    def pmf(k: int, p: float) -> float:
        return math.comb(n, k) * p**k * (1 - p) ** (n - k)
    total = 0.0
    for a1 in range(n + 1):
        for a2 in range(n + 1):
            weight = pmf(a1, p1) * pmf(a2, p2)
            total += weight * (1.0 if a2 > a1 else 0.5 if a2 == a1 else 0.0)
    return total


# ----------------------------------------------------------------------------- information, J


@pytest.mark.parametrize("p", [0.5, 0.6, 0.85, 0.9, 0.95, 1.0])
def test_mutual_information_matches_joint_table(p):
    assert float(theory.mutual_information(p)) == pytest.approx(joint_table_information(p), abs=1e-12)


def test_conditional_for_information_inverts_mutual_information():
    p = np.array([0.5, 0.55, 0.7, 0.85, 0.9, 0.99, 1.0])
    assert theory.conditional_for_information(theory.mutual_information(p)) == pytest.approx(p, abs=1e-9)
    with pytest.raises(ValueError, match="information"):
        theory.conditional_for_information(1.2)


def test_augmented_conditionals_follow_the_paper_equation():
    # alpha = 0.2, beta = 0.6: P(Y1) weights 0.3 (for X1) and 0.7 (for X2), by hand
    p1a, p2a = theory.augmented_conditionals(0.9, 0.85, 0.2, 0.6)
    assert float(p1a) == pytest.approx(0.3 * 0.5 + 0.7 * 0.9)
    assert float(p2a) == pytest.approx(0.7 * 0.5 + 0.3 * 0.85)


def test_beta_one_minus_alpha_gives_mixtures_of_prior_and_conditional():
    alpha = np.linspace(0, 1, 11)
    p1a, p2a = theory.augmented_conditionals(P1, P2, alpha)
    assert p1a == pytest.approx(alpha * theory.P_Y1 + (1 - alpha) * P1)
    assert p2a == pytest.approx((1 - alpha) * theory.P_Y1 + alpha * P2)
    explicit = theory.augmented_conditionals(P1, P2, alpha, 1 - alpha)
    assert explicit[0] == pytest.approx(p1a) and explicit[1] == pytest.approx(p2a)


def test_alpha_zero_leaves_x2_uninformative():
    p1a, p2a = theory.augmented_conditionals(P1, P2, 0.0)
    assert float(p2a) == 0.5 and float(p1a) == P1
    assert float(theory.mutual_information(p2a)) == pytest.approx(0.0, abs=1e-15)
    assert float(theory.operator_J(P1, P2, 0.0)) == pytest.approx(float(theory.mutual_information(P1)))
    assert float(theory.operator_J(P1, P2, 1.0)) == pytest.approx(-float(theory.mutual_information(P2)))


def test_J_decreases_with_alpha():
    delta = theory.operator_J(P1, P2, np.linspace(0, 1, 201))
    assert np.all(np.diff(delta) < 0)


def test_bad_probabilities_are_rejected():
    with pytest.raises(ValueError, match=r"alpha must lie in \[0, 1\]"):
        theory.augmented_conditionals(P1, P2, 1.5)
    with pytest.raises(ValueError, match=r"p\(Y1\|X2\)"):
        theory.mmi_error_exact(P1, -0.1, N)
    with pytest.raises(ValueError, match="n .* integer >= 1"):
        theory.mmi_error_exact(P1, P2, 0)


# ----------------------------------------------------------------------------- Figure 1 criterion


def test_cda_criterion_known_values_and_beta_helps():
    # perfect selector and counterfactuals: X2's information is removed, X1's kept
    assert float(theory.cda_criterion(0.95, P2, 0.0, 1.0)) == pytest.approx(float(theory.mutual_information(P2)))
    alpha = np.linspace(0, 1, 51)
    curves = [theory.cda_criterion(0.95, P2, alpha, b) for b in (0.0, 0.5, 1.0)]
    assert np.all(curves[1] > curves[0]) and np.all(curves[2] > curves[1])


def test_break_even_alpha_grows_with_beta():
    from icda.report.theory_figures import figure1_break_even

    roots = figure1_break_even(0.95, P2, (0.5, 0.75, 1.0))
    found = [roots[k][0] for k in ("0.5", "0.75", "1")]
    assert found[0] < found[1] < found[2]
    for beta, a in zip((0.5, 0.75, 1.0), found):
        assert float(theory.cda_criterion(0.95, P2, a, beta)) == pytest.approx(0.0, abs=1e-10)


# ----------------------------------------------------------------------------- operator R


@pytest.mark.parametrize("p1,p2,n", [(0.9, 0.85, 1), (0.9, 0.85, 7), (0.7, 0.8, 10), (0.6, 0.5, 4)])
def test_exact_error_matches_enumeration(p1, p2, n):
    assert float(theory.mmi_error_exact(p1, p2, n)) == pytest.approx(brute_force_error(p1, p2, n), abs=1e-12)


def test_exact_error_known_answers():
    # n = 1 by hand: P(X2 agrees, X1 not) + half of the ties
    assert float(theory.mmi_error_exact(0.9, 0.85, 1)) == pytest.approx(0.085 + 0.5 * (0.765 + 0.015))
    assert theory.mmi_error_exact(np.array([0.6, 0.9, 1.0]), np.array([0.6, 0.9, 1.0]), N) == pytest.approx(0.5)
    # the paper: alpha^0 ~ 0.27 for p(Y1|X1) = .9, p(Y1|X2) = .85, n = 35
    assert float(theory.mmi_error_exact(P1, P2, N)) == pytest.approx(0.27, abs=0.01)


@pytest.mark.parametrize("p1,p2,n", [(0.9, 0.85, 35), (0.7, 0.65, 10), (0.8, 0.9, 20), (1.0, 1.0, 5)])
def test_monte_carlo_agrees_with_exact(p1, p2, n):
    sims = 20_000
    exact = float(theory.mmi_error_exact(p1, p2, n))
    mc = theory.mmi_error_mc(p1, p2, n, sims, rng=7)
    se = math.sqrt(exact * (1 - exact) / sims)
    assert abs(float(mc.alpha) - exact) <= 4 * se
    assert float(mc.standard_error) == pytest.approx(se, rel=0.05)


def test_monte_carlo_is_seeded():
    a = theory.mmi_error_mc(P1, P2, N, 5000, rng=3).alpha
    b = theory.mmi_error_mc(P1, P2, N, 5000, rng=3).alpha
    c = theory.mmi_error_mc(P1, P2, N, 5000, rng=4).alpha
    assert a == b and a != c


def test_operator_R_with_fixed_p1():
    info1 = float(theory.mutual_information(P1))
    assert float(theory.operator_R(0.0, N, P1)) == pytest.approx(0.5)  # equal information
    assert float(theory.operator_R(info1, N, P1)) == pytest.approx(float(theory.mmi_error_exact(P1, 0.5, N)))
    deltas = np.linspace(*theory.delta_range(P1), 41)
    values = theory.operator_R(deltas, N, P1)
    assert np.all(np.diff(values) <= 1e-15) and values[0] > 0.9 and values[-1] < 1e-3
    mc = theory.operator_R(np.array([0.1, 0.3]), N, P1, simulations=20_000, rng=1)
    exact = theory.operator_R(np.array([0.1, 0.3]), N, P1)
    assert np.all(np.abs(mc.alpha - exact) <= 4 * np.sqrt(exact * (1 - exact) / 20_000))
    with pytest.raises(ValueError, match="delta must lie in"):
        theory.operator_R(info1 + 0.01, N, P1)


# ----------------------------------------------------------------------------- psi, sequence, fixed points


def test_psi_is_R_of_the_augmented_conditionals_and_monotone():
    alpha = np.linspace(0, 1, 401)
    values = theory.psi(P1, P2, N, alpha)
    p1a, p2a = theory.augmented_conditionals(P1, P2, alpha)
    assert values == pytest.approx(theory.mmi_error_exact(p1a, p2a, N))
    assert np.all(np.diff(values) >= 0)
    mc = theory.psi_mc(P1, P2, N, np.array([0.2, 0.5, 0.7]), simulations=20_000, rng=2)
    exact = theory.psi(P1, P2, N, np.array([0.2, 0.5, 0.7]))
    assert np.all(np.abs(mc.alpha - exact) <= 4 * np.sqrt(exact * (1 - exact) / 20_000) + 1e-12)


def test_fixed_points_of_the_paper_example():
    points = theory.fixed_points(P1, P2, N)
    for fp in points:
        assert float(theory.psi(P1, P2, N, fp.alpha)) == pytest.approx(fp.alpha, rel=1e-9, abs=1e-14)
    assert [fp.stable for fp in points] == [True, False, True]
    low, mid, high = (fp.alpha for fp in points)
    # lower bound of Theorem convergence: psi(0) = R(delta^a = I(X1;Y1)) sits just below the limit
    assert float(theory.psi(P1, P2, N, 0.0)) <= low < 1e-3
    assert theory.threshold(points) == mid and 0.5 < mid < 0.6
    # above alpha_T the iteration climbs to the attractor near psi(1) = R(delta^a = -I(X2;Y1))
    assert high == pytest.approx(float(theory.psi(P1, P2, N, 1.0)), abs=1e-3)


def test_equally_informative_signals_have_fixed_point_one_half():
    points = theory.fixed_points(0.85, 0.85, N)
    assert any(fp.alpha == pytest.approx(0.5, abs=1e-12) for fp in points)


def test_threshold_rules():
    fp = theory.FixedPoint
    assert theory.threshold([fp(0.01, 0.1), fp(0.4, 3.0), fp(0.99, 0.1)]) == 0.4
    assert theory.threshold([fp(0.5, 0.2)]) is None
    assert theory.threshold([fp(0.3, 2.0), fp(0.9, 0.1)]) is None


def test_sequence_decreases_to_the_lowest_fixed_point():
    seq = theory.alpha_sequence(P1, P2, N, 8)
    assert seq[0] == pytest.approx(float(theory.mmi_error_exact(P1, P2, N)))
    assert np.all(np.diff(seq) <= 0)
    assert seq[-1] == pytest.approx(theory.fixed_points(P1, P2, N)[0].alpha, rel=1e-9)
    mc = theory.alpha_sequence_mc(P1, P2, N, 2, simulations=20_000, rng=5)
    assert abs(mc.alpha[0] - seq[0]) <= 4 * math.sqrt(seq[0] * (1 - seq[0]) / 20_000)


def test_start_above_threshold_climbs():
    alpha = 0.6  # above alpha_T ~ 0.553
    assert float(theory.psi(P1, P2, N, alpha)) > alpha


def test_convergence_orders():
    quadratic = 0.1 ** (2.0 ** np.arange(5))  # e_{k+1} = e_k^2
    assert theory.convergence_orders(quadratic, 0.0, tolerance=0.0) == pytest.approx([2.0, 2.0, 2.0])
    linear = 0.5 ** np.arange(6)
    assert theory.convergence_orders(linear, 0.0) == pytest.approx([1.0] * 4)


# ----------------------------------------------------------------------------- CLI and outputs


def test_cli_prints_the_numbers(capsys):
    assert main(["theory", "--p1", "0.9", "--p2", "0.85", "--n", "35", "--simulations", "3000",
                 "--iterations", "3"]) == 0
    out = capsys.readouterr().out
    seq = theory.alpha_sequence(P1, P2, N, 3)
    points = theory.fixed_points(P1, P2, N)
    assert f"exact {seq[0]:.6f}" in out
    assert f"{seq[1]:.6f}" in out and f"{seq[2]:.4e}" in out
    assert f"{points[1].alpha:.6f}" in out and "<- alpha_T" in out
    assert len([line for line in out.splitlines() if line.strip()[:1].isdigit()]) == 4  # k = 0..3


def test_cli_rejects_bad_probability(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["theory", "--p1", "1.5"])
    assert exc.value.code == 2
    assert "outside [0.5, 1]" in capsys.readouterr().err


def test_cli_writes_figures_csvs_and_summary(tmp_path, capsys):
    out = tmp_path / "theory"
    assert main(["theory", "--simulations", "2000", "--iterations", "4", "--seed", "1",
                 "--betas", "0.5", "1", "--out", str(out)]) == 0
    stems = ["figure1_cda_criterion", "figure2a_J", "figure2b_R", "figure2c_psi", "figure2d_alpha_sequence"]
    for stem in stems:
        assert (out / f"{stem}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not list(out.glob(".*tmp"))
    psi_table = pd.read_csv(out / "figure2c_psi.csv")
    assert psi_table["psi_exact"].to_numpy() == pytest.approx(theory.psi(P1, P2, N, psi_table["alpha_k"].to_numpy()))
    err = np.abs(psi_table["psi_mc"] - psi_table["psi_exact"])
    assert np.all(err <= 4 * np.sqrt(psi_table["psi_exact"] * (1 - psi_table["psi_exact"]) / 2000) + 1e-12)
    r_table = pd.read_csv(out / "figure2b_R.csv")
    assert set(r_table["curve"]) == {"fixed_p1", "along_J"}
    assert set(pd.read_csv(out / "figure1_cda_criterion.csv")["beta"]) == {0.5, 1.0}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["alpha0"]["exact"] == pytest.approx(0.2652, abs=1e-4)
    assert summary["sequence_exact"] == pytest.approx(list(theory.alpha_sequence(P1, P2, N, 4)))
    assert summary["alpha_T"] == pytest.approx(theory.fixed_points(P1, P2, N)[1].alpha)
    seq_table = pd.read_csv(out / "figure2d_alpha_sequence.csv")
    assert list(seq_table["alpha_mc"]) == pytest.approx(summary["sequence_monte_carlo"])


# ----------------------------------------------------------------------------- cost bounds and progress


@pytest.mark.parametrize("option, value, bound", [
    ("--n", "100000000", "10000"), ("--simulations", "1000000000", "1000000"), ("--iterations", "100000000", "1000"),
])
def test_cli_refuses_a_cost_above_its_bound_naming_the_bound(capsys, option, value, bound):
    with pytest.raises(SystemExit) as exc:
        main(["theory", option, value])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {option}: {value} is above the maximum {bound}" in err and "theory" in err


@pytest.mark.parametrize("key, value, bound", [("n", 10**8, 10_000), ("simulations", 10**9, 1_000_000),
                                               ("iterations", 10**8, 1000)])
def test_config_refuses_a_theory_cost_above_its_bound(key, value, bound):
    from pathlib import Path

    from icda.workflow_config import config_check
    from icda.errors import ConfigError

    schema = Path(__file__).resolve().parents[1] / "workflow/schemas/config.schema.yaml"
    config = {"datasets": {"toy": {"source": "synthetic"}}, "theory": {key: value}}
    with pytest.raises(ConfigError) as err:
        config_check.check_config(config, schema)
    assert f"theory.{key}: {value} is greater than the maximum of {bound}" in str(err.value)
    config_check.check_config({"datasets": config["datasets"], "theory": {key: bound}}, schema)


def test_long_loops_show_progress_bars(capsys, monkeypatch):
    monkeypatch.setattr(theory, "PROGRESS_DELAY", 0.0)
    theory.analyse(P1, P2, N, iterations=2, simulations=200, progress=True)
    err = capsys.readouterr().err
    assert "fixed points of psi" in err and "α sequence (Monte Carlo)" in err
    theory.analyse(P1, P2, N, iterations=2, simulations=200)
    assert capsys.readouterr().err == ""
