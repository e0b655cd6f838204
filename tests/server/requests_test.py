"""Hostile and oversized requests get a status and a message naming the field or the limit,
before any of them reaches the model; failures of the model are answered without their
text. The application runs in this process (Starlette's TestClient: real HTTP requests,
no sockets)."""

import json
import logging
from types import SimpleNamespace

import pytest
from server_helpers import SECRET, StubTranslator
from starlette.testclient import TestClient

from zoo.server import ServerLimits, make_app
from zoo.server.app import finite, reply

JSON = {"Content-Type": "application/json"}


@pytest.fixture(scope="module")
def stub():
    return StubTranslator()


@pytest.fixture(scope="module")
def client(stub):
    app = make_app(stub, "/secret/place/model_folder", ServerLimits(max_request_bytes=1 << 22))
    with TestClient(app) as client:
        yield client


def post(client, payload=None, content=None, headers=JSON):
    response = client.post("/translate", json=payload, content=content, headers=headers)
    return response.status_code, response.json()


@pytest.mark.parametrize(
    "payload, status, message",
    [
        ({"sentences": {"Ein Hund.": 1}}, 400, "received an object"),
        ({"sentences": [1, 2]}, 400, "received the number 1 at index 0"),
        ({"sentences": ["a", None]}, 400, "received null at index 1"),
        ({"sentences": "Ein Hund."}, 400, "single string"),
        ({"sentences": ["a"], "attention": "false"}, 400, 'received the string "false"'),
        ({"sentences": ["a"], "alignments": 1}, 400, "JSON boolean"),
        ({"sentences": ["a"], "replace_unknown": "yes"}, 400, "JSON boolean"),
        ({"sentences": ["a"], "n_best": 0}, 400, '"n_best" must be at least 1, received 0'),
        ({"sentences": ["a"], "n_best": -3}, 400, '"n_best" must be at least 1'),
        ({"sentences": ["a"], "n_best": True}, 400, '"n_best" must be an integer, received true'),
        ({"sentences": ["a"], "n_best": 2.5}, 400, '"n_best" must be an integer'),
        ({"sentences": ["a"], "beam_size": False}, 400, '"beam_size" must be an integer'),
        ({"sentences": ["a"], "beam_size": 0}, 400, '"beam_size" must be at least 1'),
        ({"sentences": ["a"], "beam_size": 10**6}, 400, "at most 16 on this server (max_beam_size)"),
        ({"sentences": ["a"], "beam_size": "5"}, 400, '"beam_size" must be an integer'),
        ({"sentences": ["a"], "sample": "hot"}, 400, '"sample" must be an object'),
        ({"sentences": ["a"], "sample": {"temperature": "2"}}, 400, '"sample.temperature" must be a number'),
        ({"sentences": ["a"], "sample": {"top_p": True}}, 400, '"sample.top_p" must be a number'),
        ({"sentences": ["a"], "sample": {"top_p": 2}}, 400, '"sample.top_p" must be a number in (0, 1] or null, received the number 2.'),
        ({"sentences": ["a"], "sample": {"top_p": 0.0}}, 400, "in (0, 1] or null, received the number 0.0"),
        ({"sentences": ["a"], "sample": {"temperature": 0}}, 400, '"sample.temperature" must be a number above 0 or null'),
        ({"sentences": ["a"], "sample": {"temperature": -1.5}}, 400, "received the number -1.5"),
        ({"sentences": ["a"], "min_length": 2**31}, 400, '"min_length" must be at most 2147483647 (a 32-bit integer), received 2147483648.'),
        ({"sentences": ["a"], "no_repeat_ngram_size": 10**30}, 400, '"no_repeat_ngram_size" must be at most 2147483647'),
        ({"sentences": ["a"], "sample": {"top_k": 2**63}}, 400, '"sample.top_k" must be at most 2147483647'),
        ({"sentences": ["a"], "sample": {"seed": 2**64}}, 400, '"sample.seed" must be at most 9223372036854775807 (a 64-bit seed)'),
        ({"sentences": ["a"], "n_best": 2}, 400, '"n_best" must be at most the beam size, 1 (this server\'s default), received 2; ask for a "beam_size" of at least 2 too.'),
        ({"sentences": ["a"], "n_best": 3, "beam_size": 2}, 400, '"n_best" must be at most the beam size, 2 (the request\'s beam_size), received 3'),
        ({"sentences": ["a"], "n_best": 17}, 400, 'received 17; "beam_size" is at most 16 on this server (max_beam_size).'),
        ({"sentences": ["a"], "sample": {"top_k": 1.5}}, 400, '"sample.top_k" must be an integer'),
        ({"sentences": ["a"], "sample": {"seed": -1}}, 400, '"sample.seed" must be at least 0'),
        ({"sentences": ["a"], "sample": {"heat": 1}}, 400, "unknown field(s) ['heat']"),
        ({"sentences": ["a"], "sample": {}, "n_best": 2}, 400, "cannot be combined with ['n_best']"),
        ({"sentence": ["a"]}, 400, "unknown field"),
        ({f"k{i}": 1 for i in range(1000)}, 400, "'... 995 more']"),
        ({}, 400, '"sentences" (a list of strings) is required'),
        ({"sentences": ["a"] * 10_000}, 413, "at most 100 a request (max_sentences)"),
        ({"sentences": ["Hund " * 5000]}, 413, "at most 1000 a sentence (max_sentence_chars)"),
        ({"sentences": ["a"] * 500, "beam_size": 1024}, 413, "(max_sentences)"),
        ({"sentences": ["a"] * 50, "beam_size": 1024}, 400, "(max_beam_size)"),
        ({"sentences": ["a"] * 100, "beam_size": 16}, 413, "(max_beam_sentences)"),
        ({"sentences": ["a"] * 100, "n_best": 11}, 413, "1100 hypotheses"),
    ],
)  # fmt: skip
def test_bad_values_and_sizes_get_a_status_naming_them(client, stub, payload, status, message):
    calls = len(stub.calls)
    got, body = post(client, payload)
    assert got == status and message in body["error"], body
    assert len(stub.calls) == calls  # refused before the model


