"""Inside a sandbox kernel: which bytes of a value are still the snapshot's, untouched.

A snapshot file is mapped copy-on-write (snapshot.read_snapshot), so the buffers of the frames it
holds are pages of that map. The judge, forked after the load, has the same map as it was then.
When the checks read a frame, the kernel sends its small pickle and, for each buffer, either where
it lies in the map (when none of its pages was written since the load: the judge reads the same
bytes in its own copy of the map) or the bytes themselves. Written pages are found in
/proc/self/pagemap: a page the kernel wrote is a private anonymous copy, no longer a file page. A
page mapped anew over the snapshot's (a shared memfd written there, `MAP_FIXED`) is a file page
too, so each buffer's range must also still be the snapshot file's mapping, at its place in the
file, as /proc/self/maps says (the kernel writes that file; a process cannot).
Where the pagemap cannot be read, or numpy is missing, every buffer goes as bytes, as before.

Stdlib only (numpy when present): imported in every sandbox.
"""

from __future__ import annotations

import contextlib
import copyreg
import ctypes
import io
import mmap
import os
import pickle
import weakref

_regions: list[tuple[int, int, weakref.ref]] = []  # (address, size, map) of each snapshot map, in load order
_files: list[tuple[str, str, int] | None] = []  # per map: (device, inode, file offset at its start), from maps
PAGE = mmap.PAGESIZE
PRESENT, SWAPPED, FILE_PAGE = 1 << 63, 1 << 62, 1 << 61
# Bound when the kernel imports fixloop, before any candidate: a candidate that wraps `os.pread`,
# `pickle.Pickler` or copyreg's table cannot make a frame it wrote read as unwritten (judge.py).
_open, _pread, _close, _O_RDONLY = os.open, os.pread, os.close, os.O_RDONLY
_Pickler, _BytesIO = pickle.Pickler, io.BytesIO
_DISPATCH = dict(copyreg.dispatch_table)


def register(mapped: mmap.mmap) -> None:
    """Remember a snapshot map (copy-on-write, of the whole file); held weakly: it lives as long
    as the values whose buffers it holds."""
    with contextlib.suppress(TypeError, ValueError):
        address = ctypes.addressof(ctypes.c_char.from_buffer(mapped))
        _regions.append((address, len(mapped), weakref.ref(mapped)))
        spans = _spans(address, 1)
        _files.append((spans[0][2], spans[0][3], spans[0][4]) if spans else None)


def region(index: int) -> memoryview | None:
    """The judge's side: map `index` as it was when the judge was forked."""
    if isinstance(index, int) and 0 <= index < len(_regions):
        alive = _regions[index][2]()
        return memoryview(alive) if alive is not None else None
    return None


def locate(buffer, pages: bool = True) -> tuple[int, int, int] | None:
    """(map index, offset, length) when `buffer` lies in a snapshot map whose pages it spans were
    never written by this process; None otherwise (the bytes must travel). `pages` False: where it
    lies, unread whether written (the judge, whose copy of the map no candidate code touched)."""
    if not _regions:
        return None
    view = memoryview(buffer)
    if not view.contiguous or view.nbytes < PAGE:
        return None
    address = _address(view)
    if address is None:
        return None
    for index, (start, size, alive) in enumerate(_regions):
        if start <= address and address + view.nbytes <= start + size and alive() is not None:
            if not pages or (_as_loaded(index, address, view.nbytes) and _clean(address, view.nbytes)):
                return index, address - start, view.nbytes
            return None
    return None


def _address(view: memoryview) -> int | None:
    if not view.readonly:
        with contextlib.suppress(TypeError, ValueError):
            return ctypes.addressof(ctypes.c_char.from_buffer(view.cast("B")))
    try:
        import numpy as np
    except ImportError:
        return None
    with contextlib.suppress(Exception):
        return int(np.frombuffer(view.cast("B"), dtype=np.uint8).ctypes.data)
    return None


def _as_loaded(index: int, address: int, nbytes: int) -> bool:
    """[address, address + nbytes) is still mapped from snapshot map `index`'s file, each byte at its
    place in the file (no other file, memfd or anonymous mapping put over it since the load)."""
    loaded = _files[index] if index < len(_files) else None
    if loaded is None:
        return False
    device, inode, first = loaded
    start = _regions[index][0]
    covered = address
    for low, high, dev, ino, offset in _spans(address, nbytes):
        if low > covered or (dev, ino) != (device, inode) or offset - low != first - start:
            return False
        covered = max(covered, high)
    return covered >= address + nbytes


@contextlib.contextmanager
def one_reading():
    """Inside: /proc/self/maps is read once, for every buffer packed (a frame's dozens of buffers)."""
    _held.append(None)
    try:
        yield
    finally:
        _held.pop()


_held: list[bytes | None] = []


