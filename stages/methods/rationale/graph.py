"""Edge rationales on graphs: GCN generator/attacker (reading the node features of the whole graph) and a GCN
predictor that sees only the selected edges (the `gcn` encoder, torch_geometric).

A graph's selectable units are its undirected edges, each once (`source < target`); message passing uses both
directions with the same 0/1 weight, so a rationale is a subgraph.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn

from stages.core.errors import DataValidationError
from stages.methods.rationale.base import Batch, Encoder
from stages.methods.rationale.config import RationaleConfig

PREDICTOR_INPUTS = 2  # the predictor's node inputs: selected degree and its square


@dataclass
class GraphData:
    """torch_geometric `Data` graphs with `x`, undirected `edge_index` (each edge once), `y` and optional
    0/1 edge `gold`."""

    graphs: list

    def __len__(self) -> int:
        return len(self.graphs)

    @property
    def feature_dim(self) -> int:
        return int(self.graphs[0].x.shape[1])


def make_graph_data(
    features: Sequence,
    edges: Sequence,
    labels: Sequence[int],
    gold: Sequence | None = None,
    where: str = "graphs",
) -> GraphData:
    """Node features [n, F], undirected edges [E, 2] and 0/1 labels (and edge gold [E]) → `GraphData`."""
    from torch_geometric.data import Data

    if len(labels) == 0:
        raise DataValidationError(f"{where}: no graphs")
    graphs = []
    for row, label in enumerate(labels):
        if label not in (0, 1):
            raise DataValidationError(f"{where}: graph {row} has label {label!r}; labels must be 0 or 1")
        pairs = torch.as_tensor(edges[row], dtype=torch.long).reshape(-1, 2)
        if pairs.shape[0] == 0:
            raise DataValidationError(f"{where}: graph {row} has no edges to select from")
        data = Data(
            x=torch.as_tensor(features[row], dtype=torch.float32),
            edge_index=pairs.t().contiguous(),
            y=torch.tensor([int(label)]),
        )
        if gold is not None:
            data.gold = torch.as_tensor(gold[row], dtype=torch.float32)
        graphs.append(data)
    return GraphData(graphs)


def both_directions(edge_index: torch.Tensor, weight: torch.Tensor | None = None):
    """Undirected edges once → both directions (and their weights repeated)."""
    full = torch.cat([edge_index, edge_index.flip(0)], dim=1)
    return full, None if weight is None else torch.cat([weight, weight])


class GraphSelector(nn.Module):
    """Generator / attacker: GCN node states → per edge [h_u + h_v, h_u ⊙ h_v] → LayerNorm → dropout → 2 logits."""

    def __init__(self, in_dim: int, config: RationaleConfig) -> None:
        super().__init__()
        from torch_geometric.nn import GCNConv

        widths = [in_dim] + [config.hidden] * config.layers
        self.convs = nn.ModuleList(GCNConv(a, b) for a, b in itertools.pairwise(widths))
        self.norm = nn.LayerNorm(2 * config.hidden)
        self.dropout = nn.Dropout(config.dropout)
        self.head = nn.Linear(2 * config.hidden, 2)

    def forward(self, batch: Batch) -> torch.Tensor:
        graph = batch.inputs
        edge_index, _ = both_directions(graph.edge_index)
        h = graph.x
        for conv in self.convs:
            h = torch.relu(conv(h, edge_index))
        source, target = h[graph.edge_index[0]], h[graph.edge_index[1]]
        pair = torch.cat([source + target, source * target], dim=-1)
        return self.head(self.dropout(self.norm(pair)))


class GraphPredictor(nn.Module):
    """Predictor: reads only the selected subgraph. Node inputs are each node's selected degree d = Σ z over its
    edges, as [d/3, (d/3)²] (0 for a node outside the rationale, as an unselected token's zero vector); its own
    GCN with edge weights z (both directions) → sum-pool per graph → linear → 2 logits."""

    def __init__(self, in_dim: int, config: RationaleConfig) -> None:
        super().__init__()
        from torch_geometric.nn import GCNConv, global_add_pool

        widths = [PREDICTOR_INPUTS] + [config.hidden] * config.layers
        self.convs = nn.ModuleList(GCNConv(a, b) for a, b in itertools.pairwise(widths))
        self.pool = global_add_pool
        self.head = nn.Linear(config.hidden, 2)

    def forward(self, batch: Batch, z: torch.Tensor) -> torch.Tensor:
        graph = batch.inputs
        edge_index, weight = both_directions(graph.edge_index, z)
        degree = torch.zeros(graph.num_nodes, dtype=z.dtype).index_add(0, edge_index[0], weight) / 3.0
        h = torch.stack([degree, degree**2], dim=1)
        for conv in self.convs:
            h = torch.relu(conv(h, edge_index, weight))
        return self.head(self.pool(h, graph.batch))


class GraphEncoder(Encoder):
    """The `gcn` encoder: rows of a `GraphData`, edge rationales (no continuity term: edges have no order)."""

    name = "gcn"
    ordered = False

    def size(self, data: GraphData) -> int:
        return len(data)

    def batch(self, data: GraphData, rows: Sequence[int]) -> Batch:
        from torch_geometric.data import Batch as PygBatch

        graph = PygBatch.from_data_list([data.graphs[row] for row in rows])
        edges = graph.edge_index.shape[1]
        return Batch(
            inputs=graph,
            mask=torch.ones(edges),
            labels=graph.y,
            gold=getattr(graph, "gold", None),
            rows=torch.as_tensor(list(rows), dtype=torch.long),
        )

    def unit_rows(self, batch: Batch) -> torch.Tensor:
        """The batch row of every edge."""
        return batch.inputs.batch[batch.inputs.edge_index[0]]

    def selector(self, data: GraphData, config: RationaleConfig) -> nn.Module:
        return GraphSelector(data.feature_dim, config)

    def predictor(self, data: GraphData, config: RationaleConfig) -> nn.Module:
        return GraphPredictor(data.feature_dim, config)
