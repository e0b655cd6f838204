"""What `zoo.data.load_corpus` passes every registry loader (`CorpusInfo.load`)."""

import dataclasses

from zoo.data.splits import TEST_FRACTION, VAL_FRACTION


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
