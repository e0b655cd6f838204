"""Deterministic train/val/test split of sentence pairs by distinct sentence.

Pairs are grouped so that pairs sharing a sentence on EITHER side fall in one group (union-find
over both columns: Anki files list one English sentence with several translations, and one
translation under several English sentences). Each group goes to a split chosen by a hash of
the group's smallest first-column sentence and the seed, so the split does not depend on the
file's order or on the translation direction, and no sentence lands in two splits.

`LoadOptions`: what `zoo.data.load_corpus` passes every registry loader (`CorpusInfo.load`).
"""

import dataclasses
import hashlib

SPLITS = ("train", "val", "test")
VALIDATION_NAMES = ("val", "validation", "dev")  # what names the validation split, anywhere
VAL_FRACTION = 0.05  # of the distinct-sentence groups, by default
TEST_FRACTION = 0.05


def _unit_hash(text, seed):
    digest = hashlib.sha256(f"{seed}\x00{text}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2.0**64


def assign_splits(column0, column1, val_fraction=VAL_FRACTION, test_fraction=TEST_FRACTION, seed=0):
    """Returns a list with "train", "val" or "test" for each pair `(column0[i], column1[i])`."""
    for name, value in (("val_fraction", val_fraction), ("test_fraction", test_fraction)):
        if not 0.0 <= value < 1.0:
            raise ValueError(f"{name} must be in [0, 1), received {value}.")
    if val_fraction + test_fraction >= 1.0:
        raise ValueError(
            f"val_fraction + test_fraction must be below 1, received {val_fraction + test_fraction}."
        )
    parent = {}

    def find(node):
        root = node
        while parent.setdefault(root, root) != root:
            root = parent[root]
        while parent[node] != root:
            parent[node], node = root, parent[node]
        return root

    for a, b in zip(column0, column1, strict=True):
        root_a, root_b = find((0, a)), find((1, b))
        if root_a != root_b:
            parent[root_a] = root_b
    representative = {}
    for a in column0:
        root = find((0, a))
        if root not in representative or a < representative[root]:
            representative[root] = a
    assignment = []
    cache = {}
    for a in column0:
        root = find((0, a))
        if root not in cache:
            u = _unit_hash(representative[root], seed)
            cache[root] = (
                "test"
                if u < test_fraction
                else ("val" if u < test_fraction + val_fraction else "train")
            )
        assignment.append(cache[root])
    return assignment


def split_pairs(column0, column1, split, val_fraction, test_fraction, seed, where=""):
    """The pairs of `split` ("train", "val" or "test"; "validation" and "dev" mean "val") as
    (column0 part, column1 part), by `assign_splits`; `where` names the corpus in errors.

    Raises ValueError for another split name, or when the split has no pairs.
    """
    if split in VALIDATION_NAMES:
        split = "val"
    if split not in SPLITS:
        raise ValueError(f"{where} has the splits {SPLITS}, received {split!r}.")
    assignment = assign_splits(column0, column1, val_fraction, test_fraction, seed)
    keep = [i for i, s in enumerate(assignment) if s == split]
    if not keep:
        counts = ", ".join(f"{assignment.count(name)} {name}" for name in SPLITS)
        raise ValueError(
            f"{where}: the {split!r} split has no sentence pairs. Its {len(assignment)} pairs "
            f"split by distinct sentence into {counts} (val_fraction {val_fraction}, "
            f"test_fraction {test_fraction}). Give a larger corpus, or files of your own for "
            "each split (a prefix with {split} in it)."
        )
    return [column0[i] for i in keep], [column1[i] for i in keep]


@dataclasses.dataclass(frozen=True)
class LoadOptions:
    """How a registry corpus is read; each loader reads the fields that concern it.

    Attributes:
        val_fraction, test_fraction, seed: how a corpus without splits of its own (Anki) is
            split by distinct sentence (`zoo.data.splits`).
        download: whether a corpus missing here may be downloaded (Multi30k, TFDS).
        tfds_data_dir: TFDS's `data_dir`.
    """

    val_fraction: float = VAL_FRACTION
    test_fraction: float = TEST_FRACTION
    seed: int = 0
    download: bool = True
    tfds_data_dir: str | None = None
