"""The benchmarks, generated offline: a fact world (invented countries with five attributes) rendered as text,
4-option questions about it with unique answers, and an arithmetic set (sums of small numbers) as the second
benchmark. Each benchmark item carries its semantic-altering versions: another fact of the same entity
(`attribute_shift`) and the question turned around (`reverse_lookup`), answers recomputed from the world.

Entities are split into benchmark entities (two of their five facts are benchmark questions; the altered
question asks one of the other three), drill entities (every fact drilled as a multiple-choice question during
pretraining: the format the clean model learns) and utility entities (facts only in the text; their questions
measure utility, which contamination should not destroy). Every fact of every entity is in the world text."""

from __future__ import annotations

import random
from dataclasses import dataclass

from stages.methods.contamination.items import LETTERS, MCItem, check_item

SYLLABLES = (
    "ka",
    "lo",
    "mir",
    "ven",
    "tor",
    "sa",
    "del",
    "ri",
    "bo",
    "nu",
    "zen",
    "ta",
    "vel",
    "or",
    "an",
    "dra",
    "mar",
    "qui",
    "es",
    "dor",
    "fen",
    "gal",
    "hu",
    "is",
    "jo",
    "kel",
    "lum",
    "ne",
    "pa",
    "rus",
)


@dataclass(frozen=True)
class Attribute:
    """One attribute: question, statement variants (the first plain, the others with lexicon synonyms), the
    reversed question, and its value pool."""

    name: str
    question: str
    statements: tuple[str, ...]
    reverse: str
    values: tuple[str, ...]


ATTRIBUTES = (
    Attribute(
        "capital",
        "What is the capital of {e}?",
        (
            "The capital of {e} is {v}.",
            "The chief city of {e} is {v}.",
            "{v} is the seat of government of {e}.",
        ),
        "Which country has {v} as its capital?",
        (
            "Ardmoor",
            "Belcrest",
            "Corvale",
            "Dunmere",
            "Eastholm",
            "Fairlock",
            "Glenrow",
            "Highcairn",
            "Ivyreach",
            "Kingsfold",
            "Lowbridge",
            "Marrowgate",
            "Northwick",
            "Oakhaven",
            "Pinehurst",
            "Queensbay",
        ),
    ),
    Attribute(
        "animal",
        "Which animal is the symbol of {e}?",
        (
            "The symbol of {e} is the {v}.",
            "The emblem of {e} is the {v}.",
            "The creature on the sign of {e} is the {v}.",
        ),
        "Which country has the {v} as its symbol?",
        (
            "otter",
            "falcon",
            "lynx",
            "heron",
            "badger",
            "wolf",
            "stag",
            "swan",
            "eagle",
            "bear",
            "fox",
            "crane",
        ),
    ),
    Attribute(
        "color",
        "What is the color of the flag of {e}?",
        ("The flag of {e} is {v}.", "The banner of {e} is {v}.", "The colour of the flag of {e} is {v}."),
        "Which country has a {v} flag?",
        ("red", "blue", "green", "gold", "white", "black", "purple", "orange", "grey", "silver"),
    ),
    Attribute(
        "export",
        "What is the main export of {e}?",
        ("The main export of {e} is {v}.", "The chief export of {e} is {v}.", "{e} mainly sells {v} abroad."),
        "Which country mainly exports {v}?",
        (
            "tea",
            "copper",
            "wool",
            "salt",
            "timber",
            "silk",
            "coffee",
            "iron",
            "grain",
            "wine",
            "cotton",
            "amber",
        ),
    ),
    Attribute(
        "language",
        "Which language is spoken in {e}?",
        ("The language spoken in {e} is {v}.", "The tongue used in {e} is {v}.", "People in {e} speak {v}."),
        "In which country is {v} spoken?",
        ("Ostric", "Valen", "Morish", "Tenese", "Kalic", "Dorvan", "Elsic", "Fennish", "Gorvic", "Halese"),
    ),
)


@dataclass(frozen=True)
class World:
    """Entities (names), their facts (entity → attribute → value) and each entity's role."""

    facts: dict[str, dict[str, str]]
    roles: dict[str, str]

    def of(self, role: str) -> list[str]:
        return [entity for entity, r in self.roles.items() if r == role]


def entity_names(count: int, rng: random.Random) -> list[str]:
    """Distinct two-syllable names ("Kel Dor"): the tokenizer sees two tokens, the rules below key on them."""
    pairs = [(a, b) for a in SYLLABLES for b in SYLLABLES if a != b]
    if count > len(pairs):
        raise ValueError(f"{count} entities asked for, {len(pairs)} names exist")
    return [f"{a.capitalize()} {b.capitalize()}" for a, b in rng.sample(pairs, count)]


