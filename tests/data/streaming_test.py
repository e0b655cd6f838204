"""Streamed corpora (zoo.data.corpus, zoo.data.batching) against the in-memory path."""

import gzip

import numpy as np
import pytest

from zoo.data import (
    StreamCounter,
    StreamedCorpus,
    count_stream,
    make_dataset,
    materialise,
    open_stream,
    stream_dataset,
    stream_steps,
)
from zoo.data.files import read_parallel


def _write(path, lines, compress=False):
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    if compress:
        path = path.with_name(path.name + ".gz")
        data = gzip.compress(data)
    path.write_bytes(data)
    return path


def _pairs(stream, **kwargs):
    return [(s.decode(), t.decode()) for s, t in stream.lines(**kwargs).as_numpy_iterator()]


def _arrays(dataset):
    return [(f["source_ids"], f["target_ids"], y) for f, y in dataset.as_numpy_iterator()]


def _equal(a, b):
    return len(a) == len(b) and all(
        all(np.array_equal(x, y) for x, y in zip(p, q, strict=True))
        for p, q in zip(a, b, strict=True)
    )


@pytest.fixture
def files(tmp_path, small_corpus):
    """small_corpus (600 Multi30k pairs) as train.de/.en, their .gz twins and a .tsv.gz."""
    _write(tmp_path / "train.de", small_corpus.source)
    _write(tmp_path / "train.en", small_corpus.target)
    _write(tmp_path / "gz.de", small_corpus.source, compress=True)
    _write(tmp_path / "gz.en", small_corpus.target, compress=True)
    rows = [f"{t}\t{s}" for s, t in zip(small_corpus.source, small_corpus.target, strict=True)]
    _write(tmp_path / "train.tsv", rows, compress=True)
    return tmp_path


def test_stream_gives_the_in_memory_batches_when_its_buffer_holds_the_corpus(
    files, small_corpus, tokenizer_pair
):
    # Same seed, a buffer as large as the corpus, nothing dropped: the same permutation of
    # the same pairs, so the very batches make_dataset gives (sorted pools of 4 batches).
    stream = open_stream(str(files / "{split}"), "de", "en", "train")
    counts = count_stream(stream, *tokenizer_pair, max_length=None)
    assert counts["pairs"] == counts["kept"] == len(small_corpus)
    kwargs = dict(batch_size=16, max_length=None, seed=5, pool_batches=4)
    memory = make_dataset(small_corpus.source, small_corpus.target, *tokenizer_pair, **kwargs)
    streamed = stream_dataset(
        stream, *tokenizer_pair, shuffle_buffer=len(small_corpus), counts=counts, **kwargs
    )
    assert len(streamed) == len(memory) == 38
    assert _equal(_arrays(streamed), _arrays(memory))

    # Another epoch (seed) gives other batches; the same seed the same ones, and a rebuilt
    # epoch that skips its first batches the rest (what exact resume does).
    def epoch(seed):
        return stream_dataset(
            stream, *tokenizer_pair, shuffle_buffer=100, counts=counts, **{**kwargs, "seed": seed}
        )

    first = _arrays(epoch(7))
    assert _equal(_arrays(epoch(7)), first) and not _equal(_arrays(epoch(8)), first)
    assert _equal(_arrays(epoch(7).skip(10)), first[10:])


def test_plain_gzip_and_tsv_files_stream_the_pairs_the_readers_read(files, small_corpus):
    want = list(zip(small_corpus.source, small_corpus.target, strict=True))
    plain = open_stream(str(files / "{split}"), "de", "en", "train")
    compressed = StreamedCorpus(
        "gz", "de", "en", "train", "parallel", ((str(files / "gz.de.gz"), str(files / "gz.en.gz")),)
    )
    # The TSV holds target<TAB>source: swap reads it the other way round.
    tsv = StreamedCorpus("tsv", "de", "en", "train", "tsv", (str(files / "train.tsv.gz"),), True)
    for stream in (plain, compressed, tsv):
        assert _pairs(stream) == want, stream.kind
    assert open_stream(str(files / "{split}.tsv.gz"), "en", "de", "train").kind == "tsv"
    assert materialise(plain).source == small_corpus.source


def test_lines_follow_the_readers_rules(tmp_path):
    sources = ["\ufeff  Ein Hund. ", "zwei\x00Katzen", "", "drei", "\t vier\r"]
    targets = ["A dog.", "two cats", "empty source", "", "four"]
    _write(tmp_path / "x.de", sources)
    _write(tmp_path / "x.en", targets)
    stream = open_stream(str(tmp_path / "{split}"), "de", "en", "x")
    want = list(zip(*read_parallel(tmp_path / "x.de", tmp_path / "x.en"), strict=True))
    assert _pairs(stream) == want == [("Ein Hund.", "A dog."), ("zwei Katzen", "two cats"),
                                      ("vier", "four")]  # fmt: skip


