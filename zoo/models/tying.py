"""`with_tied_embeddings`: a recipe's model with its output layer tied to its target
embeddings (Press and Wolf 2017), or all three embeddings tied (`ThreeWayTiedModel`)."""

from zoo.models.three_way_tied_model import ThreeWayTiedModel
from zoo.models.tied_output import check_three_way


def with_tied_embeddings(model, three_way=False):
    """A new, untrained translation model: `model`'s configuration with the decoder's
    `tie_embeddings=True` (weights drawn anew), and with `three_way` the encoder's
    `shared_embedding=True` in a `ThreeWayTiedModel` (one vocabulary and embedding size,
    else a ValueError naming both). What `--tie-embeddings` does to a recipe's model,
    whatever builder made it; a model tied so already is returned as it is.

    Raises ValueError when `model` has no layer "decoder" taking `tie_embeddings` (or, for
    three_way, no layer "encoder" taking `shared_embedding`).
    """
    config = model.get_config()
    layers = {layer.get("name"): layer["config"] for layer in config.get("layers", ())}
    wanted = {"decoder": "tie_embeddings", **({"encoder": "shared_embedding"} if three_way else {})}
    if any(key not in layers.get(name, {}) for name, key in wanted.items()):
        raise ValueError(
            f"with_tied_embeddings needs a translation model whose layer 'decoder' takes "
            f"tie_embeddings (LuongDecoder, BahdanauDecoder, RNNEncDecDecoder)"
            f"{' and whose encoder takes shared_embedding' if three_way else ''}; got model "
            f"{model.name!r} with layers {[layer.name for layer in model.layers]}."
        )
    if all(layers[name][key] for name, key in wanted.items()):
        return model
    for name, key in wanted.items():
        layers[name][key] = True
    if not three_way:
        return type(model).from_config(config)
    encoder, decoder = layers["encoder"], layers["decoder"]
    check_three_way(
        encoder["vocab_size"], decoder["vocab_size"],
        encoder["embedding_dim"], decoder["embedding_dim"],
    )  # fmt: skip
    return ThreeWayTiedModel.from_config(config)