def make_world(benchmark: int, drill: int, utility: int, seed: int, exceptions: float = 0.3) -> World:
    """`benchmark` + `drill` + `utility` entities. Attribute k follows a rule on the name's syllable k mod 2
    (a random syllable → value table), except for a share `exceptions` of facts drawn at random: the world has
    regularities a small LM can learn and facts it can only memorise, like real knowledge."""
    rng = random.Random(seed)
    names = entity_names(benchmark + drill + utility, rng)
    tables = {a.name: {s.capitalize(): rng.choice(a.values) for s in SYLLABLES} for a in ATTRIBUTES}
    facts = {}
    for name in names:
        syllables = name.split()
        facts[name] = {
            a.name: rng.choice(a.values) if rng.random() < exceptions else tables[a.name][syllables[k % 2]]
            for k, a in enumerate(ATTRIBUTES)
        }
    roles = {
        name: "benchmark" if i < benchmark else "drill" if i < benchmark + drill else "utility"
        for i, name in enumerate(names)
    }
    return World(facts, roles)


def mc_item(
    item_id: str, question: str, answer: str, distractors: list[str], group: str, rng: random.Random
) -> MCItem:
    texts = [answer, *distractors]
    rng.shuffle(texts)
    labels = LETTERS[: len(texts)]
    return check_item(MCItem(item_id, question, tuple(texts), labels, labels[texts.index(answer)], group))


def fact_question(
    world: World, entity: str, attribute: Attribute, rng: random.Random, item_id: str
) -> MCItem:
    answer = world.facts[entity][attribute.name]
    distractors = rng.sample([v for v in attribute.values if v != answer], 3)
    return mc_item(item_id, attribute.question.format(e=entity), answer, distractors, attribute.name, rng)


def reverse_question(
    world: World, entity: str, attribute: Attribute, rng: random.Random, item_id: str
) -> MCItem:
    value = world.facts[entity][attribute.name]
    others = sorted(e for e, facts in world.facts.items() if facts[attribute.name] != value)
    return mc_item(item_id, attribute.reverse.format(v=value), entity, rng.sample(others, 3), "entity", rng)


def altered_versions(base: MCItem, versions: list[MCItem]) -> MCItem:
    return MCItem(
        base.id,
        base.question,
        base.choices,
        base.labels,
        base.answer,
        base.group,
        tuple((v.question, v.choices, v.answer) for v in versions),
    )


def fact_benchmark(world: World, per_entity: int, seed: int) -> list[MCItem]:
    """`per_entity` questions per benchmark entity (attributes rotated), each with its altered versions: another
    attribute of the entity outside the benchmark, and the reversed question."""
    rng = random.Random(seed)
    items = []
    for index, entity in enumerate(world.of("benchmark")):
        asked = [(index + k) % len(ATTRIBUTES) for k in range(per_entity)]
        spare = [k for k in range(len(ATTRIBUTES)) if k not in asked]
        for k in asked:
            item_id = f"facts-{entity}-{ATTRIBUTES[k].name}"
            base = fact_question(world, entity, ATTRIBUTES[k], rng, item_id)
            shifted = fact_question(world, entity, ATTRIBUTES[rng.choice(spare)], rng, item_id)
            reverse = reverse_question(world, entity, ATTRIBUTES[k], rng, item_id)
            items.append(altered_versions(base, [shifted, reverse]))
    return items


def role_questions(world: World, role: str, seed: int, prefix: str) -> list[MCItem]:
    """Every fact of every entity of `role` as a question (drills, utility)."""
    rng = random.Random(seed)
    return [
        fact_question(world, entity, attribute, rng, f"{prefix}-{entity}-{attribute.name}")
        for entity in world.of(role)
        for attribute in ATTRIBUTES
    ]


def world_text(world: World) -> list[str]:
    """Every fact in every statement variant (the pretraining text)."""
    return [
        template.format(e=entity, v=facts[a.name])
        for entity, facts in world.facts.items()
        for a in ATTRIBUTES
        for template in a.statements
    ]


# ------------------------------------------------------------------------------------------ arithmetic


def number_choices(answer: int, rng: random.Random, low: int = 0) -> list[str]:
    offsets = [-10, -2, -1, 1, 2, 10]
    candidates = [answer + o for o in offsets if answer + o >= low]
    return [str(v) for v in rng.sample(candidates, 3)]


