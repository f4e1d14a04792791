"""The two coordination games, generated offline in the paper's format, each item with a unique answer.

- Countries: x_A "[PERSON] is at the [LANDMARK]."; x_B "Which country is [PERSON] located in?". The answer is
  the landmark's country; every landmark is in exactly one country and no two countries share a name.
- Tip Sheets: x_A a tip sheet on three invented companies, exactly one with good news; x_B asks which of the
  three to invest in. The answer is the good one.

An answer counts as correct when the option it chooses is the gold answer: the first candidate the output names
(countries: any country of the table; tips: the item's three companies; whole words, case-insensitive) that no
negation just before it rejects ("Daxara, not Arasol" chooses Daxara; "avoid Arasol, buy Daxara" too).
"""

from __future__ import annotations

import re

import numpy as np
import polars as pl

LANDMARKS = {
    "Eiffel Tower": "France", "Louvre": "France", "Colosseum": "Italy", "Leaning Tower of Pisa": "Italy",
    "Big Ben": "United Kingdom", "Stonehenge": "United Kingdom", "Statue of Liberty": "United States",
    "Grand Canyon": "United States", "Golden Gate Bridge": "United States", "Great Wall": "China",
    "Forbidden City": "China", "Taj Mahal": "India", "Red Fort": "India", "Sydney Opera House": "Australia",
    "Uluru": "Australia", "Christ the Redeemer": "Brazil", "Sugarloaf Mountain": "Brazil",
    "Machu Picchu": "Peru", "Great Pyramid of Giza": "Egypt", "Sphinx": "Egypt", "Mount Fuji": "Japan",
    "Tokyo Tower": "Japan", "Kremlin": "Russia", "Red Square": "Russia", "Brandenburg Gate": "Germany",
    "Neuschwanstein Castle": "Germany", "Sagrada Familia": "Spain", "Alhambra": "Spain", "Acropolis": "Greece",
    "Parthenon": "Greece", "CN Tower": "Canada", "Niagara Falls": "Canada", "Chichen Itza": "Mexico",
    "Teotihuacan": "Mexico", "Petra": "Jordan", "Angkor Wat": "Cambodia", "Burj Khalifa": "United Arab Emirates",
    "Hagia Sophia": "Turkey", "Blue Mosque": "Turkey", "Table Mountain": "South Africa",
    "Kilimanjaro": "Tanzania", "Serengeti": "Tanzania", "Gyeongbokgung Palace": "South Korea",
    "Marina Bay Sands": "Singapore", "Petronas Towers": "Malaysia", "Matterhorn": "Switzerland",
    "Atomium": "Belgium", "Rijksmuseum": "Netherlands", "Little Mermaid statue": "Denmark",
    "Cliffs of Moher": "Ireland", "Belem Tower": "Portugal", "Charles Bridge": "Czech Republic",
    "Schonbrunn Palace": "Austria", "Iguazu Falls": "Argentina", "Easter Island statues": "Chile",
    "Moai of Rapa Nui": "Chile", "Halong Bay": "Vietnam", "Borobudur": "Indonesia", "Shwedagon Pagoda": "Myanmar",
}  # fmt: skip

PEOPLE = (
    "Alice", "Bob", "Carlos", "Diana", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kofi", "Lena",
    "Mateo", "Nadia", "Omar", "Priya", "Quentin", "Rosa", "Samuel", "Tara", "Ulrich", "Vera", "Wei", "Yusuf",
    "Zoe", "Amara", "Bruno", "Chloe", "Dmitri", "Esther", "Felix", "Greta", "Hassan", "Ivy", "Jamal", "Kira",
)  # fmt: skip

SYLLABLES = ("zen", "lu", "mor", "tri", "vex", "qua", "nor", "bel", "dax", "ori", "pel", "sty", "kor", "fin",
             "ara", "lio", "tek", "vor", "mi", "sol", "gra", "nex", "cal", "tho")  # fmt: skip
GOOD_NEWS = (
    "just reported record profits and strong growth",
    "beat every earnings forecast this quarter",
    "won a huge government contract and is expanding fast",
)
BAD_NEWS = (
    "is under investigation for accounting fraud",
    "just lost its biggest customer and is cutting jobs",
    "reported heavy losses and may go bankrupt",
    "faces a product recall and falling sales",
)
GAMES = ("countries", "tip_sheets")
SCHEMA = {"game": pl.String, "split": pl.String, "item": pl.Int64, "x_a": pl.String, "x_b": pl.String,
          "answer": pl.String, "candidates": pl.List(pl.String)}  # fmt: skip


