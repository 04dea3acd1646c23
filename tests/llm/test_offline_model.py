"""The offline mutation model: its edits always apply, touch only numbers, faults work, and
calls reach a responder by their purpose (request metadata), never by text in the prompt."""

from __future__ import annotations

import ast
import io
import json
import math
import random
import subprocess
import sys
import tokenize
from typing import Any

import httpx
import pytest

from harness.components.proposer import DiffProposer, FullRewriteProposer
from harness.core.records import Program, Prompt
from harness.diffs import apply_diff, check_syntax, extract_code
from harness.llm import LLMConfig, open_llm, resolve_llm_config, start_offline_server
from harness.llm.config import PURPOSE_HEADER, FaultRates
from harness.llm.offline import (
    HEADER,
    OfflineRequest,
    Responder,
    answer,
    current_program,
    default_responders,
    for_purpose,
)
from harness.llm.offline.faults import RUNTIME_LINE
from harness.llm.offline.mutation import NumberLiteral, find_literals, mutate, perturb

PARAMS = '''"""Tunable parameters; the docstring mentions 3.5 and must not change."""
import math

# EVOLVE-BLOCK-START
ALPHA = 0.5
BETA = 1.25e-3
STEPS = 40
label = "run 7 with 0.9"  # a comment with 2.0
weights = [0.1, 0.2, 0.3]


def objective(x):
    return ALPHA * x**2 - BETA * math.exp(-x) + sum(weights) / STEPS
# EVOLVE-BLOCK-END


if __name__ == "__main__":
    print(objective(1.0), f"{ALPHA:.3f} at 12")
'''

DUPLICATES = """def a():
    scale = 0.5
    return scale


def b():
    scale = 0.5
    return scale


def c():
    scale = 0.5
    return scale
"""

PLAIN = """import numpy as np


def solve(n=26):
    radius = 0.07
    margin = 0.01
    grid = np.linspace(margin, 1 - margin, 6)
    return [(x, y, radius) for x in grid for y in grid][:n]
"""

OUTSIDE = """threshold = 0.5  # outside the block: never a candidate while the block has numbers
# EVOLVE-BLOCK-START
threshold = 0.5
# EVOLVE-BLOCK-END
"""

PROGRAMS = [PARAMS, DUPLICATES, PLAIN, OUTSIDE]
DIFF_SYSTEM = "Reply with blocks:\n<<<<<<< SEARCH\nold lines\n=======\nnew lines\n>>>>>>> REPLACE\n"


def request(program: str, seed: int | None, *, diff: bool = True) -> OfflineRequest:
    user = f"Earlier:\n```python\nx = 1\n```\nCurrent program:\n```python\n{program}```\n"
    system = DIFF_SYSTEM if diff else "Reply with the whole program."
    return OfflineRequest("galapagos-offline", (("system", system), ("user", user)), seed)


def reply(program: str, seed: int | None, *, diff: bool = True, **faults: float) -> str:
    return answer(
        request(program, seed, diff=diff),
        seed=0,
        faults=FaultRates(**faults),
        responders=default_responders(),
    )


def tokens(code: str) -> list[tuple[int, str]]:
    return [
        (t.type, t.string)
        for t in tokenize.generate_tokens(io.StringIO(code).readline)
        if t.type not in (tokenize.NL, tokenize.NEWLINE)
    ]


def only_numbers_changed(parent: str, child: str) -> bool:
    before, after = tokens(parent), tokens(child)
    if len(before) != len(after):
        return False
    changed = [(b, a) for b, a in zip(before, after, strict=True) if b != a]
    return bool(changed) and all(
        b[0] == a[0] == tokenize.NUMBER
        and (("." in b[1] or "e" in b[1]) == ("." in a[1] or "e" in a[1]))
        for b, a in changed
    )


@pytest.mark.parametrize("program", PROGRAMS, ids=["params", "duplicates", "plain", "outside"])
def test_diffs_always_apply_and_change_only_numeric_literals(program: str) -> None:
    for seed in range(40):
        text = reply(program, seed)
        assert text.startswith(HEADER)
        result = apply_diff(program, text)
        assert result.code is not None, (seed, result.error)
        assert check_syntax(result.code) == ""
        assert only_numbers_changed(program, result.code), seed


def test_rewrites_change_only_numeric_literals() -> None:
    for seed in range(20):
        child = extract_code(reply(PARAMS, seed, diff=False))
        assert only_numbers_changed(PARAMS, child + "\n"), seed


