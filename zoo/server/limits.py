"""The server's limits: what one request may ask, how requests are batched, and how long a
connection may keep the server waiting. One table, which `make_server`, the `zoo serve`
flags, `/config` and the serving guide read."""

import dataclasses

MAX_REQUEST_BYTES = 1 << 20
BATCH_SIZE_DEFAULT = "the translator's batch size"  # what max_batch_size=None stands for
FALLBACK_BATCH_SIZE = 64  # max_batch_size for a translator that has no batch_size


def _limit(default, help):
    return dataclasses.field(default=default, metadata={"help": help})


@dataclasses.dataclass(frozen=True)
class ServerLimits:
    """The limits of one server (`make_server(translator, **limits)` takes these fields).

    A request over a size limit is answered 413 (a beam size over `max_beam_size` 400), a
    full queue 503, a request not answered within `request_timeout` 504, a body not read
    within `read_timeout` 408; every message names the limit."""

    max_request_bytes: int = _limit(
        MAX_REQUEST_BYTES,
        "largest request body in bytes, whatever its framing (Content-Length or chunked)",
    )
    max_header_bytes: int = _limit(
        16384, "largest request head in bytes: the request line and the headers (more: 431)"
    )
    max_sentences: int = _limit(100, "most sentences in one request")
    max_sentence_chars: int = _limit(
        1000,
        "most characters in one sentence, as given and after NFKC normalisation (what the "
        "tokenizer reads: one character may become 18)",
    )
    max_sentence_tokens: int = _limit(
        500, "most source tokens in one sentence, as the model's tokenizer counts them"
    )
    max_beam_size: int = _limit(16, "largest beam_size a request may ask for")
    max_beam_sentences: int = _limit(
        1000, "most beam_size x sentences in one request (the hypotheses one search holds)"
    )
    max_batch_size: int | None = _limit(
        None,
        "most sentences translated in one call: requests with the same search options that "
        "arrive within max_wait_ms of each other are merged up to this many",
    )
    max_wait_ms: float = _limit(
        5.0,
        "most milliseconds a request waits for others to share its batch (no wait once "
        "every client of the batch before is back)",
    )
    max_queue: int = _limit(256, "most requests waiting for the model; more are answered 503")
    request_timeout: float = _limit(
        60.0, "seconds from a request's arrival in the queue to its answer; later: 504"
    )
    read_timeout: float = _limit(
        10.0,
        "seconds a client may take to send a request's head, and its body; later: the "
        "connection is closed (408 for a body)",
    )
    keep_alive_timeout: float = _limit(
        5.0, "seconds an idle connection is kept open between requests"
    )
    backlog: int = _limit(2048, "connections waiting to be accepted (the listen queue)")
    max_connections: int = _limit(
        1000, "open connections and requests at once; more are answered 503"
    )

    def __post_init__(self):
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if value is None and field.name == "max_batch_size":
                continue
            integer = field.type in (int, int | None)
            kinds = (int,) if integer else (int, float)
            if isinstance(value, bool) or not isinstance(value, kinds) or value <= 0:
                kind = "integer" if integer else "number"
                raise ValueError(
                    f"ServerLimits.{field.name} must be a positive {kind}, received {value!r}."
                )

    def as_dict(self):
        return dataclasses.asdict(self)


def limit_help(name):
    """What the limit `name` does (the flag's help text and the guide's table)."""
    return {field.name: field.metadata["help"] for field in dataclasses.fields(ServerLimits)}[name]


def limit_default(name):
    return {field.name: field.default for field in dataclasses.fields(ServerLimits)}[name]


def limits_table():
    """The limits as a Markdown table (flag, default, what it does): the serving guide holds
    it verbatim, so that a default changed here shows there (its test checks)."""
    rows = ["| flag | default | what it bounds |", "|---|---|---|"]
    for field in dataclasses.fields(ServerLimits):
        default = BATCH_SIZE_DEFAULT if field.default is None else field.default
        flag = "--" + field.name.replace("_", "-")
        rows.append(f"| `{flag}` | {default} | {field.metadata['help']} |")
    return "\n".join(rows)
