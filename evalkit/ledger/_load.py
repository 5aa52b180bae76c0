"""A ledger read whole, and the JSONL export and import of a ledger file.

:func:`load_ledger` gives the long frame (:data:`~evalkit.ledger._records.LEDGER_COLUMNS`)
of a SQLite ledger or a JSONL file; :func:`export_jsonl` and :func:`import_jsonl` are the
file-level forms of :meth:`Ledger.export_jsonl` and :meth:`Ledger.import_jsonl`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from evalkit.errors import LedgerError
from evalkit.ledger._records import frame_rows_jsonl, is_record_jsonl, records_frame
from evalkit.ledger._store import Ledger
from evalkit.ledger._validate import read_jsonl

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.catalogue import Catalogue


def load_ledger(path: str | Path, *, catalogue: Catalogue | None = None) -> pd.DataFrame:
    """The ledger at ``path`` as a long DataFrame.

    ``path`` is a SQLite ledger, a ``.jsonl`` export (one request per line, see
    :meth:`Ledger.export_jsonl`) or a ``.jsonl`` of this frame's rows (one row per
    line, as ``DataFrame.to_json(orient="records", lines=True)`` writes it).

    With ``catalogue`` (the gate, the prevalence pool: whatever is evidence), a JSONL
    export is validated against it as :func:`import_jsonl` validates it (request and
    content keys, hashes and bins rebuilt from the catalogue), and a frame-rows JSONL is
    refused: its rows carry no request to rebuild, so nothing in it can be checked
    (issue #30: a renamed baseline ledger with the consensus for bins passed the gate).

    One row per (request, requested dimension), columns :data:`LEDGER_COLUMNS`.
    Failed requests (``unparseable``, ``refused``, ``error``) give one row per
    requested dimension with ``bin`` None. Token, cost, latency and attempt columns
    describe the whole request and repeat on each of its dimension rows: sum them
    over ``frame.drop_duplicates("request_key")``. Raises :class:`LedgerError` if
    the file does not exist, is not a ledger or is damaged, or if a line of a JSONL
    export breaks the rules of :mod:`evalkit.ledger._validate` (bins and keys are checked
    only with ``catalogue``).
    """
    p = Path(path)
    if not p.exists():
        raise LedgerError(f"{p}: no such ledger")
    if p.is_dir():
        raise LedgerError(f"{p}: a folder, not a ledger (give the .sqlite file or a .jsonl)")
    if p.suffix == ".jsonl":
        if is_record_jsonl(p):
            return records_frame(read_jsonl(p, catalogue=catalogue))
        if catalogue is not None:
            raise LedgerError(
                f"{p}: a JSONL of frame rows, not a ledger export: its answers cannot be "
                "checked against the catalogue, so they are not evidence. Give the SQLite "
                "ledger or its export (`evalkit judge ... --export-jsonl FILE`), which is "
                "validated; an export goes into a ledger with `--import-jsonl FILE`"
            )
        return frame_rows_jsonl(p)
    with Ledger(p, create=False) as ledger:
        return ledger.frame()


def export_jsonl(ledger: str | Path, path: str | Path) -> int:
    """Export the SQLite ledger ``ledger`` to JSONL at ``path``; return the request count."""
    with Ledger(ledger, create=False) as led:
        return led.export_jsonl(path)


def import_jsonl(ledger: str | Path, path: str | Path, *, catalogue: Catalogue) -> dict[str, int]:
    """Import a JSONL export into ``ledger`` (created if missing), all or nothing.

    The export is validated (:meth:`Ledger.import_jsonl`) before the ledger is opened,
    so a refused import leaves no ledger file behind. Returns the counts of
    :meth:`Ledger.import_jsonl`.
    """
    records = read_jsonl(path, catalogue=catalogue)
    with Ledger(ledger) as led:
        return led.import_records(records)
