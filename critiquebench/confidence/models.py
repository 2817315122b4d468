"""MN-1..MN-4 and two evaluation protocols, so the leakage in the paper's protocol is measured, not argued.

One example per run; the label is the run's final outcome (`run_success`). The models, with the inputs and
sizes of the study's code (Singh8899/LLM-Planning-Leonardo, `meta_model/meta_model_llama.ipynb`; where the paper's
text differs, 004:167-189, the code wins):

- MN-1 ("1st Meta Network"): the last seen attempt's valid share, valid prefix and violations, and its plan
  length; standardised (StandardScaler); a 64-32 ReLU network (`MetaConfidenceNet`), Adam 1e-3, batches of 32,
  at most 50 epochs, early stopping (patience 8, min. change 0.001) on a 15% validation split;
- MN-2 ("BERTA ONLY ENCODING"): a text encoder over the pair (PDDL problem, last seen reply), then a 128-unit
  head (`BertWithExtraFeatures` without extra features); the code fine-tunes `bert-base-uncased`, which cannot
  be downloaded here: the encoder is pluggable (`encoders`) and frozen, and only the head is trained;
- MN-3 ("BERTA WITH EXTRA FEWTURES"): MN-2's embedding with MN-1's four features appended unscaled, as the code
  concatenates them to the [CLS] vector, then the same 128-unit head;
- MN-4 ("PROGRESSION"): 13 inputs, valid share, valid prefix and violations of each of attempts 1-4 (-1000
  where a run stopped earlier) and the last seen attempt's plan length; MinMaxScaler; MN-1's network, at most
  100 epochs;
- base (ours): the training share of successes for every run, what F1 alone earns on unbalanced data.

The networks are the code's layers computed in numpy (`network.StudyNet`: no torch in the `confidence` extra),
with its BatchNorm, dropout, Adam and early stopping on the validation loss.

Protocols:

- `paper`: the model sees every attempt of the run (its final one for MN-1/2/3) and splits are random over runs.
  With early stopping this leaks the label: a run stops at its first valid plan, so "the last attempt has no
  violations" and "how many attempts were made" already say whether it succeeded.
- `leakage-free` (k, default 1): the model sees attempts 1..k only, i.e. what is known before more calls are
  spent; runs already settled by a valid plan within those k attempts are left out (nothing is left to
  predict); cross-validation folds are grouped by problem, and an external test set (`--test`) is another
  source, e.g. another domain.

Metrics: F1, precision and recall at p >= 0.5, and ROC AUC, each with a percentile bootstrap interval over runs.
"""

from __future__ import annotations

import pickle
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from critiquebench.confidence.features import FEATURES, runs

MODELS: tuple[str, ...] = ("base", "mn1", "mn2", "mn3", "mn4")
PROTOCOLS: tuple[str, ...] = ("paper", "leakage-free")
METRICS: tuple[str, ...] = ("f1", "precision", "recall", "auc")
FORMAT_VERSION = 3  # 3: the study code's inputs and sizes (MN-4 13 wide, -1000 padding, 64-32 networks)
MN4_ATTEMPTS = 4  # the refinement loop's four iterations (004:80,153)
# The study's per-generation columns (gen{i}_valid_action_percent, ..._consecutive_valid_steps,
# ..._logical_violations), in its order; `plan_len` follows them once, the final plan's.
PER_ATTEMPT: tuple[str, ...] = ("valid_share", "valid_prefix", "violations")
MN4_PADDING = -1000.0  # the code's df[features].fillna(-1000) for generations a run never made
MN4_INPUTS = MN4_ATTEMPTS * len(PER_ATTEMPT) + 1  # 13


class ConfidenceError(ValueError):
    """Bad input to train/eval/predict; the message says what to change."""


@dataclass(frozen=True)
class Example:
    """What a model may see of one run, and its label."""

    run: str
    group: str  # domain/problem: folds never split one problem's runs
    seen: tuple[dict[str, Any], ...]
    label: bool


