"""A `POST /translate` body, checked: JSON of the expected types within the server's limits,
or a `RequestError` (status and a message naming the field, or the limit, and what was
received). Nothing here runs the model."""

import json
import math
import unicodedata

from zoo.constants import INT32_MAX  # where no limit of the server bounds a field

OPTIONS = ("sentences", "beam_size", "n_best", "alignments", "attention", "replace_unknown",
           "sample", "min_length", "ban_unknown", "no_repeat_ngram_size", "prefix",
           "constraints")  # fmt: skip
FLAGS = ("alignments", "attention", "replace_unknown")
CONTROLS = ("min_length", "ban_unknown", "no_repeat_ngram_size")
"""The decoding controls (the translator's keywords; not given: the library's defaults)."""
PER_SENTENCE = ("prefix", "constraints")
"""The fields that hold one entry per sentence (joined in order when requests merge)."""
SAMPLE_FIELDS = ("temperature", "top_k", "top_p", "seed")
JSON_TYPE = "application/json"


class RequestError(ValueError):
    """A request the server cannot honour: answered with `status` and the message;
    `close` ends the connection after the answer (its body may not have been read)."""

    def __init__(self, message, status=400, close=False):
        super().__init__(message)
        self.status = status
        self.close = close


def describe(value):
    """`value` in JSON's words, for messages: 'a string "false"', 'an object', ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"the string {json.dumps(shown, ensure_ascii=False)}"
    return "an array" if isinstance(value, list) else "an object"


def check_content_type(value):
    """415 unless the Content-Type is application/json (parameters such as charset allowed):
    a page on another origin can then post only after a CORS preflight, which this server
    does not answer."""
    if (value or "").split(";")[0].strip().lower() != JSON_TYPE:
        raise RequestError(
            f"POST /translate takes a body of Content-Type: {JSON_TYPE}, received "
            f"{value or 'no Content-Type'}.",
            status=415,
            close=True,
        )


MAX_DIGITS = 100
"""The most digits of an integer in a body: far above any value a field takes (a seed has
at most 19), far below Python's own limit on converting digits (4300)."""


def _reject_constant(name):
    raise ValueError(f"{name} is not a JSON number")


def _shown_number(text):
    return text if len(text) <= 40 else text[:37] + "..."


def _finite_float(text):
    value = float(text)
    if not math.isfinite(value):
        raise RequestError(
            f"number too large: the body holds {_shown_number(text)}, beyond a 64-bit float."
        )
    return value


def _bounded_int(text):
    digits = len(text.lstrip("-"))
    if digits > MAX_DIGITS:
        raise RequestError(
            f"number too large: the body holds an integer of {digits} digits; at most {MAX_DIGITS}."
        )
    return int(text)


def parse_json(body):
    """The JSON object of `body` (bytes), or a 400 RequestError."""
    try:
        request = json.loads(
            body.decode("utf-8"),
            parse_constant=_reject_constant,
            parse_float=_finite_float,
            parse_int=_bounded_int,
        )
    except RecursionError:
        raise RequestError("the body nests JSON arrays or objects too deeply.") from None
    except RequestError:
        raise
    except (UnicodeDecodeError, ValueError) as error:  # JSONDecodeError is a ValueError
        raise RequestError(f"the body must be a JSON object in UTF-8: {error}") from None
    if not isinstance(request, dict):
        raise RequestError(f"the body must be a JSON object, received {describe(request)}.")
    return request


