"""One request cannot hold the model: what it asks is bounded before any work starts, on a
real server (`python -m zoo serve` in a subprocess on 127.0.0.1, or a real translator in
this process on real sockets), and a plain request sent right after is answered at once."""

import pytest
from server_helpers import call, running, url_of


@pytest.fixture(scope="module")
def translator(data_dir):
    from translator_toy import toy_translator

    return toy_translator("bahdanau_rnnsearch", beam_size=1)


def test_huge_ngram_size_and_expanding_text_do_not_hold_the_model(zoo_serve):
    url, _, _, _, translator = zoo_serve
    plain = {"sentences": ["Hallo."]}
    expected = translator.translate(["Hallo."])
    status, body, _ = call(url, "/translate", plain, timeout=60)  # traced once
    assert status == 200 and body["translations"] == expected
    # An n-gram size longer than any output bans nothing and is answered as one.
    status, body, _ = call(
        url, "/translate", {**plain, "no_repeat_ngram_size": 2**31 - 1}, timeout=60
    )
    assert status == 200 and body["translations"] == expected, body
    # 1,000 characters that NFKC turns into 18,000: refused before the model.
    status, body, _ = call(url, "/translate", {"sentences": ["\ufdfa" * 1000]}, timeout=10)
    assert status == 413, body
    assert "18000 after NFKC normalisation" in body["error"], body
    assert "(max_sentence_chars)" in body["error"], body
    # The model is free: a plain request is answered within a 2 s client timeout.
    status, body, _ = call(url, "/translate", plain, timeout=2)
    assert status == 200 and body["translations"] == expected


def test_a_sentence_over_the_token_limit_is_refused_naming_it(translator):
    sentence = "Ein Hund rennt über eine große grüne Wiese."
    count = int(translator.source_lengths([sentence])[0])
    with running(translator, max_sentence_tokens=count - 1) as server:
        url = url_of(server)
        status, body, _ = call(url, "/translate", {"sentences": ["Hallo.", sentence]})
        assert status == 413, body
        assert body["error"] == (
            f"sentences[1] has {count} source tokens; this server takes at most {count - 1} "
            "a sentence (max_sentence_tokens)."
        )
        status, body, _ = call(url, "/translate", {"sentences": ["Hallo."]})
        assert status == 200 and body["translations"] == translator.translate(["Hallo."])
