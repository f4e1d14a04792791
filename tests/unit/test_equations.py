"""The equations method package: safe parsing, the problem layout, LSR-Transform and LSR-Synth generators,
the metrics and the searchers' interface."""

from __future__ import annotations

import numpy as np
import pytest
import sympy

from stages.methods.equations.feynman import FORMULAS, lsr_transform, original_samples, pivot_candidates
from stages.methods.equations.metrics import accuracy_tau, nmse, parameterise, symbolic_accuracy
from stages.methods.equations.parsing import ExpressionError, UnsafeExpressionError, parse_expression
from stages.methods.equations.problem import (
    Problem,
    ProblemError,
    evaluate_expression,
    read_problem,
    write_problem,
)
from stages.methods.equations.proposers import Context, GrammarProposer, split_terms
from stages.methods.equations.searchers import (
    DataBlindSearcher,
    GPLearnSearcher,
    LLMSRSearcher,
    OracleSearcher,
    PySRSearcher,
    build_searcher,
    gplearn_to_sympy,
)
from stages.methods.equations.synth import DOMAINS, synth_problem

FORMULA = {f.name: f for f in FORMULAS}


def small_problem(expression: str = "3*m*g*z", n: int = 200, seed: int = 0) -> Problem:
    rng = np.random.default_rng(seed)
    X = rng.uniform(1, 5, size=(n, 3))
    y = evaluate_expression(parse_expression(expression, ["m", "g", "z"]), ["m", "g", "z"], X)
    rows = np.column_stack([y, X])
    return Problem(
        "toy",
        ["U", "m", "g", "z"],
        ["energy", "mass", "g", "height"],
        ["O", "V", "V", "V"],
        expression,
        {"train": rows[: n // 2], "test": rows[n // 2 :]},
    )


# ------------------------------------------------------------------------------------------------ parsing


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('true')",
        "x.__class__",
        "(lambda: 1)()",
        "x[0]",
        "().__class__.__bases__",
        "_x + 1",
    ],
)
def test_unsafe_strings_are_refused_by_name(text):
    with pytest.raises(UnsafeExpressionError):
        parse_expression(text, ["x"])


@pytest.mark.parametrize("text", ["open(x)", "y + 1", "'a'", "x +", "sin(x, x)", "x if x else 1", ""])
def test_unreadable_strings_are_refused(text):
    with pytest.raises(ExpressionError):
        parse_expression(text, ["x"])


def test_parse_builds_sympy_without_eval():
    x, y = sympy.symbols("x y", real=True)
    assert parse_expression("2*x^2 + sqrt(y) - exp(-x)", ["x", "y"]) == 2 * x**2 + sympy.sqrt(y) - sympy.exp(
        -x
    )
    assert parse_expression("pi*x", ["x"]) == sympy.pi * x


# ------------------------------------------------------------------------------------------ problem layout


def test_problem_roundtrip_and_column_zero_is_y(tmp_path):
    problem = small_problem()
    write_problem(problem, tmp_path / "toy")
    back = read_problem(tmp_path / "toy")
    assert back.symbols == problem.symbols and back.expression == problem.expression
    np.testing.assert_array_equal(back.samples["train"], problem.samples["train"])
    X, y = back.split("test")
    np.testing.assert_allclose(y, 3 * X[:, 0] * X[:, 1] * X[:, 2])


def test_problem_definition_is_checked():
    with pytest.raises(ProblemError, match="symbol_properties"):
        Problem("p", ["y", "x"], ["y", "x"], ["V", "V"], "x")
    with pytest.raises(ProblemError, match=r"non-inputs|unknown name"):
        Problem("p", ["y", "x"], ["y", "x"], ["O", "V"], "x + w")


# ----------------------------------------------------------------------------------------- LSR-Transform


@pytest.mark.parametrize("name", ["I.12.2", "I.10.7", "I.37.4", "I.26.2", "II.38.14"])
def test_transformed_equation_equals_its_original_on_sampled_points(name):
    formula = FORMULA[name]
    rows = original_samples(formula, 400, np.random.default_rng(1))
    old = [formula.output, *formula.ranges]
    checked = 0
    for candidate in pivot_candidates(formula):
        inputs = [n for n in old if n != candidate.pivot]
        predicted = evaluate_expression(candidate.expression, inputs, rows[:, [old.index(n) for n in inputs]])
        valid = np.isfinite(predicted) & np.isclose(predicted, rows[:, old.index(candidate.pivot)], rtol=1e-6)
        if valid.sum() > 50:  # the branch whose valid domain holds the samples reproduces the pivot
            checked += 1
    assert checked >= 1


