"""Fast GGUF header reader: metadata and tensor directory, without touching tensor data.

`gguf.GGUFReader` builds numpy views for every array element; on a 262k-token vocabulary it took
25 s here, too slow to validate a file before loading it. This reader walks the same layout with
`struct` over an mmap, keeps scalar values and small arrays, and for large arrays records only their
length and byte span (the span of `tokenizer.ggml.tokens` is hashed to compare vocabularies).
"""

from __future__ import annotations

import errno
import hashlib
import mmap
import os
import stat
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from atomicchat.engine.errors import ModelFileError

GGUF_MAGIC = b"GGUF"

# GGUFValueType ids (gguf spec) -> struct format of one scalar
_SCALARS: dict[int, str] = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_STRING = 8
_ARRAY = 9
_SMALL_ARRAY = 4096  # arrays up to this length are decoded; longer ones are summarised
_MAX_DEPTH = 3  # arrays of arrays of arrays; llama.cpp itself reads no nested arrays


@dataclass(frozen=True)
class ArraySummary:
    """A long array kept as its element count and its byte span in the file."""

    length: int
    item_type: int
    start: int
    end: int


@dataclass(frozen=True)
class TensorEntry:
    name: str
    shape: tuple[int, ...]  # ggml `ne` order
    ggml_type: int
    offset: int


@dataclass
class GGUFHeader:
    path: Path
    version: int
    metadata: dict[str, Any] = field(default_factory=dict)
    tensors: dict[str, TensorEntry] = field(default_factory=dict)
    file_size: int = 0
    vocab_digest: str | None = None  # sha256 of the raw token list, for pairing checks
    data_offset: int = 0  # where tensor data starts (a TensorEntry's offset is relative to it)

    def get(self, key: str, default: Any = None) -> Any:
        return self.metadata.get(key, default)

    @property
    def architecture(self) -> str:
        return str(self.metadata.get("general.architecture", ""))

    def arch_key(self, suffix: str, default: Any = None) -> Any:
        return self.metadata.get(f"{self.architecture}.{suffix}", default)

    @property
    def n_vocab(self) -> int:
        tokens = self.metadata.get("tokenizer.ggml.tokens")
        if isinstance(tokens, ArraySummary):
            return tokens.length
        if isinstance(tokens, list):
            return len(tokens)
        return 0

    @property
    def name(self) -> str:
        return str(self.metadata.get("general.name") or self.path.stem)


class _Cursor:
    def __init__(self, buf: mmap.mmap | bytes, path: Path, total: int | None = None) -> None:
        self.buf = buf
        self.off = 0
        self.path = path
        self.total = len(buf) if total is None else total  # the file's size: buf may be only its first bytes

    def take(self, fmt: str) -> Any:
        try:
            (value,) = struct.unpack_from("<" + fmt, self.buf, self.off)
        except struct.error as exc:
            raise ModelFileError(f"{self.path.name} is truncated or damaged (GGUF header ends early).") from exc
        self.off += struct.calcsize("<" + fmt)
        return value

    def _need(self, n: int, what: str) -> None:
        """Refuse a declared size the rest of the file cannot hold, before allocating or looping."""
        if n > self.total - self.off:
            raise ModelFileError(
                f"{self.path.name} declares {what} of {n:,} bytes or items, more than the file holds; "
                "the file is truncated or damaged."
            )

    def string(self) -> str:
        n = self.take("Q")
        self._need(n, "a string")
        if self.off + n > len(self.buf):  # inside the file, beyond the bytes read so far
            raise ModelFileError(f"{self.path.name} is truncated or damaged (GGUF header ends early).")
        raw = bytes(self.buf[self.off : self.off + n])
        self.off += n
        return raw.decode("utf-8", errors="replace")

    def skip_string(self) -> None:
        n = self.take("Q")
        self._need(n, "a string")
        self.off += n

    def value(self, vtype: int, depth: int = 0) -> Any:
        if vtype in _SCALARS:
            return self.take(_SCALARS[vtype])
        if vtype == _STRING:
            return self.string()
        if vtype == _ARRAY:
            if depth >= _MAX_DEPTH:
                raise ModelFileError(f"{self.path.name} nests metadata arrays more than {_MAX_DEPTH} deep; the file may be damaged.")
            item_type = self.take("I")
            length = self.take("Q")
            # every element takes at least 1 byte (scalars their size, strings and arrays 8 or 12)
            min_item = struct.calcsize(_SCALARS[item_type]) if item_type in _SCALARS else 8 if item_type == _STRING else 12
            self._need(length * min_item, "an array")
            start = self.off
            if length > _SMALL_ARRAY:
                if item_type in _SCALARS:
                    self.off += length * struct.calcsize(_SCALARS[item_type])
                elif item_type == _STRING:
                    for _ in range(length):
                        self.skip_string()
                else:
                    for _ in range(length):
                        self.value(item_type, depth + 1)
                return ArraySummary(length, item_type, start, self.off)
            return [self.value(item_type, depth + 1) for _ in range(length)]
        raise ModelFileError(f"{self.path.name} has an unknown GGUF value type {vtype}; the file may be damaged.")


