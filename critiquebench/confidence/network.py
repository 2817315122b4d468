"""The study's meta-networks in numpy: `MetaConfidenceNet` and the head of `BertWithExtraFeatures`.

The study's code (Singh8899/LLM-Planning-Leonardo, `meta_model/meta_model_llama.ipynb`) trains them in PyTorch;
torch is not a dependency here, so this module computes the same layers, loss, optimiser and stopping rule:

- `MetaConfidenceNet` (MN-1, MN-4): Linear(in, 64) -> ReLU -> BatchNorm1d(64) -> Dropout(0.2) -> Linear(64, 32)
  -> ReLU -> Linear(32, 1), a logit, trained with BCEWithLogitsLoss;
- the head (MN-2, MN-3): Linear(in, 128) -> ReLU -> Dropout(0.3) -> Linear(128, 1) -> Sigmoid with BCELoss
  (the same gradient as a logit with BCEWithLogitsLoss, which is how it is computed);
- Adam (PyTorch's defaults: betas 0.9/0.999, eps 1e-8, no weight decay), shuffled batches, PyTorch's default
  initialisation (weights and biases uniform in +-1/sqrt(fan_in)), BatchNorm's batch statistics in training and
  running ones (momentum 0.1, eps 1e-5) in evaluation, inverted dropout in training only;
- early stopping as the code's `EarlyStopping`: stop when the validation loss has not fallen by more than
  `min_delta` for `patience` epochs, keeping the last weights (the code restores none).

It fits and predicts as a scikit-learn classifier does (`fit(X, y)`, `predict_proba(X)`); `models.Scaled` puts the
code's scaler before it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

BN_EPS, BN_MOMENTUM = 1e-5, 0.1
BETAS, ADAM_EPS = (0.9, 0.999), 1e-8


@dataclass
class StudyNet:
    """A feed-forward classifier with the study's layers. `hidden` sizes; `batch_norm` after the first layer's
    ReLU; `dropout` after it; `validation` the share of the training data held out for early stopping (0: none)."""

    hidden: tuple[int, ...] = (64, 32)
    batch_norm: bool = True
    dropout: float = 0.2
    lr: float = 1e-3
    batch_size: int = 32
    epochs: int = 50
    validation: float = 0.0
    patience: int = 8
    min_delta: float = 0.001
    seed: int = 0
    params: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    epochs_run: int = 0

    # ---- layers ----

    def _init(self, width: int, rng: np.random.Generator) -> None:
        sizes = [width, *self.hidden, 1]
        self.params = {}
        for i, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
            bound = 1.0 / np.sqrt(fan_in)
            self.params[f"W{i}"] = rng.uniform(-bound, bound, (fan_in, fan_out))
            self.params[f"b{i}"] = rng.uniform(-bound, bound, fan_out)
        if self.batch_norm:
            n = self.hidden[0]
            self.params.update(gamma=np.ones(n), beta=np.zeros(n), mean=np.zeros(n), var=np.ones(n))

    def _forward(self, x: np.ndarray, train: bool, rng: np.random.Generator | None) -> tuple[np.ndarray, list[Any]]:
        """The logits and what backprop needs of each layer."""
        p, cache = self.params, []
        h = x
        for i in range(len(self.hidden)):
            z = h @ p[f"W{i}"] + p[f"b{i}"]
            a = np.maximum(z, 0.0)
            bn = None
            if i == 0 and self.batch_norm:
                if train:
                    mu, var = a.mean(axis=0), a.var(axis=0)
                    n = len(a)
                    p["mean"] = (1 - BN_MOMENTUM) * p["mean"] + BN_MOMENTUM * mu
                    p["var"] = (1 - BN_MOMENTUM) * p["var"] + BN_MOMENTUM * var * n / max(n - 1, 1)
                else:
                    mu, var = p["mean"], p["var"]
                xhat = (a - mu) / np.sqrt(var + BN_EPS)
                bn = (xhat, var)
                a = p["gamma"] * xhat + p["beta"]
            mask = None
            if i == 0 and train and self.dropout > 0:
                assert rng is not None
                mask = (rng.random(a.shape) >= self.dropout) / (1.0 - self.dropout)
                a = a * mask
            cache.append((h, z, bn, mask))
            h = a
        last = len(self.hidden)
        cache.append((h, None, None, None))
        return (h @ p[f"W{last}"] + p[f"b{last}"])[:, 0], cache

    def _backward(self, logits: np.ndarray, y: np.ndarray, cache: list[Any]) -> dict[str, np.ndarray]:
        p, grads = self.params, {}
        last = len(self.hidden)
        d = ((1.0 / (1.0 + np.exp(-logits)) - y) / len(y))[:, None]  # BCE with logits, mean over the batch
        h = cache[last][0]
        grads[f"W{last}"], grads[f"b{last}"] = h.T @ d, d.sum(axis=0)
        d = d @ p[f"W{last}"].T
        for i in reversed(range(last)):
            h_in, z, bn, mask = cache[i]
            if mask is not None:
                d = d * mask
            if bn is not None:
                xhat, var = bn
                grads["gamma"], grads["beta"] = (d * xhat).sum(axis=0), d.sum(axis=0)
                dx = d * p["gamma"]
                n = len(dx)
                d = (n * dx - dx.sum(axis=0) - xhat * (dx * xhat).sum(axis=0)) / (n * np.sqrt(var + BN_EPS))
            d = d * (z > 0)
            grads[f"W{i}"], grads[f"b{i}"] = h_in.T @ d, d.sum(axis=0)
            d = d @ p[f"W{i}"].T
        return grads

    @staticmethod
    def _loss(logits: np.ndarray, y: np.ndarray) -> float:
        return float(np.mean(np.maximum(logits, 0) - logits * y + np.log1p(np.exp(-np.abs(logits)))))

    # ---- scikit-learn's face ----

    def fit(self, x: np.ndarray, y: np.ndarray) -> StudyNet:
        with _one_blas_thread():
            return self._fit(x, y)

    def _fit(self, x: np.ndarray, y: np.ndarray) -> StudyNet:
        rng = np.random.default_rng(self.seed)
        x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
        order = rng.permutation(len(y))
        held = int(round(len(y) * self.validation)) if self.validation and len(y) >= 4 else 0
        val_idx, train_idx = order[:held], order[held:]
        self._init(x.shape[1], rng)
        m = {k: np.zeros_like(v) for k, v in self.params.items()}
        v = {k: np.zeros_like(val) for k, val in self.params.items()}
        step, best, waited = 0, float("inf"), 0
        for epoch in range(self.epochs):
            shuffled = rng.permutation(train_idx)
            for start in range(0, len(shuffled), self.batch_size):
                batch = shuffled[start : start + self.batch_size]
                if self.batch_norm and len(batch) < 2:
                    continue  # BatchNorm has no statistics of one example (PyTorch refuses such a batch)
                logits, cache = self._forward(x[batch], True, rng)
                step += 1
                for name, g in self._backward(logits, y[batch], cache).items():
                    m[name] = BETAS[0] * m[name] + (1 - BETAS[0]) * g
                    v[name] = BETAS[1] * v[name] + (1 - BETAS[1]) * g * g
                    m_hat, v_hat = m[name] / (1 - BETAS[0] ** step), v[name] / (1 - BETAS[1] ** step)
                    self.params[name] -= self.lr * m_hat / (np.sqrt(v_hat) + ADAM_EPS)
            self.epochs_run = epoch + 1
            if held:
                loss = self._loss(self._forward(x[val_idx], False, None)[0], y[val_idx])
                if loss < best - self.min_delta:
                    best, waited = loss, 0
                else:
                    waited += 1
                    if waited >= self.patience:
                        break
        return self

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        with _one_blas_thread():
            logits = self._forward(np.asarray(x, dtype=np.float64), False, None)[0]
        p1 = 1.0 / (1.0 + np.exp(-logits))
        return np.column_stack([1.0 - p1, p1])

    def layer_shapes(self) -> list[tuple[int, int]]:
        """The weight matrices' shapes, input to output (e.g. [(13, 64), (64, 32), (32, 1)] for MN-4)."""
        return [self.params[f"W{i}"].shape for i in range(len(self.hidden) + 1)]


def _one_blas_thread() -> Any:
    """BLAS on one thread while the network computes: its products are a batch of 32 by 64 columns, too small
    for threads, which only spin and wait (`confidence eval` on the refinement page's example: 16.9 -> 9.7 s of
    CPU, the same figures). threadpoolctl comes with scikit-learn, which the confidence commands require."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")