def test_lsr_transform_keeps_valid_rows_and_the_complexity_range():
    originals, transformed, report = lsr_transform(
        [FORMULA[n] for n in ("I.12.2", "I.14.3", "I.37.4", "III.4.33")], 100, 50, 2, np.random.default_rng(0)
    )
    assert len(originals) == 4 and report.kept == len(transformed) > 0
    assert not any(p.source == "feynman_III.4.33" for p in transformed)  # transcendental pivot: not analytic
    for problem in transformed:
        X, y = problem.split("train")
        np.testing.assert_allclose(
            evaluate_expression(problem.sympy_expression, problem.inputs, X), y, rtol=1e-6
        )


# ------------------------------------------------------------------------------------------- LSR-Synth


@pytest.mark.parametrize("domain", list(DOMAINS))
def test_synth_problems_solve_and_hold_out_the_last_tenth(domain):
    problem = synth_problem(domain, 0, 300, 0.8, np.random.default_rng(3))
    ood = problem.samples["ood_test"]
    assert len(ood) == 30 and sum(len(v) for v in problem.samples.values()) == 300
    column = problem.symbols.index("T" if domain == "materials" else "t")
    inside = np.vstack([problem.samples["train"], problem.samples["test"]])
    assert inside[:, column].max() <= ood[:, column].min()
    for split in problem.samples:  # y is the ground truth at the sampled states
        X, y = problem.split(split)
        np.testing.assert_allclose(
            evaluate_expression(problem.sympy_expression, problem.inputs, X), y, rtol=1e-9
        )


def test_ode_trajectory_satisfies_its_equation():
    problem = synth_problem("chemistry", 0, 2000, 0.8, np.random.default_rng(0))
    rows = np.vstack([problem.samples["train"], problem.samples["test"], problem.samples["ood_test"]])
    rows = rows[np.argsort(rows[:, 1])]
    t, a, rate = rows[:, 1], rows[:, 2], rows[:, 0]
    np.testing.assert_allclose(np.gradient(a, t)[5:-5], rate[5:-5], atol=5e-3)  # dA/dt of the solved path


# ------------------------------------------------------------------------------------------------ metrics


def test_nmse_drops_nan_predictions_and_acc_is_a_max_relative_error():
    y = np.array([1.0, 2.0, 3.0, 4.0])
    assert nmse(y, y) == 0.0 and nmse(y, np.array([1.0, np.nan, 3.0, 4.0])) == 0.0
    assert nmse(y, np.full(4, y.mean())) == pytest.approx(1.0)
    assert nmse(y, np.full(4, np.nan)) == float("inf")
    assert accuracy_tau(y, y * 1.09) and not accuracy_tau(y, y * np.array([1, 1, 1, 1.11]))
    assert not accuracy_tau(y, np.array([1.0, np.nan, 3.0, 4.0]))


def test_the_true_expression_scores_nmse_0_acc_1_sa_1():
    problem = small_problem()
    result = OracleSearcher().search(problem, 0)
    X, y = problem.split("test")
    assert nmse(y, result.predict(X)) == 0 and accuracy_tau(y, result.predict(X))
    assert symbolic_accuracy(result.expression, problem, np.random.default_rng(0)).equivalent


def test_a_constant_rescaled_form_is_equivalent_and_a_wrong_one_is_not():
    problem = small_problem()
    m, g, z = sympy.symbols("m g z", real=True)
    rng = np.random.default_rng(0)
    judged = symbolic_accuracy(sympy.Float(2.0) * m * g * z + sympy.Float(0.5), problem, rng)
    assert judged.equivalent, judged
    assert not symbolic_accuracy(sympy.Float(2.0) * m * g + z, problem, rng).equivalent
    assert not symbolic_accuracy(sympy.Float(3.0) * m * g * z**2, problem, rng).equivalent  # exponent fixed


