"""Three-way tied embeddings (Press and Wolf 2017, "three-way weight tying"): one matrix for
the source embeddings, the target embeddings and the output layer, over one vocabulary."""

import keras

from zoo.models.tied_output import share_source_embedding


@keras.saving.register_keras_serializable(package="zoo")
class ThreeWayTiedModel(keras.Model):
    """A functional translation model whose encoder reads the source with the decoder's
    target embedding matrix E, which the decoder's output layer also reads.

    Made like any functional model, from inputs and outputs, with an encoder built with
    `shared_embedding=True` and a decoder with `tie_embeddings=True` (the sizes must agree:
    one vocabulary, one embedding size, else a ValueError naming both). The link from the
    encoder to E is made here, when the model is made, and again when `keras.models.
    load_model` makes it from its configuration, so E is one weight, the decoder's, saved
    and counted once. `zoo.models.build(..., tie_embeddings="three_way")` and
    `zoo.models.with_tied_embeddings(model, three_way=True)` make one.

    Example:
        model = zoo.models.build("luong_global_general", "base", source_vocab_size=8000,
                                 target_vocab_size=8000, tie_embeddings="three_way")
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        share_source_embedding(self.get_layer("encoder"), self.get_layer("decoder"))
