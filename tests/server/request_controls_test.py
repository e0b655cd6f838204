"""Requests with decoding controls (min_length, ban_unknown, no_repeat_ngram_size), prefixes
and constraints: checked with a status naming the field, answered as the translator answers
the same arguments, and merged into one call only with requests of the same controls (each
answer the request's alone)."""

import concurrent.futures

import numpy as np
import pytest
from server_helpers import StubTranslator, call, running, url_of
from starlette.testclient import TestClient

from zoo.server import RequestError, ServerLimits, make_app
from zoo.server.translation import run_batch, translate_request
from zoo.server.validation import batch_key, check_request

JSON = {"Content-Type": "application/json"}
SENTENCES = ["Ein Hund rennt.", "Zwei Männer lachen auf einer Bank.", "Eine Frau."]


@pytest.fixture(scope="module")
def translator(data_dir):
    from translator_toy import toy_translator

    return toy_translator("bahdanau_rnnsearch", beam_size=2)


def post(client, payload):
    response = client.post("/translate", json=payload, headers=JSON)
    return response.status_code, response.json()


@pytest.mark.parametrize(
    "payload, status, message",
    [
        ({"min_length": -1}, 400, '"min_length" must be at least 0, received -1'),
        ({"min_length": 2.5}, 400, '"min_length" must be an integer'),
        ({"no_repeat_ngram_size": "2"}, 400, '"no_repeat_ngram_size" must be an integer'),
        ({"ban_unknown": 1}, 400, '"ban_unknown" must be true or false (a JSON boolean)'),
        ({"prefix": "A dog"}, 400, '"prefix" must be a list with one string ("" for none) per sentence'),
        ({"prefix": ["A"]}, 400, '"prefix" has 1 entries for 2 sentences'),
        ({"prefix": ["A", None]}, 400, '"prefix[1]" must be a string, received null'),
        ({"prefix": ["A", "x" * 2000]}, 413, "prefix[1] has 2000 characters"),
        ({"constraints": [["dog"]]}, 400, '"constraints" has 1 entries for 2 sentences'),
        ({"constraints": ["dog", []]}, 400, '"constraints[0]" must be a list of strings'),
        ({"constraints": [[1], []]}, 400, '"constraints[0][0]" must be a string'),
        ({"constraints": [["x" * 600, "y" * 600], []]}, 413, "constraints[0] has 1200 characters in all"),
        ({"sample": {}, "prefix": ["A", ""]}, 400, "cannot be combined with ['prefix']"),
        ({"sample": {}, "ban_unknown": True}, 400, "cannot be combined with ['ban_unknown']"),
    ],
)  # fmt: skip
def test_bad_controls_get_a_status_naming_them(payload, status, message):
    stub = StubTranslator()
    with TestClient(make_app(stub, None, ServerLimits())) as client:
        got, body = post(client, {"sentences": ["a", "b"], **payload})
    assert got == status and message in body["error"], body
    assert stub.calls == []  # refused before the model


def test_constraints_count_against_the_hypotheses_limit():
    limits = ServerLimits()
    request = {"sentences": ["a"] * 100, "beam_size": 16, "constraints": [["x"]] * 100}
    with pytest.raises(RequestError, match="max_beam_sentences") as refused:
        check_request(request, limits, 2)
    assert refused.value.status == 413


def test_a_translator_without_controls_answers_400():
    """A SavedModel's search is fixed at export: asking it for controls is a 400."""
    stub = StubTranslator()
    with TestClient(make_app(stub, None, ServerLimits())) as client:
        got, body = post(client, {"sentences": ["a"], "min_length": 2})
    assert got == 400 and "['min_length'] need a model folder's translator" in body["error"]
    assert stub.calls == []


ASKED = [
    {"min_length": 4, "ban_unknown": True},
    {"no_repeat_ngram_size": 1, "min_length": 5, "n_best": 2},
    {"prefix": ["A dog", "", "The woman"], "attention": True},
    {"constraints": [["dog"], [], ["book", "a woman"]], "alignments": True},
    {"prefix": ["", "Two", ""], "constraints": [[], ["bench"], ["cat"]], "n_best": 2},
]


@pytest.mark.parametrize("asked", ASKED)
def test_answers_are_the_translators_with_the_same_arguments(translator, asked):
    with TestClient(make_app(translator, None, ServerLimits())) as client:
        got, body = post(client, {"sentences": SENTENCES, **asked})
    assert got == 200, body
    search = {k: v for k, v in asked.items() if k not in ("n_best", "attention", "alignments")}
    alone = translator.translate_with_attention(SENTENCES, **search)
    assert body["translations"] == [t.translation for t in alone]
    np.testing.assert_allclose(body["scores"], [t.score for t in alone], rtol=1e-5)
    for i, text in enumerate(body["translations"]):
        assert text.startswith((search.get("prefix") or [""] * 3)[i])
        for phrase in (search.get("constraints") or [[]] * 3)[i]:
            assert phrase in text
    if "n_best" in asked:
        lists = translator.translate_n_best(SENTENCES, asked["n_best"], **search)
        assert [[e["translation"] for e in n] for n in body["n_best"]] == [
            [text for text, score in n if score != float("-inf")] for n in lists
        ]
    if asked.get("alignments"):
        assert body["alignments"] == [t.alignment() for t in alone]


def test_requests_merge_only_with_the_same_controls(translator):
    """The batch key holds the controls and whether a prefix and constraints are given;
    merged requests (their per-sentence lists joined in order) answer as each alone."""
    limits = ServerLimits()

    def checked(request):
        return check_request(request, limits, translator.beam_size)

    first = checked({"sentences": SENTENCES[:2], "prefix": ["A dog", ""], "min_length": 3})
    second = checked({"sentences": SENTENCES[2:], "prefix": ["The"], "min_length": 3})
    plain = checked({"sentences": SENTENCES[2:], "min_length": 3})
    other = checked({"sentences": SENTENCES[2:], "prefix": ["The"], "min_length": 4})
    assert batch_key(first) == batch_key(second)
    assert len({batch_key(first), batch_key(plain), batch_key(other)}) == 3
    constrained = [
        checked({"sentences": SENTENCES[:1], "constraints": [["dog"]]}),
        checked({"sentences": SENTENCES[1:], "constraints": [[], ["book", "woman"]]}),
    ]
    assert batch_key(constrained[0]) == batch_key(constrained[1])
    for group in ([first, second], constrained):
        merged = run_batch(translator, group)
        assert merged == [translate_request(translator, request) for request in group]


def test_concurrent_requests_with_controls_each_get_their_own_answer(translator):
    kinds = [
        {},
        {"min_length": 3},
        {"prefix": ["A"]},
        {"constraints": [["dog"]]},
        {"prefix": ["Two"], "constraints": [["men"]], "ban_unknown": True},
    ]
    requests = [{"sentences": [SENTENCES[i % 3]], **kinds[i % len(kinds)]} for i in range(15)]
    with running(translator, max_wait_ms=100) as server:
        url = url_of(server)
        with concurrent.futures.ThreadPoolExecutor(15) as pool:
            answers = list(pool.map(lambda r: call(url, "/translate", r, timeout=120), requests))
        load = call(url, "/config")[1]["load"]
    assert load["requests"] == 15
    for request, (status, body, _) in zip(requests, answers, strict=True):
        assert status == 200, body
        search = {k: v for k, v in request.items() if k != "sentences"}
        alone = translator.translate_with_attention(request["sentences"], **search)
        assert body["translations"] == [t.translation for t in alone]
        np.testing.assert_allclose(body["scores"], [t.score for t in alone], rtol=1e-5)
