"""Parallel corpora from TensorFlow Datasets (`tfds:NAME`, e.g. `tfds:wmt14_translate/de-en`)."""

import tqdm

SPLIT_NAMES = {"val": "validation", "dev": "validation", "test2016": "test"}


def load_tfds_pairs(name, source_lang, target_lang, split, data_dir=None, download=True):
    """Reads `split` of the TFDS translation dataset `name`; returns (sources, targets) lists.

    `split` names "val"/"dev" map to "validation" and "test2016" to "test"; any other TFDS
    split string ("train[:1%]") passes through. Examples are dicts keyed by language code.
    """
    import tensorflow_datasets as tfds

    tfds_split = SPLIT_NAMES.get(split, split)
    dataset = tfds.load(name, split=tfds_split, data_dir=data_dir, download=download)
    keys = set(dataset.element_spec)
    for lang in (source_lang, target_lang):
        if lang not in keys:
            raise ValueError(
                f"tfds:{name} has the fields {sorted(keys)}, received the language {lang!r}."
            )
    sources, targets = [], []
    for example in tqdm.tqdm(
        tfds.as_numpy(dataset),
        desc=f"tfds:{name} {tfds_split}",
        unit=" pairs",
        leave=False,
        disable=None,
    ):
        sources.append(example[source_lang].decode("utf-8").strip())
        targets.append(example[target_lang].decode("utf-8").strip())
    return sources, targets
