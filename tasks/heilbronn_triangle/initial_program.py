"""Heilbronn problem in a triangle, n=11: maximise the smallest triangle area.

Seed program: start from fixed barycentric positions, then a short pattern search that keeps
moving a vertex of the currently smallest triangle while that helps.  Points are folded back
into the triangle after every move, so the output is always valid.
"""

import itertools

import numpy as np

N = 11
CORNERS = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, np.sqrt(3.0) / 2.0]])
TRIPLES = np.array(list(itertools.combinations(range(N), 3)))


def to_triangle(uv):
    """Map (u, v) pairs to points inside the triangle (folding pairs with u + v > 1 back)."""
    uv = np.clip(np.asarray(uv, dtype=float), 0.0, 1.0)
    over = uv.sum(axis=1) > 1.0
    uv[over] = 1.0 - uv[over][:, ::-1]
    return (
        CORNERS[0] + uv[:, :1] * (CORNERS[1] - CORNERS[0]) + uv[:, 1:] * (CORNERS[2] - CORNERS[0])
    )


def min_area(uv):
    p = to_triangle(uv)
    a, b, c = p[TRIPLES[:, 0]], p[TRIPLES[:, 1]], p[TRIPLES[:, 2]]
    cross = (b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (c[:, 0] - a[:, 0]) * (b[:, 1] - a[:, 1])
    areas = np.abs(cross) / 2.0
    k = int(np.argmin(areas))
    return areas[k], TRIPLES[k]


# EVOLVE-BLOCK-START
def initial_uv():
    """Starting positions as barycentric (u, v) pairs."""
    return np.array(
        [
            [0.05, 0.02],
            [0.93, 0.04],
            [0.03, 0.91],
            [0.42, 0.06],
            [0.06, 0.47],
            [0.50, 0.44],
            [0.30, 0.30],
            [0.66, 0.15],
            [0.17, 0.64],
            [0.21, 0.13],
            [0.55, 0.28],
        ]
    )


def improve(uv):
    """Pattern search on the smallest triangle's vertices with a shrinking step."""
    step = 0.05
    shrink = 0.7
    rounds = 30
    directions = [(np.cos(t), np.sin(t)) for t in np.linspace(0.0, 2.0 * np.pi, 8, endpoint=False)]
    best, worst = min_area(uv)
    for _ in range(int(rounds)):
        moved = False
        for i in worst:
            for dx, dy in directions:
                trial = uv.copy()
                trial[i] += (step * dx, step * dy)
                value, triple = min_area(trial)
                if value > best:
                    uv, best, worst, moved = trial, value, triple, True
        if not moved:
            step *= shrink
    return uv


# EVOLVE-BLOCK-END


def heilbronn_triangle11():
    """Return an array (11, 2) of points inside the triangle (0,0), (1,0), (1/2, √3/2)."""
    return to_triangle(improve(initial_uv()))


if __name__ == "__main__":
    area, _ = min_area(improve(initial_uv()))
    print(f"normalised min area: {area / (np.sqrt(3.0) / 4.0):.6f}")
