import logging

import numpy as np
import pytest
import tensorflow as tf

from zoo.constants import END_ID, PAD_ID, START_ID
from zoo.data import encode_source, encode_target, make_dataset, steps_per_epoch


def _batches(dataset):
    return [
        (f["source_ids"].numpy(), f["target_ids"].numpy(), labels.numpy()) for f, labels in dataset
    ]


def _unpad(row):
    row = list(row)
    while row and row[-1] == PAD_ID:
        row.pop()
    return row


def test_structure_padding_and_shifted_targets(small_corpus, tokenizer_pair):
    src_tok, tgt_tok = tokenizer_pair
    dataset = small_corpus.dataset(src_tok, tgt_tok, batch_size=16, max_length=None, shuffle=False)
    spec = dataset.element_spec
    assert set(spec[0]) == {"source_ids", "target_ids"}
    assert all(
        s.dtype == tf.int32 and s.shape.as_list() == [None, None] for s in tf.nest.flatten(spec)
    )
    want_x = {tuple(r) for r in src_tok.tokenize(small_corpus.source).to_list()}
    want_y = {tuple(r) for r in tgt_tok.tokenize(small_corpus.target).to_list()}
    rows = 0
    for x, y_in, y_out in _batches(dataset):
        assert y_in.shape == y_out.shape and x.shape[0] == y_in.shape[0] <= 16
        assert (x[:, -1] != PAD_ID).any() and (y_out[:, -1] != PAD_ID).any()  # tight padding
        for xs, yi, yo in zip(x, y_in, y_out, strict=True):
            xs, yi, yo = _unpad(xs), _unpad(yi), _unpad(yo)
            assert PAD_ID not in xs and PAD_ID not in yi  # right padding only
            assert yi[0] == START_ID and yo[-1] == END_ID and yi[1:] == yo[:-1]
            assert tuple(xs) in want_x and tuple(yo[:-1]) in want_y
        rows += x.shape[0]
    assert rows == len(small_corpus)


def test_every_pair_exactly_once_in_order_without_shuffle(small_corpus, tokenizer_pair):
    src_tok, tgt_tok = tokenizer_pair
    dataset = make_dataset(
        small_corpus.source, small_corpus.target, src_tok, tgt_tok,
        batch_size=50, max_length=None, shuffle=False, batching="plain",
    )  # fmt: skip
    x_ref = encode_source(src_tok, small_corpus.source).numpy()
    y_in_ref, y_out_ref = (t.numpy() for t in encode_target(tgt_tok, small_corpus.target))
    x = [_unpad(r) for b in _batches(dataset) for r in b[0]]
    y_out = [_unpad(r) for b in _batches(dataset) for r in b[2]]
    assert x == [_unpad(r) for r in x_ref] and y_out == [_unpad(r) for r in y_out_ref]
    assert [_unpad(r)[0] for r in y_in_ref] == [START_ID] * len(small_corpus)
    assert len(dataset) == steps_per_epoch(dataset) == 12


def test_length_filter_counts_drops(small_corpus, tokenizer_pair, caplog):
    src_tok, tgt_tok = tokenizer_pair
    lengths_x = src_tok.tokenize(small_corpus.source).row_lengths().numpy()
    lengths_y = tgt_tok.tokenize(small_corpus.target).row_lengths().numpy()
    expected = int(((lengths_x <= 15) & (lengths_y <= 15)).sum())
    with caplog.at_level(logging.WARNING, logger="zoo.data"):
        dataset = small_corpus.dataset(src_tok, tgt_tok, batch_size=8, max_length=15)
    assert f"kept {expected} of 600 pairs; dropped {600 - expected}" in caplog.text
    batches = _batches(dataset)
    assert sum(b[0].shape[0] for b in batches) == expected
    assert max(b[0].shape[1] for b in batches) <= 15 and max(b[1].shape[1] for b in batches) <= 16


