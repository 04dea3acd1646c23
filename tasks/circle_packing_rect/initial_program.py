"""Circle packing in a rectangle of perimeter 4, n=21: maximise the sum of radii.

Seed program: choose the rectangle's width (height = 2 - width), put centres on staggered rows,
take radii from a linear programme (optimal for fixed centres), then shrink them so the packing
is valid for any centres.  Evolve the rectangle and the layout.
"""

import numpy as np
from scipy.optimize import linprog

N = 21


# EVOLVE-BLOCK-START
def layout():
    """The rectangle's width and the disk centres inside [0, width] x [0, 2 - width].

    Rows are (count, vertical nudge, left inset, right inset), offsets from an even grid.
    """
    width = 1.06
    height = 2.0 - width
    rows = [
        (4, 0.012, 0.021, 0.010),
        (5, -0.015, -0.012, 0.018),
        (4, 0.010, 0.016, 0.007),
        (4, -0.008, 0.009, 0.022),
        (4, 0.014, 0.019, 0.011),
    ]
    pitch_y = height / len(rows)
    centers = []
    for k, (count, nudge, left, right) in enumerate(rows):
        count = max(int(count), 1)
        pitch_x = width / count
        y = pitch_y * (k + 0.5) + nudge
        xs = np.linspace(pitch_x * 0.5 + left, width - pitch_x * 0.5 - right, count)
        centers.extend((x, y) for x in xs)
    return width, np.array(centers, dtype=float)


# EVOLVE-BLOCK-END


def fit(width, centers):
    """A valid rectangle and exactly N centres inside it (extra dropped, missing padded)."""
    width = float(np.clip(width, 0.05, 1.95))
    height = 2.0 - width
    centers = np.asarray(centers, dtype=float).reshape(-1, 2)[:N]
    if len(centers) < N:
        m = N - len(centers)
        pad = np.column_stack([np.linspace(0.1, 0.9, m) * width, np.full(m, 0.5 * height)])
        centers = np.vstack([centers, pad])
    centers[:, 0] = np.clip(centers[:, 0], 0.0, width)
    centers[:, 1] = np.clip(centers[:, 1], 0.0, height)
    return width, height, centers


def best_radii(centers, width, height):
    """Radii maximising the sum for fixed centres and rectangle (an LP), made exactly feasible."""
    n = len(centers)
    i, j = np.triu_indices(n, k=1)
    a = np.zeros((len(i), n))
    a[np.arange(len(i)), i] = 1.0
    a[np.arange(len(i)), j] = 1.0
    dist = np.hypot(centers[i, 0] - centers[j, 0], centers[i, 1] - centers[j, 1])
    x, y = centers[:, 0], centers[:, 1]
    wall = np.minimum.reduce([x, y, width - x, height - y])
    res = linprog(
        -np.ones(n),
        A_ub=a,
        b_ub=dist,
        bounds=list(zip(np.zeros(n), wall, strict=True)),
        method="highs",
    )
    radii = np.clip(res.x if res.success else np.zeros(n), 0.0, wall)
    # The LP solver may overshoot a constraint by ~1e-9; shrink pairs until none overlaps.
    for _ in range(3):
        over = radii[i] + radii[j] - dist
        for k in np.nonzero(over > 0)[0]:
            radii[i[k]] -= over[k] / 2 + 1e-12
            radii[j[k]] -= over[k] / 2 + 1e-12
        radii = np.clip(radii, 0.0, wall)
    return radii


def circle_packing21():
    """Return an array (21, 3) of rows (x, y, radius)."""
    width, height, centers = fit(*layout())
    radii = best_radii(centers, width, height)
    return np.column_stack([centers, radii])


if __name__ == "__main__":
    circles = circle_packing21()
    print(f"sum of radii: {circles[:, 2].sum():.6f}")
