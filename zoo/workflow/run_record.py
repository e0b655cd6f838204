"""`RunRecord`: a run's `run.json`, what a rerun of the same `--out` is checked against.

`run.json` holds the run's settings (every flag), and beside them:
- "corpus_files": the fingerprints of the training and validation corpus files the run read
  (`zoo.data.fingerprint`: size, modification time, a hash of the first and last MiB);
- "peak_memory_mib": the process's peak resident memory (MiB) at the end of each phase
  (data, tokenizers, pipelines, training, evaluation), as `getrusage` reports it.

A rerun resumes (the default) only with the same settings, except the flags of
`RESUMABLE_CHANGES`, and on the same corpus: a changed corpus file is refused, naming the
file and what changed, unless `--allow-corpus-change` is given.
"""

import json
import os
import resource
import sys

from zoo.constants import CHECKPOINT_DIR, RUN_FILE
from zoo.data.fingerprint import changes, fingerprints
from zoo.errors import UsageError
from zoo.json_files import write_json
from zoo.translator import SOURCE_TOKENIZER_DIR

RECORDS = ("corpus_files", "peak_memory_mib")  # run.json's entries that are not settings
# Flags that may change between a run and its resumption (all others must stay the same).
RESUMABLE_CHANGES = frozenset(
    {
        "epochs",
        "max_steps",
        "max_minutes",
        "checkpoint_every",
        "keep_checkpoints",
        "average_last",
        "resume",
        "beam_size",
        "length_penalty",
        "coverage_penalty",
        "eval_batch_size",
        "attention_plots",
        "out",
        "no_export",
        "eval_limit",
        "test_split",
        "strategy",
        "deterministic",
        "jit_compile",
        "debug",
        "allow_corpus_change",
        "tokenizer_sample",  # a resumed run reuses its tokenizers
        "config",  # where the defaults came from; the settings themselves are compared
    }
)


def peak_memory_mib():
    """The process's peak resident set size so far, in MiB (`ru_maxrss`)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / 2**20 if sys.platform == "darwin" else peak / 2**10, 1)


def _resumable(out):
    """Whether `out` holds anything a rerun would continue from (tokenizers, checkpoints)."""
    checkpoints = os.path.join(out, CHECKPOINT_DIR)
    return os.path.isdir(os.path.join(out, SOURCE_TOKENIZER_DIR)) or (
        os.path.isdir(checkpoints) and bool(os.listdir(checkpoints))
    )


class RunRecord:
    """`<out>/run.json` of a run (see the module docstring). Writes nothing unless `enabled`
    (the chief worker).

    Example (the order a recipe follows):
        record = RunRecord(out, args, say, enabled=chief)
        record.check_settings()          # before anything is read
        record.check_corpus(files)       # the files the data phase read
        record.phase_done("data")        # ... and after each later phase
    """

    def __init__(self, out, args, say, enabled=True):
        self.path = os.path.join(out, RUN_FILE)
        self.out, self.args, self.say, self.enabled = out, args, say, enabled
        self.previous = None
        self.record = {k: v for k, v in sorted(vars(args).items())}
        self.record["peak_memory_mib"] = {}

    def check_settings(self):
        """Refuses to resume a run made with other settings (a `UsageError` naming them)."""
        if not (self.enabled and self.args.resume and os.path.exists(self.path)):
            return
        try:
            with open(self.path, encoding="utf-8") as f:
                self.previous = json.load(f)
        except ValueError as error:
            raise ValueError(
                f"{self.path} is damaged ({error}); pass --no-resume to start over, or choose "
                "another --out."
            ) from None
        if not isinstance(self.previous, dict):
            raise ValueError(f"{self.path} does not hold a run's settings; pass --no-resume.")
        current = self.record
        # A flag that the run's zoo did not have yet (or no longer has) cannot differ.
        changed = sorted(
            k
            for k in set(self.previous) & set(current)
            if k not in RESUMABLE_CHANGES and k not in RECORDS and self.previous[k] != current[k]
        )
        if changed:
            details = ", ".join(f"{k}: {self.previous[k]!r} -> {current[k]!r}" for k in changed)
            raise UsageError(
                f"{self.out} holds a run with other settings ({details}). Resume it with the "
                "same settings, choose another --out, or pass --no-resume to start over."
            )
        self.say(
            f"Resuming the run in {self.out} (plain re-runs continue; --no-resume starts over)"
        )

    def check_corpus(self, files):
        """Records the fingerprints of `files` (the corpus files read) and writes run.json;
        refuses (`UsageError`) to resume on changed files unless --allow-corpus-change."""
        if not self.enabled:
            return
        self.record["corpus_files"] = fingerprints(files)
        before = (self.previous or {}).get("corpus_files")
        if before is not None and _resumable(self.out):
            found = changes(before, self.record["corpus_files"])
            if found and not getattr(self.args, "allow_corpus_change", False):
                raise UsageError(
                    f"{self.out} holds a run trained on other data; since it began: "
                    f"{'; '.join(found)}. Resuming would go on training on the changed corpus "
                    "with the run's tokenizers and position. Pass --allow-corpus-change to "
                    "resume on it all the same, choose another --out, or pass --no-resume to "
                    "start over."
                )
            if found:
                self.say(
                    f"Corpus changed ({'; '.join(found)}): resuming on it (--allow-corpus-change)"
                )
        write_json(self.path, self.record)

    def phase_done(self, phase):
        """Records the peak memory at the end of `phase`; returns it (MiB)."""
        peak = peak_memory_mib()
        self.record["peak_memory_mib"][phase] = peak
        if self.enabled and "corpus_files" in self.record:
            write_json(self.path, self.record)
        return peak

    def memory_line(self):
        """ "Peak memory (RSS): data 812 MiB, ..." for the run log."""
        phases = self.record["peak_memory_mib"]
        return "Peak memory (RSS, at the end of each phase): " + ", ".join(
            f"{phase} {mib:,.0f} MiB" for phase, mib in phases.items()
        )
