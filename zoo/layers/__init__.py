"""Attention layers of Bahdanau et al. 2014 and Luong et al. 2015 (Keras 3).

All share one call contract (see `AttentionBase`):

    context, weights = layer(query, memory, mask=None, keys=None)                 # global
    context, weights = layer(query, memory, mask=None, keys=None, positions=None) # local
"""

from zoo.layers.attention_base import AttentionBase, masked_softmax
from zoo.layers.bahdanau_attention import BahdanauAttention
from zoo.layers.local_attention import LocalAttention
from zoo.layers.luong_attention import LuongAttention

__all__ = [
    "AttentionBase",
    "BahdanauAttention",
    "LocalAttention",
    "LuongAttention",
    "masked_softmax",
]
