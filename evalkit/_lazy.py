"""Lazy package facades: a package's public names imported on first use.

A package ``__init__`` lists its names once for type checkers (under ``TYPE_CHECKING``)
and once as ``{private module: names}`` for :func:`lazy_exports`; ``import evalkit.gate``
then imports no submodule, and ``from evalkit.gate import pairs`` imports only
``evalkit.gate._pairs`` (and what it needs). This keeps ``evalkit --help`` and each
command's ``--help`` free of pandas, scipy and the other heavy libraries.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, Sequence[str]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``, whose ``exports`` map a private module
    name (``"_pairs"``) to the public names it defines; a dotted name
    (``"evalkit.ledger"``) is a module of another package, re-exported here.

    A public name is imported from its module on first access and cached on the package.
    Any other name is tried as a submodule (``evalkit.judge.anthropic``), as an eager
    ``__init__`` would have left it imported; a name that is neither raises
    ``AttributeError``, so ``hasattr`` and ``from package import missing`` behave as usual.
    """
    where = {name: module for module, names in exports.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            if name.startswith("__"):
                raise AttributeError(f"module {package!r} has no attribute {name!r}")
            try:
                return importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"{package}.{name}":
                    raise
                raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        where_from = module if "." in module else f"{package}.{module}"
        value = getattr(importlib.import_module(where_from), name)
        setattr(importlib.import_module(package), name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*where, *vars(importlib.import_module(package))})

    return __getattr__, __dir__