def test_log_drops_false_keeps_the_filter_and_says_nothing(small_corpus, tokenizer_pair, caplog):
    src_tok, tgt_tok = tokenizer_pair
    kwargs = dict(batch_size=8, max_length=15, shuffle=False)
    with caplog.at_level(logging.WARNING, logger="zoo.data"):
        quiet = small_corpus.dataset(src_tok, tgt_tok, log_drops=False, **kwargs)
    assert "kept" not in caplog.text
    loud = small_corpus.dataset(src_tok, tgt_tok, **kwargs)
    assert len(quiet) == len(loud)
    for a, b in zip(_batches(quiet), _batches(loud), strict=True):
        for array, expected in zip(a, b, strict=True):
            np.testing.assert_array_equal(array, expected)


def test_seeded_shuffle_is_deterministic(small_corpus, tokenizer_pair):
    src_tok, tgt_tok = tokenizer_pair

    def first_epoch(seed):
        dataset = small_corpus.dataset(src_tok, tgt_tok, batch_size=32, seed=seed)
        return [b[0].tolist() for b in _batches(dataset)]

    a = first_epoch(1)
    assert a == first_epoch(1)
    assert a != first_epoch(2)


def _rows(batches):
    """Every (source, target in, target out) row of the batches, unpadded, in order."""
    return [
        (tuple(_unpad(x)), tuple(_unpad(yi)), tuple(_unpad(yo)))
        for b in batches
        for x, yi, yo in zip(*b, strict=True)
    ]


def test_sorted_pools_match_a_numpy_stable_sort_of_each_pool(small_corpus, tokenizer_pair):
    """Without shuffling, batching="pools" is the corpus cut into pools of 8 batches, each
    sorted by (target length, source length) with ties in corpus order, then cut into
    batches: checked against that computed in NumPy from the plain batches' rows."""
    src_tok, tgt_tok = tokenizer_pair
    kwargs = dict(batch_size=16, max_length=None, shuffle=False)
    plain = _rows(_batches(small_corpus.dataset(src_tok, tgt_tok, batching="plain", **kwargs)))
    dataset = small_corpus.dataset(src_tok, tgt_tok, batching="pools", pool_batches=8, **kwargs)
    batches = _batches(dataset)
    want = []
    for start in range(0, len(plain), 8 * 16):
        pool = plain[start : start + 8 * 16]
        key = [len(yi) * 1000 + len(x) for x, yi, _ in pool]
        want += [pool[i] for i in np.argsort(key, kind="stable")]
    assert _rows(batches) == want
    # 600 pairs: 37 batches of 16 and a last one of 8, which is all len() counts
    assert [b[0].shape[0] for b in batches] == [16] * 37 + [8]
    assert len(dataset) == 38
    for x, y_in, _ in batches:  # tight padding on both sides
        assert (x[:, -1] != PAD_ID).any() and (y_in[:, -1] != PAD_ID).any()


def test_sorted_pools_pad_less_than_plain_batches(small_corpus, tokenizer_pair):
    src_tok, tgt_tok = tokenizer_pair

    def real_share(batching):
        dataset = small_corpus.dataset(
            src_tok, tgt_tok, batch_size=16, max_length=None, batching=batching
        )
        batches = _batches(dataset)
        return [
            sum((b[i] != PAD_ID).sum() for b in batches) / sum(b[i].size for b in batches)
            for i in (0, 2)  # source, target out
        ]

    pools, plain = real_share("pools"), real_share("plain")
    assert pools[1] > 0.95 > plain[1]  # the whole 600-pair corpus is one pool
    assert pools[0] > plain[0]


