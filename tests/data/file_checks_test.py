"""Damaged and unusual corpus files: a truncated gzip file and old Mac line endings are refused
with the file's name on every reading path (in memory, the stream's counting pass, the quick
check of an uncounted stream); CR LF and U+2028 read the same on both paths; fingerprints
tell a changed file from a moved or touched one."""

import gzip
import os

import pytest

from zoo.data import check, check_files, load_corpus, materialise, open_stream
from zoo.data.files import changes, check_gzip, file_fingerprint, recording_reads

SOURCES = [f"Satz Nummer {i} steht hier." for i in range(3000)]
TARGETS = [f"Sentence number {i} is here." for i in range(3000)]


def _text(lines, end="\n"):
    return "".join(line + end for line in lines).encode("utf-8")


def _write_pair(folder, split, source, target, compress=False):
    for lang, data in (("de", source), ("en", target)):
        path = folder / f"{split}.{lang}{'.gz' if compress else ''}"
        path.write_bytes(gzip.compress(data) if compress else data)
    return folder / "{split}"


def _truncated_gzip_corpus(tmp_path):
    prefix = _write_pair(tmp_path, "train", _text(SOURCES), _text(TARGETS), compress=True)
    whole = (tmp_path / "train.de.gz").read_bytes()
    (tmp_path / "train.de.gz").write_bytes(whole[: len(whole) // 2])
    return str(prefix), str(tmp_path / "train.de.gz")


def test_a_truncated_gzip_file_is_refused_by_name_on_every_path(tmp_path):
    prefix, damaged = _truncated_gzip_corpus(tmp_path)
    stream = open_stream(prefix, "de", "en", "train")
    for read in (
        lambda: load_corpus(prefix, "de", "en", "train"),  # in memory
        lambda: check(stream),  # the stream's counting pass
        lambda: check_files(stream),  # a stream run with --steps-per-epoch
        lambda: check_gzip(damaged),
    ):
        with pytest.raises(ValueError, match="damaged or truncated gzip file") as error:
            read()
        assert str(error.value).startswith(damaged)
    # TextLineDataset alone reads the first half without a word: what the checks prevent.
    read = sum(1 for _ in stream.lines())
    assert 0 < read < len(SOURCES)


def test_intact_gzip_files_of_one_or_more_members_pass(tmp_path):
    data = _text(SOURCES)
    (tmp_path / "one.gz").write_bytes(gzip.compress(data))
    (tmp_path / "two.gz").write_bytes(gzip.compress(data[:1000]) + gzip.compress(data[1000:]))
    for name in ("one.gz", "two.gz"):
        check_gzip(str(tmp_path / name))
    prefix = _write_pair(tmp_path, "train", data, _text(TARGETS), compress=True)
    in_memory = load_corpus(str(prefix), "de", "en", "train")
    assert in_memory.source == SOURCES and in_memory.target == TARGETS
    assert check(open_stream(str(prefix), "de", "en", "train")) == len(SOURCES)


def test_old_mac_line_endings_are_refused_by_name_on_every_path(tmp_path):
    prefix = str(_write_pair(tmp_path, "val", _text(SOURCES, "\r"), _text(TARGETS, "\r")))
    stream = open_stream(prefix, "de", "en", "val")
    for read in (
        lambda: load_corpus(prefix, "de", "en", "val"),
        lambda: materialise(stream),
        lambda: check(stream),
        lambda: check_files(stream),
    ):
        with pytest.raises(ValueError, match="CR alone") as error:
            read()
        assert str(error.value).startswith(str(tmp_path / "val.de"))
    tsv = tmp_path / "pairs.tsv"
    tsv.write_bytes(b"ein Hund\ta dog\rzwei Hunde\ttwo dogs\r")
    with pytest.raises(ValueError, match=f"{tsv}: its lines end in CR alone"):
        load_corpus(str(tsv), "de", "en", "train")


def test_crlf_and_unicode_separators_read_alike_in_memory_and_streamed(tmp_path):
    source = ["ein Hund\u2028rennt", "zwei Katzen", "drei Vögel"]
    target = ["a dog\u2029runs", "two cats", "three birds"]
    prefix = str(_write_pair(tmp_path, "val", _text(source, "\r\n"), _text(target, "\r\n")))
    in_memory = load_corpus(prefix, "de", "en", "val")
    streamed = materialise(open_stream(prefix, "de", "en", "val"))
    assert len(in_memory) == len(streamed) == 3  # U+2028 and U+2029 split nothing
    assert in_memory.pairs() == streamed.pairs()
    assert in_memory.target[1:] == ["two cats", "three birds"]


def test_fingerprints_name_what_changed_and_ignore_a_touch_of_a_small_file(tmp_path):
    path = tmp_path / "train.de"
    path.write_bytes(_text(SOURCES))
    before = [file_fingerprint(path)]
    os.utime(path, ns=(1, 1))  # touched: same content, hashed whole
    assert changes(before, [file_fingerprint(path)]) == []
    path.write_bytes(_text(SOURCES[:-1] + ["Ein anderer Satz."]))
    (line,) = changes(before, [file_fingerprint(path)])
    assert line.startswith(f"{path}: ") and "content" in line and "size" in line
    moved = tmp_path / "moved.de"
    moved.write_bytes(_text(SOURCES))
    assert changes(before, [file_fingerprint(moved)]) == []  # moved, same content
    assert "now" in changes(before, [])[0]


def test_a_large_file_changed_in_its_middle_is_told_by_its_time(tmp_path):
    path = tmp_path / "big.de"
    data = bytearray(b"x" * (5 * 2**20))
    path.write_bytes(data)
    before = [file_fingerprint(path)]
    data[len(data) // 2] = ord("y")  # outside the hashed ends
    path.write_bytes(data)
    os.utime(path, ns=(before[0]["mtime_ns"] + 10**9, before[0]["mtime_ns"] + 10**9))
    (line,) = changes(before, [file_fingerprint(path)])
    assert "modified" in line and "first and last MiB" in line


def test_recording_reads_lists_the_files_a_corpus_load_read(tmp_path):
    prefix = str(_write_pair(tmp_path, "train", _text(SOURCES), _text(TARGETS)))
    with recording_reads() as read:
        load_corpus(prefix, "de", "en", "train")
    assert read == [str(tmp_path / "train.de"), str(tmp_path / "train.en")]
    with recording_reads() as read:
        materialise(open_stream(prefix, "de", "en", "train"))
    assert read == [str(tmp_path / "train.de"), str(tmp_path / "train.en")]


def test_the_prepared_files_of_a_tfds_split_are_recorded_as_read(tmp_path):
    tfds = pytest.importorskip("tensorflow_datasets")
    name = "ted_hrlr_translate/pt_to_en"
    folder = tfds.builder(name, data_dir=str(tmp_path)).data_dir
    os.makedirs(folder)
    shards = [f"ted_hrlr_translate-{split}.tfrecord-00000-of-00001" for split in ("train", "test")]
    for shard in shards:
        (tmp_path / folder / shard).write_bytes(b"records")
    stream = open_stream(f"tfds:{name}", "pt", "en", "train", tfds_data_dir=str(tmp_path))
    with recording_reads() as read:
        check_files(stream)
    assert read == [os.path.join(folder, shards[0])]  # the train split's shard alone
    assert file_fingerprint(read[0])["size"] == len(b"records")
