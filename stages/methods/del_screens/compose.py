"""DEL-Compose (KinDEL; Chen et al.'s count model): a network fit to the raw sequencing counts.

An encoder maps a compound to an embedding; a linear head gives log c (matrix binding), log t (enrichment of
target over matrix) and the logits of the zero-inflation probabilities πᶜ, πᵗ (shared over replicates). With
L the compound's pre-selection load and β_r a learned offset per replicate,

    λᶜ_r = L·exp(log c + βᶜ_r),   λᵗ_r = L·exp(log c + log t + βᵗ_r),

and the loss is the mean zero-inflated Poisson NLL of the matrix counts plus that of the target counts. The
negative-binomial option replaces each ZIP by NegativeBinomial(total_count=λ, probs=σ(γ)) with one learned γ.
A compound's score is exp(log t)·(1 − πᵗ) (exp(log t) for the NB option).

Encoders: *full* — an MLP on the compound's Morgan fingerprint (2048 → 128 ×5, ReLU); *factorized* — a shared
synthon MLP gives z_a, z_b, z_c, pair MLPs give z_ab, z_ac, z_bc, z_abc = MLP(z_ab, z_c), and 4-head attention
with query z_abc over [z_a, z_b, z_c, z_ab, z_bc, z_ac, z_abc] gives the embedding.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import polars as pl

from stages.methods.del_screens import counts
from stages.methods.del_screens.config import ComposeOptions
from stages.methods.del_screens.fingerprints import morgan, parse_smiles
from stages.methods.del_screens.schema import LOAD, MATRIX_COUNTS, SYNTHONS, TARGET_COUNTS

LOAD_AND_COUNTS = (*TARGET_COUNTS, *MATRIX_COUNTS, LOAD)


@dataclass
class CountData:
    """Featurised compounds and their counts, as float32 arrays (synthon fingerprints for *factorized*)."""

    fingerprints: np.ndarray
    synthons: tuple[np.ndarray, np.ndarray, np.ndarray] | None
    load: np.ndarray
    matrix: np.ndarray
    target: np.ndarray

    def take(self, rows: np.ndarray) -> CountData:
        """The rows `rows` of every array."""
        return CountData(
            self.fingerprints[rows],
            None if self.synthons is None else tuple(s[rows] for s in self.synthons),
            self.load[rows],
            self.matrix[rows],
            self.target[rows],
        )


def featurise(frame: pl.DataFrame, options: ComposeOptions, where: str = "library") -> CountData:
    """Morgan fingerprints (radius, bits, chirality on) of compounds and, for *factorized*, of synthons."""
    fp = {"radius": options.radius, "n_bits": options.n_bits, "chirality": True}
    whole = morgan(parse_smiles(frame["smiles"].to_list(), where), **fp)
    synthons = None
    if options.variant == "factorized":
        synthons = tuple(
            _synthon_fingerprints(frame[column].to_list(), fp, where, column) for column in SYNTHONS
        )
    return CountData(
        whole,
        synthons,
        frame[LOAD].to_numpy().astype(np.float32),
        frame.select(MATRIX_COUNTS).to_numpy().astype(np.float32),
        frame.select(TARGET_COUNTS).to_numpy().astype(np.float32),
    )


def _synthon_fingerprints(smiles: list[str], fp: dict, where: str, column: str) -> np.ndarray:
    unique = sorted(set(smiles))
    joined = [s.replace(", ", ".") for s in unique]  # KinDEL joins a cycle's fragments with ", "
    table = morgan(parse_smiles(joined, where, column), **fp)
    index = {s: i for i, s in enumerate(unique)}
    return table[[index[s] for s in smiles]]


def _mlp(sizes: list[int]):
    from torch import nn

    layers = []
    for i, (n_in, n_out) in enumerate(itertools.pairwise(sizes)):
        layers.append(nn.Linear(n_in, n_out))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def build_network(options: ComposeOptions, n_replicates: int = 3):
    """The DEL-Compose network (torch module) for `options`."""
    import torch
    from torch import nn

    h = options.hidden

    class FullEncoder(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.mlp = nn.Sequential(_mlp([options.n_bits, h, h, h, h, h]), nn.ReLU())

        def forward(self, data: dict):
            return self.mlp(data["fingerprints"])

    class FactorizedEncoder(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.synthon = nn.Sequential(_mlp([options.n_bits, h, h]), nn.ReLU())
            self.pairs = nn.ModuleDict(
                {k: nn.Sequential(_mlp([2 * h, h, h]), nn.ReLU()) for k in ("ab", "ac", "bc")}
            )
            self.triple = nn.Sequential(_mlp([2 * h, h, h]), nn.ReLU())
            self.attention = nn.MultiheadAttention(h, options.heads, batch_first=True)

        def forward(self, data: dict):
            z_a, z_b, z_c = (self.synthon(x) for x in data["synthons"])
            z_ab = self.pairs["ab"](torch.cat([z_a, z_b], 1))
            z_ac = self.pairs["ac"](torch.cat([z_a, z_c], 1))
            z_bc = self.pairs["bc"](torch.cat([z_b, z_c], 1))
            z_abc = self.triple(torch.cat([z_ab, z_c], 1))
            keys = torch.stack([z_a, z_b, z_c, z_ab, z_bc, z_ac, z_abc], 1)
            out, _ = self.attention(z_abc.unsqueeze(1), keys, keys, need_weights=False)
            return out.squeeze(1)

    class DelCompose(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = FullEncoder() if options.variant == "full" else FactorizedEncoder()
            self.head = nn.Linear(h, 4)  # log c, log t, logit πᶜ, logit πᵗ
            self.beta_matrix = nn.Parameter(torch.zeros(n_replicates))
            self.beta_target = nn.Parameter(torch.zeros(n_replicates))
            self.nb_logit = nn.Parameter(torch.zeros(1))

        def forward(self, data: dict):
            log_c, log_t, zero_c, zero_t = self.head(self.encoder(data)).unbind(1)
            return log_c, log_t, zero_c, zero_t

        def nll(self, data: dict):
            log_c, log_t, zero_c, zero_t = self(data)
            log_load = torch.log(data["load"]).unsqueeze(1)
            rate_c = torch.exp(log_load + log_c.unsqueeze(1) + self.beta_matrix)
            rate_t = torch.exp(log_load + (log_c + log_t).unsqueeze(1) + self.beta_target)
            if options.likelihood == "zip":
                matrix = counts.zip_log_prob(data["matrix"], rate_c, zero_c.unsqueeze(1))
                target = counts.zip_log_prob(data["target"], rate_t, zero_t.unsqueeze(1))
            else:
                matrix = counts.negative_binomial_log_prob(data["matrix"], rate_c, self.nb_logit)
                target = counts.negative_binomial_log_prob(data["target"], rate_t, self.nb_logit)
            return -matrix.mean() - target.mean()

        def score(self, data: dict):
            _, log_t, _, zero_t = self(data)
            keep = torch.sigmoid(-zero_t) if options.likelihood == "zip" else 1.0
            return torch.exp(log_t) * keep

    return DelCompose()


def _tensors(data: CountData, rows=None) -> dict:
    import torch

    def pick(array):
        return torch.from_numpy(
            np.ascontiguousarray(array if rows is None else array[rows], dtype=np.float32)
        )

    out = {"fingerprints": pick(data.fingerprints), "load": pick(data.load), "matrix": pick(data.matrix)}
    out["target"] = pick(data.target)
    if data.synthons is not None:
        out["synthons"] = tuple(pick(s) for s in data.synthons)
    return out


class ComposeModel:
    """A fitted DEL-Compose: `score`, the learned replicate offsets and the training history."""

    def __init__(self, network, options: ComposeOptions, history: list[dict]) -> None:
        self.network, self.options, self.history = network, options, history

    def score(self, data: CountData) -> np.ndarray:
        """exp(log t)·(1 − πᵗ) per compound."""
        import torch

        self.network.eval()
        with torch.no_grad():
            return self.network.score(_tensors(data)).numpy().astype(np.float64)

    def offsets(self) -> dict[str, list[float]]:
        """The learned βᶜ_r and βᵗ_r."""
        return {
            "beta_matrix": self.network.beta_matrix.detach().numpy().astype(float).tolist(),
            "beta_target": self.network.beta_target.detach().numpy().astype(float).tolist(),
        }


def initial_bias(network, data: CountData) -> None:
    """Start log c at log(mean matrix count / mean load) and log t at 0, so training starts at the right scale."""
    import torch

    with torch.no_grad():
        network.head.bias.zero_()
        ratio = max(float(data.matrix.mean()), 1e-3) / float(data.load.mean())
        network.head.bias[0] = float(np.log(ratio))


def fit(options: ComposeOptions, train: CountData, valid: CountData, seed: int) -> ComposeModel:
    """Adam on the ZIP (or NB) NLL, minibatches of `batch_size`; keep the weights of the best valid NLL and
    stop after `patience` epochs without improvement."""
    import torch

    from stages.core.seeding import pin_threads, seed_everything

    pin_threads(options.threads)
    seed_everything(seed)
    network = build_network(options, train.matrix.shape[1])
    initial_bias(network, train)
    optimiser = torch.optim.Adam(network.parameters(), lr=options.learning_rate)
    generator = torch.Generator().manual_seed(seed)
    valid_tensors = _tensors(valid)
    best, best_state, waited, history = float("inf"), None, 0, []
    for epoch in range(options.epochs):
        network.train()
        order = torch.randperm(len(train.load), generator=generator).numpy()
        losses = []
        for start in range(0, len(order), options.batch_size):
            optimiser.zero_grad()
            loss = network.nll(_tensors(train, order[start : start + options.batch_size]))
            loss.backward()
            optimiser.step()
            losses.append(float(loss.detach()))
        network.eval()
        with torch.no_grad():
            valid_nll = float(network.nll(valid_tensors))
        history.append({"epoch": epoch, "train_nll": float(np.mean(losses)), "valid_nll": valid_nll})
        if valid_nll < best:
            best, waited = valid_nll, 0
            best_state = {k: v.clone() for k, v in network.state_dict().items()}
        else:
            waited += 1
            if waited >= options.patience:
                break
    network.load_state_dict(best_state)
    return ComposeModel(network, options, history)


def offset_recovery(learned: dict[str, list[float]], planted: dict[str, list[float]]) -> float:
    """Pearson r between learned and planted replicate offsets, each group (matrix, target) centred first
    (an offset common to a group is not identifiable from log c or log t)."""

    def centred(values):
        array = np.asarray(values, dtype=float)
        return array - array.mean()

    a = np.concatenate([centred(learned["beta_matrix"]), centred(learned["beta_target"])])
    b = np.concatenate([centred(planted["beta_matrix"]), centred(planted["beta_target"])])
    return float(np.corrcoef(a, b)[0, 1])