def examples(rows: Sequence[dict[str, Any]], protocol: str, k: int = 1) -> tuple[list[Example], int]:
    """The examples of `rows` under `protocol`, and how many runs were left out as settled within k attempts."""
    if protocol not in PROTOCOLS:
        raise ConfidenceError(f"unknown protocol {protocol!r}; known: {', '.join(PROTOCOLS)}")
    if k < 1:
        raise ConfidenceError(f"k must be >= 1, got {k}")
    out, settled = [], 0
    for attempts in runs(rows):
        first = attempts[0]
        seen = attempts if protocol == "paper" else attempts[:k]
        if protocol != "paper" and any(a["success"] for a in seen):
            settled += 1
            continue
        out.append(Example(first["run"], f"{first['domain']}/{first['problem']}", tuple(seen),
                           bool(first["run_success"])))  # fmt: skip
    return out, settled


def _attempt_vector(row: dict[str, Any]) -> list[float]:
    return [float(row[f]) for f in FEATURES]


def _generation(row: dict[str, Any]) -> str:
    """The code's `gen_N` text: the reply file read, stripped, newlines replaced by spaces."""
    return str(row.get("answer") or row["plan"]).strip().replace("\n", " ")


def mn4_inputs(seen: Sequence[dict[str, Any]], attempts: int = MN4_ATTEMPTS) -> list[float]:
    """MN-4's 13 inputs as the code lays them out: gen1..gen4 x (valid share, valid prefix, violations), -1000
    for attempts never made, then the last seen attempt's plan length."""
    out: list[float] = []
    for j in range(attempts):
        out += [float(seen[j][f]) for f in PER_ATTEMPT] if j < len(seen) else [MN4_PADDING] * len(PER_ATTEMPT)
    return [*out, float(seen[-1]["plan_length"])]


@dataclass
class Featurizer:
    """Turns examples into the input matrix of one model; `width` (MN-4's attempts) is fixed at fit time."""

    model: str
    width: int = 1
    encoder_name: str | None = None
    _encoder: Any = field(default=None, repr=False)

    def fit(self, exs: Sequence[Example]) -> Featurizer:
        self.width = MN4_ATTEMPTS
        return self

    def encoder(self) -> Any:
        if self._encoder is None:
            from critiquebench.confidence.encoders import default_encoder_name, get_encoder

            self.encoder_name = self.encoder_name or default_encoder_name()
            self._encoder = get_encoder(self.encoder_name)
        return self._encoder

    def encoder_label(self) -> str | None:
        return self.encoder().name if self.model in ("mn2", "mn3") else None

    def transform(self, exs: Sequence[Example]) -> np.ndarray:
        parts = []
        if self.model in ("mn2", "mn3"):
            from critiquebench.confidence.encoders import encode_pairs

            # the code's tokenizer(problem, gen_N), the reply's newlines made spaces. `problem` is the CSV's
            # column: the problem's name (pddl_N_K) for MN-2 (meta_model_llama.ipynb cell 26 reloads the CSV) and
            # the PDDL problem for MN-3 only where the Llama notebook put it there (cell 14); ours: the same split
            pairs = [(_problem_input(self.model, e.seen[-1]), _generation(e.seen[-1])) for e in exs]
            parts.append(encode_pairs(self.encoder(), pairs))
        if self.model in ("mn1", "mn3"):
            parts.append(np.array([_attempt_vector(e.seen[-1]) for e in exs]))
        if self.model == "mn4":
            parts.append(np.array([mn4_inputs(e.seen, self.width) for e in exs]))
        return np.hstack(parts).astype(np.float64)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_encoder": None}  # encoders are rebuilt from the package, never pickled


def _problem_input(model: str, row: Mapping[str, Any]) -> str:
    """The problem half of MN-2's / MN-3's text pair: the problem's name (MN-2) or its PDDL text (MN-3)."""
    return str(row.get("problem", "")) if model == "mn2" else str(row.get("problem_text", ""))


