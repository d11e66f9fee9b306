"""``atomic_write``: regular files are replaced atomically; devices, FIFOs and symlinks are never destroyed."""

import os
import socket
import stat
import threading
from pathlib import Path

import pytest

from gpumetrics.core.files import atomic_write


@pytest.fixture
def umask():
    """Set a umask for one test and restore the previous one."""
    saved = os.umask(0o022)
    os.umask(saved)
    yield lambda value: os.umask(value)
    os.umask(saved)


@pytest.fixture
def no_replace_under_dev(monkeypatch):
    """A guard for tests that touch /dev/null: any rename onto /dev fails instead of replacing a device."""
    real_replace = os.replace

    def guarded(source, destination, *args, **kwargs):
        if os.path.realpath(destination).startswith("/dev/"):
            raise AssertionError(f"atomic_write tried to replace {destination!r}")
        return real_replace(source, destination, *args, **kwargs)

    monkeypatch.setattr(os, "replace", guarded)


def _leftovers(folder: Path):
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


@pytest.mark.parametrize("mask, expected", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_new_file_gets_the_umask_mode(tmp_path, umask, mask, expected):
    umask(mask)
    target = tmp_path / "sub" / "report.json"
    with atomic_write(target) as handle:
        handle.write("{}")
    assert target.read_text() == "{}"
    assert stat.S_IMODE(target.stat().st_mode) == expected
    assert _leftovers(target.parent) == []


@pytest.mark.parametrize("existing_mode", [0o644, 0o600, 0o640, 0o755])
def test_overwritten_file_keeps_its_mode(tmp_path, umask, existing_mode):
    umask(0o077)  # a restrictive umask must not narrow an existing file's mode
    target = tmp_path / "report.json"
    target.write_text("old")
    os.chmod(target, existing_mode)
    with atomic_write(target, "wb") as handle:
        handle.write(b"new")
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == existing_mode


def test_failed_write_keeps_the_previous_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "report.json"
    target.write_text("old")
    with pytest.raises(RuntimeError, match="boom"):
        with atomic_write(target) as handle:
            handle.write("half")
            raise RuntimeError("boom")
    assert target.read_text() == "old"
    assert _leftovers(tmp_path) == []


def _read_fifo(path, received):
    with open(path, "rb") as reader:
        received.append(reader.read())


@pytest.mark.parametrize("mode, payload", [("w", "α report\n"), ("wb", b"\x00bytes")])
def test_fifo_is_written_through_not_replaced(tmp_path, mode, payload):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=_read_fifo, args=(fifo, received), daemon=True)
    reader.start()
    with atomic_write(fifo, mode) as handle:
        handle.write(payload)
    reader.join(timeout=10)
    assert not reader.is_alive()
    assert received == [payload.encode("utf-8") if isinstance(payload, str) else payload]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert _leftovers(tmp_path) == []


def test_symlink_is_followed_and_stays_a_link(tmp_path, umask):
    umask(0o077)
    links, data = tmp_path / "links", tmp_path / "data"
    links.mkdir()
    data.mkdir()
    target = data / "report.json"
    target.write_text("old")
    os.chmod(target, 0o644)
    link = links / "report.json"
    link.symlink_to(target)
    with atomic_write(link) as handle:
        handle.write("new")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    assert _leftovers(links) == [] and _leftovers(data) == []


def test_chain_of_symlinks_and_dangling_link(tmp_path):
    final = tmp_path / "final.txt"
    middle = tmp_path / "middle"
    middle.symlink_to(final)  # dangling: final does not exist yet
    first = tmp_path / "first"
    first.symlink_to(middle)
    with atomic_write(first) as handle:
        handle.write("made")
    assert first.is_symlink() and middle.is_symlink()
    assert final.read_text() == "made" and not final.is_symlink()


def test_symlink_to_dev_null_writes_through(tmp_path, no_replace_under_dev):
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    link = tmp_path / "out.json"
    link.symlink_to("/dev/null")
    with atomic_write(link) as handle:
        handle.write("{}")
    assert link.is_symlink() and os.readlink(link) == "/dev/null"
    assert stat.S_ISCHR(os.lstat("/dev/null").st_mode)
    assert _leftovers(tmp_path) == []


def test_dev_null_itself_is_written_through(no_replace_under_dev):
    with atomic_write("/dev/null", "wb") as handle:
        handle.write(b"discarded")
    assert stat.S_ISCHR(os.lstat("/dev/null").st_mode)
    assert _leftovers(Path("/dev")) == []


def test_directory_is_refused_naming_the_path(tmp_path):
    folder = tmp_path / "reports"
    folder.mkdir()
    with pytest.raises(IsADirectoryError, match="reports"):
        with atomic_write(folder) as handle:
            handle.write("{}")
    link = tmp_path / "to_folder"
    link.symlink_to(folder)
    with pytest.raises(IsADirectoryError, match="to_folder"):
        with atomic_write(link):
            pass
    assert folder.is_dir() and list(folder.iterdir()) == [] and link.is_symlink()


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no unix sockets")
def test_socket_is_refused_naming_the_path(tmp_path):
    path = tmp_path / "sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(path))
        with pytest.raises(ValueError, match=r"sock.*socket"):
            with atomic_write(path):
                pass
        assert stat.S_ISSOCK(os.lstat(path).st_mode)
    finally:
        server.close()


def test_bad_mode_is_refused(tmp_path):
    with pytest.raises(ValueError, match="`mode`"):
        with atomic_write(tmp_path / "x", "a"):
            pass


def test_open_input_refuses_endless_devices_and_sockets_and_opens_the_rest(tmp_path):
    import threading

    from gpumetrics.core.files import open_input

    for device in ("/dev/zero", "/dev/urandom"):
        with pytest.raises(ValueError, match=f"^{device} is a device \\(character device\\), not a file"):
            open_input(device)
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "s"))
    with pytest.raises(ValueError, match="is a socket, not a file"):
        open_input(tmp_path / "s")
    server.close()
    with open_input("/dev/null") as handle:
        assert handle.read() == b""
    (tmp_path / "f.txt").write_bytes(b"x\n")
    with open_input(tmp_path / "f.txt") as handle:
        assert handle.read() == b"x\n"
    os.mkfifo(tmp_path / "fifo")  # a pipe ends when its writer closes it: `gpumetrics score -r <(cmd) …`
    writer = threading.Thread(target=lambda: (tmp_path / "fifo").write_bytes(b"piped\n"))
    writer.start()
    with open_input(tmp_path / "fifo") as handle:
        assert handle.read() == b"piped\n"
    writer.join()
