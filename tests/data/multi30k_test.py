"""Multi30k: local copies first, else a download through keras.utils.get_file, tested offline
against a `file://` origin that the tests fill with small gzip files."""

import gzip
import hashlib

import pytest

from zoo.data import MissingDataError, load_corpus, multi30k
from zoo.data.files import MissingDataError as Same


@pytest.fixture
def origin(tmp_path, monkeypatch):
    """A local origin holding val.de.gz and val.en.gz, with their sha256 pinned."""
    remote = tmp_path / "remote"
    remote.mkdir()
    payload = {"val.de": b"Ein Hund.\nZwei Katzen.\n", "val.en": b"A dog.\nTwo cats.\n"}
    digests = {}
    for name, text in payload.items():
        data = gzip.compress(text)
        (remote / f"{name}.gz").write_bytes(data)
        digests[name] = hashlib.sha256(data).hexdigest()
    monkeypatch.setattr(multi30k, "BASE_URL", remote.as_uri() + "/")
    monkeypatch.setattr(multi30k, "SHA256", digests)
    return remote


def test_local_copy_is_used(data_root, monkeypatch):
    (data_root / "multi30k").mkdir()
    (data_root / "multi30k" / "val.de").write_text("Ein Hund.\n", encoding="utf-8")
    (data_root / "multi30k" / "val.en").write_text("A dog.\n", encoding="utf-8")
    monkeypatch.setattr(multi30k, "download_file", lambda *a, **k: pytest.fail("downloaded"))
    corpus = load_corpus("multi30k", "de", "en", "validation")
    assert (corpus.split, corpus.source, corpus.target) == ("val", ["Ein Hund."], ["A dog."])


def test_download_is_checked_unpacked_and_cached(data_root, origin):
    corpus = load_corpus("multi30k", "de", "en", "val")
    assert corpus.pairs() == [("Ein Hund.", "A dog."), ("Zwei Katzen.", "Two cats.")]
    cached = data_root.parent / "cache" / "multi30k"
    assert sorted(p.name for p in cached.iterdir()) == ["val.de", "val.en"]  # no .gz left
    for path in origin.iterdir():
        path.unlink()  # the cache serves from now on
    assert load_corpus("multi30k", "en", "de", "dev").source == ["A dog.", "Two cats."]
    assert multi30k.multi30k_path("val", "en", download=False) == cached / "val.en"


def test_a_wrong_hash_is_refused_and_nothing_is_kept(data_root, origin, monkeypatch):
    wrong = "0" * 64
    monkeypatch.setitem(multi30k.SHA256, "val.de", wrong)
    actual = hashlib.sha256((origin / "val.de.gz").read_bytes()).hexdigest()
    with pytest.raises(MissingDataError) as info:
        load_corpus("multi30k", "de", "en", "val")
    message = str(info.value)
    assert f"has sha256 {actual}, expected {wrong}" in message
    assert (origin / "val.de.gz").as_uri() in message and "set ZOO_DATA_DIR" in message
    assert not (data_root.parent / "cache" / "multi30k" / "val.de.gz").exists()
    assert not (data_root.parent / "cache" / "multi30k" / "val.de").exists()


def test_no_copy_and_no_network_says_how_to_provide_one(data_root, tmp_path, monkeypatch):
    monkeypatch.setattr(multi30k, "BASE_URL", (tmp_path / "nowhere").as_uri() + "/")
    with pytest.raises(MissingDataError, match="set ZOO_DATA_DIR") as info:
        load_corpus("multi30k", "de", "en", "train")
    assert "train.de" in str(info.value) and "download from file://" in str(info.value)
    assert isinstance(info.value, ValueError) and MissingDataError is Same
    with pytest.raises(MissingDataError, match="set ZOO_DATA_DIR"):
        load_corpus("multi30k", "de", "en", "train", download=False)


def test_official_origins_and_bad_arguments():
    assert multi30k.url("test2016", "en") == (
        "https://raw.githubusercontent.com/multi30k/dataset/"
        f"{multi30k.COMMIT}/data/task1/raw/test_2016_flickr.en.gz"
    )
    assert set(multi30k.SHA256) == {
        f"{split}.{lang}" for split in multi30k.SPLITS for lang in multi30k.LANGUAGES
    }
    with pytest.raises(ValueError, match="splits"):
        multi30k.canonical_split("test2017")
    with pytest.raises(ValueError, match="languages"):
        multi30k.multi30k_path("train", "es")


def test_real_multi30k(multi30k_train):
    assert len(multi30k_train) == 29000
    test = load_corpus("multi30k", "en", "fr", "test")
    assert len(test) == 1000 and test.split == "test2016"
