"""Generated result tables: the marker records the sources' md5 and the text's digest, so a committed table is
checked without the data (hand edits, a table of another run than dvc.lock's)."""

from __future__ import annotations

from stages.core.claims import compare, verdict_claim
from stages.platform.results import check_file_blocks, marker, paper_body, parse_block, replace_block

DESIGN = {"could_hold": "the gap can come out positive", "could_fail": "the gap can come out negative"}


def _block(md5: str = "abc123") -> tuple[str, str]:
    claim = verdict_claim(
        "gap",
        "s",
        "c",
        {},
        [compare("gap", {"0": 1.0, "1": 1.1, "2": 0.9}, 0.0, "above")],
        **DESIGN,
        unit="seed",
    )
    sources = {"data/p/claims.json": md5}
    body = paper_body([claim], [], sources)
    return marker(sources, body, "1 holds / 0 fails / 0 inconclusive") + body + "<!-- results:end -->", body


def test_a_generated_block_round_trips_and_checks_clean_against_its_lock():
    block, body = _block()
    text = replace_block("# Paper\n\nIntro.\n", block, "README.md")
    assert text.startswith("# Paper\n\nIntro.\n\n## Results (generated)\n\n<!-- results:begin")
    parsed = parse_block(text, "README.md")
    assert parsed.sources == {"data/p/claims.json": "abc123"} and parsed.body == body
    assert parsed.counts == "1 holds / 0 fails / 0 inconclusive"
    assert "| `gap` | **holds** | seed, 3 | gap |" in body and "| ±0.2484 |" in body
    assert check_file_blocks(text, "README.md", {"data/p/claims.json": "abc123"}) == []
    # replacing keeps what surrounds the block
    again = replace_block(text + "\n## After\n", _block("def456")[0], "README.md")
    assert again.count("results:begin") == 1 and again.endswith("\n## After\n") and "def456" in again


def test_a_hand_edit_or_another_runs_table_is_named():
    block, _ = _block()
    edited = block.replace("**holds**", "**fails**")
    problems = check_file_blocks(edited, "README.md", {"data/p/claims.json": "abc123"})
    assert problems == ["README.md: the generated results table was edited by hand (digest differs)"]
    stale = check_file_blocks(block, "README.md", {"data/p/claims.json": "999"})
    assert stale == ["README.md: made from data/p/claims.json md5 abc123, but dvc.lock records 999"]
