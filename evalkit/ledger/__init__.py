"""The ledger: the SQLite store of every judge request, and its JSONL form.

``Ledger(path)`` opens (or creates) a ledger; ``load_ledger(path)`` reads a ledger or a
JSONL export into the long frame of :data:`LEDGER_COLUMNS`; ``export_jsonl`` and
``import_jsonl`` move a ledger to and from JSONL, an import validated line by line
(``read_jsonl``) and written all or nothing. ``Leaseholder`` holds the leases that let
several processes share one ledger (ADR-0019, ADR-0032).

Modules: the schema and its rules :mod:`~evalkit.ledger._schema`, the file and its
transactions :mod:`~evalkit.ledger._file`, the rows :mod:`~evalkit.ledger._store`,
records and frames :mod:`~evalkit.ledger._records`, loading and JSONL
:mod:`~evalkit.ledger._load`, validation of imported records
:mod:`~evalkit.ledger._validate`, damage checks :mod:`~evalkit.ledger._damage`, lease
and intent rows :mod:`~evalkit.ledger._claims`, leases :mod:`~evalkit.ledger._lease`,
batch intents :mod:`~evalkit.ledger._intent`. This package imports no judge backend:
of :mod:`evalkit.judge` it reads only the prompt (keys) and the answer parser.
"""

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_exports

if TYPE_CHECKING:
    from evalkit.ledger._lease import Leaseholder, LeaseLost
    from evalkit.ledger._load import export_jsonl, import_jsonl, load_ledger
    from evalkit.ledger._records import LEDGER_COLUMNS
    from evalkit.ledger._store import Ledger
    from evalkit.ledger._validate import read_jsonl
else:  # imported on first use, so that importing the package stays light
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "_lease": ["LeaseLost", "Leaseholder"],
            "_load": ["export_jsonl", "import_jsonl", "load_ledger"],
            "_records": ["LEDGER_COLUMNS"],
            "_store": ["Ledger"],
            "_validate": ["read_jsonl"],
        },
    )

__all__ = [
    "LEDGER_COLUMNS",
    "LeaseLost",
    "Leaseholder",
    "Ledger",
    "export_jsonl",
    "import_jsonl",
    "load_ledger",
    "read_jsonl",
]
