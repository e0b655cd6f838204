"""The toy Translator whose searches write outputs of many lengths, for the export tests
(`writing_export` in conftest.py exports it)."""

from translator_toy import MIXED, read_lines, writing_toy  # noqa: F401 (the export tests')

CHUNK = 8  # writing_export's chunk_size
SENTENCES = read_lines("val.de", 30) + MIXED  # 37 sentences: 5 chunks of CHUNK at most