def test_each_shard_reads_its_own_pairs_once(files, small_corpus):
    want = sorted(zip(small_corpus.source, small_corpus.target, strict=True))
    by_line = open_stream(str(files / "{split}"), "de", "en", "train")
    shards = [_pairs(by_line, num_shards=3, index=i) for i in range(3)]
    assert sorted(p for shard in shards for p in shard) == want
    assert [len(s) for s in shards] == [200, 200, 200]
    by_file = StreamedCorpus(
        "two", "de", "en", "train", "parallel",
        ((str(files / "train.de"), str(files / "train.en")),
         (str(files / "gz.de.gz"), str(files / "gz.en.gz"))),
    )  # fmt: skip
    first, second = (_pairs(by_file, num_shards=2, index=i) for i in range(2))
    assert sorted(first) == sorted(second) == want  # one file each
    with pytest.raises(ValueError, match=r"Shard index must be in \[0, 2\), got 2"):
        by_file.lines(num_shards=2, index=2)


def test_counts_drops_and_the_length_of_every_batching(files, tokenizer_pair):
    stream = open_stream(str(files / "{split}"), "de", "en", "train")
    counts = count_stream(stream, *tokenizer_pair, max_length=12)
    assert counts["kept"] + counts["too_long"] + counts["empty"] == counts["pairs"] == 600
    assert 0 < counts["too_long"] < 600 and sum(counts["histogram"]) == counts["kept"]
    for batching in ("pools", "buckets", "plain"):
        dataset = stream_dataset(
            stream, *tokenizer_pair, batch_size=16, max_length=12, batching=batching,
            counts=counts, shuffle_buffer=64,
        )  # fmt: skip
        batches = _arrays(dataset)
        assert len(batches) == len(dataset) == stream_steps(counts, 16, batching), batching
        assert sum(len(y) for _, _, y in batches) == counts["kept"]
        assert max(max(x.shape[1], y.shape[1] - 1) for x, _, y in batches) <= 12
    with pytest.raises(ValueError, match="counts were made with max_length=12"):
        stream_dataset(stream, *tokenizer_pair, max_length=20, counts=counts)
    with pytest.raises(ValueError, match="buckets' with max_length=None needs the counts"):
        stream_dataset(stream, *tokenizer_pair, batching="buckets", max_length=None)
    stream_dataset(stream, *tokenizer_pair, batching="buckets", max_length=12)  # no counts


def test_counter_counts_as_it_streams_what_the_counting_pass_counts(files, tokenizer_pair):
    stream = open_stream(str(files / "{split}"), "de", "en", "train")
    counts = count_stream(stream, *tokenizer_pair, max_length=12)  # NumPy's `usable` rule
    counter = StreamCounter(max_length=12)
    dataset = stream_dataset(
        stream, *tokenizer_pair, batch_size=16, max_length=12, shuffle_buffer=64, counter=counter
    )
    assert counter.counts()["pairs"] == 0  # nothing read before the first batch is asked for
    batches = _arrays(dataset)
    want = {key: counts[key] for key in ("pairs", "kept", "too_long", "empty", "max_length")}
    assert counter.counts() == want and counts["too_long"] > 0
    assert sum(len(y) for _, _, y in batches) == counts["kept"]
    _arrays(dataset)  # a second epoch adds to the counts
    assert counter.counts()["pairs"] == 2 * counts["pairs"]
    with pytest.raises(ValueError, match="the counter counts for max_length=12, received"):
        stream_dataset(stream, *tokenizer_pair, max_length=20, counter=counter)


def test_bad_files_raise_with_file_and_line(tmp_path, tokenizer_pair):
    _write(tmp_path / "short.de", ["eins", "zwei", "drei"])
    _write(tmp_path / "short.en", ["one", "two"])
    short = open_stream(str(tmp_path / "{split}"), "de", "en", "short")
    with pytest.raises(ValueError, match=r"differ in length.*short.de has 3 lines.*has 2"):
        count_stream(short, *tokenizer_pair, max_length=50)
    _write(tmp_path / "bad.tsv", ["eins\tone", "zwei two", "drei\tthree"], compress=True)
    bad = open_stream(str(tmp_path / "{split}.tsv.gz"), "de", "en", "bad")
    with pytest.raises(ValueError, match=r"bad.tsv.gz, line 2: expected exactly one tab"):
        count_stream(bad, *tokenizer_pair, max_length=50)
    (tmp_path / "utf.de").write_bytes(b"gut\nschlecht \xff\n")
    _write(tmp_path / "utf.en", ["good", "bad"])
    with pytest.raises(ValueError, match=r"utf.de, line 2: invalid UTF-8"):
        count_stream(open_stream(str(tmp_path / "{split}"), "de", "en", "utf"),
                     *tokenizer_pair, max_length=50)  # fmt: skip
    with pytest.raises(ValueError, match=r"missing .*nothing.de or .*nothing.en"):
        open_stream(str(tmp_path / "{split}"), "de", "en", "nothing")
    with pytest.raises(ValueError, match=r"put \{split\} in the name"):
        open_stream(str(tmp_path / "short"), "de", "en", "train")


