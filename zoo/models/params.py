"""Prints the parameter counts of the presets: `python -m zoo params` (or `zoo params`).

python -m zoo params --size paper
python -m zoo params --size base --bahdanau-vocab 8000 --luong-vocab 8000

`python -m zoo.models.params` runs the same command.
"""

import argparse

from zoo.models.presets import DEFAULT_VOCAB_SIZES, SIZES, build, family, presets


def parameter_counts(size, bahdanau_vocab, luong_vocab, names=None):
    """[(preset, vocabulary size, parameters)] for `names` (default: every preset)."""
    import keras

    vocab = {"bahdanau": bahdanau_vocab, "luong": luong_vocab}
    rows = []
    for name in names or presets():
        v = vocab[family(name)]
        model = build(name, size=size, source_vocab_size=v, target_vocab_size=v)
        rows.append((name, v, model.count_params()))
        del model
        keras.backend.clear_session()
    return rows


def main(argv=None, prog="python -m zoo params"):
    """The command: `argv` its arguments, `prog` how the usage line names it."""
    parser = argparse.ArgumentParser(
        prog=prog, description="Print the parameter count of each preset."
    )
    parser.add_argument(
        "--size", choices=SIZES, default="paper", help="preset size (default: %(default)s)"
    )
    parser.add_argument(
        "--bahdanau-vocab",
        type=int,
        default=DEFAULT_VOCAB_SIZES["bahdanau"],
        help="source and target vocabulary size of the Bahdanau presets (default: %(default)s)",
    )
    parser.add_argument(
        "--luong-vocab",
        type=int,
        default=DEFAULT_VOCAB_SIZES["luong"],
        help="source and target vocabulary size of the Luong presets (default: %(default)s)",
    )
    parser.add_argument(
        "--preset",
        action="append",
        choices=presets(),
        help="only this preset (repeatable; default: all)",
    )
    args = parser.parse_args(argv)
    rows = parameter_counts(args.size, args.bahdanau_vocab, args.luong_vocab, args.preset)
    width = max(len(name) for name, _, _ in rows)
    print(f"{'preset':<{width}}  {'vocab':>7}  {'parameters':>13}")
    for name, vocab, count in rows:
        print(f"{name:<{width}}  {vocab:>7}  {count:>13,}")


if __name__ == "__main__":
    main(prog="python -m zoo.models.params")
