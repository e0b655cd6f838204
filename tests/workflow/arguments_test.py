"""zoo.workflow.arguments: the shared command line and the preset switches."""

import argparse
import re

import pytest

from zoo.errors import UsageError
from zoo.models import preset_arguments
from zoo.workflow import add_mode_argument, hyperparameters, make_parser, resolve_defaults


def parse(argv, recipe="luong_global_dot", family="luong", **kwargs):
    parser = make_parser(recipe, family, **kwargs)
    add_mode_argument(parser)
    return resolve_defaults(parser.parse_args(argv))


def _training(args):
    fields = ("optimizer", "batch_size", "epochs", "decay_after", "max_minutes")
    return tuple(getattr(args, k) for k in fields) + (args.loss_normalization,)


def test_defaults_per_family_and_the_papers_one_flag_away():
    luong = parse([])
    assert (luong.source_lang, luong.target_lang, luong.test_split) == ("de", "en", "test2016")
    assert _training(luong) == ("adam", 64, 12, 9, 60.0, "tokens")
    assert luong.out.replace("\\", "/") == "saved_models/luong_global_dot"
    assert luong.resume and luong.beam_size == 5 and luong.mode == "predictive"
    assert _training(parse(["--optimizer", "paper"])) == ("luong", 128, 12, None, None, "sentences")

    def bahdanau(argv):
        return resolve_defaults(make_parser("bahdanau_rnnsearch", "bahdanau").parse_args(argv))

    assert _training(bahdanau([])) == ("adam", 64, 10, 5, 60.0, "tokens")
    paper = ("bahdanau", 80, 10, None, None, "sentences")
    assert _training(bahdanau(["--optimizer", "paper"])) == paper
    # Explicit flags win over either profile; 0 minutes means no limit.
    given = parse(["--optimizer", "paper", "--batch-size", "32", "--loss-normalization", "tokens"])
    assert _training(given) == ("luong", 32, 12, None, None, "tokens")
    assert parse(["--max-minutes", "0"]).max_minutes is None
    # Beam search's length penalty, chosen on validation per family; a flag overrides it.
    assert (parse([]).length_penalty, bahdanau([]).length_penalty) == (1.0, 1.0)
    assert parse(["--length-penalty", "0"]).length_penalty == 0.0


def test_languages_follow_the_corpus_and_either_flag():
    assert (parse(["--data", "anki-spa-eng"]).target_lang) == "es"
    reverse = parse(["--data", "anki-spa-eng", "--source-lang", "es"])
    assert (reverse.source_lang, reverse.target_lang, reverse.test_split) == ("es", "en", "test")
    assert parse(["--target-lang", "de"]).source_lang == "en"
    with pytest.raises(ValueError, match="--source-lang and --target-lang"):
        parse(["--data", "pairs.tsv"])
    tsv = parse(["--data", "pairs.tsv", "--source-lang", "x", "--target-lang", "y"])
    assert (tsv.source_lang, tsv.target_lang) == ("x", "y")


def test_explicit_optimizer_and_no_resume():
    args = parse(["--optimizer", "adam", "--no-resume", "--out", "o"])
    assert (args.optimizer, args.resume, args.out) == ("adam", False, "o")
    assert args.decay_after == 9  # the default profile's halving for Adam (Luong: 12 epochs)
    assert args.epochs == 12
    assert parse(["--optimizer", "adam", "--decay-after", "5"]).decay_after == 5
    assert parse(["--optimizer", "luong"]).decay_after is None  # SGD keeps its own 5 / 8 rule


@pytest.mark.parametrize(
    "argv",
    [
        ["--dropout", "1.0"],
        ["--window", "0"],
        ["--size", "huge"],
        ["--max-steps", "-1"],
        ["--vocab-size", "4"],  # no more than the reserved ids
    ],
)
def test_bad_values_are_refused(argv, capsys):
    with pytest.raises(SystemExit):
        parse(argv)
    assert "error" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["-1", str(2**32)])
def test_the_seed_is_one_numpy_takes(value, capsys):
    with pytest.raises(SystemExit):
        parse(["--seed", value])
    assert "argument --seed: expected an integer in [0, 2**32)" in capsys.readouterr().err
    assert parse(["--seed", str(2**32 - 1)]).seed == 2**32 - 1


def test_an_out_that_is_a_file_is_refused_when_parsed(tmp_path):
    taken = tmp_path / "notes.txt"
    taken.write_text("", encoding="utf-8")
    with pytest.raises(UsageError, match=r"--out .*notes.txt: a file; expected the run's"):
        parse(["--out", str(taken)])
    assert parse(["--out", str(tmp_path)]).out == str(tmp_path)


def test_bahdanau_recipes_take_dropout_but_no_luong_switches(capsys):
    parser = make_parser("bahdanau_rnnsearch", "bahdanau")
    args = parser.parse_args(["--dropout", "0.3", "--size", "tiny"])
    assert hyperparameters(args, "bahdanau_rnnsearch")["dropout"] == 0.3
    assert hyperparameters(parser.parse_args([]), "bahdanau_rnnsearch")["dropout"] == 0.3
    for luong_only in (["--no-input-feeding"], ["--window", "3"], ["--reverse-source"]):
        with pytest.raises(SystemExit):
            parser.parse_args(luong_only)
    with pytest.raises(ValueError, match="family"):
        make_parser("x", "transformer")
    with pytest.raises(ValueError, match="switch"):
        make_parser("x", "luong", switches=("dropout", "attention"))


