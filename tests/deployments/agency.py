"""A small agency deployment, written in the test suite rather than as files: a
second catalog with relations (clients, projects, tasks, people, comments) so the
question reader's relation readings are not fitted to the shop.

Relations: a project belongs to a client and has an owner (a person); a task
belongs to a project and has an assignee (a person); a comment is on a task.
From a task two declared paths reach a person (`assignee`, `project.owner`); from
a client one does (`projects.owner`, two hops); from a comment a client is three
relations away. Two tenants, each with an "Acme Corp" and a "Zoe Park".
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from deployments.small import build
from sqlalchemy import Engine

from qdsl.dsl.catalog import Catalog, catalog_from_mapping
from qdsl.facts.db import make_engine

CATALOG_TOML = """
timezone = "UTC"

[entities.client]
table = "clients"
id = "id"
tenant = "tenant_id"
label = "name"
query_types = ["existence", "count", "list"]
synonyms = ["客户", "client", "clients"]

[entities.person]
table = "people"
id = "id"
tenant = "tenant_id"
label = "name"
query_types = ["existence", "count", "list"]
synonyms = ["成员", "person", "people", "member", "members"]

[entities.project]
table = "projects"
id = "id"
tenant = "tenant_id"
label = "title"
query_types = ["existence", "count", "list"]
synonyms = ["项目", "project", "projects"]

[entities.project.fields.status]
column = "status"
type = "enum"
values = ["active", "closed"]
operators = ["equals", "not_equals", "in", "equals_or_alias"]
synonyms = ["状态", "status"]
aliases = { active = ["active", "进行中"], closed = ["closed", "已结束"] }

[entities.project.relations.client]
entity = "client"
key = "client_id"
synonyms = ["客户", "client"]
inverse = "projects"
inverse_synonyms = ["项目", "projects"]

[entities.project.relations.owner]
entity = "person"
key = "owner_id"
synonyms = ["负责人", "owner"]
inverse = "owned_projects"

[entities.task]
table = "tasks"
id = "id"
tenant = "tenant_id"
label = "summary"
query_types = ["existence", "count", "list"]
synonyms = ["任务", "task", "tasks"]

[entities.task.relations.project]
entity = "project"
key = "project_id"
synonyms = ["项目", "project"]
inverse = "tasks"
inverse_synonyms = ["任务", "tasks"]

[entities.task.relations.assignee]
entity = "person"
key = "assignee_id"
synonyms = ["负责人", "assignee"]
inverse = "tasks"

[entities.comment]
table = "comments"
id = "id"
tenant = "tenant_id"
label = "body"
query_types = ["existence", "count", "list"]
synonyms = ["评论", "comment", "comments"]

[entities.comment.relations.task]
entity = "task"
key = "task_id"
synonyms = ["任务", "task"]
inverse = "comments"
"""

SCHEMA_SQL = """
CREATE TABLE clients (
    tenant_id VARCHAR(64) NOT NULL, id INTEGER NOT NULL, name VARCHAR(200) NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
CREATE TABLE people (
    tenant_id VARCHAR(64) NOT NULL, id INTEGER NOT NULL, name VARCHAR(200) NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
CREATE TABLE projects (
    tenant_id VARCHAR(64) NOT NULL, id INTEGER NOT NULL, title VARCHAR(200) NOT NULL,
    status VARCHAR(16) NOT NULL, client_id INTEGER NOT NULL, owner_id INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
CREATE TABLE tasks (
    tenant_id VARCHAR(64) NOT NULL, id INTEGER NOT NULL, summary VARCHAR(200) NOT NULL,
    project_id INTEGER NOT NULL, assignee_id INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
CREATE TABLE comments (
    tenant_id VARCHAR(64) NOT NULL, id INTEGER NOT NULL, body VARCHAR(400) NOT NULL,
    task_id INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
"""

# (table, columns, rows); every row (tenant, id, ...)
ROWS: tuple[tuple[str, str, tuple[tuple[Any, ...], ...]], ...] = (
    (
        "clients",
        "tenant_id, id, name",
        (
            ("north", 1, "Acme Corp"),
            ("north", 2, "Globex"),
            ("south", 1, "Initech"),
            ("south", 2, "Acme Corp"),
        ),
    ),
    (
        "people",
        "tenant_id, id, name",
        (
            ("north", 1, "Zoe Park"),
            ("north", 2, "Omar Haddad"),
            ("south", 1, "Lena Berg"),
            ("south", 2, "Zoe Park"),
        ),
    ),
    (
        "projects",
        "tenant_id, id, title, status, client_id, owner_id",
        (
            ("north", 1, "Apollo", "active", 1, 1),
            ("north", 2, "Borealis", "closed", 1, 2),
            ("north", 3, "Cygnus", "active", 2, 2),
            ("south", 1, "Delta", "active", 1, 2),
            ("south", 2, "Echo", "active", 2, 1),
        ),
    ),
    (
        "tasks",
        "tenant_id, id, summary, project_id, assignee_id",
        (
            ("north", 1, "Fix login", 1, 2),
            ("north", 2, "Write docs", 1, 1),
            ("north", 3, "Fix login", 3, 1),
            ("north", 4, "Ship beta", 2, 2),
            ("south", 1, "Fix login", 2, 2),
            ("south", 2, "Plan launch", 1, 1),
        ),
    ),
    (
        "comments",
        "tenant_id, id, body, task_id",
        (
            ("north", 1, "Looks good", 1),
            ("north", 2, "Needs tests", 3),
            ("south", 1, "Done soon", 1),
            # no south task 4: only a careless join lets it give north's task 4 a comment
            ("south", 2, "Stray note", 4),
        ),
    ),
)


def agency_catalog() -> Catalog:
    return catalog_from_mapping(tomllib.loads(CATALOG_TOML), "agency")


def _literal(v: Any) -> str:
    return str(v) if isinstance(v, int) else "'" + str(v).replace("'", "''") + "'"


def build_agency(directory: Path, url: str) -> None:
    """Write the deployment's files into `directory` and build it at `url` the way
    a deployer does (`deployments.small.build`)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "catalog.toml").write_text(CATALOG_TOML, encoding="utf-8")
    (directory / "schema.sql").write_text(SCHEMA_SQL, encoding="utf-8")
    data = [
        f"INSERT INTO {table} ({columns}) VALUES ({', '.join(map(_literal, row))});"
        for table, columns, rows in ROWS
        for row in rows
    ]
    (directory / "data.sql").write_text("\n".join(data) + "\n", encoding="utf-8")
    build(directory, url)


@pytest.fixture
def agency(dialect: str, request: pytest.FixtureRequest) -> Iterator[Engine]:
    """An engine on the agency, built for the test on the `dialect` fixture's database."""
    tmp = request.getfixturevalue("tmp_path")
    if dialect == "sqlite":
        url = f"sqlite+pysqlite:///{tmp / 'agency.sqlite3'}"
    else:
        url = request.getfixturevalue("pg_database_factory")()
    build_agency(tmp / "agency", url)
    engine = make_engine(url)
    yield engine
    engine.dispose()