def test_tokenizer_sample_is_seeded_bounded_and_uniform(files, small_corpus):
    stream = open_stream(str(files / "{split}"), "de", "en", "train")
    sources, targets = stream.sample(100, seed=1)
    assert len(sources) == len(targets) == 100 == len(set(sources))
    pairs = dict(zip(small_corpus.source, small_corpus.target, strict=True))
    assert all(pairs[s] == t for s, t in zip(sources, targets, strict=True))
    assert stream.sample(100, seed=1) == (sources, targets)
    assert stream.sample(100, seed=2)[0] != sources
    positions = [small_corpus.source.index(s) for s in sources]
    assert np.mean(positions) == pytest.approx(300, abs=60)  # not the first 100 lines
    assert stream.sample(10_000)[0] == small_corpus.source  # all of them, in order


def test_wmt14_streams_through_tfds():
    tfds = pytest.importorskip("tensorflow_datasets")
    stream = open_stream("wmt14", "en", "de", "val")
    assert stream.files == (("wmt14_translate/de-en", "validation"),)
    with pytest.raises(ValueError, match=r"wmt14 has the language pairs .*de-en.*'ja'"):
        open_stream("wmt14", "en", "ja", "train")
    with tfds.testing.mock_data(num_examples=7):
        pairs = _pairs(stream)
        shard = _pairs(stream, num_shards=2, index=1)
    assert len(pairs) == 7 and len(shard) == 3
    assert all(isinstance(s, str) and isinstance(t, str) for s, t in pairs)


def test_worker_stream_reads_its_shard_for_the_same_number_of_steps(files, tokenizer_pair):
    """Two workers: each reads its own lines at half the global batch, for exactly `steps`
    batches; between them the first pass covers the corpus, each pair read by one worker."""
    import tensorflow as tf

    from zoo.data import worker_stream

    stream = open_stream(str(files / "{split}"), "de", "en", "train")
    counts = count_stream(stream, *tokenizer_pair, max_length=None)
    steps = stream_steps(counts, 32, "plain")  # 600 pairs in global batches of 32: 19
    make = worker_stream(
        stream,
        *tokenizer_pair,
        batch_size=32,
        steps=steps,
        max_length=None,
        batching="plain",
        shuffle=False,
    )
    read = []
    for index in range(2):
        context = tf.distribute.InputContext(2, index, 2)  # 2 workers, 1 replica each
        batches = _arrays(make(context))
        assert len(batches) == steps == 19
        assert all(len(source) == 16 for source, _, _ in batches[:-1])
        read.append({tuple(s[s > 0]) for source, _, _ in batches for s in source})
    source_pieces = {
        tuple(x.numpy()) for x in tokenizer_pair[0].tokenize(materialise(stream).source)
    }
    # 300 pairs per worker: 18 batches of 16 and one of 12, in one pass.
    assert read[0] | read[1] == source_pieces
    assert len(read[0] & read[1]) <= 4  # Multi30k repeats a few German sentences
    with pytest.raises(ValueError, match="come from the input context"):
        worker_stream(stream, *tokenizer_pair, batch_size=32, steps=3, counts=counts)


def test_both_kinds_of_corpus_answer_one_interface(files, small_corpus, tokenizer_pair):
    """A `Corpus` and a `StreamedCorpus` of the same pairs: the same names, a tokenizer
    sample of at most the count asked (every pair when there are no more), and from
    `dataset()` the batches of `make_dataset` and `stream_dataset`."""
    stream = open_stream(str(files / "{split}"), "de", "en", "train")
    for corpus in (small_corpus, stream):
        assert (corpus.source_lang, corpus.target_lang, corpus.split) == ("de", "en", "train")
        sources, targets = corpus.sample(50, seed=3)
        assert len(sources) == len(targets) == 50
        assert set(zip(sources, targets, strict=True)) <= set(small_corpus.pairs())
    assert small_corpus.sample(len(small_corpus)) == (small_corpus.source, small_corpus.target)
    assert small_corpus.sample(50, seed=3) == small_corpus.sample(50, seed=3)
    options = dict(batch_size=16, max_length=None, seed=5, pool_batches=4)
    memory = _arrays(small_corpus.dataset(*tokenizer_pair, **options))  # one pass: an epoch
    direct = make_dataset(small_corpus.source, small_corpus.target, *tokenizer_pair, **options)
    assert _equal(memory, _arrays(direct))
    counts = count_stream(stream, *tokenizer_pair, max_length=None)
    streamed = stream.dataset(
        *tokenizer_pair, shuffle_buffer=len(small_corpus), counts=counts, **options
    )
    assert _equal(_arrays(streamed), memory)
