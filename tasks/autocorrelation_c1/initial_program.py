"""First autocorrelation inequality: find a non-negative step function h on [-1/4, 1/4] that
makes 2N·max(conv(h, h)) / (Σh)² as small as possible (an upper bound on the constant C1).

Seed program: start from a smooth bump and run a short gradient descent on a soft maximum of
the autoconvolution, keeping h positive through a log parametrisation.
"""

import numpy as np


def c1_bound(h):
    return 2.0 * len(h) * np.max(np.convolve(h, h)) / np.sum(h) ** 2


# EVOLVE-BLOCK-START
N_STEPS = 600


def initial_heights(n):
    """A bump that is flatter in the middle and lifted at both ends."""
    x = np.linspace(-1.0, 1.0, n)
    return 1.0 - 0.35 * (1.0 - x**2) + 0.15 * x**4


def optimise(h):
    """Gradient descent on a soft maximum of conv(h, h) / (Σh)², in log space."""
    iterations = 120
    learning_rate = 0.04
    sharpness = 40.0
    w = np.log(np.clip(h, 1e-6, None))
    for _ in range(int(iterations)):
        h = np.exp(w)
        total = h.sum()
        conv = np.convolve(h, h)
        z = sharpness * conv / conv.max()
        p = np.exp(z - z.max())
        p /= p.sum()
        soft_max = float(p @ conv)
        grad = 2.0 * np.correlate(p, h, "valid") / total**2 - 2.0 * soft_max / total**3
        step = grad * h
        w -= learning_rate * step / (np.abs(step).max() + 1e-300)
    return np.exp(w)


# EVOLVE-BLOCK-END


def run():
    """Return (f_values, c1, loss, n_points), the SkyDiscover convention."""
    n = max(int(N_STEPS), 2)
    h = optimise(initial_heights(n))
    c1 = c1_bound(h)
    return h, float(c1), float(c1), n


if __name__ == "__main__":
    print(f"C1 bound: {run()[1]:.6f}")