def test_numbers_in_strings_comments_and_outside_the_block_are_never_touched() -> None:
    for seed in range(40):
        child = apply_diff(PARAMS, reply(PARAMS, seed)).code
        assert '"run 7 with 0.9"  # a comment with 2.0' in child
        assert "mentions 3.5" in child and 'print(objective(1.0), f"{ALPHA:.3f} at 12")' in child
        outside = apply_diff(OUTSIDE, reply(OUTSIDE, seed)).code
        assert outside.startswith("threshold = 0.5  #") and outside != OUTSIDE


def described(text: str) -> dict[int, list[tuple[str, str]]]:
    """The edits the answer's header announces: {0-based line: [(old, new), …]}."""
    header = next(line for line in text.split("\n") if line.startswith("Perturbed"))
    edits: dict[int, list[tuple[str, str]]] = {}
    for item in header.split(": ", 1)[1].rstrip(".").split("; "):
        where, change = item.split(": ")
        old, new = change.split(" -> ")
        edits.setdefault(int(where.removeprefix("line ")) - 1, []).append((old, new))
    return edits


@pytest.mark.parametrize("program", PROGRAMS, ids=["params", "duplicates", "plain", "outside"])
def test_each_edit_lands_on_the_line_it_announces(program: str) -> None:
    lines = program.split("\n")
    edited: set[int] = set()
    for seed in range(40):
        text = reply(program, seed)
        child = apply_diff(program, text).code.split("\n")
        announced = described(text)
        assert {i for i, (a, b) in enumerate(zip(lines, child, strict=True)) if a != b} == set(
            announced
        ), seed
        for index, changes in announced.items():
            if len(changes) == 1:  # (the test programs have no digit before a changed literal)
                old, new = changes[0]
                assert child[index] == lines[index].replace(old, new, 1), seed
        edited |= set(announced)
    if program is DUPLICATES:
        assert edited == {1, 6, 11}  # each of three identical lines, not only the first


def test_every_float_parameter_gets_explored_and_floats_are_preferred() -> None:
    counts: dict[str, int] = {}
    rng = random.Random(0)
    for _ in range(600):
        _, mutations = mutate(PARAMS, rng)
        for m in mutations:
            counts[m.old] = counts.get(m.old, 0) + 1
    assert {"0.5", "1.25e-3", "0.1", "0.2", "0.3"} <= counts.keys()
    assert counts.get("40", 0) < counts["0.5"]
    assert {"3.5", "0.9", "2.0", "12", "1.0"}.isdisjoint(counts)  # strings, comments, outside


def test_perturbations_are_mostly_small_sometimes_large_and_keep_kind_and_sign() -> None:
    rng = random.Random(1)
    ratios = [
        abs(math.log(float(perturb(NumberLiteral(0, 0, "2.5"), rng)) / 2.5)) for _ in range(500)
    ]
    assert sum(r < 0.15 for r in ratios) > 250
    assert any(r > 0.5 for r in ratios)
    assert all(float(perturb(NumberLiteral(0, 0, "0.0"), rng)) > 0 for _ in range(50))
    ints = [perturb(NumberLiteral(0, 0, "1"), rng) for _ in range(50)]
    assert all(t.isdigit() and int(t) >= 1 and t != "1" for t in ints)
    assert perturb(NumberLiteral(0, 0, "0"), rng) == "1"


def test_several_literals_sometimes_change_at_once() -> None:
    sizes = {len(mutate(PARAMS, random.Random(s))[1]) for s in range(200)}
    assert 1 in sizes and max(sizes) >= 3


def test_code_that_does_not_tokenize_falls_back_to_a_scan() -> None:
    found = find_literals('x = 0.5 + "1.5" # 2.5\ny = (3\n')
    assert [lit.text for lit in found] == ["0.5", "3"]


def test_answers_are_deterministic_in_seed_and_prompt() -> None:
    assert reply(PARAMS, 5) == reply(PARAMS, 5)
    assert len({reply(PARAMS, s) for s in range(10)}) > 5
    assert reply(PARAMS, None) == reply(PARAMS, None)


def test_rewrite_prompt_quoting_the_marker_inline_still_gets_a_whole_program() -> None:
    user = (
        "Attempt 1 failed: No SEARCH/REPLACE blocks found; a '<<<<<<< SEARCH' line is needed.\n"
        f"Rewrite the whole program.\n```python\n{PLAIN}```"
    )
    text = answer(
        OfflineRequest("m", (("user", user),), 3),
        seed=0,
        faults=FaultRates(),
        responders=default_responders(),
    )
    assert "```python" in text and only_numbers_changed(PLAIN, extract_code(text) + "\n")