# The code's networks: MetaConfidenceNet (64-32) for MN-1/MN-4 and the 128-unit head of BertWithExtraFeatures.
HIDDEN = {"mn1": (64, 32), "mn4": (64, 32), "mn2": (128,), "mn3": (128,)}
EPOCHS = {"mn1": 50, "mn4": 100}  # the code's n_epochs; its heads train with BERT for 3 epochs at 2e-5
HEAD_EPOCHS = 200  # ours: a frozen encoder leaves only the head to train, which 3 epochs at 2e-5 would not move
BATCH = {"mn1": 32, "mn4": 32, "mn2": 16, "mn3": 16}
VALIDATION = 0.15 / 0.85  # the code's 70/15/15 split: validation is 15% of all, i.e. 15/85 of what trains
PATIENCE, MIN_DELTA = 8, 0.001  # the code's EarlyStopping(patience=8), min_delta=0.001


@dataclass
class Scaled:
    """The code's scaler (fitted on the training data) before its network."""

    scaler: Any
    net: Any

    def fit(self, x: np.ndarray, y: np.ndarray) -> Scaled:
        self.net.fit(self.scaler.fit_transform(x), y)
        return self

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(self.net.predict_proba(self.scaler.transform(x)))


def _classifier(model: str, seed: int) -> Any:
    from sklearn.preprocessing import MinMaxScaler, StandardScaler

    from critiquebench.confidence.network import StudyNet

    head = model in ("mn2", "mn3")  # BertWithExtraFeatures' head: no BatchNorm, dropout 0.3
    net = StudyNet(hidden=HIDDEN[model], batch_norm=not head, dropout=0.3 if head else 0.2, lr=1e-3,
                   batch_size=BATCH[model], epochs=EPOCHS.get(model, HEAD_EPOCHS), validation=VALIDATION,
                   patience=PATIENCE, min_delta=MIN_DELTA, seed=seed)  # fmt: skip
    if model == "mn1":
        return Scaled(StandardScaler(), net)
    if model == "mn4":
        return Scaled(MinMaxScaler(), net)
    return net  # MN-2/MN-3: the code feeds the embedding (and the raw features) to the head unscaled


@dataclass
class Fitted:
    """A trained meta-network: what `confidence train` saves and `confidence predict` loads."""

    model: str
    protocol: str
    k: int
    featurizer: Featurizer
    classifier: Any  # None when the training labels had one class: then `prior` is the prediction
    prior: float
    version: int = FORMAT_VERSION

    def predict(self, exs: Sequence[Example]) -> np.ndarray:
        if not exs:
            return np.zeros(0)
        if self.classifier is None:
            return np.full(len(exs), self.prior)
        return self.classifier.predict_proba(self.featurizer.transform(exs))[:, 1]

    def save(self, path: Path) -> None:
        from critiquebench.outputs import write_output

        write_output(path, pickle.dumps(self))

    @staticmethod
    def load(path: Path) -> Fitted:
        # A model file is a pickle: load only files you trained yourself (as with any scikit-learn model).
        try:
            obj = pickle.loads(path.read_bytes())
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ModuleNotFoundError) as exc:
            raise ConfidenceError(f"{path}: not a model file written by `confidence train`: {exc}") from None
        if not isinstance(obj, Fitted) or obj.version != FORMAT_VERSION:
            raise ConfidenceError(f"{path}: not a model file written by this version of `confidence train`")
        return obj


def fit(model: str, protocol: str, k: int, exs: Sequence[Example], seed: int = 0,
        encoder: str | None = None) -> Fitted:  # fmt: skip
    """Train one meta-network on `exs` (examples built with the same protocol and k)."""
    if model not in MODELS:
        raise ConfidenceError(f"unknown model {model!r}; known: {', '.join(MODELS)}")
    if not exs:
        raise ConfidenceError("no runs to train on")
    featurizer = Featurizer(model, encoder_name=encoder).fit(exs)
    y = np.array([e.label for e in exs], dtype=int)
    prior = float(y.mean())
    if model == "base" or len(set(y)) < 2:
        return Fitted(model, protocol, k, featurizer, None, prior)
    classifier = _classifier(model, seed).fit(featurizer.transform(exs), y)
    return Fitted(model, protocol, k, featurizer, classifier, prior)


# ---- metrics ----


def _scores(y: np.ndarray, p: np.ndarray) -> dict[str, float]:
    pred = p >= 0.5
    tp = float(np.sum(pred & (y == 1)))
    fp = float(np.sum(pred & (y == 0)))
    fn = float(np.sum(~pred & (y == 1)))
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"f1": f1, "precision": precision, "recall": recall, "auc": _auc(y, p)}


