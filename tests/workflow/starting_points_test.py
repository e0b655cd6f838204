"""--init-from (fine-tuning from a trained folder: its weights, its tokenizers, the unknown
pieces counted) and --config (a recorded run's settings as the defaults)."""

import json

import keras
import numpy as np
import pytest
from recipe_runs import run_recipe, write_corpus

from zoo.text import load_tokenizer
from zoo.translator.output_folder import load_model_file, model_file


@pytest.fixture(scope="module")
def trained(tmp_path_factory, small_corpus):
    """A tiny luong_base run (2 steps) to start from."""
    folder = tmp_path_factory.mktemp("start")
    out = folder / "run"
    run_recipe(out, "--data", write_corpus(folder / "corpus", small_corpus))
    return out


def _weights(folder):
    model = load_model_file(folder / model_file(folder))
    return model.get_weights()


def test_init_from_keeps_the_tokenizers_starts_from_the_weights_and_counts_unknown_pieces(
    trained, tmp_path, small_corpus, capsys
):
    # The user's own corpus, with characters the start's vocabulary has never seen.
    corpus = write_corpus(tmp_path / "own", small_corpus, train_pairs=100)
    train_de = tmp_path / "own" / "train.de"
    lines = train_de.read_text().splitlines()
    train_de.write_text("\n".join(["Ωμέγα ☃ 漢字", *lines[1:]]) + "\n")
    out = tmp_path / "tuned"
    # One step at a negligible learning rate: the weights delivered are the start's own
    # (within Adam's step of about the learning rate).
    run_recipe(out, "--data", corpus, "--init-from", str(trained), "--max-steps", "1",
               "--learning-rate", "1e-9", "--average-last", "0")  # fmt: skip
    printed = capsys.readouterr().out
    assert f"Tokenizers: those of {trained}" in printed
    assert "; initial learning rate set to 1e-09" in printed  # the flag given wins
    record = json.loads((out / "run.json").read_text())
    assert record["init_from"] == str(trained) and record["learning_rate"] == 1e-9
    unknown = printed.split("Unknown pieces in the training data: ")[1].splitlines()[0]
    counts = [int(w.replace(",", "")) for w in unknown.split() if w.replace(",", "").isdigit()]
    assert counts[0] > 0 and counts[0] < counts[1]  # some de pieces unknown, not all
    for side in ("source_tokenizer", "target_tokenizer"):
        before, after = load_tokenizer(trained / side), load_tokenizer(out / side)
        assert after.vocab_size == before.vocab_size
        ids = np.arange(before.vocab_size)
        assert list(after.id_to_token(ids).numpy()) == list(before.id_to_token(ids).numpy())
    start = _weights(trained)
    for a, b in zip(_weights(out), start, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-6)


@pytest.mark.parametrize(
    ("extra", "name", "named"),
    [
        (["--size", "base"], "luong_base", "luong_base at --size base"),
        ([], "luong_global_dot", "builds luong_global_dot"),
    ],
)
def test_init_from_refuses_another_preset_or_size_naming_both(
    trained, tmp_path, small_corpus, capsys, extra, name, named
):
    corpus = write_corpus(tmp_path / "own", small_corpus, train_pairs=40)
    with pytest.raises(SystemExit) as stop:
        run_recipe(
            tmp_path / "out", "--data", corpus, "--init-from", str(trained), *extra, name=name
        )
    assert stop.value.code == 2
    message = capsys.readouterr().err
    assert f"--init-from {trained} holds luong_base at --size tiny" in message
    assert named in message and "Traceback" not in message


def test_init_from_an_unknown_name_is_one_clear_message(tmp_path, small_corpus, capsys):
    corpus = write_corpus(tmp_path / "own", small_corpus, train_pairs=40)
    with pytest.raises(SystemExit) as stop:
        run_recipe(tmp_path / "out", "--data", corpus, "--init-from", "no_such_translator")
    assert stop.value.code == 1
    message = capsys.readouterr().err
    assert "'no_such_translator' is neither a folder nor a shipped translator" in message


def test_config_takes_a_recorded_runs_settings_and_flags_replace_them(trained, tmp_path, capsys):
    recorded = json.loads((trained / "run.json").read_text())
    out = tmp_path / "again"
    run_recipe(out, "--config", str(trained / "run.json"), "--seed", "3")
    again = json.loads((out / "run.json").read_text())
    differ = {k for k in recorded if recorded[k] != again.get(k)}
    assert differ <= {"out", "seed", "config", "corpus_files", "peak_memory_mib"}
    assert again["seed"] == 3 and recorded["seed"] == 0
    # A run of another recipe is refused, naming the recipe to run.
    with pytest.raises(SystemExit) as stop:
        run_recipe(tmp_path / "other", "--config", str(trained), name="luong_global_dot")
    assert stop.value.code == 2
    assert "is a run of recipe 'luong_base', not 'luong_global_dot'" in capsys.readouterr().err


def test_init_from_trains_at_an_eighth_of_the_optimizers_learning_rate(trained):
    from zoo.workflow import make_parser, resolve_defaults

    parser = make_parser("luong_base", "luong")
    fine = resolve_defaults(parser.parse_args(["--init-from", str(trained)]))
    scratch = resolve_defaults(parser.parse_args([]))
    given = resolve_defaults(parser.parse_args(["--init-from", "x", "--learning-rate", "0.5"]))
    assert scratch.learning_rate is None and given.learning_rate == 0.5
    assert fine.optimizer == "adam" and fine.learning_rate == pytest.approx(1e-3 / 8)


def test_a_fine_tuned_model_loads_with_keras(trained):
    model = keras.saving.load_model(trained / model_file(trained))
    assert model.name == "luong_base"