def test_parameterise_frees_literals_but_not_integer_exponents():
    x = sympy.Symbol("x", real=True)
    template, params, values = parameterise(sympy.Float(2.5) * x**2 + 3)
    assert len(params) == 2 and sorted(values) == [2.5, 3.0] and template.has(x**2)


# ---------------------------------------------------------------------------------------------- searchers


def test_searchers_share_one_interface_and_are_deterministic():
    problem = small_problem("m*g + 2*z")
    for searcher in (
        LLMSRSearcher(proposals=12),
        DataBlindSearcher(),
        GPLearnSearcher(population_size=50, generations=2),
    ):
        first, second = searcher.search(problem, 7), searcher.search(problem, 7)
        assert str(first.expression) == str(second.expression)
        X, _ = problem.split("test")
        assert first.predict(X).shape == (len(X),)


def test_llmsr_skeletons_have_at_most_ten_constants():
    proposer = GrammarProposer(max_terms=20)
    rng = np.random.default_rng(0)
    context = Context(("x", "y"))
    for text in proposer.propose(context, [], 20, rng) + proposer.propose(
        context, ["cst0*x + cst1"], 20, rng
    ):
        assert len(set(__import__("re").findall(r"cst\d+", text))) <= 10
        assert split_terms(text)


def test_loop_beats_blind_draws_on_a_simple_law():
    problem = small_problem("m*g + 2*z")
    X, y = problem.split("test")
    loop = LLMSRSearcher(proposals=48).search(problem, 1)
    blind = DataBlindSearcher().search(problem, 1)
    assert nmse(y, loop.predict(X)) <= nmse(y, blind.predict(X))


def test_gplearn_program_converts_to_sympy():
    from gplearn.functions import add2, mul2

    x, y = sympy.symbols("x y", real=True)
    assert gplearn_to_sympy([add2, mul2, 0, 1, 2.0], ["x", "y"]) == x * y + 2.0


def test_pysr_is_skipped_with_a_reason_without_julia():
    result = PySRSearcher().search(small_problem(), 0)
    assert result.skipped or result.expression is not None


def test_unknown_searcher_or_option_is_named():
    with pytest.raises(ValueError, match="unknown searcher 'nope'"):
        build_searcher("nope")
    with pytest.raises(ValueError, match="gplearn"):
        build_searcher("gplearn", {"populations": 3})


# ---------------------------------------------------------------------------------------- LM proposers


def test_extract_skeleton_reads_llmsr_params_and_refuses_unsafe_lines():
    from stages.methods.equations.lm_proposers import extract_skeleton

    context = Context(("x", "t"))
    assert extract_skeleton("Sure!\ny = params[0]*x + params[1]*t", context) == "cst0*x + cst1*t"
    assert extract_skeleton("return cst0*exp(-cst1*t)", context) == "cst0*exp(-cst1*t)"
    assert extract_skeleton("__import__('os').system('x')\nx.__class__", context) == ""


def test_tiny_lm_proposer_plugs_into_the_loop():
    from stages.methods.equations.lm_proposers import LMProposer

    proposer = LMProposer(source="tiny", max_new_tokens=8, threads=1)
    texts = proposer.propose(Context(("m", "g", "z")), ["cst0*m"], 3, np.random.default_rng(0))
    assert len(texts) == 3 and all(isinstance(t, str) for t in texts)
    result = LLMSRSearcher(proposals=5, proposer=proposer).search(small_problem(), 0)
    assert result.expression is not None  # unparsable answers are spent proposals; the seed skeleton remains


def test_endpoint_proposer_posts_an_openai_chat_request():
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    from stages.methods.equations.lm_proposers import EndpointProposer

    seen = {}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            seen.update(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            choices = [{"message": {"content": "cst0*m*g*z"}}] * seen["n"]
            payload = json.dumps({"choices": choices}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        proposer = EndpointProposer(model="m", base_url=f"http://127.0.0.1:{server.server_port}/v1")
        texts = proposer.propose(Context(("m", "g", "z")), [], 2, np.random.default_rng(0))
    finally:
        server.shutdown()
    assert texts == ["cst0*m*g*z"] * 2 and seen["model"] == "m" and seen["n"] == 2
