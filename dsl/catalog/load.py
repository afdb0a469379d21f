"""Loading a catalog: TOML to a validated `Catalog`, every problem reported at once."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from qdsl.dsl.catalog.analytics import check_analytics
from qdsl.dsl.catalog.checks import check_defaults, check_entity
from qdsl.dsl.catalog.model import Catalog
from qdsl.dsl.catalog.scope_spec import check_scope
from qdsl.dsl.catalog.types import CatalogError
from qdsl.dsl.settings.limits import read_file_bounded

# An entity's tables of named specs: each spec learns its name from its key.
_NAMED_PARTS = ("fields", "measures", "relations")


def _key(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(p) for p in loc)


def catalog_from_mapping(raw: Mapping[str, Any], source: str = "<memory>") -> Catalog:
    """Validate a parsed TOML document into a Catalog, reporting every problem."""
    data = dict(raw)
    ents = data.get("entities")
    if isinstance(ents, dict):
        patched: dict[str, Any] = {}
        for ename, raw_ent in ents.items():
            ent = raw_ent
            if isinstance(raw_ent, dict):
                ent = {"name": ename, **raw_ent}
                for part in _NAMED_PARTS:
                    specs = ent.get(part)
                    if isinstance(specs, dict):
                        ent[part] = {
                            fn: ({**fv, "name": fn} if isinstance(fv, dict) else fv)
                            for fn, fv in specs.items()
                        }
            patched[ename] = ent
        data["entities"] = patched
    data["source"] = source
    try:
        catalog = Catalog.model_validate(data)
    except ValidationError as exc:
        problems = [(_key(err["loc"]), err["msg"]) for err in exc.errors()]
        raise _catalog_error(source, problems) from None
    problems = []
    for ename, ent in catalog.entities.items():
        problems.extend(check_entity(ename, ent, catalog.entities))
    problems.extend(check_defaults(catalog.entities))
    problems.extend(check_scope(catalog))
    problems.extend(check_analytics(catalog))
    if problems:
        raise _catalog_error(source, problems)
    return catalog


def _catalog_error(source: str, problems: list[tuple[str, str]]) -> CatalogError:
    first_key, first_msg = problems[0]
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return CatalogError(
        "invalid_catalog",
        f"{source}: {first_key}: {first_msg}{more}",
        hint="fix the catalog file; every problem is listed in details.problems",
        details={
            "file": source,
            "problems": [{"key": k, "message": m} for k, m in problems],
        },
    )


def load_catalog(path: str | os.PathLike[str]) -> Catalog:
    p = Path(path)
    try:
        raw = read_file_bounded(p, "catalog_bytes", f"catalog {p.name}")
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CatalogError(
            "invalid_catalog",
            f"{p.name}: not UTF-8 (byte {exc.start})",
            hint="save the catalog as UTF-8",
            details={"file": str(p)},
        ) from None
    except OSError as exc:
        raise CatalogError(
            "catalog_unreadable",
            f"cannot read catalog {p.name}: {exc.strerror}",
            hint="pass an existing TOML file with --catalog or QDSL_CATALOG",
            details={"file": str(p)},
        ) from None
    try:
        doc = tomllib.loads(text)
    except RecursionError:
        raise CatalogError(
            "invalid_catalog",
            f"{p.name}: nested too deeply to be a catalog",
            hint="a catalog nests tables a few levels deep",
            details={"file": str(p)},
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise CatalogError(
            "invalid_catalog",
            f"{p.name}: not valid TOML: {exc}",
            hint="fix the TOML syntax",
            details={"file": str(p)},
        ) from None
    return catalog_from_mapping(doc, source=p.name)


_DEMO: Catalog | None = None


def demo_catalog() -> Catalog:
    """The shipped catalog describing the demo schema (parsed once per process).

    It lives with the demo (facts/demo/catalog.toml, read as a data file; the
    demo package imports no database code on import): with no catalog given,
    the embedded demo is the default deployment.
    """
    global _DEMO  # noqa: PLW0603 - a process-wide cache of an immutable value
    if _DEMO is None:
        found = resources.files("qdsl.facts.demo").joinpath("catalog.toml")
        _DEMO = catalog_from_mapping(
            tomllib.loads(found.read_text(encoding="utf-8")), source="demo catalog.toml"
        )
    return _DEMO


def resolve_catalog(path: str | os.PathLike[str] | None = None) -> Catalog:
    """`--catalog` over `QDSL_CATALOG` over the shipped demo catalog."""
    chosen = path or os.environ.get("QDSL_CATALOG")
    return load_catalog(chosen) if chosen else demo_catalog()