@pytest.mark.parametrize(
    "content, message",
    [
        (b"[" * 100_000, "too deeply"),
        (b'{"sentences": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "too deeply"),
        (b'{"sentences": ["a"], "beam_size": NaN}', "NaN is not a JSON number"),
        (b'{"sentences": ["a"], "sample": {"temperature": 1e999}}', "too large"),
        (
            b'{"sentences": ["a"], "beam_size": ' + b"9" * 5000 + b"}",
            "number too large: the body holds an integer of 5000 digits; at most 100.",
        ),
        (b'{"sentences": ["a"], "min_length": -' + b"9" * 101 + b"}", "number too large"),
        (
            b'{"sentences": ["a"], "sample": {"top_p": 1' + b"0" * 400 + b".5}}",
            "number too large: the body holds 1000000000000000000000000000000000000...",
        ),
        (b'{"sentences": ["\\ud800"]}', "not valid Unicode"),
        (b"\xff\xfe{}", "UTF-8"),
        (b"[]", "received an array"),
        (b"", "JSON object"),
    ],
)
def test_malformed_json_is_a_400(client, content, message):
    got, body = post(client, content=content)
    assert got == 400 and message in body["error"], body


@pytest.mark.parametrize(
    "headers", [{"Content-Type": "text/plain"}, {}, {"Content-Type": "application/x-www-form-urlencoded"}]
)  # fmt: skip
def test_a_post_that_is_not_json_is_a_415(client, headers):
    """A page on another origin may POST text/plain without a CORS preflight: refused."""
    got, body = post(client, content=b'{"sentences": ["Ein Hund."]}', headers=headers)
    assert got == 415 and "application/json" in body["error"]
    got, body = post(
        client, content=b'{"sentences": ["x"]}', headers={"content-type": "Application/JSON; charset=utf-8"}
    )  # fmt: skip
    assert (got, body["translations"]) == (200, ["X"])


def test_a_failure_of_the_model_is_a_500_with_an_id_and_no_details(client, caplog):
    with caplog.at_level(logging.ERROR, logger="zoo.server"):
        got, body = post(client, {"sentences": ["boom"]})
    assert got == 500 and "id " in body["error"]
    error_id = body["error"].split("id ")[1].split(")")[0]
    assert SECRET not in body["error"] and "GatherV2" not in body["error"]
    (record,) = [r for r in caplog.records if error_id in r.getMessage()]
    assert record.exc_info and SECRET in str(record.exc_info[1])  # the log has it all
    assert post(client, {"sentences": ["still serving"]}) == (
        200,
        {"translations": ["STILL SERVING"]},
    )


def test_a_value_the_library_refuses_is_a_400_with_its_message(client):
    got, body = post(client, {"sentences": ["a"], "sample": {"temperature": 1e-40}})
    assert got == 400 and body["error"] == "temperature must be at least 1e-30, got 1e-40."


def test_config_names_the_folder_only_and_the_limits(client):
    config = client.get("/config").json()
    assert config["model_dir"] == "model_folder" and "/secret" not in str(config)
    assert config["limits"] == ServerLimits(max_request_bytes=1 << 22).as_dict()
    assert set(config["load"]) == {"waiting", "batches", "requests", "dropped"}


def test_unknown_paths_and_methods_answer_json(client):
    response = client.get("/nothing")
    assert response.status_code == 404 and "no such path '/nothing'" in response.json()["error"]
    response = client.get("/translate")
    assert response.status_code == 405 and response.json()["error"].startswith("GET /translate")
    assert client.post("/health", headers=JSON).status_code == 405
    preflight = client.options(
        "/translate",
        headers={"Origin": "https://elsewhere.example", "Access-Control-Request-Method": "POST"},
    )  # a browser's CORS preflight: refused, so a page elsewhere never sends its JSON POST
    assert preflight.status_code == 405 and "access-control-allow-origin" not in preflight.headers
    page = client.get("/?q=Ein%20Hund")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert '"Content-Type": "application/json"' in page.text  # the page's own fetch


def test_the_library_sampling_checks_answer_400_on_a_real_translator(data_dir):
    """A real Translator: the sampling values it refuses are 400s with its message; a
    temperature too small to draw with is never a 500."""
    from translator_toy import toy_translator

    translator = toy_translator("bahdanau_rnnsearch", beam_size=1)
    with TestClient(make_app(translator)) as client:
        for sample, message in (({"top_p": 2.0}, "top_p"), ({"temperature": 0}, "temperature")):
            got, body = post(client, {"sentences": ["Ein Hund."], "sample": sample})
            assert got == 400 and message in body["error"], body
        for sample in ({"temperature": 1e-320}, {"top_p": 1e-300}):
            got, body = post(client, {"sentences": ["Ein Hund."], "sample": sample})
            assert got in (200, 400), body


def _strict_json(body):
    """`body` parsed as strict JSON: Infinity, -Infinity and NaN are not JSON."""

    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")

    return json.loads(body, parse_constant=refuse)


class NonFiniteScores(StubTranslator):
    """A translator with attention whose scores are -inf (a search that found no finished
    hypothesis) and NaN, as no JSON can write them."""

    metadata = {}
    beam_size = 2

    def translate_with_attention(self, sentences, beam_size=None, **search):
        self._call(sentences)
        scores = [float("-inf"), float("nan"), float("inf")]
        return [
            SimpleNamespace(translation=s.upper(), score=scores[i % 3])
            for i, s in enumerate(sentences)
        ]

    def translate_n_best(self, sentences, n_best, beam_size=None, **search):
        self._call(sentences)
        return [[(s.upper(), -1.5), (s.lower(), float("nan"))][:n_best] for s in sentences]


def test_non_finite_numbers_are_answered_as_null_in_strict_json():
    with TestClient(make_app(NonFiniteScores())) as client:
        response = client.post(
            "/translate", json={"sentences": ["a", "b", "c"], "n_best": 2}, headers=JSON
        )
    assert response.status_code == 200
    body = _strict_json(response.content)
    assert body["translations"] == ["A", "B", "C"]
    assert body["scores"] == [None, None, None]
    assert body["n_best"][0] == [
        {"translation": "A", "score": -1.5},
        {"translation": "a", "score": None},
    ]


def test_finite_replaces_non_finite_floats_only():
    payload = {"a": [1.5, float("nan"), {"b": (float("-inf"), 2)}], "c": "inf", "d": None}
    assert finite(payload) == {"a": [1.5, None, {"b": [None, 2]}], "c": "inf", "d": None}
    assert _strict_json(reply(200, payload).body) == finite(payload)


class ExportedNBest(StubTranslator):
    """A SavedModel's interface: its n-best list comes from the beam fixed at export."""

    beam_size = 4

    def translate_n_best(self, sentences, n_best=None):
        self._call(sentences)
        return [[(s.upper(), -1.0)] * n_best for s in sentences]


def test_a_saved_model_n_best_with_another_beam_size_is_a_400():
    with TestClient(make_app(ExportedNBest())) as client:
        got, body = post(client, {"sentences": ["a"], "n_best": 1, "beam_size": 1})
        assert got == 400 and "fixed at export, 4" in body["error"], body
        assert 'received "beam_size": 1' in body["error"]
        got, body = post(client, {"sentences": ["a"], "n_best": 2, "beam_size": 4})
        assert got == 200 and body["n_best"] == [[{"translation": "A", "score": -1.0}] * 2]