def test_program_is_the_last_fence_that_is_not_a_diff_example() -> None:
    example = "```\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n```"
    user = f"```python\nold = 1\n```\n```python\n{PARAMS}```\nFormat:\n{example}"
    assert current_program(OfflineRequest("m", (("user", user),))) == PARAMS.rstrip("\n")
    assert "No program was found" in answer(
        OfflineRequest("m", (("user", "no code here\n<<<<<<< SEARCH\n"),)),
        seed=0,
        faults=FaultRates(),
        responders=default_responders(),
    )


def test_malformed_fault_covers_every_corruption() -> None:
    errors = set()
    for seed in range(30):
        result = apply_diff(PARAMS, reply(PARAMS, seed, malformed=1.0))
        assert result.code is None
        errors.add(
            "separator"
            if "second '=======' line" in result.error
            else "unterminated"
            if "no '>>>>>>> REPLACE'" in result.error
            else "unmatched"
            if "did not match" in result.error
            else result.error
        )
    assert errors == {"separator", "unterminated", "unmatched"}


def test_fault_rates_are_drawn_per_answer() -> None:
    faulty = sum(
        apply_diff(PARAMS, reply(PARAMS, seed, malformed=0.3)).code is None for seed in range(200)
    )
    assert 40 < faulty < 80


def parent(code: str) -> Program:
    return Program(id="p", code=code, iteration=0, metrics={}, score=0.0)


def diff_prompt(code: str) -> Prompt:
    return Prompt(system=DIFF_SYSTEM, user=f"Current program:\n```python\n{code}```\n")


async def propose_with_faults(**rates: float) -> list[Any]:
    config = LLMConfig.model_validate({"offline": {"faults": rates}})
    async with await open_llm(resolve_llm_config(config, env={}), rng=random.Random(0)) as llm:
        return [
            await DiffProposer().propose(diff_prompt(PARAMS), parent(PARAMS), llm.bind(seed=s))
            for s in range(3)
        ]


async def test_fault_injection_through_the_client_and_proposer() -> None:
    for proposal in await propose_with_faults(noop=1.0):
        assert proposal.code is None and "no-op" in proposal.error
    for proposal in await propose_with_faults(syntax_error=1.0):
        assert proposal.code is None and "SyntaxError at line" in proposal.error
    for proposal in await propose_with_faults(malformed=1.0):
        assert proposal.code is None and proposal.error
    for proposal in await propose_with_faults(runtime_error=1.0):
        assert proposal.ok and RUNTIME_LINE in proposal.code
    ran = subprocess.run(
        [sys.executable, "-c", proposal.code], capture_output=True, text=True, timeout=30
    )
    assert ran.returncode != 0 and "offline mutation model" in ran.stderr


async def test_clean_answers_through_the_client_apply_for_both_proposers() -> None:
    async with await open_llm(resolve_llm_config(LLMConfig(), env={}), rng=random.Random(0)) as llm:
        diff = await DiffProposer().propose(diff_prompt(PLAIN), parent(PLAIN), llm)
        rewrite_prompt = Prompt(system="Whole program please.", user=f"```python\n{PLAIN}```")
        full = await FullRewriteProposer().propose(rewrite_prompt, parent(PLAIN), llm)
    assert diff.ok and diff.mode == "diff" and only_numbers_changed(PLAIN, diff.code)
    assert full.ok and full.mode == "rewrite" and only_numbers_changed(PLAIN, full.code)


def test_custom_responders_take_precedence_for_their_purpose() -> None:
    strategy = Responder("strategy", for_purpose("x_purpose"), lambda req, ctx: "strategy answer")
    chain = (strategy, *default_responders())
    messages = (("user", "```python\nx = 1\n```"),)
    tagged = OfflineRequest("m", messages, purpose="x_purpose")
    assert answer(tagged, seed=0, faults=FaultRates(), responders=chain) == "strategy answer"
    untagged = answer(request(PLAIN, 1), seed=0, faults=FaultRates(), responders=chain)
    assert "<<<<<<< SEARCH" in untagged


PARADIGM_ASK = (
    "# Problem\nPack circles in a unit square.\n\n"
    "Answer with one JSON object holding 2 ideas of different approach types."
)


def ask(purpose: str | None, system: str = "", user: str = PARADIGM_ASK) -> str:
    messages = ((("system", system),) if system else ()) + (("user", user),)
    return answer(
        OfflineRequest("m", messages, 1, purpose),
        seed=0,
        faults=FaultRates(),
        responders=default_responders(),
    )


