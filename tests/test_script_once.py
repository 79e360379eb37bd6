"""A replay's script runs once per process that plays, and says each kind of failure once
per run. The observers: a line the script's module appends to a file when it is executed,
and the lines on the terminal's stderr (the workers' too: ``capfd``), against the
application of tests/test_script.py, whose login check the script fails on purpose."""
from __future__ import annotations

import pytest

from wagon.replay import ReplayOptions, replay

from .test_script import _files, _scenario, app  # noqa: F401 (a fixture)


@pytest.mark.parametrize("workers", [1, 2])
def test_the_script_runs_once_per_process_and_its_first_failure_is_said_once(
        app, tmp_path, capfd, workers):  # noqa: F811
    server, _ = app
    script = tmp_path / "shop.py"
    imports = tmp_path / "imports.txt"
    _files(tmp_path, welcome="bienvenue")               # every session's login check fails
    script.write_text(f"open({str(imports)!r}, 'a').write('x\\n')\n" + script.read_text())
    s = replay(_scenario(tmp_path, 4), ReplayOptions(
        target=f"http://127.0.0.1:{server.server_port}/", script=str(script),
        workers=workers, fail_on=()))
    assert s["errors"]["by_kind"] == {"check_failed": 4}
    # one process alone: once; with workers, once in the parent (checked before the run)
    # and once in each worker (a process of its own)
    assert imports.read_text().count("x") == (1 if workers == 1 else 1 + workers)
    said = [line for line in capfd.readouterr().err.splitlines() if "wagon: script:" in line]
    assert len(said) == 1 and "check_failed on POST /login" in said[0], said


def test_a_script_page_the_site_does_not_have_is_skipped_and_said_once(
        app, tmp_path, capfd):  # noqa: F811
    """A script serves scenarios of several models: a page of ``script.on`` that this
    scenario's site does not have is said once on stderr, and the run plays as without it
    (the application's own logins)."""
    server, seen = app
    script = tmp_path / "shop.py"
    _files(tmp_path)
    script.write_text(script.read_text() + 'script.on("GET /nowhere/{id}", check=contains("x"))\n')
    s = replay(_scenario(tmp_path, 3), ReplayOptions(
        target=f"http://127.0.0.1:{server.server_port}/", script=str(script), fail_on=()))
    assert s["errors"]["total"] == 0, s["errors"]
    assert sorted(seen.logins) == sorted(f"u{i}@shop.test" for i in range(3))
    said = [line for line in capfd.readouterr().err.splitlines() if "wagon: script:" in line]
    assert len(said) == 1 and "skipped: GET /nowhere/{id}" in said[0], said
