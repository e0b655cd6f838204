"""Unknown-word replacement: each `<unk>` of a translation becomes a source word.

Luong et al. 2015, section 4.1 (after Jean et al. 2015 and Luong et al. 2015b): with a
word-level vocabulary, the model emits `<unk>` for a word outside it; each such token is
replaced by the source word with the highest attention weight at that step, or by that
word's translation when a dictionary gives one. Luong et al. gained +1.9 BLEU with it
(WMT'14 En-De, their Table 1).

    dictionary = read_dictionary("lexicon.de-en.txt")       # optional
    text = replace_unknown(source_words, translation.target_tokens, translation.weights,
                           dictionary)

`source_words` are the source's own surface tokens, position by position (for the word
tokenizer `WordTokenizer.split`): the ids map an unknown source word to `<unk>` as well,
and copying `<unk>` would restore nothing. A dictionary file has one entry a line, a
source word and its translation separated by a tab or by spaces (the first of a word's
lines wins; `#` starts a comment line).
"""

from zoo.constants import END_TOKEN, UNK_TOKEN
from zoo.text.vocabulary import JOINER, WORD_START


def read_dictionary(path):
    """{source word: translation} from a dictionary file (module docstring); a ValueError
    names the first line that is not two fields."""
    dictionary = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            fields = line.split("\t") if "\t" in line else line.split()
            if len(fields) != 2:
                raise ValueError(
                    f"{path}, line {number}: expected a source word and its translation "
                    f"(tab- or space-separated), received {line!r}."
                )
            dictionary.setdefault(fields[0], fields[1])
    return dictionary


def _bare(token):
    """A token without its joiner or word-start mark: the word itself."""
    if token.startswith(JOINER):
        return token[len(JOINER) :]
    return token[len(WORD_START) :] if token.startswith(WORD_START) else token


def replaced_tokens(source_words, target_tokens, weights, dictionary=None):
    """`target_tokens` (list of str, END last or not) with each `<unk>` replaced by the
    source word of highest weight in its row of `weights` (T, Ts), or by its translation in
    `dictionary`. The replacement stands as a word of its own (SentencePiece: it starts with
    the word-start mark; word level: no joiner)."""
    if len(target_tokens) and tuple(weights.shape) != (len(target_tokens), len(source_words)):
        raise ValueError(
            f"weights must have shape (len(target_tokens), len(source_words)) = "
            f"{(len(target_tokens), len(source_words))}, received {tuple(weights.shape)}: pass "
            "the source's tokens position by position."
        )
    dictionary = dictionary or {}
    pieces = any(t.startswith(WORD_START) for t in target_tokens)
    out = []
    for t, token in enumerate(target_tokens):
        if token == UNK_TOKEN and len(source_words):
            word = _bare(source_words[int(weights[t].argmax())])
            token = (WORD_START if pieces else "") + dictionary.get(word, word)
        out.append(token)
    return out


def join_tokens(tokens):
    """Text from word-level tokens (`JOINER` glues a token to the one before) or from
    SentencePiece pieces (`WORD_START` begins a word); END is dropped."""
    tokens = [t for t in tokens if t and t != END_TOKEN]
    if any(t.startswith(WORD_START) for t in tokens):
        return "".join(tokens).replace(WORD_START, " ").strip()
    text = " ".join(tokens).replace(" " + JOINER, "")
    return text[len(JOINER) :] if text.startswith(JOINER) else text


def replace_unknown(source_words, target_tokens, weights, dictionary=None):
    """The translation's text with its `<unk>` tokens replaced (`replaced_tokens`)."""
    return join_tokens(replaced_tokens(source_words, target_tokens, weights, dictionary))
