"""Differential-test fixture: six constants whose distance to a target sets the score."""

# EVOLVE-BLOCK-START
A = 0.5
B = 1.0
C = 2.0
D = -0.5
E = 0.25
F = 3.0
# EVOLVE-BLOCK-END


def constants():
    return [A, B, C, D, E, F]