@pytest.mark.parametrize("drop_remainder", [False, True])
def test_sorted_pools_shuffle_every_pair_once_per_epoch(
    small_corpus, tokenizer_pair, drop_remainder
):
    src_tok, tgt_tok = tokenizer_pair
    kwargs = dict(batch_size=16, max_length=None, batching="pools", pool_batches=4)
    plain = _rows(_batches(small_corpus.dataset(src_tok, tgt_tok, shuffle=False, **kwargs)))
    dataset = small_corpus.dataset(
        src_tok, tgt_tok, seed=3, drop_remainder=drop_remainder, **kwargs
    )
    first, second = _batches(dataset), _batches(dataset)
    assert len(first) == len(dataset) == (37 if drop_remainder else 38)
    for epoch in (first, second):
        sizes = [b[0].shape[0] for b in epoch]
        assert sizes.count(16) == 37 and len(sizes) == len(dataset)
        if drop_remainder:
            assert sorted(_rows(epoch)) != sorted(plain)  # 8 pairs left out
            assert set(_rows(epoch)) <= set(plain)
        else:
            assert sorted(_rows(epoch)) == sorted(plain)
    assert _rows(first) != _rows(second)  # reshuffled each epoch
    # the batches' order is shuffled too: unshuffled, each pool's 4 come shortest first
    widths = [b[1].shape[1] for b in first]
    pools = [widths[i : i + 4] for i in range(0, len(widths), 4)]
    assert any(pool != sorted(pool) for pool in pools)
    again = small_corpus.dataset(src_tok, tgt_tok, seed=3, drop_remainder=drop_remainder, **kwargs)
    assert _rows(_batches(again)) == _rows(first)  # the same seed, the same batches


@pytest.mark.parametrize("token_budget", [None, 300])
def test_bucketing_cardinality_is_exact(small_corpus, tokenizer_pair, token_budget):
    src_tok, tgt_tok = tokenizer_pair
    dataset = small_corpus.dataset(
        src_tok, tgt_tok, batch_size=32, max_length=None, token_budget=token_budget,
        batching="buckets", bucket_width=4,
    )  # fmt: skip
    batches = _batches(dataset)
    assert len(batches) == len(dataset)
    assert sum(b[0].shape[0] for b in batches) == 600
    for x, y_in, _ in batches:
        width = max(x.shape[1], y_in.shape[1])
        if token_budget is not None:
            assert x.shape[0] * width <= token_budget or x.shape[0] == 1
        # one bucket per batch: lengths max(|x|, |y| + 1) in [4k + 1, 4k + 4] share k
        lengths = np.maximum((x != PAD_ID).sum(1), (y_in != PAD_ID).sum(1))
        assert len(set((lengths - 1) // 4)) == 1


def test_bad_arguments(tokenizer_pair):
    src_tok, tgt_tok = tokenizer_pair
    with pytest.raises(ValueError, match="2 items but target_sentences has 1"):
        make_dataset(["a", "b"], ["c"], src_tok, tgt_tok)
    for batching in ("plain", "pools"):
        with pytest.raises(ValueError, match=f"batching='buckets'.*received batching='{batching}'"):
            make_dataset(["a"], ["c"], src_tok, tgt_tok, batching=batching, token_budget=100)
    with pytest.raises(ValueError, match="batching must be one of 'pools', .*received 'bucket'"):
        make_dataset(["a"], ["c"], src_tok, tgt_tok, batching="bucket")
    with pytest.raises(ValueError, match="none of the 1 pairs.*1 have more than max_length=1"):
        make_dataset(["a b c d e f"], ["c d e f g h"], src_tok, tgt_tok, max_length=1)
    with pytest.raises(ValueError, match="no sentence pairs"):
        make_dataset([], [], src_tok, tgt_tok)


@pytest.mark.parametrize(
    "option",
    [{"batch_size": 2.5}, {"batch_size": 0}, {"bucket_width": 1.5}, {"max_length": True},
     {"pool_batches": 0},
     {"token_budget": 99.9}, {"shuffle_buffer": -1}],
)  # fmt: skip
def test_sizes_must_be_positive_ints_never_truncated(tokenizer_pair, option):
    src_tok, tgt_tok = tokenizer_pair
    ((name, value),) = option.items()
    with pytest.raises(ValueError, match=f"{name} must be an int >= 1.*{value!r}"):
        make_dataset(["a"], ["c"], src_tok, tgt_tok, **option)
