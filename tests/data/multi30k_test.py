import gzip
import hashlib
import urllib.error

import pytest

from zoo.data import MissingDataError, load_corpus, multi30k
from zoo.data.errors import MissingDataError as Same


def test_local_copy_is_used(data_root, monkeypatch):
    (data_root / "multi30k").mkdir()
    (data_root / "multi30k" / "val.de").write_text("Ein Hund.\n", encoding="utf-8")
    (data_root / "multi30k" / "val.en").write_text("A dog.\n", encoding="utf-8")
    monkeypatch.setattr(multi30k, "fetch", lambda *a, **k: pytest.fail("must not download"))
    corpus = load_corpus("multi30k", "de", "en", "validation")
    assert (corpus.split, corpus.source, corpus.target) == ("val", ["Ein Hund."], ["A dog."])


def test_no_copy_and_no_network_says_how_to_provide_one(data_root, monkeypatch):
    def offline(address, timeout=60):
        raise urllib.error.URLError("network is unreachable")

    monkeypatch.setattr(multi30k, "fetch", offline)
    with pytest.raises(MissingDataError, match="set ZOO_DATA_DIR") as info:
        load_corpus("multi30k", "de", "en", "train")
    assert "train.de" in str(info.value) and "network is unreachable" in str(info.value)
    assert isinstance(info.value, ValueError) and MissingDataError is Same
    with pytest.raises(MissingDataError, match="set ZOO_DATA_DIR"):
        load_corpus("multi30k", "de", "en", "train", download=False)


def test_download_is_checked_and_cached(data_root, monkeypatch):
    payload = {"val.de": gzip.compress(b"Ein Hund.\n"), "val.en": gzip.compress(b"A dog.\n")}
    calls = []

    def fake_fetch(address, timeout=60):
        calls.append(address)
        return payload[address.rsplit("/", 1)[1].removesuffix(".gz")]

    monkeypatch.setattr(multi30k, "fetch", fake_fetch)
    monkeypatch.setattr(
        multi30k, "SHA256", {k: hashlib.sha256(v).hexdigest() for k, v in payload.items()}
    )
    corpus = load_corpus("multi30k", "de", "en", "val")
    assert corpus.source == ["Ein Hund."] and len(calls) == 2
    assert calls[0] == multi30k.BASE_URL + "val.de.gz" and multi30k.COMMIT in calls[0]
    load_corpus("multi30k", "de", "en", "val")
    assert len(calls) == 2  # cached
    monkeypatch.setattr(multi30k, "SHA256", {"val.de": "0" * 64, "val.en": "0" * 64})
    (data_root.parent / "cache" / "multi30k" / "val.de").unlink()
    with pytest.raises(MissingDataError, match="sha256"):
        load_corpus("multi30k", "de", "en", "val")


def test_remote_names_and_bad_arguments():
    assert multi30k.url("test2016", "en").endswith("/test_2016_flickr.en.gz")
    with pytest.raises(ValueError, match="splits"):
        multi30k.canonical_split("test2017")
    with pytest.raises(ValueError, match="languages"):
        multi30k.multi30k_path("train", "es")


def test_real_multi30k(multi30k_train):
    assert len(multi30k_train) == 29000
    test = load_corpus("multi30k", "en", "fr", "test")
    assert len(test) == 1000 and test.split == "test2016"
