"""run.json: the fingerprints of the corpus files a run read, checked when it resumes, and the
peak memory of each phase."""

import json
import os
from pathlib import Path

import pytest
from recipe_runs import run_recipe


def test_a_changed_corpus_refuses_to_resume_naming_the_file(tiny_corpus, tmp_path, capsys):
    out = tmp_path / "run"
    first = run_recipe(out, "--data", tiny_corpus)
    record = json.loads((out / "run.json").read_text())
    corpus = Path(tiny_corpus).parent
    read = [f["path"] for f in record["corpus_files"]]
    assert read == [str(corpus / n) for n in ("train.de", "train.en", "val.de", "val.en")]
    assert all(f["size"] == os.path.getsize(f["path"]) for f in record["corpus_files"])
    # Peak memory by phase, in run.json and metrics.json, and one line of the run log.
    phases = ["data", "tokenizers", "pipelines", "training", "evaluation"]
    assert list(record["peak_memory_mib"]) == phases == list(first["peak_memory_mib"])
    peaks = list(record["peak_memory_mib"].values())
    assert 0 < peaks[0] and peaks == sorted(peaks)  # a peak never goes down
    assert "Peak memory (RSS, at the end of each phase): data " in capsys.readouterr().out

    # One sentence changed: refused, naming the file and what changed (message alone, exit 2).
    train_en = corpus / "train.en"
    lines = train_en.read_text().splitlines()
    train_en.write_text("\n".join(["A changed sentence.", *lines[1:]]) + "\n")
    with pytest.raises(SystemExit) as stopped:
        run_recipe(out, "--data", tiny_corpus, "--max-steps", "3")
    assert stopped.value.code == 2
    error = capsys.readouterr().err
    assert f"{train_en}: size " in error and "content of its first or last MiB" in error
    assert "--allow-corpus-change" in error and "Traceback" not in error
    assert json.loads((out / "run.json").read_text()) == record  # nothing recorded


@pytest.mark.slow
def test_a_changed_corpus_resumes_on_request_and_a_rewrite_is_no_change(
    tiny_corpus, tmp_path, capsys
):
    out = tmp_path / "run"
    run_recipe(out, "--data", tiny_corpus)
    train_en = Path(tiny_corpus).parent / "train.en"
    train_en.write_bytes(train_en.read_bytes())  # a new time, the same bytes: resumes
    assert run_recipe(out, "--data", tiny_corpus, "--max-steps", "3")["steps"] == 3
    lines = train_en.read_text().splitlines()
    train_en.write_text("\n".join(["A changed sentence.", *lines[1:]]) + "\n")
    resumed = run_recipe(out, "--data", tiny_corpus, "--max-steps", "4", "--allow-corpus-change")
    assert resumed["training"]["resumed_from_step"] == 3
    assert "Corpus changed (" in capsys.readouterr().out
    assert run_recipe(out, "--data", tiny_corpus, "--max-steps", "5")["steps"] == 5  # recorded
    train_en.write_text("\n".join(lines) + "\n")
    fresh = run_recipe(out, "--data", tiny_corpus, "--no-resume")  # starts over on any data
    assert fresh["training"]["resumed_from_step"] is None


def test_run_record_refuses_a_damaged_run_json_and_checks_only_what_a_rerun_resumes(tmp_path):
    import argparse

    from zoo.errors import UsageError
    from zoo.workflow.run_folder import RunRecord

    out = tmp_path / "run"
    out.mkdir()
    corpus = tmp_path / "train.de"
    corpus.write_text("ein Hund\n")
    args = argparse.Namespace(resume=True, size="tiny", allow_corpus_change=False)
    (out / "run.json").write_text('{"size": "ti')
    with pytest.raises(ValueError, match=f"{out / 'run.json'} is damaged .*--no-resume"):
        RunRecord(out, args, print).check_settings()
    first = RunRecord(out, argparse.Namespace(**{**vars(args), "resume": False}), print)
    first.check_settings()
    first.check_corpus([corpus])
    corpus.write_text("zwei Hunde\n")
    again = RunRecord(out, args, print)
    again.check_settings()
    again.check_corpus([corpus])  # nothing to resume yet (no tokenizers, no checkpoint): fine
    (out / "source_tokenizer").mkdir()
    corpus.write_text("drei Hunde\n")
    later = RunRecord(out, args, print)
    later.check_settings()
    with pytest.raises(UsageError, match=f"{corpus}: content of its first or last MiB"):
        later.check_corpus([corpus])


@pytest.mark.parametrize(
    "flags, expected",
    [({"avx2", "fma"}, "float32"), ({"avx2", "avx512f", "amx_bf16"}, "mixed_bfloat16")],
)
def test_precision_auto_trains_as_the_cpu_flags_say_and_logs_why(
    tiny_corpus, tmp_path, capsys, monkeypatch, flags, expected
):
    import zoo.training.strategy

    monkeypatch.setattr(zoo.training.strategy, "cpu_flags", lambda: frozenset(flags))
    out = tmp_path / "run"
    run_recipe(out, "--data", tiny_corpus, "--precision", "auto")
    log = capsys.readouterr().out
    assert f"Precision: {expected} (--precision auto: the CPU has " in log
    assert f"precision {expected}, output" in log
    record = json.loads((out / "run.json").read_text())
    assert record["precision"] == expected  # what trained: --config retrains it so
