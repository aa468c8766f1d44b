"""`make test` without Debian's Chromium: as a user that cannot install it, the launcher stops before any test runs
and names the package; it never downloads a browser (embedded_stack/launcher.py)."""
import subprocess

from embedded_stack import launcher


def test_without_chromium_and_not_root_make_test_stops_naming_the_package(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(launcher, "CHROMIUM", str(tmp_path / "no-chromium"))
    monkeypatch.setattr(launcher.os, "geteuid", lambda: 1000)
    ran: list = []
    monkeypatch.setattr(subprocess, "run", lambda *args, **kwargs: ran.append(args))
    assert launcher.test(["-q"]) == 1
    assert ran == []  # no apt-get, no services, no pytest
    out = capsys.readouterr().out
    assert "'chromium'" in out and "apt-get install -y chromium" in out and str(tmp_path / "no-chromium") in out

