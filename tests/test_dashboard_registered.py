"""The dashboard on registered jobs (schema 4), on SQLite and PostgreSQL: a
job's page shows its JSON arguments and result, the job list filters by
``?arg=KEY=VALUE``, and the overview says which jobs wait for a member that
knows their name. The rows are written through the store seam, as an app
writes them (test_cli_registered.py's ``fill``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from test_cli_registered import SEND, SYNC, fill

from jobsched_dashboard import create_app


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def url(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'jobs.db'}"
        return
    from pg import SECRET, schema_url

    monkeypatch.setenv("JOBSCHED_SECRET", SECRET)
    yield schema_url(request.getfixturevalue("pg_session_database"))


def test_registered_jobs_on_the_pages(url: str) -> None:
    ids = fill(url)
    with TestClient(create_app(url)) as client:
        job = client.get(f"/jobs/{ids['done']}")
        assert job.status_code == 200
        assert 'id="arguments"' in job.text
        assert "&#34;to&#34;: &#34;user5@example.com&#34;" in job.text  # escaped JSON
        assert "&#34;$dt&#34;" in job.text
        assert 'id="result"' in job.text and "&#34;sent&#34;: true" in job.text
        assert "not a jobsched payload" not in job.text  # nothing read as a pickle
        overview = client.get("/").text
        assert f"waiting for a member that knows <code>{SYNC}</code>: 1" in overview
        assert f"knows <code>{SEND}</code>" not in overview
        listed = client.get("/jobs", params=[("arg", "to=user5@example.com"), ("arg", "n=6")])
        assert listed.status_code == 200
        assert f'data-job="{ids["again"]}"' in listed.text
        assert f'data-job="{ids["done"]}"' not in listed.text
        assert f'data-job="{ids["six"]}"' not in listed.text
        assert 'value="n=6"' in listed.text  # the filter stays in the form
        both = client.get("/jobs", params={"arg": "to=user5@example.com"}).text
        assert f'data-job="{ids["done"]}"' in both and f'data-job="{ids["again"]}"' in both


@pytest.mark.parametrize(
    ("arg", "expected"),
    [
        ("to", "arg must be KEY=VALUE"),
        ("=x", "arg must be KEY=VALUE"),
        ("a-b=x", "not a parameter"),
    ],
)
def test_a_bad_arg_filter_is_a_400_saying_how(url: str, arg: str, expected: str) -> None:
    fill(url)
    with TestClient(create_app(url)) as client:
        page = client.get("/jobs", params={"arg": arg})
        assert page.status_code == 400
        assert expected in page.text and "/jobs?arg=to=user5@example.com" in page.text
