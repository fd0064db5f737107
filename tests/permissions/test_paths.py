"""Confinement: no path argument resolves outside the workspace, whatever the model sends."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agentcli.tools.base import ToolError
from agentcli.tools.paths import is_secret_path, resolve_in_workspace


@pytest.fixture(scope="module")
def tricky(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A workspace full of symlink tricks, next to an outside folder they point into."""
    root = tmp_path_factory.mktemp("confine").resolve()
    ws, outside = root / "ws", root / "outside"
    (ws / "sub" / "deep").mkdir(parents=True)
    outside.mkdir()
    (ws / "file.txt").write_text("inside\n")
    (ws / "sub" / "deep" / "x.py").write_text("x = 1\n")
    (outside / "secret.txt").write_text("outside\n")
    links = {
        "to_etc": "/etc",  # absolute link out
        "to_passwd": "/etc/passwd",
        "to_outside": str(outside),  # a symlinked parent folder
        "rel_out": "../outside/secret.txt",  # relative link out
        "chain1": "chain2",  # a chain that ends outside
        "chain2": "sub/chain3",
        "sub/chain3": "../../outside",
        "to_sub": "sub",  # a link that stays inside
        "sub/up": "..",  # inside: the workspace itself
        "sub/up2": "../..",  # out by one level
        "loop": "loop",
        "loop_a": "loop_b",
        "loop_b": "loop_a",
        "dangling": "missing/target.txt",  # dangling, inside
        "dangling_out": str(outside / "new.txt"),  # dangling, outside
        "to_proc": "/proc/self",
        "to_null": "/dev/null",
    }
    for name, target in links.items():
        os.symlink(target, ws / name)
    return ws, outside


def _assert_confined(ws: Path, raw: str) -> None:
    try:
        resolved = resolve_in_workspace(ws, raw)
    except ToolError:
        return
    assert resolved.is_absolute()
    assert resolved.is_relative_to(ws), f"{raw!r} resolved to {resolved}"
    # Fully resolved: opening it cannot follow a link somewhere else.
    assert os.path.realpath(resolved) == str(resolved), f"{raw!r} resolved to {resolved}, which is a link"


SEGMENTS = st.sampled_from(
    ["..", ".", "", "sub", "deep", "x.py", "file.txt", "to_etc", "to_passwd", "to_outside", "rel_out", "chain1",
     "to_sub", "up", "up2", "loop", "loop_a", "dangling", "dangling_out", "to_proc", "to_null", "passwd", "etc",
     "outside", "secret.txt", "~", "~root", "self", "environ", "new", "é", "\\", " ", "a" * 300]
)


@st.composite
def model_paths(draw: st.DrawFn, ws: Path) -> str:
    segments = draw(st.lists(SEGMENTS, min_size=1, max_size=8))
    prefix = draw(st.sampled_from(["", "/", "./", str(ws) + "/", "/etc/", "/proc/", "/tmp/", "~/"]))
    return prefix + "/".join(segments)


@settings(max_examples=400, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow], deadline=None)
@given(data=st.data())
def test_generated_paths_never_resolve_outside(tricky: tuple[Path, Path], data: st.DataObject) -> None:
    ws, _ = tricky
    _assert_confined(ws, data.draw(model_paths(ws)))


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow], deadline=None)
@given(raw=st.text(max_size=120))
@example(raw="\ud800")
@example(raw="a\x00b")
@example(raw="x" * 5000)
@example(raw="/".join(["a" * 255] * 20))
def test_arbitrary_text_never_crashes_or_escapes(tricky: tuple[Path, Path], raw: str) -> None:
    ws, _ = tricky
    _assert_confined(ws, raw)


@pytest.mark.parametrize(
    "raw",
    [
        "../outside/secret.txt", "sub/../../outside", "/etc/passwd", "~", "~/x", "~root/.ssh",
        "to_etc", "to_etc/passwd", "to_passwd", "to_outside/secret.txt", "rel_out", "chain1",
        "chain1/secret.txt", "sub/up2", "sub/up2/outside", "dangling_out", "to_proc/environ", "to_null",
        "to_sub/../../outside",
    ],
)
def test_escapes_are_refused(tricky: tuple[Path, Path], raw: str) -> None:
    ws, _ = tricky
    with pytest.raises(ToolError):
        resolve_in_workspace(ws, raw)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("file.txt", "file.txt"),
        ("./sub/../file.txt", "file.txt"),
        ("to_sub/deep/x.py", "sub/deep/x.py"),
        ("sub/up/file.txt", "file.txt"),
        ("dangling", "missing/target.txt"),  # write_file may create a dangling link's target
        ("new/folder/file.md", "new/folder/file.md"),
        (".", ""),
    ],
)
def test_paths_inside_resolve_to_their_real_place(tricky: tuple[Path, Path], raw: str, expected: str) -> None:
    ws, _ = tricky
    assert resolve_in_workspace(ws, raw) == (ws / expected if expected else ws)
    assert resolve_in_workspace(ws, str(ws / raw)) == (ws / expected if expected else ws)


