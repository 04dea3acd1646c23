"""Length-prefixed frames and the plain-data value codec (stdlib only; numpy when present).

A frame is ``MAGIC | u32 header length | u64 blob length | header | blob``.  The header is one
JSON object (NaN and ±inf allowed, so scorers can reject them explicitly); the blob carries the
raw bytes of numeric numpy arrays, which the header references as
``{"__ndarray__": [dtype, shape, offset, nbytes]}``.  The same frames travel over pipes between
the runner and the candidate process, and over the container's attach stream to the host.

Plain data is None, bool, int, float, str, list and dict with str keys; tuples become lists,
numpy scalars become Python numbers and numeric/bool arrays stay arrays.  Anything else (an
object with a lying ``__eq__``, a subclass of float, a set) is :class:`UnsupportedType`.
Encoding runs wherever the value was produced; *decoding is the trust boundary*: it accepts only
JSON plus well-formed array references, so a tampered encoder gains nothing.
"""

from __future__ import annotations

import os
import select
import struct
import time

from galapagos_sandbox import jsonc

# typing costs milliseconds of container start-up; annotations are strings anyway.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "MAGIC",
    "FrameDecoder",
    "FrameReader",
    "UnsupportedType",
    "WireError",
    "decode_value",
    "encode_frame",
    "encode_value",
    "read_frame",
    "write_all",
]

MAGIC = b"GLP1"
_PREFIX = struct.Struct(">4sIQ")
PREFIX_SIZE = _PREFIX.size
#: Nesting depth accepted in values (deeper is refused rather than risking recursion limits).
MAX_DEPTH = 64
_ARRAY_KEY = "__ndarray__"
_MAX_INT_BITS = 14000
_FLAT = frozenset({int, float, bool, str, type(None)})


def _max_bits(values: Any) -> int:
    return max((v.bit_length() for v in values if type(v) is int), default=0)


# Little-endian (or byte-order-free) bool/int/uint/float dtypes only: no objects, no structs.
_DTYPES = frozenset(["|b1", "|i1", "|u1"] + [f"<{kind}{size}" for kind in "iuf" for size in "248"])


class WireError(ValueError):
    """A frame or value that does not follow the protocol (truncated, oversized, malformed)."""


class UnsupportedType(TypeError):
    """A value that is not plain data."""


# ---------------------------------------------------------------------------------- frames


def encode_frame(header: dict[str, Any], blob: bytes | bytearray | memoryview = b"") -> bytes:
    head = jsonc.dumps(header).encode("ascii")
    return b"".join((_PREFIX.pack(MAGIC, len(head), len(blob)), head, bytes(blob)))


def _parse_prefix(prefix: bytes | bytearray, max_frame: int) -> tuple[int, int]:
    magic, hlen, blen = _PREFIX.unpack(prefix)
    if magic != MAGIC:
        raise WireError(f"bad frame magic {bytes(magic)!r}")
    if hlen + blen > max_frame:
        raise WireError(f"frame of {hlen + blen} bytes exceeds the {max_frame}-byte cap")
    return hlen, blen


def _parse_header(raw: bytes | bytearray) -> dict[str, Any]:
    try:
        header = jsonc.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise WireError(f"malformed frame header ({exc.__class__.__name__})") from None
    if not isinstance(header, dict):
        raise WireError("frame header is not an object")
    return header


class FrameDecoder:
    """Incremental decoder for a byte stream of frames (used on the host's attach stream)."""

    def __init__(self, max_frame: int) -> None:
        self.max_frame = max_frame
        self._buf = bytearray()

    def feed(self, data: bytes) -> list[tuple[dict[str, Any], bytearray]]:
        self._buf += data
        frames = []
        while len(self._buf) >= PREFIX_SIZE:
            hlen, blen = _parse_prefix(self._buf[:PREFIX_SIZE], self.max_frame)
            end = PREFIX_SIZE + hlen + blen
            if len(self._buf) < end:
                break
            header = _parse_header(self._buf[PREFIX_SIZE : PREFIX_SIZE + hlen])
            blob = bytearray(self._buf[PREFIX_SIZE + hlen : end])
            del self._buf[:end]
            frames.append((header, blob))
        return frames

    @property
    def pending(self) -> int:
        return len(self._buf)


