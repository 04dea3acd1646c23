"""The offline model's mutation operator: perturb numeric literals of a program.

Literals are found with :mod:`tokenize`, so numbers inside strings and comments are never
touched (a regex fallback covers code that does not tokenize).  When the program has
``EVOLVE-BLOCK-START``/``EVOLVE-BLOCK-END`` markers, only literals inside them are candidates
(if any are).  Floats are preferred over integers, and 0/1 are rarely chosen, because integers
are more often structure (sizes, indices, seeds) than tunable parameters.

A perturbation multiplies the value by a log-normal factor: usually small (σ = 0.05), sometimes
medium (σ = 0.3), rarely large (×/÷ up to 5).  Multiplying never flips a sign; a zero becomes a
small positive value.  Ints stay ints, floats stay floats.  Usually one literal changes,
sometimes up to four.
"""

from __future__ import annotations

import io
import math
import random
import re
import tokenize
from dataclasses import dataclass

__all__ = ["Mutation", "NumberLiteral", "apply_mutations", "find_literals", "mutate", "perturb"]

_PLAIN = re.compile(r"(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?")
_LOOSE = re.compile(r"(?<![\w.])(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?(?![\w.])")
_COUNTS = ((0.6, 1), (0.85, 2), (0.95, 3), (1.0, 4))


@dataclass(frozen=True)
class NumberLiteral:
    line: int  # 0-based
    col: int
    text: str

    @property
    def is_float(self) -> bool:
        return any(c in self.text for c in ".eE")

    @property
    def weight(self) -> float:
        if self.is_float:
            return 1.0
        return 0.1 if int(self.text) <= 1 else 0.35


@dataclass(frozen=True)
class Mutation:
    line: int  # 0-based
    col: int
    old: str
    new: str


def _evolve_lines(lines: list[str]) -> set[int]:
    inside: set[int] = set()
    start: int | None = None
    for i, line in enumerate(lines):
        if "EVOLVE-BLOCK-START" in line:
            start = i
        elif "EVOLVE-BLOCK-END" in line and start is not None:
            inside.update(range(start + 1, i))
            start = None
    return inside


def _tokenized(code: str) -> list[NumberLiteral] | None:
    fstring_start = getattr(tokenize, "FSTRING_START", None)  # Python >= 3.12 splits f-strings
    fstring_end = getattr(tokenize, "FSTRING_END", None)
    depth = 0
    out = []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    for i, tok in enumerate(tokens):
        if tok.type == fstring_start:
            depth += 1
        elif tok.type == fstring_end:
            depth -= 1
        elif tok.type == tokenize.NUMBER and depth == 0 and _PLAIN.fullmatch(tok.string):
            if _is_index(tokens, i):
                continue  # x[1] -> x[2] is an IndexError, not a parameter change
            out.append(NumberLiteral(tok.start[0] - 1, tok.start[1], tok.string))
    return out


def _is_index(tokens: list[tokenize.TokenInfo], i: int) -> bool:
    """An integer written alone as a subscript: ``name[1]``, ``row[-1]``."""
    j = i - 1
    if j >= 0 and tokens[j].string == "-":
        j -= 1
    before = tokens[j] if j >= 0 else None
    after = tokens[i + 1] if i + 1 < len(tokens) else None
    if before is None or after is None or before.string != "[" or after.string != "]":
        return False
    opener = tokens[j - 1] if j >= 1 else None
    # A subscript follows a name, a closing bracket or a call; a list literal does not.
    return opener is not None and (opener.type == tokenize.NAME or opener.string in ")]")


def _scanned(lines: list[str]) -> list[NumberLiteral]:
    """Best effort for code that does not tokenize: skip comments and quoted text."""
    out = []
    for i, line in enumerate(lines):
        code = re.split(r"#|//", line, maxsplit=1)[0]
        for m in _LOOSE.finditer(code):
            before = code[: m.start()]
            if before.count('"') % 2 == 0 and before.count("'") % 2 == 0:
                out.append(NumberLiteral(i, m.start(), m.group()))
    return out


def find_literals(code: str) -> list[NumberLiteral]:
    """Candidate literals, restricted to the EVOLVE block when it holds any."""
    lines = code.split("\n")
    found = _tokenized(code)
    literals = found if found is not None else _scanned(lines)
    block = _evolve_lines(lines)
    inside = [lit for lit in literals if lit.line in block]
    return inside or literals


def _factor(rng: random.Random) -> float:
    u = rng.random()
    if u < 0.7:
        return math.exp(rng.gauss(0.0, 0.05))
    if u < 0.93:
        return math.exp(rng.gauss(0.0, 0.3))
    return math.exp(rng.choice((-1, 1)) * rng.uniform(0.5, 1.6))


def _significant_digits(text: str) -> int:
    mantissa = re.split(r"[eE]", text)[0].replace(".", "").lstrip("0")
    return max(len(mantissa), 1)


def _float_text(value: float, old: str) -> str | None:
    if not math.isfinite(value):
        return None
    whole = len(str(int(abs(value)))) if abs(value) >= 1 else 0
    digits = min(max(3, _significant_digits(old) + 1, whole + 1), 10)
    text = f"{value:.{digits}g}"
    return text if any(c in text for c in ".eE") else text + ".0"


def perturb(literal: NumberLiteral, rng: random.Random) -> str | None:
    """New source text for the literal (never equal to the old one), or ``None``."""
    if literal.is_float:
        old = float(literal.text)
        for _ in range(8):
            new = 10 ** rng.uniform(-3, -1) if old == 0 else old * _factor(rng)
            text = _float_text(new, literal.text)
            if text is not None and text != literal.text and float(text) != old:
                return text
        return None
    value = int(literal.text)
    if value == 0:
        return "1"
    new = round(value * _factor(rng))
    if new == value:
        new = value + rng.choice((-1, 1))
    if new < 1:
        new = 1  # positive ints stay positive: they are often counts or sizes
    return str(new if new != value else value + 1)


def apply_mutations(code: str, mutations: list[Mutation]) -> str:
    lines = code.split("\n")
    for m in sorted(mutations, key=lambda m: (m.line, -m.col)):
        line = lines[m.line]
        lines[m.line] = line[: m.col] + m.new + line[m.col + len(m.old) :]
    return "\n".join(lines)


def _choose(literals: list[NumberLiteral], k: int, rng: random.Random) -> list[NumberLiteral]:
    pool = list(literals)
    chosen = []
    for _ in range(min(k, len(pool))):
        pick = rng.choices(range(len(pool)), weights=[lit.weight for lit in pool])[0]
        chosen.append(pool.pop(pick))
    return chosen


def mutate(code: str, rng: random.Random) -> tuple[str, list[Mutation]]:
    """Perturb one to four literals; returns the new code and what changed."""
    literals = find_literals(code)
    if not literals:
        return code, []
    u = rng.random()
    k = next(n for p, n in _COUNTS if u < p)
    mutations = []
    for lit in _choose(literals, k, rng):
        new = perturb(lit, rng)
        if new is not None:
            mutations.append(Mutation(lit.line, lit.col, lit.text, new))
    return apply_mutations(code, mutations), mutations