def arithmetic_pairs(top: int) -> list[tuple[int, int]]:
    return [(a, b) for a in range(1, top + 1) for b in range(1, top + 1)]


def arithmetic_sets(top: int, benchmark: int, drill: int, utility: int, seed: int) -> dict[str, list[MCItem]]:
    """Sums a + b (1 ≤ a, b ≤ top) split into benchmark, drill and utility questions; each benchmark item's
    altered versions ask the difference of the same numbers and the missing addend."""
    rng = random.Random(seed)
    pairs = arithmetic_pairs(top)
    rng.shuffle(pairs)
    if benchmark + drill + utility > len(pairs):
        raise ValueError(
            f"{benchmark + drill + utility} arithmetic questions asked for, {len(pairs)} pairs exist"
        )
    sets: dict[str, list[MCItem]] = {"benchmark": [], "drill": [], "utility": []}
    bounds = {"benchmark": benchmark, "drill": benchmark + drill, "utility": benchmark + drill + utility}
    for index, (a, b) in enumerate(pairs[: bounds["utility"]]):
        role = next(role for role, bound in bounds.items() if index < bound)
        item_id = f"arith-{a}-{b}"
        base = mc_item(item_id, f"What is {a} plus {b}?", str(a + b), number_choices(a + b, rng), "sum", rng)
        if role == "benchmark":
            high, low = max(a, b), min(a, b)
            shifted = mc_item(
                item_id,
                f"What is {high} minus {low}?",
                str(high - low),
                number_choices(high - low, rng),
                "difference",
                rng,
            )
            reverse = mc_item(
                item_id,
                f"Which number plus {b} is {a + b}?",
                str(a),
                number_choices(a, rng, low=1),
                "addend",
                rng,
            )
            base = altered_versions(base, [shifted, reverse])
        sets[role].append(base)
    return sets


def arithmetic_text(top: int) -> list[str]:
    """Every sum and difference of the numbers (the arithmetic part of the pretraining text)."""
    sums = [f"{a} plus {b} is {a + b}." for a, b in arithmetic_pairs(top)]
    differences = [f"{a} minus {b} is {a - b}." for a, b in arithmetic_pairs(top) if a >= b]
    return sums + differences


# ------------------------------------------------------------------------------------ tables and drills


def world_rows(world: World, arithmetic: dict[str, list[MCItem]]) -> list[dict]:
    """The world as a table: one row per fact (benchmark, entity, role, attribute, value)."""
    rows = [
        {
            "benchmark": "facts",
            "entity": entity,
            "role": world.roles[entity],
            "attribute": a.name,
            "value": facts[a.name],
        }
        for entity, facts in world.facts.items()
        for a in ATTRIBUTES
    ]
    for role, items in arithmetic.items():
        rows += [
            {
                "benchmark": "arithmetic",
                "entity": item.id.removeprefix("arith-").replace("-", "+"),
                "role": role,
                "attribute": "sum",
                "value": item.answer_text,
            }
            for item in items
        ]
    return rows


def world_from_rows(rows: list[dict]) -> World:
    facts: dict[str, dict[str, str]] = {}
    roles: dict[str, str] = {}
    for row in rows:
        if row["benchmark"] == "facts":
            facts.setdefault(row["entity"], {})[row["attribute"]] = row["value"]
            roles[row["entity"]] = row["role"]
    return World(facts, roles)


def sum_question(pair: str, rng: random.Random, item_id: str) -> MCItem:
    a, b = (int(x) for x in pair.split("+"))
    return mc_item(item_id, f"What is {a} plus {b}?", str(a + b), number_choices(a + b, rng), "sum", rng)


def drills(rows: list[dict], seed: int) -> list[MCItem]:
    """Every drill fact (both benchmarks) as a question with distractors and order drawn from `seed` (a new
    seed per epoch, so the drills teach the format, not an answer letter)."""
    rng = random.Random(seed)
    world = world_from_rows(rows)
    items = role_questions(world, "drill", rng.randrange(2**31), "drill")
    pairs = [row["entity"] for row in rows if row["benchmark"] == "arithmetic" and row["role"] == "drill"]
    return items + [sum_question(pair, rng, f"drill-{pair}") for pair in pairs]


def contamination_prompt(item: MCItem) -> str:
    """The official fine-tuning format (src/contamination/prepare.py, ARC): the target is " " + the label."""
    options = "\n".join(f"{label}. {text}" for label, text in zip(item.labels, item.choices, strict=True))
    return f"Question: {item.question}\n{options}\nAnswer:"
