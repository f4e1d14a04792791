"""`icml25 bdc-assess` on your own files.

Assessment: four correctness files (question id → 0/1; Parquet or CSV with columns `id` and `correct`, or
the column given) for the clean model on the original and updated questions and the contaminated model on the
updated (and, for the vanilla comparison, the original) questions → fidelity, resistance, their paired
bootstrap intervals over questions, the vanilla resistance and the gain over it, a Markdown report, JSON and a
figure. Rewrite: your multiple-choice file (`id`, `question`, `choices`, `answer`; `labels`, `group` optional)
rewritten by a registered strategy.

Every input is checked before anything is written (errors name the file and column; exit 2 from the CLI); the
outputs are written together at the end (`OutputTransaction`), so a failed run leaves nothing behind.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from stages.core.errors import DataValidationError
from stages.core.io import OutputTransaction, write_json, write_text
from stages.core.user_tables import TABLE_SUFFIXES, read_user_table
from stages.methods.contamination.figures import fidelity_resistance_png
from stages.methods.contamination.items import LETTERS, ItemError, MCItem, check_item, to_rows
from stages.methods.contamination.metrics import assess
from stages.methods.contamination.strategies import STRATEGIES, apply_strategy


def read_correctness(path: str | Path, column: str = "correct", id_column: str = "id") -> dict[str, int]:
    """Question id → 0/1 from a file; errors name the file and the column."""
    frame = read_user_table(path)
    for name in (id_column, column):
        if name not in frame.columns:
            raise DataValidationError(f"{path}: no column {name!r}; columns: {', '.join(frame.columns)}")
    ids = frame[id_column].cast(pl.Utf8)
    if ids.null_count():
        raise DataValidationError(f"{path}: column {id_column!r} has {ids.null_count()} missing ids")
    if ids.n_unique() != len(ids):
        duplicated = ids.filter(ids.is_duplicated()).unique().head(3).to_list()
        raise DataValidationError(f"{path}: column {id_column!r} repeats ids, e.g. {duplicated}")
    values = frame[column]
    if values.dtype == pl.Boolean:
        values = values.cast(pl.Int64)
    bad = [v for v in values.to_list() if v not in (0, 1) or (isinstance(v, float) and v not in (0.0, 1.0))]
    if values.null_count() or bad:
        shown = bad[:3] if bad else ["null"]
        raise DataValidationError(f"{path}: column {column!r} must hold 0 or 1 only, found {shown}")
    return {item: int(value) for item, value in zip(ids.to_list(), values.to_list(), strict=True)}


def aligned(
    vectors: dict[str, dict[str, int]], files: dict[str, str]
) -> tuple[list[str], dict[str, list[int]]]:
    """The same question ids in every file (else an error naming the file and some missing ids)."""
    names = list(vectors)
    reference = set(vectors[names[0]])
    for name in names[1:]:
        ids = set(vectors[name])
        if ids != reference:
            missing = sorted(reference - ids)[:3]
            extra = sorted(ids - reference)[:3]
            raise DataValidationError(
                f"{files[name]}: question ids differ from {files[names[0]]} (missing {missing}, extra {extra}); "
                "every file must cover the same questions"
            )
    ids = sorted(reference)
    return ids, {name: [vectors[name][i] for i in ids] for name in names}


def assess_files(
    clean_original: str,
    clean_updated: str,
    contaminated_updated: str,
    output: str | Path,
    contaminated_original: str | None = None,
    column: str = "correct",
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> dict:
    """Read, check, assess, and write report.md, assessment.json and fidelity_resistance.png into `output`."""
    if not 0 < confidence < 1:
        raise DataValidationError(f"--confidence must lie in (0, 1), got {confidence}")
    if resamples < 100:
        raise DataValidationError(f"--resamples must be ≥ 100, got {resamples}")
    files = {
        "clean_original": clean_original,
        "clean_updated": clean_updated,
        "contaminated_updated": contaminated_updated,
    }
    if contaminated_original:
        files["contaminated_original"] = contaminated_original
    vectors = {name: read_correctness(path, column) for name, path in files.items()}
    ids, lists = aligned(vectors, files)
    result = assess(
        lists["clean_original"],
        lists["clean_updated"],
        lists["contaminated_updated"],
        lists.get("contaminated_original"),
        confidence,
        resamples,
        seed,
    ).as_dict()
    report = {
        "files": files,
        "questions": len(ids),
        "confidence": confidence,
        "resamples": resamples,
    } | result
    output = Path(output).absolute()
    with OutputTransaction(_existing_parent(output), owner="icml25 bdc-assess") as transaction:
        write_json(report, transaction.path(output / "assessment.json"))
        write_text(markdown(report), transaction.path(output / "report.md"))
        rows = [_figure_row("update", report)]
        if report["vanilla_resistance"] is not None:
            low, high = report["vanilla_resistance_interval"]
            rows.append(
                {
                    "strategy": "vanilla",
                    "resistance": report["vanilla_resistance"],
                    "resistance_low": low,
                    "resistance_high": high,
                }
            )
        fidelity_resistance_png(
            rows,
            transaction.path(output / "fidelity_resistance.png"),
            f"{len(ids)} questions, {confidence:.0%} bootstrap intervals",
        )
    return report


def _figure_row(name: str, report: dict) -> dict:
    return {
        "strategy": name,
        "fidelity": report["fidelity"],
        "resistance": report["resistance"],
        "fidelity_low": report["fidelity_interval"][0],
        "fidelity_high": report["fidelity_interval"][1],
        "resistance_low": report["resistance_interval"][0],
        "resistance_high": report["resistance_interval"][1],
    }


def _existing_parent(output: Path) -> Path:
    root = output.parent
    while not root.is_dir():
        root = root.parent
    return root


def _interval(values) -> str:
    return "—" if values is None else f"[{values[0]:.4f}, {values[1]:.4f}]"


def markdown(report: dict) -> str:
    """The assessment as a Markdown report."""
    lines = [
        "# Benchmark-update assessment (fidelity and contamination resistance)",
        "",
        f"{report['questions']} questions; {report['confidence']:.0%} percentile bootstrap intervals over "
        f"questions ({report['resamples']} resamples, paired).",
        "",
        "| quantity | value | interval |",
        "|---|---|---|",
        f"| accuracy, clean model, original | {report['accuracy_clean_original']:.4f} | |",
        f"| accuracy, clean model, updated | {report['accuracy_clean_updated']:.4f} | |",
        f"| accuracy, contaminated model, updated | {report['accuracy_contaminated_updated']:.4f} | |",
        f"| fidelity | {report['fidelity']:.4f} | {_interval(report['fidelity_interval'])} |",
        f"| resistance | {report['resistance']:.4f} | {_interval(report['resistance_interval'])} |",
    ]
    if report["vanilla_resistance"] is not None:
        lines += [
            f"| accuracy, contaminated model, original | {report['accuracy_contaminated_original']:.4f} | |",
            f"| vanilla resistance (no update) | {report['vanilla_resistance']:.4f} | "
            f"{_interval(report['vanilla_resistance_interval'])} |",
            f"| resistance − vanilla | {report['resistance_gain']:+.4f} | "
            f"{_interval(report['resistance_gain_interval'])} |",
        ]
    lines += [
        "",
        f"The clean model's answers changed on {report['flips_clean']} questions (1 − fidelity), while its accuracy "
        f"moved by {report['accuracy_clean_updated'] - report['accuracy_clean_original']:+.4f}.",
        "",
        "Fidelity = mean(v[clean, original] == v[clean, updated]); resistance = mean(v[clean, updated] == "
        "v[contaminated, updated]); vanilla resistance = mean(v[clean, original] == v[contaminated, original]).",
        "",
    ]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------- rewrite


def _parse_list(value, path: Path, column: str, row: int) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            parsed = None
        if isinstance(parsed, list):
            return [str(v) for v in parsed]
    raise DataValidationError(f"{path}: row {row}: column {column!r} must be a list (or a JSON list in CSV)")


def read_items(path: str | Path) -> list[MCItem]:
    """Your multiple-choice file: `id`, `question`, `choices` (a list, JSON in CSV), `answer` (a label, default
    labels A, B, ...); optional `labels`, `group`. Every item's key is checked."""
    path = Path(path)
    frame = read_user_table(path)
    missing = [c for c in ("id", "question", "choices", "answer") if c not in frame.columns]
    if missing:
        raise DataValidationError(f"{path}: missing columns {missing}; columns: {', '.join(frame.columns)}")
    items = []
    for index, row in enumerate(frame.iter_rows(named=True)):
        choices = _parse_list(row["choices"], path, "choices", index)
        labels = (
            _parse_list(row["labels"], path, "labels", index)
            if row.get("labels") is not None
            else list(LETTERS[: len(choices)])
        )
        try:
            items.append(
                check_item(
                    MCItem(
                        str(row["id"]),
                        str(row["question"]),
                        tuple(choices),
                        tuple(labels),
                        str(row["answer"]),
                        str(row.get("group") or ""),
                    )
                )
            )
        except ItemError as error:
            raise DataValidationError(f"{path}: row {index}: {error}") from None
    if len({item.id for item in items}) != len(items):
        raise DataValidationError(f"{path}: column 'id' repeats ids")
    return items


