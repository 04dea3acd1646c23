"""Circle packing, n=26: place 26 disjoint disks in the unit square to maximise the sum of radii.

Seed program: centres on staggered rows, radii from a linear programme (for fixed centres the
best radii are an LP), then shrunk so the packing is valid for any centres.  Evolve the layout.
"""

import numpy as np
from scipy.optimize import linprog

N = 26


# EVOLVE-BLOCK-START
def layout():
    """Centres of the disks: five staggered rows, evenly spaced within each row.

    Each row is (count, vertical nudge, left inset, right inset); nudges and insets are offsets
    from a regular 5x5 grid of pitch 0.2, so small changes move the disks a little.
    """
    rows = [
        (5, 0.014, 0.018, 0.012),
        (5, -0.011, 0.006, 0.021),
        (6, 0.009, -0.025, -0.016),
        (5, -0.013, 0.017, 0.008),
        (5, 0.012, 0.009, 0.019),
    ]
    pitch = 0.2
    centers = []
    for k, (count, nudge, left, right) in enumerate(rows):
        y = pitch * (k + 0.5) + nudge
        xs = np.linspace(pitch * 0.5 + left, 1.0 - pitch * 0.5 - right, max(int(count), 1))
        centers.extend((x, y) for x in xs)
    return np.array(centers, dtype=float)


# EVOLVE-BLOCK-END


def fit_count(centers):
    """Exactly N centres inside the square: extra rows are dropped, missing ones padded."""
    centers = np.clip(np.asarray(centers, dtype=float).reshape(-1, 2), 0.0, 1.0)[:N]
    if len(centers) < N:
        pad = np.column_stack(
            [np.linspace(0.05, 0.95, N - len(centers)), np.full(N - len(centers), 0.5)]
        )
        centers = np.vstack([centers, pad])
    return centers


def best_radii(centers):
    """Radii maximising the sum for fixed centres (an LP), then made exactly feasible."""
    n = len(centers)
    i, j = np.triu_indices(n, k=1)
    a = np.zeros((len(i), n))
    a[np.arange(len(i)), i] = 1.0
    a[np.arange(len(i)), j] = 1.0
    dist = np.hypot(centers[i, 0] - centers[j, 0], centers[i, 1] - centers[j, 1])
    wall = np.minimum.reduce([centers[:, 0], centers[:, 1], 1 - centers[:, 0], 1 - centers[:, 1]])
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


def run_packing():
    centers = fit_count(layout())
    radii = best_radii(centers)
    return centers, radii, float(np.sum(radii))


if __name__ == "__main__":
    _, _, total = run_packing()
    print(f"sum of radii: {total:.6f}")