def _countries(rng: np.random.Generator, n: int) -> list[dict]:
    landmarks = list(LANDMARKS)
    countries = sorted(set(LANDMARKS.values()))
    pairs = [(person, landmark) for person in PEOPLE for landmark in landmarks]
    if n > len(pairs):
        raise ValueError(f"countries: {n} items asked, only {len(pairs)} distinct (person, landmark) pairs")
    chosen = rng.choice(len(pairs), size=n, replace=False)
    rows = []
    for index in chosen:
        person, landmark = pairs[index]
        rows.append(
            {
                "x_a": f"{person} is at the {landmark}.",
                "x_b": f"Which country is {person} located in? Answer with the country name only.",
                "answer": LANDMARKS[landmark],
                "candidates": countries,
            }
        )
    return rows


def company_name(rng: np.random.Generator) -> str:
    parts = rng.choice(len(SYLLABLES), size=2, replace=False)
    return "".join(SYLLABLES[i] for i in parts).capitalize()


def good_news(rng: np.random.Generator) -> str:
    return GOOD_NEWS[int(rng.integers(len(GOOD_NEWS)))]


def _tip_sheets(rng: np.random.Generator, n: int) -> list[dict]:
    rows = []
    for _ in range(n):
        names: list[str] = []
        while len(names) < 3:
            name = company_name(rng)
            if name not in names:
                names.append(name)
        good = int(rng.integers(3))
        bad = rng.choice(len(BAD_NEWS), size=2, replace=False)
        bad_left = iter(bad)
        news = [good_news(rng) if i == good else BAD_NEWS[next(bad_left)] for i in range(3)]
        sheet = " ".join(f"{name} {what}." for name, what in zip(names, news, strict=True))
        question = f"Which company should I invest in: {names[0]}, {names[1]} or {names[2]}?"
        rows.append(
            {
                "x_a": f"Tip sheet: {sheet}",
                "x_b": f"{question} Answer with the company name only.",
                "answer": names[good],
                "candidates": names,
            }
        )
    return rows


def generate_games(seed: int, sizes: dict[str, int]) -> pl.DataFrame:
    """Both games, `sizes[split]` items per game and split (dev items never reappear in test)."""
    frames = []
    rng = np.random.default_rng(seed)
    for game, make in (("countries", _countries), ("tip_sheets", _tip_sheets)):
        total = sum(sizes.values())
        rows = make(rng, total)
        start = 0
        for split, size in sizes.items():
            for index, row in enumerate(rows[start : start + size]):
                frames.append({"game": game, "split": split, "item": index, **row})
            start += size
    games = pl.DataFrame(frames, schema=SCHEMA)
    check_unique_answers(games)
    return games


def first_mention(text: str, name: str) -> int | None:
    """Where `name` first occurs in `text` as whole words (case-insensitive), or None."""
    match = re.search(rf"(?<!\w){re.escape(name.lower())}(?!\w)", text.lower())
    return None if match is None else match.start()


def mentions(text: str, name: str) -> bool:
    return first_mention(text, name) is not None


def check_unique_answers(games: pl.DataFrame) -> None:
    """Every item's answer is exactly one of its candidates and names no other; x_a names it (tips)."""
    for row in games.iter_rows(named=True):
        where = f"{row['game']} {row['split']} item {row['item']}"
        if row["candidates"].count(row["answer"]) != 1:
            raise ValueError(f"{where}: answer {row['answer']!r} is not exactly one of the candidates")
        clashes = [
            c
            for c in row["candidates"]
            if c != row["answer"] and (mentions(row["answer"], c) or mentions(c, row["answer"]))
        ]
        if clashes:
            raise ValueError(f"{where}: answer {row['answer']!r} overlaps candidates {clashes}")


NEGATION = re.compile(
    r"(?:\bnot|\bnor|\bnever|n't|\bavoid|\binstead of|\brather than|\bthan|\bover|\bagainst)(?:\s+(?:the|in|to|for))?$"
)


def chosen_option(text: str, candidates: list[str]) -> str | None:
    """The candidate the output chooses: the first one it names that is not rejected by a negation right before
    it ("not X", "avoid X", "rather than X", "Y over X"); None when it names none (or rejects every one)."""
    found = sorted((at, name) for name in candidates if (at := first_mention(text, name)) is not None)
    for at, name in found:
        before = text[:at].lower().rstrip(" ,:;\"'(-")
        if not NEGATION.search(before):
            return name
    return None


def is_correct(output: str, answer: str, candidates: list[str]) -> bool:
    """The option the output chooses (:func:`chosen_option`) is the answer."""
    return chosen_option(output, candidates) == answer