def test_hyperparameters_are_the_preset_with_given_switches():
    args = parse(["--size", "tiny"])
    assert hyperparameters(args, "luong_global_dot") == preset_arguments("luong_global_dot", "tiny")
    args = parse(["--size", "tiny", "--dropout", "0", "--no-input-feeding", "--window", "3",
                  "--no-reverse-source"])  # fmt: skip
    expected = preset_arguments("luong_local_p_general", "tiny")
    expected.update(dropout=0.0, input_feeding=False, window=3, reverse_source=False)
    assert hyperparameters(args, "luong_local_p_general") == expected


def test_a_switch_the_preset_lacks_is_an_error():
    args = argparse.Namespace(size="tiny", window=3)
    with pytest.raises(ValueError, match="--window does not apply"):
        hyperparameters(args, "bahdanau_rnnsearch")


@pytest.mark.parametrize(
    "flag,value",
    [
        ("--learning-rate", "0"),
        ("--learning-rate", "nan"),
        ("--dropout", "nan"),
        ("--length-penalty", "inf"),
        ("--max-minutes", "-1"),
        ("--attention-plots", "-1"),
        ("--batch-size", "2.5"),
        ("--decay-after", "-1"),
        ("--decay-after", "2.5"),
    ],
)
def test_out_of_range_numbers_are_refused(flag, value, capsys):
    with pytest.raises(SystemExit):
        parse([flag, value])
    assert flag in capsys.readouterr().err


def test_numbers_at_their_bounds_are_accepted():
    args = parse(["--dropout", "0", "--length-penalty", "0", "--attention-plots", "0"])
    assert (args.dropout, args.length_penalty, args.attention_plots) == (0.0, 0.0, 0)


def test_wmt14_takes_each_papers_languages():
    luong = parse(["--data", "wmt14"])
    assert (luong.source_lang, luong.target_lang, luong.test_split) == ("en", "de", "test")
    bahdanau = resolve_defaults(
        make_parser("bahdanau_rnnsearch", "bahdanau").parse_args(["--data", "wmt14"])
    )
    assert (bahdanau.source_lang, bahdanau.target_lang) == ("en", "fr")
    assert parse(["--data", "wmt14", "--source-lang", "de"]).target_lang == "en"


def test_averaging_and_streaming_flags():
    args = parse([])
    assert (args.average_last, args.streaming, args.steps_per_epoch) == (3, "auto", None)
    assert (args.shuffle_buffer, args.tokenizer_sample) == (100_000, 200_000)
    assert parse(["--average-last", "0"]).average_last == 0
    with pytest.raises(ValueError, match="--average-last 4 needs .*--keep-checkpoints 3"):
        parse(["--average-last", "4"])
    assert parse(["--average-last", "4", "--keep-checkpoints", "4"]).average_last == 4
    assert parse(["--streaming", "on", "--strategy", "multiworker"]).strategy == "multiworker"


def test_defaults_and_help_are_the_librarys(monkeypatch):
    from zoo.search import defaults as search
    from zoo.training.settings import PAPER_TRAINING, TRAINING_DEFAULTS

    args = parse([])
    assert (args.beam_size, args.length_penalty, args.coverage_penalty, args.eval_batch_size) == (
        search.BEAM_SIZE,
        search.LENGTH_PENALTY,
        search.COVERAGE_PENALTY,
        search.BATCH_SIZE,
    )
    # A profile changed in the library changes the recipes' defaults and their --help.
    monkeypatch.setitem(TRAINING_DEFAULTS["luong"], "epochs", 7)
    monkeypatch.setitem(PAPER_TRAINING["luong"], "batch_size", 96)
    assert (parse([]).epochs, parse(["--optimizer", "paper"]).batch_size) == (7, 96)
    text = " ".join(make_parser("luong_global_dot", "luong").format_help().split())
    assert "passes over the training data (default: 7;" in text
    assert "batches of 96" in text
    # The architecture switches show the presets' values at each size.
    sizes = {size: preset_arguments("luong_global_general", size) for size in ("tiny", "base")}
    assert sizes["base"]["dropout"] != sizes["tiny"]["dropout"]  # else the check below is void
    assert f"{sizes['base']['dropout']:g} at base" in text
    assert re.search(r"\d\.\d+ BLEU|BLEU \d", text) is None  # measured figures: the guides


def test_languages_and_test_split_come_from_the_corpus_registry():
    from zoo.data.registry import CORPORA

    for name, info in CORPORA.items():
        pair = info.default_pair
        if isinstance(pair, dict):
            pair = pair["luong"]
        args = parse(["--data", name])
        assert (args.source_lang, args.target_lang, args.test_split) == (*pair, info.test_split)
