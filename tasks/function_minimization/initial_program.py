"""Function minimisation (smoke test): find the global minimum of
f(x, y) = sin x · cos y + sin(x y) + (x² + y²)/20 on [-5, 5]².

Seed program: a seeded random search followed by a short compass search around the best point.
"""

import numpy as np


def evaluate_function(x, y):
    return np.sin(x) * np.cos(y) + np.sin(x * y) + (x**2 + y**2) / 20


# EVOLVE-BLOCK-START
def search_algorithm(bounds=(-5.0, 5.0)):
    """Random search, then compass search with a shrinking step."""
    rng = np.random.default_rng(7)
    samples = 5
    best_x, best_y = 4.0, 3.5
    best_value = evaluate_function(best_x, best_y)
    for x, y in rng.uniform(bounds[0], bounds[1], size=(int(samples), 2)):
        value = evaluate_function(x, y)
        if value < best_value:
            best_x, best_y, best_value = x, y, value
    step = 0.5
    shrink = 0.5
    for _ in range(40):
        improved = False
        for dx, dy in ((step, 0.0), (-step, 0.0), (0.0, step), (0.0, -step)):
            x = float(np.clip(best_x + dx, bounds[0], bounds[1]))
            y = float(np.clip(best_y + dy, bounds[0], bounds[1]))
            value = evaluate_function(x, y)
            if value < best_value:
                best_x, best_y, best_value, improved = x, y, value, True
        if not improved:
            step *= shrink
    return best_x, best_y, best_value


# EVOLVE-BLOCK-END


def run_search():
    x, y, value = search_algorithm()
    return float(x), float(y), float(value)


if __name__ == "__main__":
    x, y, value = run_search()
    print(f"minimum found at ({x:.4f}, {y:.4f}) with value {value:.6f}")