def _wait(poller: select.poll, deadline: float | None) -> bool:
    """Wait until the registered fd is ready; False when ``deadline`` (monotonic) passed."""
    while True:
        if deadline is None:
            timeout_ms = None
        else:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            timeout_ms = max(1, int(remaining * 1000))
        if poller.poll(timeout_ms):
            return True


class FrameReader:
    """Reads frames from a blocking fd, one ``read`` per frame in the common case."""

    def __init__(self, fd: int, *, max_frame: int) -> None:
        self.fd = fd
        self._decoder = FrameDecoder(max_frame)
        self._frames: list[tuple[dict[str, Any], bytearray]] = []
        self._poller = select.poll()
        self._poller.register(fd, select.POLLIN)

    def read(self, deadline: float | None = None) -> tuple[dict[str, Any], bytearray] | None:
        """Next frame; None on EOF before a frame started.

        Raises ``TimeoutError`` when ``deadline`` passes and :class:`WireError` on a bad or
        truncated frame.
        """
        while not self._frames:
            if deadline is not None and not _wait(self._poller, deadline):
                raise TimeoutError
            chunk = os.read(self.fd, 1 << 20)
            if not chunk:
                if self._decoder.pending:
                    raise WireError("stream ended inside a frame")
                return None
            self._frames.extend(self._decoder.feed(chunk))
        return self._frames.pop(0)


def read_frame(
    fd: int, *, max_frame: int, deadline: float | None = None
) -> tuple[dict[str, Any], bytearray] | None:
    """Read exactly one frame from a blocking fd (never reads past it); None on clean EOF."""
    prefix = _read_exact(fd, PREFIX_SIZE, deadline)
    if prefix is None:
        return None
    hlen, blen = _parse_prefix(prefix, max_frame)
    body = _read_exact(fd, hlen + blen, deadline)
    if body is None:
        raise WireError("stream ended inside a frame")
    return _parse_header(body[:hlen]), body[hlen:]


def _read_exact(fd: int, n: int, deadline: float | None) -> bytearray | None:
    poller = None
    if deadline is not None:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
    buf = bytearray()
    while len(buf) < n:
        if poller is not None and not _wait(poller, deadline):
            raise TimeoutError
        chunk = os.read(fd, min(n - len(buf), 1 << 20))
        if not chunk:
            if buf:
                raise WireError("stream ended inside a frame")
            return None
        buf += chunk
    return buf


def write_all(fd: int, data: bytes, deadline: float | None = None) -> None:
    """Write everything; with a deadline the fd must be non-blocking (raises TimeoutError)."""
    view = memoryview(data)
    poller = None
    while view:
        if deadline is not None:
            if poller is None:
                poller = select.poll()
                poller.register(fd, select.POLLOUT)
            if not _wait(poller, deadline):
                raise TimeoutError
        try:
            n = os.write(fd, view)
        except BlockingIOError:
            continue
        view = view[n:]


# ---------------------------------------------------------------------------------- values


def _numpy() -> Any:
    import numpy  # noqa: PLC0415 - optional dependency, only when arrays appear

    return numpy


