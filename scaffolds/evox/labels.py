"""Default variation-operator texts: the DIVERGE and REFINE labels a strategy may attach.

A strategy returns ``{self.DIVERGE_LABEL: parent}`` or ``{self.REFINE_LABEL: parent}`` to ask
for a structural departure or a local refinement; the text is injected above the current
program in the solution prompt.  The reference has a guide LLM fill in problem-specific examples
once per run; offline (and by default) these generic texts are used.
"""

from __future__ import annotations

from scaffolds.evox.records import Labels

__all__ = ["DEFAULT_DIVERGE", "DEFAULT_REFINE", "default_labels"]

DEFAULT_DIVERGE = """\
## IMPORTANT: take a DIFFERENT APPROACH this time
Do not just tune parameters of the program below. Change how it solves the problem: another
algorithm, another formulation, another library routine, or a new component it never used.
Replacing large parts (or all) of the code is fine. The result must still be a correct,
complete solution to the same problem: a broken bold idea scores nothing.
Start your answer with one line, APPROACH: <what is different>, then the code."""

DEFAULT_REFINE = """\
## IMPORTANT: REFINE the current approach
Keep the algorithm and the structure of the program below. Improve it locally: better
constants and starting points, tighter loops, an extra polishing step, more of the time
budget spent where it helps. Do not switch to a different formulation.
Start your answer with one line, REFINEMENT: <what you refine>, then the code."""


def default_labels() -> Labels:
    return Labels(diverge=DEFAULT_DIVERGE, refine=DEFAULT_REFINE)
