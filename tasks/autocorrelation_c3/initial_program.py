"""Third autocorrelation inequality: find a step function h on [-1/4, 1/4] (any sign) that makes
2N·max|conv(h, h)| / (Σh)² as small as possible (an upper bound on the constant C3).

Seed program: start from a smooth bump and run a short normalised gradient descent on a soft
maximum of |conv(h, h)|.
"""

import numpy as np


def c3_bound(h):
    return 2.0 * len(h) * np.max(np.abs(np.convolve(h, h))) / np.sum(h) ** 2


# EVOLVE-BLOCK-START
N_STEPS = 400


def initial_heights(n):
    """A bump with a shallow dip in the middle."""
    x = np.linspace(-1.0, 1.0, n)
    return 1.0 - 0.3 * x**2 - 0.2 * np.cos(3.0 * x)


def optimise(h):
    """Normalised gradient descent on a soft maximum of |conv(h, h)| / (Σh)²."""
    iterations = 150
    learning_rate = 0.04
    sharpness = 40.0
    for _ in range(int(iterations)):
        total = h.sum()
        conv = np.convolve(h, h)
        mag = np.abs(conv)
        z = sharpness * mag / mag.max()
        p = np.exp(z - z.max())
        p /= p.sum()
        p *= np.sign(conv)
        soft_max = float(p @ conv)
        grad = 2.0 * np.correlate(p, h, "valid") / total**2 - 2.0 * soft_max / total**3
        h = h - learning_rate * np.abs(h).mean() * grad / (np.abs(grad).max() + 1e-300)
    return h


# EVOLVE-BLOCK-END


def run():
    """Return (f_values, c3, loss, n_points), the SkyDiscover convention."""
    n = max(int(N_STEPS), 2)
    h = optimise(initial_heights(n))
    c3 = c3_bound(h)
    return h, float(c3), float(c3), n


if __name__ == "__main__":
    print(f"C3 bound: {run()[1]:.6f}")
