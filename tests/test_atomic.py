"""Atomic writes (wagon.formats.atomic) on targets that are not plain files: a device, a named
pipe, a symbolic link. Observed through os.stat and what a reader of the pipe receives."""
import os
import stat
import threading

from wagon.formats.atomic import atomic_write


def test_a_named_pipe_is_written_into_not_replaced(tmp_path):
    fifo = tmp_path / "out"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()), daemon=True)
    reader.start()
    with atomic_write(fifo) as f:
        f.write("model\n")
    reader.join(5)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)     # was replaced by a regular file
    assert got == ["model\n"]


def test_a_symbolic_link_is_followed_and_kept(tmp_path):
    (tmp_path / "real.json").write_text("old")
    link = tmp_path / "model.json"
    link.symlink_to("real.json")
    with atomic_write(link) as f:
        f.write("new")
    assert link.is_symlink() and (tmp_path / "real.json").read_text() == "new"


def test_a_name_at_the_file_systems_limit_is_written(tmp_path):
    """A 255-byte name (the kernel's NAME_MAX, what a site's longest URL segment may be): the
    temporary file beside it must fit the limit too (``.name.PID.tmp`` did not: ENAMETOOLONG),
    and nothing is left beside the file."""
    path = tmp_path / ("a" * 255)
    with atomic_write(path) as f:
        f.write("x")
    assert path.read_text() == "x" and os.listdir(tmp_path) == ["a" * 255]
