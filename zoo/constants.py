"""Names the packages share without importing each other.

Every vocabulary in `zoo` reserves the same four ids, so that models, search and
tokenizers agree. Training writes, and the translator and the exports read, an output
folder's model and tokenizers under one name each. The search counts steps, lengths and
n-gram sizes in int32, which bounds the integers its settings and a server request may take.
"""

PAD_ID = 0  # padding; masks are `ids != PAD_ID`
START_ID = 1  # decoder input starts with it (<s>)
END_ID = 2  # a hypothesis ends with it (</s>)
UNK_ID = 3  # unknown token (<unk>)

PAD_TOKEN = "<pad>"
START_TOKEN = "<s>"
END_TOKEN = "</s>"
UNK_TOKEN = "<unk>"
RESERVED_TOKENS = (PAD_TOKEN, START_TOKEN, END_TOKEN, UNK_TOKEN)

MODEL_FILE = "model.keras"  # an output folder's model: training writes it, the translator reads it
SOURCE_TOKENIZER_DIR = "source_tokenizer"  # its tokenizers (and a LiteRT file's sidecars)
TARGET_TOKENIZER_DIR = "target_tokenizer"
CHECKPOINT_DIR = "checkpoints"  # an output folder's checkpoints (and the run's time plan)
LOG_DIR = "logs"  # an output folder's TensorBoard logs: train/ and validation/
SERVING_DIR = "serving"  # an output folder's SavedModel (Translator.export)
CONFIG_FILE = "translator.json"  # its search settings and the model file it delivers
RUN_FILE = "run.json"  # the settings of the run that trained it (every flag)
CARD_FILE = "README.md"  # a shipped or published folder's model card
CHECKSUMS_FILE = "checksums.sha256"  # a shipped or published folder's file hashes (sha256sum)

INT32_MAX = 2**31 - 1  # the largest step, length or n-gram size the search counts (int32)
