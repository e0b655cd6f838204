"""A recipe given a damaged or unusual file stops with the message alone (exit status 1 or
2) naming the file or value, before it trains on anything: a truncated gzip training file
(counted or --steps-per-epoch stream, or in memory), old Mac line endings, a vocabulary too
small for SentencePiece, a truncated tokenizer model in the folder it resumes."""

import gzip
from pathlib import Path

import pytest
from recipe_runs import run_recipe


def _refused(capsys, out, *argv):
    """Runs the recipe expecting a user's error; returns (exit status, stderr)."""
    with pytest.raises(SystemExit) as stopped:
        run_recipe(out, *argv)
    error = capsys.readouterr().err
    assert "Traceback" not in error and "error: " in error
    assert not (Path(out) / "checkpoints").exists()  # refused before training
    return stopped.value.code, error


@pytest.mark.parametrize("streaming", ["counted", "steps-per-epoch", "in memory"])
def test_a_truncated_gzip_training_file_is_refused_by_name(
    tiny_corpus, tmp_path, capsys, streaming
):
    damaged = Path(tiny_corpus).parent / "train.de.gz"
    plain = damaged.with_suffix("")
    data = gzip.compress(plain.read_bytes())
    damaged.write_bytes(data[: len(data) // 2])
    plain.unlink()
    flags = {
        "counted": ["--streaming", "on"],
        "steps-per-epoch": ["--streaming", "on", "--steps-per-epoch", "4"],
        "in memory": ["--streaming", "off"],
    }[streaming]
    code, error = _refused(capsys, tmp_path / "run", "--data", tiny_corpus, *flags)
    assert code == 1
    assert f"error: {damaged}: damaged or truncated gzip file" in error


def test_old_mac_line_endings_are_refused_by_name(tiny_corpus, tmp_path, capsys):
    train_en = Path(tiny_corpus).parent / "train.en"
    train_en.write_bytes(train_en.read_bytes().replace(b"\n", b"\r"))
    code, error = _refused(capsys, tmp_path / "run", "--data", tiny_corpus)
    assert code == 1 and f"error: {train_en}: its lines end in CR alone" in error


def test_a_vocabulary_too_small_names_the_value(tiny_corpus, tmp_path, capsys):
    code, error = _refused(capsys, tmp_path / "run", "--data", tiny_corpus, "--vocab-size", "5")
    assert code == 1 and "error: vocab_size 5 is too small for these sentences" in error
    assert "use a vocab_size (--vocab-size) of" in error


def test_a_truncated_tokenizer_model_in_the_resumed_folder_names_the_file(
    tiny_corpus, tmp_path, capsys
):
    out = tmp_path / "run"
    out.mkdir()
    from zoo.data import load_corpus
    from zoo.text import train_tokenizer

    train = load_corpus(tiny_corpus, "de", "en", "train")
    for side, sentences in (("source", train.source), ("target", train.target)):
        train_tokenizer("sentencepiece", sentences, vocab_size=120).save(out / f"{side}_tokenizer")
    model = out / "source_tokenizer" / "sentencepiece.model"
    model.write_bytes(model.read_bytes()[:100])
    code, error = _refused(capsys, out, "--data", tiny_corpus)
    assert code == 1 and f"error: {model}: not a valid SentencePiece model" in error
