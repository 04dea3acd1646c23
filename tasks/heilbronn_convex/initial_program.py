"""Heilbronn problem in a convex region, n=13: maximise (smallest triangle area) / (hull area).

Seed program: start from points on two rings, then a short pattern search that keeps moving a
vertex of the currently smallest triangle while the ratio improves.  Any 13 distinct, not all
collinear points are valid, so the search never has to repair anything.
"""

import itertools

import numpy as np
from scipy.spatial import ConvexHull

N = 13
TRIPLES = np.array(list(itertools.combinations(range(N), 3)))


def ratio(points):
    """(smallest triangle area / convex hull area, the triple that attains it)."""
    a, b, c = points[TRIPLES[:, 0]], points[TRIPLES[:, 1]], points[TRIPLES[:, 2]]
    cross = (b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (c[:, 0] - a[:, 0]) * (b[:, 1] - a[:, 1])
    areas = np.abs(cross) / 2.0
    k = int(np.argmin(areas))
    return areas[k] / ConvexHull(points).volume, TRIPLES[k]


# EVOLVE-BLOCK-START
def initial_points():
    """An outer ring, an inner ring and a centre point, each ring slightly rotated."""
    outer, inner = 8, 4
    outer_radius, inner_radius = 1.0, 0.45
    outer_turn, inner_turn = 0.13, 0.31
    t_out = 2.0 * np.pi * (np.arange(outer) + outer_turn) / outer
    t_in = 2.0 * np.pi * (np.arange(inner) + inner_turn) / inner
    points = [np.column_stack([outer_radius * np.cos(t_out), outer_radius * np.sin(t_out)])]
    points.append(np.column_stack([inner_radius * np.cos(t_in), inner_radius * np.sin(t_in)]))
    points.append(np.array([[0.07, -0.05]]))
    return np.vstack(points)[:N]


def improve(points):
    """Pattern search on the smallest triangle's vertices with a shrinking step."""
    step = 0.08
    shrink = 0.6
    rounds = 25
    directions = [(np.cos(t), np.sin(t)) for t in np.linspace(0.0, 2.0 * np.pi, 8, endpoint=False)]
    best, worst = ratio(points)
    for _ in range(int(rounds)):
        moved = False
        for i in worst:
            for dx, dy in directions:
                trial = points.copy()
                trial[i] += (step * dx, step * dy)
                value, triple = ratio(trial)
                if value > best:
                    points, best, worst, moved = trial, value, triple, True
        if not moved:
            step *= shrink
    return points


# EVOLVE-BLOCK-END


def heilbronn_convex13():
    """Return an array (13, 2) of points."""
    points = initial_points()
    if len(points) < N:
        # Pad on a small circle so a shorter layout still yields 13 distinct points.
        t = np.linspace(0.0, 2.0 * np.pi, N - len(points), endpoint=False) + 0.5
        points = np.vstack([points, 0.2 * np.column_stack([np.cos(t), np.sin(t)])])
    return improve(points)


if __name__ == "__main__":
    value, _ = ratio(heilbronn_convex13())
    print(f"min area / hull area: {value:.6f}")