def read_header(path: str | Path) -> GGUFHeader:
    """Read metadata and tensor directory; raise ModelFileError with a plain reason on any problem."""
    p = Path(path).expanduser()
    try:
        st = os.stat(p)  # before opening: a FIFO or a device would block or stream forever
    except FileNotFoundError:
        raise ModelFileError(f"Model file not found: {p}") from None
    except OSError as exc:
        raise _os_error(p, exc) from None
    if stat.S_ISDIR(st.st_mode):
        raise ModelFileError(f"{p} is a folder, not a GGUF model file.")
    if not stat.S_ISREG(st.st_mode):
        kind = "a named pipe" if stat.S_ISFIFO(st.st_mode) else "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file"
        raise ModelFileError(f"{p.name} is {kind}, not a GGUF model file.")
    try:
        size = st.st_size
        with open(p, "rb") as fh:
            if size < 24:
                raise ModelFileError(f"{p.name} is not a GGUF model file (only {size} bytes).")
            magic = fh.read(4)
            if magic != GGUF_MAGIC:
                raise ModelFileError(f"{p.name} is not a GGUF model file (it does not start with 'GGUF').")
            with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                return _parse(mm, p, size)
    except OSError as exc:
        raise _os_error(p, exc) from None


def _os_error(p: Path, exc: OSError) -> ModelFileError:
    if isinstance(exc, PermissionError):
        return ModelFileError(f"Cannot read {p}: permission denied.")
    if exc.errno == errno.ENAMETOOLONG:
        return ModelFileError(f"The model path is too long for this system ({len(str(p)):,} characters): {str(p)[:80]}…")
    return ModelFileError(f"Cannot read {str(p)[:300]}: {exc.strerror or exc}.")


def _parse(mm: mmap.mmap, path: Path, size: int) -> GGUFHeader:
    cur = _Cursor(mm, path, size)
    cur.off = 4
    version = cur.take("I")
    if version not in (2, 3):
        raise ModelFileError(f"{path.name} uses GGUF version {version}, which is not supported (2 or 3 are).")
    n_tensors = cur.take("Q")
    n_kv = cur.take("Q")
    if n_kv > 1_000_000 or n_tensors > 1_000_000:
        raise ModelFileError(f"{path.name} has an implausible GGUF header; the file may be damaged.")
    if (n_kv + n_tensors) * 12 > size:
        raise ModelFileError(f"{path.name} is truncated or damaged (it declares {n_kv:,} keys and {n_tensors:,} tensors).")
    header = GGUFHeader(path=path, version=version, file_size=size)
    for _ in range(n_kv):
        key = cur.string()
        vtype = cur.take("I")
        header.metadata[key] = cur.value(vtype)
    for _ in range(n_tensors):
        name = cur.string()
        n_dims = cur.take("I")
        if n_dims > 8:
            raise ModelFileError(f"{path.name} has a tensor with {n_dims} dimensions; the file may be damaged.")
        shape = tuple(cur.take("Q") for _ in range(n_dims))
        ggml_type = cur.take("I")
        offset = cur.take("Q")
        header.tensors[name] = TensorEntry(name, shape, ggml_type, offset)
    align = header.metadata.get("general.alignment", 32)
    align = align if isinstance(align, int) and align > 0 else 32
    header.data_offset = (cur.off + align - 1) // align * align
    tokens = header.metadata.get("tokenizer.ggml.tokens")
    if isinstance(tokens, ArraySummary):
        header.vocab_digest = hashlib.sha256(mm[tokens.start : tokens.end]).hexdigest()
    elif isinstance(tokens, list):
        header.vocab_digest = hashlib.sha256("\x00".join(map(str, tokens)).encode()).hexdigest()
    return header


class HeaderTruncated(ModelFileError):
    """The bytes given end inside the GGUF header: read more of the file and try again."""


def parse_header_bytes(data: bytes, name: str, file_size: int) -> GGUFHeader:
    """Parse a header from the first bytes of a file (e.g. an HTTP Range read of a Hub file).
    Raises HeaderTruncated when `data` stops before the tensor directory ends."""
    if data[:4] != GGUF_MAGIC:
        raise ModelFileError(f"{name} is not a GGUF model file (it does not start with 'GGUF').")
    try:
        return _parse(data, Path(name), file_size)  # type: ignore[arg-type]
    except ModelFileError as exc:
        if "ends early" in str(exc) and len(data) < file_size:
            raise HeaderTruncated(str(exc)) from exc
        raise