class _Encoder:
    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.size = 0

    def encode(self, obj: Any, depth: int) -> Any:
        t = type(obj)
        # Exact type checks: a subclass of int/float/str may override comparisons or __float__.
        if obj is None or t is bool or t is str or t is float:
            return obj
        if t is int:
            # JSON readers refuse ints beyond ~4300 digits; refuse them here, readably.
            if obj.bit_length() > _MAX_INT_BITS:
                raise UnsupportedType(f"integer with {obj.bit_length()} bits is too large")
            return obj
        if depth >= MAX_DEPTH:
            raise UnsupportedType(f"value nested deeper than {MAX_DEPTH} levels")
        if t is list or t is tuple:
            # Fast path (C-level scans) for the common flat list of numbers or strings.
            kinds = set(map(type, obj))
            if kinds <= _FLAT and (int not in kinds or _max_bits(obj) <= _MAX_INT_BITS):
                return obj if t is list else list(obj)
            return [self.encode(x, depth + 1) for x in obj]
        if t is dict:
            out = {}
            for k, v in obj.items():
                if type(k) is not str:
                    raise UnsupportedType(f"dict key of type {type(k).__name__} (keys must be str)")
                if k == _ARRAY_KEY:
                    raise UnsupportedType(f"dict key {_ARRAY_KEY!r} is reserved")
                out[k] = self.encode(v, depth + 1)
            return out
        if t.__module__ == "numpy":
            return self._encode_numpy(obj, t)
        raise UnsupportedType(f"unsupported type {t.__module__}.{t.__qualname__}")

    def _encode_numpy(self, obj: Any, t: type) -> Any:
        np = _numpy()
        if t is np.ndarray:
            if obj.dtype.kind not in "biuf" or obj.dtype.fields is not None:
                raise UnsupportedType(f"unsupported array dtype {obj.dtype}")
            arr = np.ascontiguousarray(obj, dtype=obj.dtype.newbyteorder("<"))
            if arr.dtype.itemsize > 8:  # float128 and friends have no portable layout
                raise UnsupportedType(f"unsupported array dtype {obj.dtype}")
            data = arr.tobytes()
            ref = [arr.dtype.str, list(arr.shape), self.size, len(data)]
            self.parts.append(data)
            self.size += len(data)
            return {_ARRAY_KEY: ref}
        if isinstance(obj, np.generic) and obj.dtype.kind in "biuf":
            kind = obj.dtype.kind
            return bool(obj) if kind == "b" else int(obj) if kind in "iu" else float(obj)
        raise UnsupportedType(f"unsupported type numpy.{t.__qualname__}")


def encode_value(obj: Any) -> tuple[Any, bytes]:
    """``obj`` as (JSON-able tree, blob); raises :class:`UnsupportedType`."""
    enc = _Encoder()
    tree = enc.encode(obj, 0)
    return tree, b"".join(enc.parts)


def _decode_array(ref: Any, blob: bytearray) -> Any:
    if not (isinstance(ref, list) and len(ref) == 4):
        raise WireError("malformed array reference")
    dtype, shape, offset, nbytes = ref
    if not isinstance(dtype, str) or dtype not in _DTYPES:
        raise WireError(f"array dtype {dtype!r} is not allowed")
    if not (isinstance(shape, list) and len(shape) <= 32):
        raise WireError("malformed array shape")
    count = 1
    for dim in shape:
        if type(dim) is not int or dim < 0:
            raise WireError("malformed array shape")
        count *= dim
    if type(offset) is not int or type(nbytes) is not int or offset < 0:
        raise WireError("malformed array reference")
    itemsize = int(dtype[2:]) if dtype[1] != "b" else 1
    if count * itemsize != nbytes or offset + nbytes > len(blob):
        raise WireError("array reference does not match the frame's data")
    np = _numpy()
    # The blob is a bytearray, so the array is writable without a copy.
    return np.frombuffer(blob, dtype=np.dtype(dtype), count=count, offset=offset).reshape(shape)


def decode_value(tree: Any, blob: bytearray, *, depth: int = 0) -> Any:
    """Inverse of :func:`encode_value`; validates every node (the trust boundary)."""
    t = type(tree)
    if tree is None or t in (bool, int, float, str):
        return tree
    if depth >= MAX_DEPTH:
        raise WireError(f"value nested deeper than {MAX_DEPTH} levels")
    if t is list:
        if set(map(type, tree)) <= _FLAT:
            return tree
        return [decode_value(x, blob, depth=depth + 1) for x in tree]
    if t is dict:
        if _ARRAY_KEY in tree:
            if len(tree) != 1:
                raise WireError("malformed array reference")
            return _decode_array(tree[_ARRAY_KEY], blob)
        return {k: decode_value(v, blob, depth=depth + 1) for k, v in tree.items()}
    raise WireError(f"unexpected node {t.__name__}")