def test_calls_are_routed_by_purpose_not_by_headings_in_the_prompt() -> None:
    ideas = json.loads(ask("paradigm"))["ideas"]  # no heading at all: the purpose suffices
    assert len(ideas) == 2 and all(i["idea"] and i["approach_type"] for i in ideas)
    # The same words the scaffolds use as their prompts' titles route nothing by themselves.
    for title in ("# AdaEvolve paradigm request", "# EvoX search-strategy rewrite"):
        text = ask("propose", system=title, user=f"{PARADIGM_ASK}\n```python\n{PLAIN}```")
        assert text.startswith(HEADER) and "```python" in text, title
        assert ask(None, system=title, user=PARADIGM_ASK).startswith(HEADER), title
    strategy = ask("strategy", user=f"Rewrite it.\n```python\n{PLAIN}```")
    assert "EvolvedProgramDatabase" in (extract_code(strategy) or "")
    operators = ask("guide", system="# EvoX variation operators", user=PARADIGM_ASK)
    assert "## DIVERGE" in operators and "## REFINE" in operators


def test_the_purpose_does_not_change_the_seed_of_an_answer() -> None:
    """Routing metadata is not content: a mutation request answers the same with or without it
    (so runs keep their programs whatever the client sends)."""
    for seed in range(5):
        plain = request(PLAIN, seed)
        tagged = OfflineRequest(plain.model, plain.messages, seed, "propose")
        chain = default_responders()
        assert answer(plain, seed=0, faults=FaultRates(), responders=chain) == answer(
            tagged, seed=0, faults=FaultRates(), responders=chain
        )


async def test_the_client_sends_each_calls_purpose_to_the_server() -> None:
    """Through the real client and HTTP: the purpose header picks the responder."""
    seen: list[str | None] = []

    def record(req: OfflineRequest, ctx: Any) -> str:
        seen.append(req.purpose)
        return "ok"

    spy = Responder("spy", lambda req: True, record)
    with start_offline_server(responders=(spy,)) as server:
        config = LLMConfig.model_validate({"api_base": server.base_url, "models": [{"name": "m"}]})
        settings = resolve_llm_config(config, env={})
        async with await open_llm(settings, rng=random.Random(0)) as llm:
            for purpose in ("propose", "paradigm", "guide", "strategy"):
                await llm.generate(Prompt(system="s", user="u"), purpose=purpose)
    assert seen == ["propose", "paradigm", "guide", "strategy"]
    async with await open_llm(resolve_llm_config(LLMConfig(), env={}), rng=random.Random(0)) as llm:
        call = await llm.generate(Prompt(system="", user=PARADIGM_ASK), purpose="paradigm")
    assert len(json.loads(call.text)["ideas"]) == 2  # the default chain, by purpose alone


def test_http_surface() -> None:
    strategy = Responder("strategy", for_purpose("x_purpose"), lambda req, ctx: f"seed {req.seed}")
    with start_offline_server(responders=(strategy, *default_responders())) as server:
        with httpx.Client(base_url=server.base_url, trust_env=False) as http:
            messages = [{"role": "user", "content": [{"type": "text", "text": "## STRATEGY"}]}]
            body = http.post(
                "/chat/completions",
                json={"model": "x", "messages": messages, "seed": 4, "n": 2},
                headers={PURPOSE_HEADER: "x_purpose"},
            ).json()
            assert [c["message"]["content"] for c in body["choices"]] == ["seed 4", "seed 5"]
            assert (
                body["usage"]["total_tokens"]
                == body["usage"]["prompt_tokens"] + body["usage"]["completion_tokens"]
            )
            streamed = http.post(
                "/chat/completions", json={"model": "x", "messages": messages, "stream": True}
            )
            assert (
                streamed.status_code == 400 and "streaming" in streamed.json()["error"]["message"]
            )
            assert http.post("/chat/completions", json={"model": "x"}).status_code == 400
        assert server.requests == 3


def test_greedy_search_with_the_offline_model_improves_a_numeric_program() -> None:
    """Hill-climbing on three parameters; the score is computed from the parsed literals, so no
    generated code runs."""
    target = {"A": 3.7, "B": 0.123, "K": 0.0042}
    scale = {"A": 1.0, "B": 10.0, "K": 300.0}

    def loss(code: str) -> float:
        values = {
            node.targets[0].id: ast.literal_eval(node.value)
            for node in ast.parse(code).body
            if isinstance(node, ast.Assign)
        }
        return sum((scale[k] * (values[k] - v)) ** 2 for k, v in target.items())

    best = "# EVOLVE-BLOCK-START\nA = 1.0\nB = 0.5\nK = 0.001\n# EVOLVE-BLOCK-END\n"
    start = best_loss = loss(best)
    for seed in range(150):
        child = apply_diff(best, reply(best, seed)).code
        if loss(child) < best_loss:
            best, best_loss = child, loss(child)
    assert best_loss < 0.01 * start
