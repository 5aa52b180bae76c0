"""The ledger's schema: an embedded SQLite database (WAL) holding every judge request.

Tables::

    meta(key PRIMARY KEY, value)          schema version, creation time, nonce salt
    requests(request_key PRIMARY KEY, content_key, request_id, nonce, case_id, turn,
             dimensions JSON, framing_hash, constants_hash, judge, backend, model,
             params JSON, status, attempts, raw_response, problem, error,
             input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens,
             cost_usd, latency_s, response_model, batch_id, created_at)
    results(request_key, dimension, bin, signal_present, evidence_turns JSON,
            rationale, injection_attempt; PRIMARY KEY (request_key, dimension))
    batches(batch_id PRIMARY KEY, judge, status, created_at, updated_at)
    batch_items(batch_id, request_key, request JSON; PRIMARY KEY (batch_id, request_key))

``status`` is ``ok``, ``unparseable``, ``refused`` or ``error``. Only ``ok`` requests
have ``results`` rows; :func:`load_ledger` still yields one row per requested
dimension for the others, with ``bin`` None, so failures are counted per dimension.
A row whose status is not ``error`` is final: :meth:`Ledger.record` never overwrites
it. An ``error`` row is replaced by the next outcome, whose ``attempts``, tokens and
cost then include those of the error row. Each write is one transaction, so a process
killed at any moment loses at most the calls in flight.

The nonce salt lives in ``meta`` (unless ``EVALKIT_NONCE_SALT`` is set, which then
wins and is never stored). JSONL export leaves the salt out on purpose: an exported
ledger is committed and read by people who also write cases, and with the salt they
could compute the nonces of requests yet to be sent to this ledger. Each request's
own nonce *is* exported, so its exact prompt can be rebuilt. Importing into another
ledger does not need the salt: keys do not depend on it.

Secrets. Every row is scrubbed (:mod:`evalkit.secrets`) where it is written: in
:meth:`Ledger._insert`, which :meth:`Ledger.record` and the import both use, and in
:meth:`Ledger.add_batch`; the JSONL export is scrubbed again (a ledger written by an
older evalkit may hold a secret). Every field goes through the scrubber except the
identity digests (:data:`DIGEST_FIELDS`: hex, so they cannot hold a key-shaped string,
and scrubbing a coincidence would break the ledger). A judge spec is compared in its
scrubbed form wherever it is looked up (open batches, ``replay:JUDGE``), so a spec that
carries a credential (``openai:http://user:KEY@host/v1:model``) is stored as
``openai:http://[redacted]@host/v1:model`` and still finds its own rows.

Imports. :meth:`Ledger.import_jsonl` validates every line of the export first
(:mod:`evalkit.ledger._validate`: the rules of a live answer, and the keys rebuilt from
the catalogue where they can be) and then writes all of it in one transaction, or
raises :class:`LedgerError` and writes nothing. :func:`import_jsonl` validates before
it even opens the ledger, so a refused import does not create a ledger file.

Damage. Opening an existing ledger runs the checks of :mod:`evalkit.ledger._damage`
(schema version, tables, columns, salt, lease and intent rows, SQLite's
``quick_check``); any failure, and any SQLite error later (a page damaged since), is a
:class:`LedgerError` naming the file.

Sharing. Leases and batch intents (:mod:`evalkit.ledger._lease`,
:mod:`evalkit.ledger._intent`) live in tables of their own, which none of the readers
here touch: several processes can work on one ledger without asking twice (ADR-0019).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from evalkit.secrets import Scrubber

LEDGER_SCHEMA = "evalkit-judge-ledger/1"
SALT_ENV = "EVALKIT_NONCE_SALT"

#: The core tables: created when a ledger is opened, required when it is checked.
DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS requests (
    request_key TEXT PRIMARY KEY, content_key TEXT NOT NULL, request_id TEXT NOT NULL,
    nonce TEXT NOT NULL, case_id TEXT NOT NULL, turn INTEGER NOT NULL,
    dimensions TEXT NOT NULL, framing_hash TEXT NOT NULL, constants_hash TEXT NOT NULL,
    judge TEXT NOT NULL, backend TEXT NOT NULL, model TEXT NOT NULL, params TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'unparseable', 'refused', 'error')),
    attempts INTEGER NOT NULL, raw_response TEXT, problem TEXT, error TEXT,
    input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL,
    cache_read_tokens INTEGER NOT NULL, cache_creation_tokens INTEGER NOT NULL,
    cost_usd REAL, latency_s REAL NOT NULL, response_model TEXT, batch_id TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS requests_content ON requests (content_key);
CREATE TABLE IF NOT EXISTS results (
    request_key TEXT NOT NULL REFERENCES requests (request_key) ON DELETE CASCADE,
    dimension TEXT NOT NULL, bin TEXT NOT NULL, signal_present INTEGER,
    evidence_turns TEXT NOT NULL, rationale TEXT NOT NULL, injection_attempt INTEGER NOT NULL,
    PRIMARY KEY (request_key, dimension)
);
CREATE TABLE IF NOT EXISTS batches (
    batch_id TEXT PRIMARY KEY, judge TEXT NOT NULL, status TEXT NOT NULL,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS batch_items (
    batch_id TEXT NOT NULL REFERENCES batches (batch_id), request_key TEXT NOT NULL,
    request TEXT NOT NULL, PRIMARY KEY (batch_id, request_key)
);
"""


#: The coordination tables: created when a ledger is opened, checked if present.
LEASE_DDL = """
CREATE TABLE IF NOT EXISTS leases (
    request_key TEXT PRIMARY KEY, owner TEXT NOT NULL, expires_at REAL NOT NULL,
    claimed_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS batch_intents (
    intent_id TEXT PRIMARY KEY, judge TEXT NOT NULL, count INTEGER NOT NULL,
    requested_at REAL NOT NULL, owner TEXT NOT NULL, expires_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS batch_intent_items (
    intent_id TEXT NOT NULL REFERENCES batch_intents (intent_id) ON DELETE CASCADE,
    request_key TEXT NOT NULL, request TEXT NOT NULL, PRIMARY KEY (intent_id, request_key)
);
"""

#: Fields never scrubbed: hex digests that identify a request (see the module docstring).
DIGEST_FIELDS = frozenset(
    {"request_key", "content_key", "request_id", "nonce", "framing_hash", "constants_hash"}
)


def scrub_record(rec: dict[str, Any], s: Scrubber) -> dict[str, Any]:
    """A copy of ``rec`` with every field but :data:`DIGEST_FIELDS` scrubbed."""
    return {k: v if k in DIGEST_FIELDS else s.scrub_value(v) for k, v in rec.items()}


def now_iso() -> str:
    """UTC timestamp with microseconds, ISO 8601."""
    return datetime.now(UTC).isoformat(timespec="microseconds")
