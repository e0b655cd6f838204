"""What a checked request asks of the translator, and a batch of requests in one call.

Runs in the server's worker thread: these functions call the model and block."""

import inspect

from zoo.server.validation import CONTROLS, PER_SENTENCE, RequestError

_NEG_INF = float("-inf")  # an n-best entry that does not exist (tiny vocabularies)


def translate_request(translator, request):
    """The response object of a checked `POST /translate` request (a dict whose every
    value is a list with one entry per sentence, in order)."""
    sentences, beam_size = request["sentences"], request.get("beam_size")
    sample = request.get("sample")
    if sample is not None:
        return {"translations": _method(translator, "sample")(sentences, **sample)}
    n_best = request.get("n_best")
    search = search_options(translator, request)
    if not has_attention(translator):  # a SavedModel exported with attention=False, LiteRT
        asked = [k for k in ("alignments", "attention", "replace_unknown") if request.get(k)]
        if asked:
            raise RequestError(
                f"{asked} need the attention, which this server's {type(translator).__name__} "
                "leaves out."
            )
        response = {"translations": translator.translate(sentences, beam_size=beam_size)}
        if n_best:
            response["n_best"] = _n_best(translator, sentences, n_best, beam_size)
        return response
    translations = translator.translate_with_attention(sentences, beam_size=beam_size, **search)
    response = {
        "translations": [t.translation for t in translations],
        "scores": [t.score for t in translations],
    }
    if request.get("replace_unknown"):
        if hasattr(translator, "replace_unknown"):  # a Translator
            response["translations"] = translator.replace_unknown(translations)
        else:  # a SavedModelTranslator: its translation_unk_replaced output
            response["translations"] = translator.translate(
                sentences, beam_size=beam_size, replace_unknown=True
            )
    if request.get("alignments"):
        response["alignments"] = [t.alignment() for t in translations]
    if request.get("attention"):
        response["attention"] = [
            {
                "source_tokens": t.source_tokens,
                "target_tokens": t.target_tokens,
                "weights": [[round(float(w), 4) for w in row] for row in t.weights],
            }
            for t in translations
        ]
    if n_best:
        response["n_best"] = _n_best(translator, sentences, n_best, beam_size, search)
    return response


def search_options(translator, request):
    """The decoding controls, prefix and constraints `request` gives, as the translator's
    keywords; a RequestError when asked of a translator that takes none (a SavedModel)."""
    search = {
        name: request[name] for name in (*CONTROLS, *PER_SENTENCE) if request.get(name) is not None
    }
    if search and "constraints" not in inspect.signature(translator.translate).parameters:
        raise RequestError(
            f"{sorted(search)} need a model folder's translator; this server runs a "
            f"{type(translator).__name__}, whose search is fixed at export."
        )
    return search


def has_attention(translator):
    """Whether `translator` gives attention weights (a SavedModel may leave them out, a
    LiteRT file has none)."""
    outputs = getattr(translator, "metadata", {}).get("outputs")  # the exports' outputs
    return outputs is None or "attention" in outputs


def _n_best(translator, sentences, n, beam_size, search=None):
    keywords = dict(search or {})
    if beam_size is not None:
        if "beam_size" in inspect.signature(translator.translate_n_best).parameters:
            keywords["beam_size"] = beam_size
        elif beam_size != translator.beam_size:  # a SavedModel: its n-best beam is fixed
            raise RequestError(
                f'"n_best" comes from the beam size fixed at export, {translator.beam_size}, '
                f'in this server\'s SavedModel; received "beam_size": {beam_size}.'
            )
    lists = _method(translator, "translate_n_best")(sentences, n, **keywords)
    return [
        [{"translation": text, "score": score} for text, score in entries if score != _NEG_INF]
        for entries in lists
    ]


def _method(translator, name):
    """`translator`'s method `name`, or a RequestError naming what this server's engine
    lacks (a LiteRT file runs its search alone: no sampling, no n-best lists)."""
    method = getattr(translator, name, None)
    if method is None:
        asked = {"sample": '"sample"', "translate_n_best": '"n_best"'}[name]
        raise RequestError(
            f"{asked} needs a model folder's translator or its SavedModel; this server runs "
            f"a LiteRT file ({type(translator).__name__}), whose search is fixed at export."
        )
    return method


def _outcome(translator, request):
    """The response of one request, or the exception it raised."""
    try:
        return translate_request(translator, request)
    except Exception as error:  # answered to its request alone (zoo.server.app)
        return error


def run_batch(translator, requests):
    """The outcomes (response dicts or exceptions) of `requests`, checked requests sharing
    their options (`zoo.server.validation.batch_key`), translated in one call: their
    sentences joined, each answer the slice of its own sentences. If the joined call
    fails, each request runs alone, so that one request's failure stays its own."""
    if len(requests) == 1:
        return [_outcome(translator, requests[0])]
    joined = dict(requests[0], sentences=[s for r in requests for s in r["sentences"]])
    for name in PER_SENTENCE:  # given by all of them or none (the batch key)
        if requests[0].get(name) is not None:
            joined[name] = [entry for r in requests for entry in r[name]]
    try:
        response = translate_request(translator, joined)
    except Exception:
        return [_outcome(translator, request) for request in requests]
    outcomes, start = [], 0
    for request in requests:
        end = start + len(request["sentences"])
        outcomes.append({key: values[start:end] for key, values in response.items()})
        start = end
    return outcomes
