"""Inputs by name and SHA-256 (analysis.data): the pooch store, the mirror downloader, one-line errors."""
from __future__ import annotations

import gzip
import hashlib

import pandas as pd
import pytest

from analysis import data, paths


@pytest.fixture
def fake_inputs(tmp_path, monkeypatch):
    """A registry of two files in a temporary mirror (one gzip), and an empty cache."""
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    good = b"a,b\n1,2\n"
    (mirror / "good.csv").write_bytes(good)
    with gzip.open(mirror / "packed.csv.gz", "wb") as fh:
        fh.write(good)
    (mirror / "bad.csv").write_bytes(b"tampered\n")
    sha = hashlib.sha256(good).hexdigest()
    reg = pd.DataFrame([
        {"name": "x/good.csv", "sha256": sha, "url": "http://127.0.0.1:9/none", "mirror": "good.csv",
         "compression": "none", "source": "test"},
        {"name": "x/packed.csv", "sha256": sha, "url": "http://127.0.0.1:9/none", "mirror": "packed.csv.gz",
         "compression": "gzip", "source": "test"},
        {"name": "x/bad.csv", "sha256": sha, "url": "http://127.0.0.1:9/none", "mirror": "bad.csv",
         "compression": "none", "source": "test"},
        {"name": "x/absent.csv", "sha256": sha, "url": "http://127.0.0.1:9/none", "mirror": "absent.csv",
         "compression": "none", "source": "test"},
    ])
    reg_path = tmp_path / "registry.csv"
    reg.to_csv(reg_path, index=False)
    monkeypatch.setattr(paths, "INPUT_REGISTRY", reg_path)
    monkeypatch.setenv("PROXY_AUDIT_MIRROR", str(mirror))
    monkeypatch.setenv("PROXY_AUDIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PROXY_AUDIT_OFFLINE", "1")
    data.registry.cache_clear()
    data._verified.clear()
    yield tmp_path / "cache", sha
    data.registry.cache_clear()
    data._verified.clear()


def test_fetch_from_mirror_and_gzip(fake_inputs):
    cache, sha = fake_inputs
    for name in ("x/good.csv", "x/packed.csv"):
        p = data.fetch(name)
        assert p.read_bytes() == b"a,b\n1,2\n" and data.sha256_of(p) == sha


def test_hash_mismatch_is_one_line_and_leaves_nothing(fake_inputs):
    cache, sha = fake_inputs
    with pytest.raises(data.InputError) as exc:
        data.fetch("x/bad.csv")
    msg = str(exc.value)
    assert "\n" not in msg and "x/bad.csv" in msg and sha in msg
    assert hashlib.sha256(b"tampered\n").hexdigest() in msg
    assert not list(cache.rglob("*bad*"))


def test_missing_file_is_one_line(fake_inputs):
    with pytest.raises(data.InputError) as exc:
        data.fetch("x/absent.csv")
    msg = str(exc.value)
    assert "\n" not in msg and "x/absent.csv" in msg and "missing" in msg and fake_inputs[1] in msg


def test_corrupted_cache_is_replaced(fake_inputs):
    cache, sha = fake_inputs
    p = data.fetch("x/good.csv")
    p.write_bytes(b"corrupted")
    data._verified.clear()
    assert data.sha256_of(data.fetch("x/good.csv")) == sha


def test_registry_lists_every_released_file_with_url():
    reg = data.registry()
    assert reg.loc["uci/diabetes130/uci_diabetes_130hosp.csv", "sha256"].startswith("f792c388")
    assert reg.loc["uci/diabetes130/IDs_mapping.csv", "sha256"].startswith("f1bb82b4")
    rel = reg[reg["source"].str.startswith("wuzengqing001225")]
    assert len(rel) >= 390
    assert all(u.startswith("https://raw.githubusercontent.com/wuzengqing001225/llm_proxy_reliance/") for u in rel["url"])
    assert reg["sha256"].str.fullmatch(r"[0-9a-f]{64}").all()


# --- downloads through the pooch store (a file server on 127.0.0.1 only) ----------------------

def _one_entry_registry(tmp_path, monkeypatch, name, sha, url):
    reg = pd.DataFrame([{"name": name, "sha256": sha, "url": url, "mirror": "not-there.csv", "compression": "none",
                         "source": "test"}])
    reg.to_csv(tmp_path / "registry.csv", index=False)
    monkeypatch.setattr(paths, "INPUT_REGISTRY", tmp_path / "registry.csv")
    monkeypatch.setenv("PROXY_AUDIT_MIRROR", str(tmp_path / "empty-mirror"))
    monkeypatch.setenv("PROXY_AUDIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PROXY_AUDIT_OFFLINE", "0")
    data.registry.cache_clear()
    data._verified.clear()


def test_download_is_verified_by_the_store(tmp_path, monkeypatch, file_server):
    root, url = file_server
    body = b"x,y\n3,4\n"
    (root / "f.csv").write_bytes(body)
    _one_entry_registry(tmp_path, monkeypatch, "d/f.csv", hashlib.sha256(body).hexdigest(), f"{url}/f.csv")
    p = data.fetch("d/f.csv")
    assert p == tmp_path / "cache" / "d" / "f.csv" and p.read_bytes() == body
    assert data.store().registry["d/f.csv"] == "sha256:" + hashlib.sha256(body).hexdigest()
    data.registry.cache_clear()


def test_download_with_a_wrong_hash_is_one_line_and_leaves_nothing(tmp_path, monkeypatch, file_server):
    root, url = file_server
    (root / "f.csv").write_bytes(b"tampered\n")
    expected = hashlib.sha256(b"good\n").hexdigest()
    _one_entry_registry(tmp_path, monkeypatch, "d/f.csv", expected, f"{url}/f.csv")
    with pytest.raises(data.InputError) as exc:
        data.fetch("d/f.csv")
    msg = str(exc.value)
    assert "\n" not in msg and expected in msg and hashlib.sha256(b"tampered\n").hexdigest() in msg
    assert not [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]
    data.registry.cache_clear()


def test_a_member_of_a_zip_archive(tmp_path, monkeypatch, file_server):
    import zipfile

    root, url = file_server
    body = b"member,data\n"
    with zipfile.ZipFile(root / "a.zip", "w") as zf:
        zf.writestr("inner/m.csv", body)
        zf.writestr("other.csv", b"no")
    _one_entry_registry(tmp_path, monkeypatch, "z/m.csv", hashlib.sha256(body).hexdigest(), f"{url}/a.zip#inner/m.csv")
    assert data.fetch("z/m.csv").read_bytes() == body
    data.registry.cache_clear()


def test_unreachable_url_is_one_line(tmp_path, monkeypatch):
    _one_entry_registry(tmp_path, monkeypatch, "d/f.csv", "0" * 64, "http://127.0.0.1:9/f.csv")
    with pytest.raises(data.InputError) as exc:
        data.fetch("d/f.csv")
    assert "\n" not in str(exc.value) and "could not download" in str(exc.value) and "0" * 64 in str(exc.value)
    data.registry.cache_clear()
