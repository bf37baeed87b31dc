"""The synthetic population, pairs, example sets and counterfactual arms (paper §4.1-4.2, §4.4-4.5;
spec PROTOCOL-synthetic §1-§5).

A hidden binary group ``A`` shifts a proxy factor; task fields share a second factor. True risk
depends on the task fields and, in informative cells, on a normalised proxy sum. Displayed
values are standardised within each generated sample. A counterfactual arm sets the target's
``A`` to 1 (``cf_a1``) or 0 (``cf_a0``), regenerates its proxies from its frozen exogenous draws,
and re-standardises the sample.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from . import config
from .cells import Cell, expect_cell


@dataclass(frozen=True)
class Sample:
    """One generated sample (population, example set or counterfactual of either)."""

    k: int
    A: np.ndarray  # hidden group, 0/1
    X: np.ndarray  # displayed matrix, standardised within the sample (task columns, then proxies)
    Xleg: np.ndarray  # task fields (unstandardised)
    P: np.ndarray  # proxies (unstandardised)
    r: np.ndarray  # task risk
    r_true: np.ndarray  # true risk
    Y: np.ndarray  # noisy label (true risk + noise)
    eta_C: np.ndarray
    u_A: np.ndarray
    S: np.ndarray
    proxy_noise: np.ndarray
    y_noise: np.ndarray
    gC: float
    gA: float
    mu_A: float
    gCp: float
    w: np.ndarray  # task weights
    w_P: np.ndarray  # proxy weights
    scaler: tuple[np.ndarray, np.ndarray]  # (column means, column SDs) used to standardise X

    @property
    def n(self) -> int:
        return len(self.A)

    @property
    def L(self) -> int:
        return self.Xleg.shape[1]

    @property
    def M(self) -> int:
        return self.P.shape[1]


def corner_parameters(k: int, corner: str) -> tuple[float, float, float]:
    """``(gamma_C, gamma_A, mu_A)`` of a configuration at field count ``k`` (spec §1.1)."""
    if k not in config.FIELD_COUNTS or corner not in config.CORNERS:
        raise ValueError(f"unknown configuration k={k} corner={corner!r}")
    dep, link = corner[0], corner[1]
    return config.TASK_DEPENDENCE[dep], config.PROXY_LINK[link], config.MU_A[(link, k)]


def task_weights(L: int, gC: float) -> np.ndarray:
    """Task weights: ``linspace(0.6, 0.3, L)`` normalised to unit task-risk variance (spec §1.3 eq. 5-6)."""
    w_raw = np.linspace(*config.TASK_WEIGHT_RANGE, L)
    var_r = (1 - gC**2) * np.sum(w_raw**2) + gC**2 * np.sum(w_raw) ** 2
    return w_raw / np.sqrt(var_r)


def proxy_weights(M: int, gA: float, beta: float) -> np.ndarray:
    """Proxy weights with Var(P @ w_P) = beta**2 (spec §1.3 eq. 8); zeros when beta == 0."""
    if beta <= 0:
        return np.zeros(M)
    return np.full(M, beta / np.sqrt(M + M * (M - 1) * gA**2))


def standardise(X_unstd: np.ndarray, scaler: tuple[np.ndarray, np.ndarray] | None = None):
    """Column-standardise (population SD, ddof 0; a zero SD becomes 1). Returns ``(X, (mean, sd))``."""
    if scaler is None:
        mean = X_unstd.mean(axis=0)
        sd = X_unstd.std(axis=0)
        sd = np.where(sd == 0, 1.0, sd)
        scaler = (mean, sd)
    return (X_unstd - scaler[0]) / scaler[1], scaler


def _proxies(A, u_A, eta_C, proxy_noise, gA, mu_A, gCp):
    s_A = 2 * A - 1
    eta_A = mu_A * s_A + np.sqrt(1 - mu_A**2) * u_A
    return gA * eta_A[:, None] + gCp * eta_C[:, None] + np.sqrt(1 - gA**2 - gCp**2) * proxy_noise


def generate(k: int, corner: str, n: int, seed: int, beta: float = 0.0) -> Sample:
    """The plain generator ("dgp_k", spec §1.2-1.3); ``beta`` > 0 makes the proxies informative.

    Draw order: A, eta_C, u_A, S, proxy_noise, y_noise from ``default_rng(seed)``.
    """
    L, M = config.FIELD_COUNTS[k]
    gC, gA, mu_A = corner_parameters(k, corner)
    gCp = config.PROXY_TASK_LOADING
    rng = np.random.default_rng(int(seed))
    A = rng.integers(0, 2, size=n).astype(int)
    eta_C = rng.standard_normal(n)
    u_A = rng.standard_normal(n)
    S = rng.standard_normal((n, L))
    proxy_noise = rng.standard_normal((n, M))
    y_noise = rng.standard_normal(n) * config.SIGMA_Y
    Xleg = np.sqrt(1 - gC**2) * S + gC * eta_C[:, None]
    P = _proxies(A, u_A, eta_C, proxy_noise, gA, mu_A, gCp)
    w = task_weights(L, gC)
    r = Xleg @ w
    w_P = proxy_weights(M, gA, beta)
    r_true = r + P @ w_P
    Y = r_true + y_noise
    X, scaler = standardise(np.hstack([Xleg, P]))
    return Sample(k, A, X, Xleg, P, r, r_true, Y, eta_C, u_A, S, proxy_noise, y_noise,
                  gC, gA, mu_A, gCp, w, w_P, scaler)


def generate_sweep(k: int, corner: str, n: int, seed: int, beta: float) -> Sample:
    """The variance-normalised predictive-value sweep ("dgp_norm", spec §2).

    beta <= 0 returns the plain zero-information sample (bit-identical). Otherwise task risk and
    proxy weights are rescaled, on this sample, so that total risk variance is 1.10 with a proxy
    share ``min(beta**2, 0.95 * 1.10)``. Displayed values do not change.
    """
    if beta <= 0:
        return generate(k, corner, n, seed, 0.0)
    s = generate(k, corner, n, seed, beta)
    V = config.SWEEP_TARGET_VARIANCE
    contrib = s.r_true - s.r
    proxy_var = min(beta**2, 0.95 * V)
    c = np.sqrt(proxy_var / np.var(contrib))
    a = np.sqrt(max(1e-12, (V - proxy_var) / np.var(s.r)))
    r_true = a * s.r + c * contrib
    return replace(s, r=a * s.r, w=a * s.w, w_P=c * s.w_P, r_true=r_true, Y=r_true + s.y_noise)


def counterfactual(sample: Sample, i: int, a: int, freeze_scaler: bool = False) -> Sample:
    """The counterfactual sample with the target ``i``'s group set to ``a`` (spec §5).

    Only row ``i`` changes: its proxies are regenerated from its frozen draws (u_A, proxy noise,
    eta_C). True risk and labels follow; ``X`` is re-standardised over the counterfactual sample
    (the released behaviour) unless ``freeze_scaler`` reuses the factual means and SDs.
    """
    A = sample.A.copy()
    A[i] = int(a)
    return _rebuild(sample, A, sample.u_A, sample.proxy_noise, freeze_scaler)


def _rebuild(sample: Sample, A, u_A, proxy_noise, freeze_scaler: bool) -> Sample:
    P = _proxies(A, u_A, sample.eta_C, proxy_noise, sample.gA, sample.mu_A, sample.gCp)
    r_true = sample.r + P @ sample.w_P
    X, scaler = standardise(np.hstack([sample.Xleg, P]), sample.scaler if freeze_scaler else None)
    return replace(sample, A=A, P=P, r_true=r_true, Y=r_true + sample.y_noise, X=X, scaler=scaler,
                   u_A=u_A, proxy_noise=proxy_noise)


def counterfactual_rows(sample, i: np.ndarray, j: np.ndarray, a: int) -> dict[str, np.ndarray]:
    """Target and comparator rows of the counterfactual samples with ``A[i] = a``, for many targets.

    For each target ``i[t]`` this equals ``population.counterfactual(sample, i[t], a)`` restricted
    to rows ``i[t]`` and ``j[t]``: the target's proxies are regenerated from its frozen draws and
    the displayed matrix is re-standardised over the counterfactual sample (only the proxy
    columns' means and SDs change). Returns ``X_i, X_j`` (T x k, displayed), ``r_true_i,
    r_true_j`` (T,).
    """
    i = np.asarray(i, dtype=int)
    j = np.asarray(j, dtype=int)
    T, L = len(i), sample.L
    A_new = np.full(T, int(a))
    P_i = _proxies(A_new, sample.u_A[i], sample.eta_C[i], sample.proxy_noise[i],
                   sample.gA, sample.mu_A, sample.gCp)
    P3 = np.broadcast_to(sample.P, (T, *sample.P.shape)).copy()
    P3[np.arange(T), i] = P_i
    mean = P3.mean(axis=1)
    sd = P3.std(axis=1)
    sd = np.where(sd == 0, 1.0, sd)
    X_i = np.hstack([sample.X[i, :L], (P_i - mean) / sd])
    X_j = np.hstack([sample.X[j, :L], (sample.P[j] - mean) / sd])
    r_true_i = sample.r[i] + P_i @ sample.w_P
    r_true_j = sample.r[j] + sample.P[j] @ sample.w_P  # recomputed as the counterfactual sample does
    return {"X_i": X_i, "X_j": X_j, "r_true_i": r_true_i, "r_true_j": r_true_j}


def pair_counterfactuals(c: Cell, a: int) -> dict[str, np.ndarray]:
    """:func:`counterfactual_rows` of a cell's population at its evaluation pairs (:func:`pairs`, in
    pair order) with ``A[i] = a``; cached per cell (the same arrays bit for bit), each call a fresh copy."""
    return {k: v.copy() for k, v in _pair_counterfactuals(c, int(a)).items()}


@functools.lru_cache(maxsize=config.COUNTERFACTUAL_CACHE_SIZE)
def _pair_counterfactuals(c: Cell, a: int) -> dict[str, np.ndarray]:
    pr = pairs(c)
    return counterfactual_rows(population(c), pr["i"].to_numpy(), pr["j"].to_numpy(), a)


def stochastic_regeneration(sample: Sample, pair_id: int, i: int, draw: int) -> Sample:
    """Copy of ``sample`` with the target's proxy-channel noise redrawn (Supplementary Note 11).

    ``default_rng(SeedSequence([260914, pair_id, draw]))`` draws one normal for ``u_A[i]`` then
    ``M`` normals for ``proxy_noise[i]``; both counterfactual arms are then built from this copy.
    """
    rng = np.random.default_rng(np.random.SeedSequence([260914, int(pair_id), int(draw)]))
    u_A = sample.u_A.copy()
    noise = sample.proxy_noise.copy()
    u_A[i] = rng.standard_normal()
    noise[i, :] = rng.standard_normal(sample.M)
    return _rebuild(sample, sample.A, u_A, noise, False)


# --- cells -----------------------------------------------------------------------------------

@functools.lru_cache(maxsize=64)
def _population(k: int, corner: str, seed: int, beta: float, sweep: bool) -> Sample:
    gen = generate_sweep if sweep else generate
    return gen(k, corner, config.N_POPULATION, seed, beta)


def population(cell: Cell) -> Sample:
    """The 5,000-patient evaluation population of a cell (seed 10001, or the replication seed)."""
    c = expect_cell(cell)
    return _population(c.k, c.corner, c.population_seed, c.beta, c.sweep_beta is not None)


@functools.lru_cache(maxsize=64)
def _pairs(k: int, corner: str, pop_seed: int, pair_seed: int) -> pd.DataFrame:
    r = _population(k, corner, pop_seed, 0.0, False).r
    return draw_pairs(r, pair_seed)


def draw_pairs(r: np.ndarray, pair_seed: int, per_stratum: int = config.PAIRS_PER_STRATUM,
               strata=config.PAIR_STRATA) -> pd.DataFrame:
    """Stratified evaluation pairs on the task-risk gap (spec §3).

    Rejection sampling with ``default_rng(pair_seed)``: draw two indices per step, skip self
    and repeated pairs, accept into the first non-full stratum containing ``|r_i - r_j|``,
    orient so that the target ``i`` has the strictly larger task risk. Columns
    ``pair_id, i, j, stratum``; strata in order, each in acceptance order.
    """
    rng = np.random.default_rng(int(pair_seed))
    n = len(r)
    buckets: list[list[tuple[int, int, int]]] = [[] for _ in strata]
    seen: set[tuple[int, int]] = set()
    cap = per_stratum * len(strata) * config.PAIR_DRAW_CAP_PER_PAIR
    draws = 0
    while any(len(b) < per_stratum for b in buckets) and draws < cap:
        i, j = (int(x) for x in rng.integers(0, n, size=2))
        draws += 1
        if i == j:
            continue
        key = (min(i, j), max(i, j))
        if key in seen:
            continue
        d = abs(r[i] - r[j])
        for s, (lo, hi) in enumerate(strata):
            if lo <= d < hi and len(buckets[s]) < per_stratum:
                pair = (i, j) if r[i] > r[j] else (j, i)
                buckets[s].append((*pair, s))
                seen.add(key)
                break
    rows = [p for b in buckets for p in b]
    df = pd.DataFrame(rows, columns=["i", "j", "stratum"])
    df.insert(0, "pair_id", np.arange(len(df)))
    return df


def pairs(cell: Cell) -> pd.DataFrame:
    """The 99 evaluation pairs of a cell (drawn on the zero-information population; ``i`` is the target).

    Informative and sweep cells reuse the zero-information pairs; example manipulations evaluate
    the pairs of the evaluated configuration.
    """
    c = expect_cell(cell)
    return _pairs(c.k, c.corner, c.population_seed, c.pair_seed).copy()


def correlate_examples(sample: Sample, rho: float) -> Sample:
    """Example-correlation manipulation (Supplementary Note 18; spec §4.4, reconstructed).

    For each displayed proxy column: standardise it and Y, residualise on standardised Y,
    re-standardise the residual, and set the column to ``sqrt(1 - rho^2) * resid + rho * Y_z``.
    Labels and task columns are unchanged.
    """
    X = sample.X.copy()
    y = (sample.Y - sample.Y.mean()) / sample.Y.std()
    for c in range(sample.L, sample.L + sample.M):
        p = (X[:, c] - X[:, c].mean()) / X[:, c].std()
        resid = p - (p @ y) / (y @ y) * y
        resid = (resid - resid.mean()) / resid.std()
        X[:, c] = np.sqrt(1 - rho**2) * resid + rho * y
    return replace(sample, X=X)


@functools.lru_cache(maxsize=64)
def _examples(c: Cell) -> Sample:
    corner = c.examples_corner
    if c.sweep_beta is not None:
        s = generate_sweep(c.k, corner, c.n_examples, c.example_seed, c.beta)
    else:
        s = generate(c.k, corner, c.n_examples, c.example_seed, c.beta)
    if c.example_corr is not None:
        s = correlate_examples(s, c.example_corr)
    return s


def examples(cell: Cell) -> Sample:
    """The labelled example set shown in a cell's prompt (80, 12 or 20 rows; spec §4).

    Standardised within its own rows; seed 517 (or S + 40000); examples from the cell's
    configuration unless the ``_x`` manipulation names another.
    """
    c = expect_cell(cell)
    if not c.has_examples:
        raise ValueError(f"cell {c.id} shows no examples")
    return _examples(c)


def arm_sample(cell: Cell, i: int, arm: str, freeze_scaler: bool = False) -> Sample:
    """The sample a prompt of ``arm`` is rendered from (``factual`` or the target's counterfactual)."""
    pop = population(cell)
    if arm == "factual":
        return pop
    if arm not in ("cf_a1", "cf_a0"):
        raise ValueError(f"unknown arm {arm!r}; expected one of {config.ARMS}")
    return counterfactual(pop, i, 1 if arm == "cf_a1" else 0, freeze_scaler)


def truth(cell: Cell) -> pd.Series:
    """1 where the target has the higher (or equal) true risk in the factual population, per pair ``(i, j)``."""
    pop = population(cell)
    p = pairs(cell)
    t = (pop.r_true[p["i"].to_numpy()] >= pop.r_true[p["j"].to_numpy()]).astype(float)
    return pd.Series(t, index=pd.MultiIndex.from_arrays([p["i"], p["j"]], names=["i", "j"]), name="truth").sort_index()


# --- manipulation checks (paper §4.1; spec §1.4) ----------------------------------------------

def a_mc(sample: Sample) -> float:
    """A_MC: R^2 of an OLS regression (with intercept) of A on the unstandardised proxies."""
    import statsmodels.api as sm  # heavy, optional: only the manipulation checks fit OLS

    return float(sm.OLS(sample.A.astype(float), sm.add_constant(sample.P)).fit().rsquared)


def structure_statistic(X: np.ndarray) -> float:
    """Normalised structure statistic ``(lambda_max / tr C - 1/k) / (1 - 1/k)`` of the correlation matrix."""
    C = np.corrcoef(X, rowvar=False)
    k = C.shape[0]
    lam = np.linalg.eigvalsh(C)[-1]
    return float((lam / np.trace(C) - 1 / k) / (1 - 1 / k))


def manipulation_checks(n: int = config.MANIPULATION_CHECK_N, seed: int = config.MANIPULATION_CHECK_SEED) -> pd.DataFrame:
    """A_MC and the structure statistic for every field count and configuration (tidy)."""
    rows = []
    for k in config.FIELD_COUNTS:
        for corner in config.CORNERS:
            s = generate(k, corner, n, seed)
            rows.append({"k": k, "corner": corner, "a_mc": a_mc(s), "structure": structure_statistic(s.X)})
    return pd.DataFrame(rows)


def field_counts() -> pd.DataFrame:
    """Table 2: field counts (task and proxy) per total."""
    return pd.DataFrame([{"total_fields": k, "task_fields": L, "proxy_fields": M}
                         for k, (L, M) in config.FIELD_COUNTS.items()])


def claim_values() -> dict:
    """Claims of Table 2 and of the population's manipulation checks (paper §4.1, §4.4)."""
    out = {}
    for row in field_counts().itertuples():
        out[f"T2.k{row.total_fields}.task"] = row.task_fields
        out[f"T2.k{row.total_fields}.proxy"] = row.proxy_fields
    mc = manipulation_checks().set_index(["k", "corner"])
    out["Main.amc.weak"] = mc.loc[(6, "LL"), "a_mc"]
    out["Main.amc.strong"] = mc.loc[(6, "LH"), "a_mc"]
    zero = Cell(k=12, corner="LH", names="neutral", examples="learned", proxies="zero")  # k12_LH_neutral_learned_zero
    sweep_var = [np.var(population(c).r_true)
                 for c in [zero] + [zero.with_(proxies="info", sweep_beta=b) for b in config.SWEEP_BETAS[1:]]]
    out["Main.sweep.var.lo"] = min(sweep_var)
    out["Main.sweep.var.hi"] = max(sweep_var)
    return out
