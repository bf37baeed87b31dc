"""Confounders carried by the cue renderings, and a per-pair model of the outcome (issue 22; seed 002).

Related paper 002 finds that cues differ in linguistic properties that shape behaviour on their own
(readability: cue type explains 45 % of the Flesch–Kincaid grade) and that behaviour follows the
model's *own* inference of the group more than the cued group. Here:

* :func:`rendering_features` — per cue rendering: prompt length (words, characters) and the
  Flesch–Kincaid grade, ``0.39 words/sentence + 11.8 syllables/word − 15.59``, with syllables
  counted as vowel groups (an approximation: the prompts are mostly field names and numbers, for
  which no dictionary count exists either);
* :func:`outcome_model` — a linear probability model of each call's choice of the target on the
  cued group (A of the target's version shown: 1 in ``cf_a1``, 0 in ``cf_a0``), the probe-inferred
  group (the share of probe calls naming that version group A) and the prompt length (words,
  standardised), with **pair fixed effects**, pooled over the judged cues (statsmodels OLS,
  standard errors clustered by pair). Readability is collinear with length within a rendering and is
  left to the per-rendering table.
"""
from __future__ import annotations

import functools
import math
import re
from collections import Counter

import numpy as np
import pandas as pd
import statsmodels.formula.api as smf

from .. import config

_WORD = re.compile(r"[A-Za-z][A-Za-z_'-]*|\d+(?:\.\d+)?")
_SENTENCE = re.compile(r"[.!?:](?:\s|$)|\n")
_VOWELS = re.compile(r"[aeiouy]+")


def syllables(word: str) -> int:
    """Vowel groups of a word (at least 1; a final silent ``e`` dropped; digits: one per digit group).

    >>> syllables("patient"), syllables("indicator"), syllables("score"), syllables("0.86")
    (2, 4, 1, 1)
    """
    w = word.lower().replace("_", " ")
    if w[0].isdigit():
        return 1
    n = sum(len(_VOWELS.findall(part)) - (1 if part.endswith("e") and len(_VOWELS.findall(part)) > 1 else 0)
            for part in w.split())
    return max(1, n)


_syllables = functools.lru_cache(maxsize=config.SYLLABLE_CACHE_SIZE)(syllables)


def readability(text: str) -> dict:
    """``words``, ``characters``, ``sentences`` and ``fk_grade`` (Flesch–Kincaid) of a text."""
    return dict(_readability(text))


@functools.lru_cache(maxsize=config.READABILITY_CACHE_SIZE)
def _readability(text: str) -> tuple:
    """:func:`readability` as ``(name, value)`` pairs, cached: each distinct word's syllables are
    counted once (an integer sum, so the same count in any order)."""
    words = Counter(_WORD.findall(text))
    n_sent = max(1, len([s for s in _SENTENCE.split(text) if s.strip()]))
    n_w = sum(words.values())
    syl = sum(n * _syllables(w) for w, n in words.items())
    fk = 0.39 * n_w / n_sent + 11.8 * syl / n_w - 15.59 if n_w else math.nan
    return (("words", n_w), ("characters", len(text)), ("sentences", n_sent), ("fk_grade", fk))


def rendering_features(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Per cue: mean words, characters and Flesch–Kincaid grade of its prompts (one row per cue)."""
    rows = []
    for cue, t in tables.items():
        f = pd.DataFrame([readability(p) for p in t["prompt"]])
        rows.append({"cue": cue, "n_prompts": len(t), "words": f["words"].mean(), "characters": f["characters"].mean(),
                     "fk_grade": f["fk_grade"].mean()})
    return pd.DataFrame(rows)


def call_table(records: dict[str, pd.DataFrame], tables: dict[str, pd.DataFrame],
               scores: dict[str, pd.Series]) -> pd.DataFrame:
    """One row per valid counterfactual call: ``picked_i, cued_group, inferred_group, words, pair, cue``."""
    parts = []
    for cue, rec in records.items():
        if cue not in scores or cue not in tables:
            continue
        t = tables[cue][["arm", "pair_id", "order", "prompt"]].copy()
        t["words"] = [_readability(p)[0][1] for p in t["prompt"]]  # the words of readability (cached)
        r = rec[rec["arm"].isin(["cf_a1", "cf_a0"]) & rec["picked_i"].notna()]
        r = r.merge(t[["arm", "pair_id", "order", "words"]], on=["arm", "pair_id", "order"], how="left")
        s = scores[cue].reindex(pd.MultiIndex.from_frame(r[["i", "j"]])).to_numpy(float)
        r = r.assign(cued_group=(r["arm"] == "cf_a1").astype(float),
                     inferred_group=np.where(r["arm"] == "cf_a1", s, 1 - s),
                     pair=r["i"].astype(str) + "_" + r["j"].astype(str), cue=cue)
        parts.append(r[["picked_i", "cued_group", "inferred_group", "words", "pair", "cue"]])
    return pd.concat(parts, ignore_index=True).dropna() if parts else pd.DataFrame()


def outcome_model(calls: pd.DataFrame) -> dict:
    """OLS of ``picked_i`` on cued group + inferred group + length (z) + pair fixed effects, pair-clustered SE."""
    if calls.empty or calls["pair"].nunique() < 3 or calls["inferred_group"].std() == 0:
        return {"n_calls": int(len(calls)), "terms": []}
    d = calls.copy()
    sd = d["words"].std()
    d["length_z"] = (d["words"] - d["words"].mean()) / sd if sd > 0 else 0.0
    terms = ["cued_group", "inferred_group"] + (["length_z"] if sd > 0 else [])
    groups = pd.factorize(d["pair"])[0]
    fit = smf.ols("picked_i ~ " + " + ".join(terms) + " + C(pair)", data=d).fit(
        cov_type="cluster", cov_kwds={"groups": groups})
    ci = fit.conf_int()
    rows = [{"term": k, "coef_pp": 100 * float(fit.params[k]), "ci_pp": [100 * float(ci.loc[k, 0]),
                                                                       100 * float(ci.loc[k, 1])],
             "p_value": float(fit.pvalues[k])} for k in terms]
    return {"n_calls": int(len(d)), "n_pairs": int(d["pair"].nunique()), "n_cues": int(d["cue"].nunique()),
            "terms": rows, "formula": "picked_i ~ " + " + ".join(terms) + " + pair fixed effects"}