def _spans(address: int, nbytes: int) -> list[tuple[int, int, str, str, int]]:
    """The mappings /proc/self/maps lists over [address, address + nbytes), in order: (start, end,
    device, inode, file offset); [] when it cannot be read."""
    text = _held[-1] if _held else None
    if text is None:
        text = _maps()
        if _held:
            _held[-1] = text
    out, end = [], address + nbytes
    for line in text.split(b"\n"):
        fields = line.split(None, 5)
        if len(fields) < 5:
            continue
        low, _, high = fields[0].partition(b"-")
        low, high = int(low, 16), int(high, 16)
        if high > address and low < end:
            out.append((low, high, fields[3].decode(), fields[4].decode(), int(fields[2], 16)))
    return out


def _maps() -> bytes:
    try:
        fd = _open("/proc/self/maps", _O_RDONLY)
    except OSError:
        return b""
    chunks, at = [], 0
    try:
        while True:
            chunk = _pread(fd, 1 << 16, at)
            if not chunk:
                break
            chunks.append(chunk)
            at += len(chunk)
    except OSError:
        return b""
    finally:
        _close(fd)
    return b"".join(chunks)


def _clean(address: int, nbytes: int) -> bool:
    """No page of [address, address + nbytes) was written (each is a file page or not yet read)."""
    first, last = address // PAGE, (address + nbytes - 1) // PAGE
    try:
        fd = _open("/proc/self/pagemap", _O_RDONLY)
    except OSError:
        return False
    try:
        data = _pread(fd, (last - first + 1) * 8, first * 8)
    except OSError:
        return False
    finally:
        _close(fd)
    if len(data) != (last - first + 1) * 8:
        return False
    try:
        import numpy as np
    except ImportError:
        import array

        entries = array.array("Q", data)
        return all(e & FILE_PAGE or not e & (PRESENT | SWAPPED) for e in entries)
    entries = np.frombuffer(data, dtype=np.uint64)
    written = ((entries & np.uint64(FILE_PAGE)) == 0) & ((entries & np.uint64(PRESENT | SWAPPED)) != 0)
    return not bool(written.any())


def arrow_reduce(obj):
    """A pandas Arrow-backed array pickled with its chunks as they are (one chunk, or the list of
    them: pandas' __setstate__ rebuilds the chunked array of either): pandas' __getstate__ calls
    combine_chunks(), which copies every buffer (a column read by read_csv has ~14 chunks)."""
    cls = type(obj)
    if not cls.__module__.startswith("pandas."):
        return None
    data = getattr(obj, "_pa_array", None)
    chunks = getattr(data, "num_chunks", 0)
    if data is None or not chunks or not hasattr(obj, "__setstate__"):
        return None
    state = dict(obj.__dict__)
    state["_pa_array"] = data.chunk(0) if chunks == 1 else list(data.chunks)
    if "_cache" in state:
        state["_cache"] = {}
    return _newobj, (cls,), state


def _newobj(cls, *args):
    return cls.__new__(cls, *args)


_newobj.__name__ = "__newobj__"  # pickle writes NEWOBJ: the class is named, not this function


class _Unmapped(Exception):
    pass


def fingerprint(value, pages: bool = True):
    """What `value` is, cheaply, when its data lies in clean snapshot pages: its out-of-band pickle
    (shape, dtypes, names, small buffers' bytes) and where each large buffer lies. Equal
    fingerprints before and after a run mean the run did not change the value. None when some large
    buffer is not in a snapshot map or has a written page, or the value holds object arrays (their
    pickle would be the full copy this avoids). `pages` False: see `locate`."""
    if not _regions:
        return None
    out = _BytesIO()
    pickler = _Fingerprinter(out, pages)
    try:
        with one_reading():
            pickler.dump(value)
    except Exception:
        return None
    return out.getvalue(), tuple(pickler.places)


class _Fingerprinter(_Pickler):
    dispatch_table = _DISPATCH  # its own copy, made at import (read by the C pickler when it is made)

    def __init__(self, file, pages: bool):
        super().__init__(file, protocol=5, buffer_callback=self.keep)
        self.pages, self.places = pages, []

    def reducer_override(self, obj):
        if type(obj).__name__ == "ndarray" and getattr(obj, "dtype", None) is not None \
                and obj.dtype.kind == "O" and obj.size > 1000:
            raise _Unmapped
        if type(obj).__module__.startswith("pandas."):
            reduced = arrow_reduce(obj)
            if reduced is not None:
                return reduced
        return NotImplemented

    def keep(self, buffer) -> None:
        raw = buffer.raw()
        if raw.nbytes < PAGE:
            self.places.append(bytes(raw))
            return
        where = locate(raw, self.pages)
        if where is None:
            raise _Unmapped
        self.places.append(where)
