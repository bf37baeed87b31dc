"""Inputs by name and SHA-256 (STYLE 5).

Every file the compendium reads is listed in ``data/registry.csv`` with its SHA-256, its
public URL (the authors' repository at the pinned commit, or UCI) and its path inside the
local mirror. :func:`fetch` returns a verified local copy in the git-ignored cache, through a
:func:`pooch.create` store whose registry is ``data/registry.csv``:

1. a cached copy whose hash matches is used as it is (pooch checks it);
2. otherwise the mirror (``../shared`` by default, see :func:`analysis.paths.mirror_dir`) is
   copied (gzip mirrors decompressed) by :class:`MirrorDownloader`, pooch's custom downloader;
3. otherwise the file is downloaded from its URL (members of a zip archive are extracted).

Pooch hashes the new file before moving it into place. A missing file or a wrong hash raises
:class:`InputError` with one line naming the file, the expected hash and the actual hash;
nothing partial is left in the cache.
"""
from __future__ import annotations

import functools
import gzip
import os
import re
import shutil
import tempfile
import zipfile
from pathlib import Path

import pandas as pd
import pooch
from tqdm import tqdm  # not tqdm.auto: imported by every notebook, it would warn there (with a path)

from . import paths

pooch.get_logger().setLevel("WARNING")  # one line per problem, not per copied file


class InputError(RuntimeError):
    """An input is missing or its SHA-256 differs from the registry."""


@functools.lru_cache(maxsize=1)
def registry() -> pd.DataFrame:
    """The input registry: one row per file (``name, sha256, url, mirror, compression, source``)."""
    return pd.read_csv(paths.INPUT_REGISTRY, dtype=str).set_index("name")


def sha256_of(path: Path) -> str:
    """SHA-256 hex digest of a file."""
    return pooch.file_hash(str(path), alg="sha256")


def _entry(name: str) -> pd.Series:
    reg = registry()
    if name not in reg.index:
        raise InputError(f"{name}: not in the input registry {paths.INPUT_REGISTRY.name} "
                         f"(expected sha256 unknown, actual: not fetched)")
    return reg.loc[name]


def store() -> pooch.Pooch:
    """The pooch store of every registered input (cache folder :func:`analysis.paths.cache_dir`)."""
    reg = registry()
    return pooch.create(path=paths.cache_dir(), base_url="",
                        registry={n: f"sha256:{h}" for n, h in reg["sha256"].items()},
                        urls=reg["url"].to_dict(), allow_updates=True)


class MirrorDownloader:
    """Pooch downloader: the local mirror's copy if there is one, else the public URL.

    ``offline`` forbids the download (the error names the mirror path looked at).
    """

    def __init__(self, name: str, entry: pd.Series, offline: bool):
        self.name, self.entry, self.offline = name, entry, offline
        mirror = paths.mirror_dir()
        self.source = mirror / entry["mirror"] if mirror is not None else None

    def __call__(self, url: str, output_file, pooch_obj, check_only: bool = False):
        if check_only:
            return (self.source is not None and self.source.exists()) or not self.offline
        if self.source is not None and self.source.exists():
            opener = gzip.open if self.entry["compression"] == "gzip" else open
            with opener(self.source, "rb") as fin, open(output_file, "wb") as fout:
                shutil.copyfileobj(fin, fout, 1 << 20)
            return None
        expected = self.entry["sha256"]
        if self.offline:
            where = self.source if self.source is not None else "no mirror configured"
            raise InputError(f"{self.name}: missing (offline; not in mirror: {where}): "
                             f"expected sha256 {expected}, actual: missing")
        try:
            if "#" in url:  # a member of a zip archive
                zip_url, member = url.split("#", 1)
                with tempfile.TemporaryDirectory() as tmpdir:
                    archive = Path(tmpdir) / "archive.zip"
                    pooch.HTTPDownloader(progressbar=True)(zip_url, str(archive), pooch_obj)
                    with zipfile.ZipFile(archive) as zf, zf.open(member) as fin, open(output_file, "wb") as fout:
                        shutil.copyfileobj(fin, fout, 1 << 20)
            else:
                pooch.HTTPDownloader(progressbar=True)(url, output_file, pooch_obj)
        except Exception as exc:  # network errors: one line, no partial file
            raise InputError(f"{self.name}: could not download {url}: expected sha256 {expected}, "
                             f"actual: missing ({type(exc).__name__})") from None
        return None


_verified: set[Path] = set()
_GOT = re.compile(r"but got ([0-9a-fA-F]+)")


def fetch(name: str, *, offline: bool | None = None) -> Path:
    """Return the verified local path of input ``name`` (a registry name).

    ``offline`` (default: env ``PROXY_AUDIT_OFFLINE`` set to 1) forbids downloads.
    """
    entry = _entry(name)
    target = paths.cache_dir() / name
    if target in _verified and target.exists():
        return target
    if offline is None:
        offline = os.environ.get("PROXY_AUDIT_OFFLINE", "") == "1"
    try:
        got = Path(store().fetch(name, downloader=MirrorDownloader(name, entry, offline)))
    except ValueError as exc:  # pooch: the new file's hash differs (it has deleted the file)
        m = _GOT.search(str(exc))
        raise InputError(f"{name}: sha256 mismatch: expected {entry['sha256']}, "
                         f"actual {m.group(1) if m else 'unknown'}") from None
    _verified.add(got)
    return got


def fetch_all(names: list[str] | None = None, *, progress: bool = True) -> list[Path]:
    """Fetch and verify every registered input (or ``names``); stops at the first error."""
    names = list(registry().index) if names is None else names
    return [fetch(n) for n in tqdm(names, desc="inputs", unit="file", disable=not progress)]


def read_csv(name: str, **kwargs) -> pd.DataFrame:
    """Fetch ``name`` and read it with :func:`pandas.read_csv`."""
    return pd.read_csv(fetch(name), **kwargs)