def _integer(name, value, minimum, maximum=INT32_MAX, limit=" (a 32-bit integer)"):
    """`value`, an integer in [minimum, maximum], or a RequestError naming `name` and, past
    the maximum, `limit` (what sets it)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise RequestError(f'"{name}" must be an integer, received {describe(value)}.')
    if value < minimum:
        raise RequestError(f'"{name}" must be at least {minimum}, received {value}.')
    if value > maximum:
        raise RequestError(f'"{name}" must be at most {maximum}{limit}, received {value}.')
    return value


def _sentences(value, limits):
    if isinstance(value, str):
        raise RequestError(
            '"sentences" must be a list of strings, received a single string; wrap it as '
            "[sentence]."
        )
    if not isinstance(value, list):
        raise RequestError(f'"sentences" must be a list of strings, received {describe(value)}.')
    if len(value) > limits.max_sentences:
        raise RequestError(
            f"the request has {len(value)} sentences; this server takes at most "
            f"{limits.max_sentences} a request (max_sentences).",
            status=413,
        )
    for index, sentence in enumerate(value):
        if not isinstance(sentence, str):
            raise RequestError(
                f'"sentences" must be a list of strings, received {describe(sentence)} at '
                f"index {index}."
            )
        _check_length_and_unicode(f"sentences[{index}]", sentence, limits, " a sentence")
    return value


def _text(name, value, limits):
    """A string of at most `max_sentence_chars` characters, valid Unicode, or a RequestError
    naming `name`."""
    if not isinstance(value, str):
        raise RequestError(f'"{name}" must be a string, received {describe(value)}.')
    _check_length_and_unicode(name, value, limits)
    return value


def _check_length_and_unicode(label, text, limits, unit=""):
    """A RequestError naming `label` when `text` has more than `max_sentence_chars`
    characters (413), as given or NFKC-normalised (what the tokenizers read, where one
    character may become 18: U+FDFA), or is not valid Unicode (a lone surrogate, e.g.
    "\ud800")."""
    if len(text) > limits.max_sentence_chars:
        raise RequestError(
            f"{label} has {len(text)} characters; this server takes at most "
            f"{limits.max_sentence_chars}{unit} (max_sentence_chars).",
            status=413,
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise RequestError(
            f"{label} is not valid Unicode text: {error.reason} at character {error.start}."
        ) from None
    normalized = len(unicodedata.normalize("NFKC", text))
    if normalized > limits.max_sentence_chars:
        raise RequestError(
            f"{label} has {len(text)} characters, {normalized} after NFKC normalisation (what "
            f"the model reads); this server takes at most {limits.max_sentence_chars}{unit} "
            "(max_sentence_chars).",
            status=413,
        )


def check_token_counts(sentences, counts, limits):
    """A 413 RequestError naming the first sentence of more than `max_sentence_tokens`
    source tokens; `counts`: the tokens of each sentence, as the translator's tokenizer
    counts them."""
    for index, count in enumerate(counts):
        if count > limits.max_sentence_tokens:
            raise RequestError(
                f"sentences[{index}] has {int(count)} source tokens; this server takes at "
                f"most {limits.max_sentence_tokens} a sentence (max_sentence_tokens).",
                status=413,
            )


def _per_sentence(name, value, count, what):
    """`value` as a list of `count` entries, or a RequestError naming `name`."""
    if not isinstance(value, list):
        raise RequestError(
            f'"{name}" must be a list with one {what} per sentence, received {describe(value)}.'
        )
    if len(value) != count:
        raise RequestError(
            f'"{name}" has {len(value)} entries for {count} sentences; give one {what} per '
            "sentence."
        )
    return value


def _prefix(value, count, limits):
    value = _per_sentence("prefix", value, count, 'string ("" for none)')
    return [_text(f"prefix[{i}]", text, limits) for i, text in enumerate(value)]


def _constraints(value, count, limits):
    value = _per_sentence("constraints", value, count, "list of phrases ([] for none)")
    checked = []
    for i, phrases in enumerate(value):
        if not isinstance(phrases, list):
            raise RequestError(
                f'"constraints[{i}]" must be a list of strings (target phrases), received '
                f"{describe(phrases)}."
            )
        phrases = [_text(f"constraints[{i}][{j}]", p, limits) for j, p in enumerate(phrases)]
        total = sum(len(p) for p in phrases)
        if total > limits.max_sentence_chars:
            raise RequestError(
                f"constraints[{i}] has {total} characters in all; this server takes at most "
                f"{limits.max_sentence_chars} a sentence (max_sentence_chars).",
                status=413,
            )
        checked.append(phrases)
    return checked


def _controls(request):
    """The decoding controls the request gives (None where not given)."""
    checked = {}
    for name in ("min_length", "no_repeat_ngram_size"):
        value = request.get(name)
        checked[name] = None if value is None else _integer(name, value, 0)
    value = request.get("ban_unknown")
    if value is not None and not isinstance(value, bool):
        raise RequestError(
            f'"ban_unknown" must be true or false (a JSON boolean), received {describe(value)}.'
        )
    checked["ban_unknown"] = value
    return checked


def _unknown(fields, known):
    """The first few fields of `fields` not in `known`, shortened (for a message)."""
    unknown = sorted(set(fields) - set(known))
    shown = [name if len(name) <= 40 else name[:37] + "..." for name in unknown[:5]]
    return shown + [f"... {len(unknown) - 5} more"] if len(unknown) > 5 else shown


def _sample(value):
    if not isinstance(value, dict):
        raise RequestError(
            f'"sample" must be an object of {", ".join(SAMPLE_FIELDS)}, received {describe(value)}.'
        )
    unknown = _unknown(value, SAMPLE_FIELDS)
    if unknown:
        raise RequestError(
            f'unknown field(s) {unknown} in "sample"; expected some of {list(SAMPLE_FIELDS)}.'
        )
    checked = {}
    # Numbers in their ranges (null: the library's default); the library's finer checks
    # (a temperature too small to draw with) answer with its own message.
    for name, expected, valid in (
        ("temperature", "a number above 0", lambda number: number > 0),
        ("top_p", "a number in (0, 1]", lambda number: 0 < number <= 1),
    ):
        number = value.get(name)
        if number is None:
            continue
        if isinstance(number, bool) or not isinstance(number, (int, float)) or not valid(number):
            raise RequestError(
                f'"sample.{name}" must be {expected} or null, received {describe(number)}.'
            )
        checked[name] = float(number)
    if value.get("top_k") is not None:
        checked["top_k"] = _integer("sample.top_k", value["top_k"], 1)
    if value.get("seed") is not None:
        checked["seed"] = _integer("sample.seed", value["seed"], 0, 2**63 - 1, " (a 64-bit seed)")
    return checked


def check_request(request, limits, default_beam_size=1):
    """The options of a parsed body (`parse_json`), checked against `limits` (a
    `ServerLimits`; `default_beam_size`: the translator's, for a request that names none):
    a dict with every field of OPTIONS (None or False where not given)."""
    unknown = _unknown(request, OPTIONS)
    if unknown:
        raise RequestError(f"unknown field(s) {unknown}; expected some of {list(OPTIONS)}.")
    if "sentences" not in request:
        raise RequestError('the field "sentences" (a list of strings) is required.')
    options = {"sentences": _sentences(request["sentences"], limits)}
    beam_size = request.get("beam_size")
    if beam_size is not None:
        beam_size = _integer(
            "beam_size", beam_size, 1, limits.max_beam_size, " on this server (max_beam_size)"
        )
    options["beam_size"] = beam_size
    n_best = request.get("n_best")
    options["n_best"] = None if n_best is None else _integer("n_best", n_best, 1)
    for flag in FLAGS:
        value = request.get(flag)
        if value is not None and not isinstance(value, bool):
            raise RequestError(
                f'"{flag}" must be true or false (a JSON boolean), received {describe(value)}.'
            )
        options[flag] = bool(value)
    sample = request.get("sample")
    options["sample"] = None if sample is None else _sample(sample)
    options.update(_controls(request))
    count = len(options["sentences"])
    prefix, constraints = request.get("prefix"), request.get("constraints")
    options["prefix"] = None if prefix is None else _prefix(prefix, count, limits)
    options["constraints"] = (
        None if constraints is None else _constraints(constraints, count, limits)
    )
    if options["sample"] is not None:
        fields = ("beam_size", "n_best", *FLAGS, *CONTROLS, *PER_SENTENCE)
        asked = [name for name in fields if options[name] not in (None, False)]
        if asked:
            raise RequestError(f'"sample" cannot be combined with {asked}.')
    beam = 1 if options["sample"] is not None else beam_size or default_beam_size or 1
    beam = max(beam, options["n_best"] or 1)
    hypotheses = beam * len(options["sentences"])
    if hypotheses > limits.max_beam_sentences:
        raise RequestError(
            f"the request asks for beam size {beam} x {len(options['sentences'])} sentences "
            f"= {hypotheses} hypotheses; this server "
            f"takes at most {limits.max_beam_sentences} (max_beam_sentences).",
            status=413,
        )
    searched = 1 if options["sample"] is not None else beam_size or default_beam_size or 1
    n_best = options["n_best"]
    if n_best is not None and n_best > searched:
        given = "the request's beam_size" if beam_size else "this server's default"
        hint = (
            f'ask for a "beam_size" of at least {n_best} too'
            if n_best <= limits.max_beam_size
            else f'"beam_size" is at most {limits.max_beam_size} on this server (max_beam_size)'
        )
        raise RequestError(
            f'"n_best" must be at most the beam size, {searched} ({given}), received '
            f"{n_best}; {hint}."
        )
    return options


def batch_key(options):
    """What requests must share to be translated in one call (None: never merged, as a
    sampled request, whose draws depend on the batch): the search options and controls,
    and whether a prefix and constraints are given (their per-sentence lists are joined in
    order, as the sentences are)."""
    if options["sample"] is not None:
        return None
    shared = [name for name in OPTIONS if name not in ("sentences", "sample", *PER_SENTENCE)]
    given = tuple(options[name] is not None for name in PER_SENTENCE)
    return (*(options[name] for name in shared), *given)
