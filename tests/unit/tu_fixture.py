"""A tiny dataset in the TU format, written by the tests: a triangle, a 4-node path and a 4-node star."""

from __future__ import annotations

from pathlib import Path

NAME = "TINY"
GRAPHS = (  # (edges within the graph, 0-based, once each; node count; graph label)
    ([(0, 1), (1, 2), (0, 2)], 3, 1),
    ([(0, 1), (1, 2), (2, 3)], 4, -1),
    ([(0, 1), (0, 2), (0, 3)], 4, -1),
)
NODE_LABELS = [0, 1, 0, 2, 2, 2, 2, 0, 1, 1, 1]


def tu_lines(copies: int = 1) -> dict[str, list[str]]:
    """The file contents (suffix → lines) of `copies` repetitions of the three graphs."""
    edges, indicator, labels, node_labels, attributes = [], [], [], [], []
    offset = 0
    for copy in range(copies):
        for index, (pairs, n_nodes, label) in enumerate(GRAPHS):
            graph_id = copy * len(GRAPHS) + index + 1
            for a, b in pairs:  # TU files list both directions, 1-based global ids
                edges += [f"{offset + a + 1}, {offset + b + 1}", f"{offset + b + 1}, {offset + a + 1}"]
            indicator += [str(graph_id)] * n_nodes
            labels.append(str(label))
            offset += n_nodes
        node_labels += [str(value) for value in NODE_LABELS]
    attributes = [f"{i % 11}.5, {-(i % 11)}" for i in range(offset)]
    return {
        "A": edges,
        "graph_indicator": indicator,
        "graph_labels": labels,
        "node_labels": node_labels,
        "node_attributes": attributes,
    }


def write_tu_dataset(folder: Path, copies: int = 1, **replace: list[str]) -> Path:
    """Write the files (a suffix → lines mapping in `replace` overrides one file); returns `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    for suffix, lines in (tu_lines(copies) | replace).items():
        (folder / f"{NAME}_{suffix}.txt").write_text("\n".join(lines) + "\n")
    return folder
