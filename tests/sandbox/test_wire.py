"""The plain-data codec and frames: what crosses the candidate boundary, and what never does."""

from __future__ import annotations

import json
import math
import struct

import numpy as np
import pytest
from galapagos_sandbox.wire import (
    MAGIC,
    FrameDecoder,
    UnsupportedType,
    WireError,
    decode_value,
    encode_frame,
    encode_value,
)

import harness.sandbox  # noqa: F401  (puts galapagos_sandbox on sys.path)


def roundtrip(value: object) -> object:
    tree, blob = encode_value(value)
    frame = encode_frame({"value": tree}, blob)
    ((header, data),) = FrameDecoder(1 << 24).feed(frame)
    return decode_value(header["value"], data)


def test_plain_values_roundtrip_and_tuples_become_lists() -> None:
    value = {"a": [1, 2.5, None, True, "x"], "b": (1, (2, 3)), "c": {"d": -7}}
    assert roundtrip(value) == {"a": [1, 2.5, None, True, "x"], "b": [1, [2, 3]], "c": {"d": -7}}


def test_nan_and_infinities_survive_so_scorers_can_reject_them() -> None:
    out = roundtrip([math.nan, math.inf, -math.inf])
    assert math.isnan(out[0]) and out[1] == math.inf and out[2] == -math.inf


def test_numpy_scalars_become_python_numbers() -> None:
    out = roundtrip([np.float32(1.5), np.int64(7), np.bool_(True), np.uint8(3)])
    assert out == [1.5, 7, True, 3]
    assert [type(x) for x in out] == [float, int, bool, int]


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int8", "uint16", "bool"])
def test_numeric_arrays_come_back_as_arrays(dtype: str) -> None:
    arr = (np.arange(12) % 3).astype(dtype).reshape(3, 4)
    out = roundtrip({"arr": arr})["arr"]
    assert isinstance(out, np.ndarray) and out.dtype == arr.dtype and out.shape == (3, 4)
    assert np.array_equal(out, arr)
    out[0, 0] = 1  # decoded arrays are writable


def test_big_endian_and_non_contiguous_arrays_are_normalised() -> None:
    arr = np.arange(10, dtype=">f8")[::2]
    out = roundtrip(arr)
    assert np.array_equal(out, arr) and out.dtype == np.dtype("<f8")


class LyingFloat(float):
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = float.__hash__


class AlwaysEqual:
    def __eq__(self, other: object) -> bool:
        return True

    def __float__(self) -> float:
        return 1e9


@pytest.mark.parametrize(
    "value",
    [
        AlwaysEqual(),
        LyingFloat(1.0),
        [1, LyingFloat(2.0)],
        {1, 2},
        b"bytes",
        {1: "int key"},
        {"__ndarray__": 1},
        np.array([1, "a"], dtype=object),
        np.array([1 + 2j]),
        np.zeros(2, dtype=[("a", "f8")]),
        10**5000,
    ],
    ids=[
        "lying-eq",
        "float-subclass",
        "nested-subclass",
        "set",
        "bytes",
        "int-key",
        "reserved-key",
        "object-array",
        "complex-array",
        "structured-array",
        "huge-int",
    ],
)
def test_anything_else_is_unsupported(value: object) -> None:
    with pytest.raises(UnsupportedType):
        encode_value(value)


def test_nesting_is_bounded() -> None:
    deep: list = []
    for _ in range(100):
        deep = [deep]
    with pytest.raises(UnsupportedType, match="nested"):
        encode_value(deep)
    cyclic: list = []
    cyclic.append(cyclic)
    with pytest.raises(UnsupportedType):
        encode_value(cyclic)


def _array_header(ref: list) -> dict:
    return {"value": {"__ndarray__": ref}}


@pytest.mark.parametrize(
    "ref",
    [
        ["|O8", [1], 0, 8],  # object dtype: could unpickle
        ["<f8", [2], 0, 8],  # size does not match the shape
        ["<f8", [1], 4, 8],  # runs past the blob
        ["<f8", [-1], 0, 8],
        ["<f8", [1], 0],
        [">f8", [1], 0, 8],
        ["<f8\n", [1], 0, 8],  # a regex anchored with $ would let this through
        [["<f8"], [1], 0, 8],
    ],
)
def test_decoder_rejects_malformed_array_references(ref: list) -> None:
    frame = encode_frame(_array_header(ref), b"\0" * 8)
    ((header, data),) = FrameDecoder(1 << 20).feed(frame)
    with pytest.raises(WireError):
        decode_value(header["value"], data)


def test_decoder_rejects_bad_magic_oversize_and_garbage() -> None:
    with pytest.raises(WireError, match="magic"):
        FrameDecoder(1 << 20).feed(b"XXXX" + b"\0" * 12)
    big = struct.pack(">4sIQ", MAGIC, 10, 1 << 40)
    with pytest.raises(WireError, match="cap"):
        FrameDecoder(1 << 20).feed(big)
    with pytest.raises(WireError, match="malformed"):
        FrameDecoder(1 << 20).feed(struct.pack(">4sIQ", MAGIC, 3, 0) + b"{x]")


def test_decoder_reassembles_frames_split_anywhere() -> None:
    frames = encode_frame({"n": 1}) + encode_frame({"n": 2}, b"abc")
    decoder = FrameDecoder(1 << 20)
    got = []
    for i in range(len(frames)):
        got += decoder.feed(frames[i : i + 1])
    assert [h["n"] for h, _ in got] == [1, 2] and bytes(got[1][1]) == b"abc"


def test_frame_header_is_plain_json() -> None:
    frame = encode_frame({"status": "ok", "x": math.nan})
    assert json.loads(frame[16:])["status"] == "ok"
