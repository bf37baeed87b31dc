"""Inputs by name and SHA-256 (STYLE 5).

Every file the compendium reads is listed in ``data/registry.csv`` with its SHA-256, its
public URL (the authors' repository at the pinned commit, or UCI) and its path inside the
local mirror. :func:`fetch` returns a verified local copy in the git-ignored cache:

1. a cached copy whose hash matches is used as it is;
2. otherwise the mirror (``../shared`` by default, see :func:`analysis.paths.mirror_dir`)
   is copied (gzip mirrors are decompressed) into a temporary file, hashed, and renamed
   into place only if the hash matches;
3. otherwise the file is downloaded with :mod:`pooch`, which checks the same hash.

A missing file or a wrong hash raises :class:`InputError` with one line naming the file,
the expected hash and the actual hash; nothing partial is left in the cache.
"""
from __future__ import annotations

import functools
import gzip
import hashlib
import os
import shutil
import tempfile
from pathlib import Path

import pandas as pd

from . import paths


class InputError(RuntimeError):
    """An input is missing or its SHA-256 differs from the registry."""


@functools.lru_cache(maxsize=1)
def registry() -> pd.DataFrame:
    """The input registry: one row per file (``name, sha256, url, mirror, compression, source``)."""
    return pd.read_csv(paths.INPUT_REGISTRY, dtype=str).set_index("name")


def sha256_of(path: Path) -> str:
    """SHA-256 hex digest of a file, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _entry(name: str) -> pd.Series:
    reg = registry()
    if name not in reg.index:
        raise InputError(f"{name}: not in the input registry {paths.INPUT_REGISTRY.name} "
                         f"(expected sha256 unknown, actual: not fetched)")
    return reg.loc[name]


def _copy_from_mirror(src: Path, dest_tmp: Path, compression: str) -> None:
    opener = gzip.open if compression == "gzip" else open
    with opener(src, "rb") as fin, open(dest_tmp, "wb") as fout:
        shutil.copyfileobj(fin, fout, 1 << 20)


def _install(name: str, tmp: Path, target: Path, expected: str) -> Path:
    actual = sha256_of(tmp)
    if actual != expected:
        tmp.unlink(missing_ok=True)
        raise InputError(f"{name}: sha256 mismatch: expected {expected}, actual {actual}")
    os.replace(tmp, target)
    return target


def _download(name: str, url: str, target: Path, expected: str) -> Path:
    import pooch  # imported lazily: most runs never download

    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmpdir:
        try:
            if "#" in url:  # a member of a zip archive
                zip_url, member = url.split("#", 1)
                files = pooch.retrieve(zip_url, known_hash=None, path=tmpdir,
                                       processor=pooch.Unzip(members=[member]), progressbar=True)
                got = Path(files[0])
            else:
                got = Path(pooch.retrieve(url, known_hash=None, path=tmpdir, progressbar=True))
        except Exception as exc:  # network errors: one line, no partial file
            raise InputError(f"{name}: could not download {url}: expected sha256 {expected}, "
                             f"actual: missing ({type(exc).__name__})") from None
        tmp = target.with_suffix(target.suffix + ".part")
        shutil.move(str(got), tmp)
        return _install(name, tmp, target, expected)


_verified: set[Path] = set()


def fetch(name: str, *, offline: bool | None = None) -> Path:
    """Return the verified local path of input ``name`` (a registry name).

    ``offline`` (default: env ``PROXY_AUDIT_OFFLINE`` set to 1) forbids downloads.
    """
    entry = _entry(name)
    expected = entry["sha256"]
    target = paths.cache_dir() / name
    if target in _verified and target.exists():
        return target
    if target.exists():
        if sha256_of(target) == expected:
            _verified.add(target)
            return target
        target.unlink()  # a stale or corrupted cache entry is replaced, never trusted
    target.parent.mkdir(parents=True, exist_ok=True)
    mirror = paths.mirror_dir()
    src = mirror / entry["mirror"] if mirror is not None else None
    if src is not None and src.exists():
        tmp = target.with_suffix(target.suffix + ".part")
        try:
            _copy_from_mirror(src, tmp, entry["compression"])
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        _install(name, tmp, target, expected)
    else:
        if offline is None:
            offline = os.environ.get("PROXY_AUDIT_OFFLINE", "") == "1"
        if offline:
            where = src if src is not None else "no mirror configured"
            raise InputError(f"{name}: missing (offline; not in mirror: {where}): "
                             f"expected sha256 {expected}, actual: missing")
        _download(name, entry["url"], target, expected)
    _verified.add(target)
    return target


def fetch_all(names: list[str] | None = None, *, progress: bool = True) -> list[Path]:
    """Fetch and verify every registered input (or ``names``); stops at the first error."""
    from tqdm.auto import tqdm

    names = list(registry().index) if names is None else names
    return [fetch(n) for n in tqdm(names, desc="inputs", unit="file", disable=not progress)]


def read_csv(name: str, **kwargs) -> pd.DataFrame:
    """Fetch ``name`` and read it with :func:`pandas.read_csv`."""
    return pd.read_csv(fetch(name), **kwargs)