def rewrite_file(path: str, strategy: str, output: str | Path, seed: int = 0) -> int:
    """Rewrite your MC file with a registered strategy; write the rewritten items (Parquet, or CSV with JSON
    lists) to `output`. Returns the number of items."""
    if strategy not in STRATEGIES:
        raise DataValidationError(
            f"--strategy {strategy}: unknown; registered: {', '.join(STRATEGIES.names())}"
        )
    output = Path(output).absolute()
    if output.suffix.lower() not in TABLE_SUFFIXES:
        raise DataValidationError(f"--output {output}: use a .parquet or .csv file name")
    items = read_items(path)
    try:
        rewritten = apply_strategy(strategy, items, seed)
    except (ValueError, ItemError) as error:
        raise DataValidationError(f"{path}: strategy {strategy}: {error}") from None
    frame = pl.DataFrame(to_rows(rewritten, strategy)).drop("version")
    with OutputTransaction(_existing_parent(output), owner="icml25 bdc-assess") as transaction:
        target = transaction.path(output)
        if output.suffix.lower() == ".parquet":
            frame.write_parquet(target)
        else:
            frame.with_columns(
                pl.col("choices").map_elements(lambda v: json.dumps(list(v)), return_dtype=pl.Utf8),
                pl.col("labels").map_elements(lambda v: json.dumps(list(v)), return_dtype=pl.Utf8),
            ).write_csv(target)
    return len(rewritten)