def _auc(y: np.ndarray, p: np.ndarray) -> float:
    """ROC AUC as the Mann-Whitney statistic (ties count half); NaN with one class."""
    pos, neg = p[y == 1], p[y == 0]
    if not len(pos) or not len(neg):
        return float("nan")
    greater = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(greater / (len(pos) * len(neg)))


def metrics(y: Sequence[int], p: Sequence[float], boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    """F1, precision, recall, AUC and their 95% percentile bootstrap intervals (resampling runs)."""
    y_arr, p_arr = np.asarray(y, dtype=int), np.asarray(p, dtype=float)
    out: dict[str, Any] = {"n": int(len(y_arr)), "positives": int(y_arr.sum()), **_scores(y_arr, p_arr)}
    rng = np.random.default_rng(seed)
    samples: dict[str, list[float]] = {m: [] for m in METRICS}
    for _ in range(boot if len(y_arr) else 0):
        idx = rng.integers(0, len(y_arr), len(y_arr))
        for name, value in _scores(y_arr[idx], p_arr[idx]).items():
            if not np.isnan(value):
                samples[name].append(value)
    for name in METRICS:
        values = samples[name]
        low, high = np.percentile(values, [2.5, 97.5]) if values else (float("nan"), float("nan"))
        out[f"{name}_low"], out[f"{name}_high"] = float(low), float(high)
    return out


# ---- evaluation ----


def _folds(exs: Sequence[Example], protocol: str, n_folds: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold

    y = np.array([e.label for e in exs], dtype=int)
    n = min(n_folds, int(np.bincount(y, minlength=2).min()))
    if n < 2:
        raise ConfidenceError(
            f"cross-validation needs at least 2 runs of each outcome; have {int(y.sum())} successes and "
            f"{int(len(y) - y.sum())} failures (give --test, or more runs)"
        )
    if protocol == "paper":
        return list(StratifiedKFold(n, shuffle=True, random_state=seed).split(np.zeros(len(y)), y))
    groups = [e.group for e in exs]
    return list(StratifiedGroupKFold(n, shuffle=True, random_state=seed).split(np.zeros(len(y)), y, groups))


def evaluate(
    train: Sequence[dict[str, Any]],
    test: Sequence[dict[str, Any]] | None = None,
    *,
    models: Sequence[str] = MODELS,
    protocols: Sequence[str] = PROTOCOLS,
    k: int = 1,
    folds: int = 5,
    seed: int = 0,
    boot: int = 1000,
    encoder: str | None = None,
) -> list[dict[str, Any]]:
    """One result row per (protocol, model): metrics on `test` after training on `train`, or cross-validated
    out-of-fold predictions on `train` when there is no test set."""
    results = []
    for protocol in protocols:
        train_ex, settled = examples(train, protocol, k)
        test_ex, test_settled = examples(test, protocol, k) if test is not None else ([], 0)
        for model in models:
            if test is not None:
                fitted = fit(model, protocol, k, train_ex, seed, encoder)
                y, p = [e.label for e in test_ex], list(fitted.predict(test_ex))
                label = fitted.featurizer.encoder_label()
            else:
                y, p, label = _cross_validate(model, protocol, k, train_ex, folds, seed, encoder)
            row = {"protocol": protocol, "model": model, "k": None if protocol == "paper" else k,
                   "settled": test_settled if test is not None else settled, "encoder": label}  # fmt: skip
            results.append({**row, **metrics(y, p, boot, seed)})
    return results


def _cross_validate(model: str, protocol: str, k: int, exs: Sequence[Example], folds: int, seed: int,
                    encoder: str | None) -> tuple[list[int], list[float], str | None]:  # fmt: skip
    y, p, label = [], [], None
    for train_idx, test_idx in _folds(exs, protocol, folds, seed):
        fitted = fit(model, protocol, k, [exs[i] for i in train_idx], seed, encoder)
        held = [exs[i] for i in test_idx]
        y += [e.label for e in held]
        p += list(fitted.predict(held))
        label = fitted.featurizer.encoder_label()
    return y, p, label
