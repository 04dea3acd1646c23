"""Differential-test fixture: ``evaluate(program_path)`` (OpenEvolve/SkyDiscover format).

The score is 1 / (1 + squared distance of the program's constants to a target); a program whose
constants are not numbers fails (validity 0, with the error).  Deterministic and fast."""

import importlib.util

TARGET = [0.3, 1.7, 1.1, 0.2, -0.4, 2.2]


def evaluate(program_path):
    spec = importlib.util.spec_from_file_location("candidate", program_path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        values = [float(v) for v in module.constants()]
        distance = sum((v - t) ** 2 for v, t in zip(values, TARGET, strict=True))
    except Exception as exc:  # the candidate's failure is a result
        return {"combined_score": 0.0, "validity": 0.0, "error": f"{type(exc).__name__}: {exc}"}
    return {"combined_score": round(1.0 / (1.0 + distance), 6), "validity": 1.0}