def test_a_symlink_loop_cannot_smuggle_an_unresolved_link(tricky: tuple[Path, Path]) -> None:
    # realpath stops at the loop and normalises `loop/../to_passwd` to `to_passwd` without
    # following it; accepting that would hand the tool a link to /etc/passwd.
    ws, _ = tricky
    for raw in ("loop/../to_passwd", "loop_a/../to_etc/passwd", "loop/../rel_out", "loop", "loop_a/x"):
        with pytest.raises(ToolError):
            resolve_in_workspace(ws, raw)


def test_must_exist(tricky: tuple[Path, Path]) -> None:
    ws, _ = tricky
    with pytest.raises(ToolError, match="does not exist"):
        resolve_in_workspace(ws, "nope.txt", must_exist=True)
    with pytest.raises(ToolError, match="does not exist"):
        resolve_in_workspace(ws, "dangling", must_exist=True)


def test_fifo_and_socket_inside_the_workspace_are_refused(workspace: Path) -> None:
    os.mkfifo(workspace / "pipe")
    with pytest.raises(ToolError, match="FIFO"):
        resolve_in_workspace(workspace, "pipe")
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(workspace / "sock"))
        with pytest.raises(ToolError, match="socket"):
            resolve_in_workspace(workspace, "sock")
    finally:
        server.close()


@pytest.mark.may_skip(reason="creating a device node needs CAP_MKNOD (root, or a container that grants it)")
def test_device_node_inside_the_workspace_is_refused(workspace: Path) -> None:
    try:
        os.mknod(workspace / "null", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("creating a device node needs CAP_MKNOD")
    with pytest.raises(ToolError, match="character device"):
        resolve_in_workspace(workspace, "null")


@pytest.mark.parametrize("raw", ["/proc/self/environ", "/proc/1/cmdline", "/sys/kernel", "/dev/null", "/dev/sda"])
def test_pseudo_filesystems_are_refused_even_when_the_workspace_is_root(raw: str) -> None:
    with pytest.raises(ToolError):
        resolve_in_workspace(Path("/"), raw)


def test_messages_say_what_is_wrong(tricky: tuple[Path, Path]) -> None:
    ws, _ = tricky
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_in_workspace(ws, "to_etc/passwd")
    with pytest.raises(ToolError, match="'~' is not expanded"):
        resolve_in_workspace(ws, "~/.bashrc")
    with pytest.raises(ToolError, match="symlink loop"):
        resolve_in_workspace(ws, "loop")
    with pytest.raises(ToolError, match="empty"):
        resolve_in_workspace(ws, "  ")


# -- secret files ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rel",
    [
        ".env", ".env.local", ".env.production", "config/.env", "prod.env", ".envrc", "server.pem", "tls/server.KEY",
        "id_rsa", "keys/id_ed25519", "cert.p12", "credentials", "credentials.json", ".aws/credentials",
        ".ssh/config", "home/.ssh/known_hosts", ".npmrc", ".pypirc", ".netrc", ".git-credentials",
        "client_secret_123.json", "service-account.json", "secrets.yaml", "terraform.tfstate", "prod.tfvars",
        ".docker/config.json", ".kube/config",
    ],
)
def test_secret_paths(rel: str) -> None:
    assert is_secret_path(rel)


@pytest.mark.parametrize(
    "rel",
    [
        ".env.example", ".env.sample", ".env.template", "id_rsa.pub", "keys/id_ed25519.pub", "src/secrets.py",
        "agentcli/secrets.py", "tests/test_credentials.py", "keyboard.py", "README.md", "environment.yml",
        "docs/env.md", "monkey.py", ".", "", "src/tokens.py",
    ],
)
def test_not_secret_paths(rel: str) -> None:
    assert not is_secret_path(rel)
