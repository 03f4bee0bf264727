"""Downloading a model file from a local server that behaves like Hugging Face: checksum from
the redirect's headers, Range requests, a dropped connection, a corrupted byte, pause."""

from __future__ import annotations

import dataclasses
import hashlib
import threading

import pytest

from core.local_models.catalogue import RECOMMENDED
from core.local_models.download import (
    DownloadError,
    discard_partial,
    download_model,
    look_up,
    partial_state,
)
from core.local_models.files import installed_models
from core.runs import Cancelled, CancelToken, Progress
from tests.core.local_models.fake_servers import FileServer, gguf_bytes, serve

SIZE = 600_000
PIECE = 64 * 1024


@pytest.fixture
def server():
    files = FileServer(gguf_bytes(SIZE), name="Test-Model-Q4_K_M.gguf")
    with serve(files) as port:
        files.port = port
        yield files


def _model(server, **changes):
    return dataclasses.replace(RECOMMENDED[0], file_name=server.name,
                               download_url=server.url(), **changes)


def _download(server, folder, **kw):
    kw.setdefault("wait", lambda _s: None)
    kw.setdefault("piece_size", PIECE)
    return download_model(_model(server), folder=folder, **kw)


def test_the_checksum_comes_from_the_servers_redirect(server):
    remote = look_up(server.url())
    assert remote.sha256 == server.sha256 and remote.sha_source == "published by the server"
    assert remote.size == SIZE and remote.ranges
    assert remote.url.endswith(f"/cdn/{server.name}")


def test_a_download_is_checked_and_kept_with_its_licence(server, tmp_path):
    states = []
    result = _download(server, tmp_path, progress=Progress(states.append))
    target = tmp_path / server.name
    assert target.read_bytes() == server.data
    assert "SHA-256 checked (published by the server)" == result.verified
    assert not (tmp_path / (server.name + ".part")).exists()
    [kept] = installed_models(tmp_path)
    assert kept.path == str(target) and kept.licence == RECOMMENDED[0].licence
    assert kept.sha256 == server.sha256
    assert any(s.stage.startswith("Downloading") and s.total == SIZE for s in states)
    assert any("Checking the file" in s.stage for s in states)


def test_a_dropped_connection_is_resumed_with_a_range_request(server, tmp_path):
    server.drop_after = [200_000, 150_000]
    result = _download(server, tmp_path)
    assert (tmp_path / server.name).read_bytes() == server.data
    ranges = [r for m, p, r in server.requests if m == "GET"]
    assert ranges == ["", "bytes=200000-", "bytes=350000-"]
    assert server.bytes_sent == SIZE  # nothing was fetched twice
    assert result.repaired_pieces == 0


def test_after_too_many_breaks_the_partial_file_is_kept_and_resumed_later(server, tmp_path):
    server.drop_after = [100_000, 100_000]
    with pytest.raises(DownloadError, match="press Resume") as failure:
        _download(server, tmp_path, retries=1)
    assert "kept" in str(failure.value)
    model = _model(server)
    assert partial_state(model, tmp_path) == 200_000
    result = _download(server, tmp_path)
    assert result.resumed_from == 200_000
    assert (tmp_path / server.name).read_bytes() == server.data


def test_pause_keeps_what_was_downloaded_and_resume_continues(server, tmp_path):
    cancel = CancelToken()
    seen = threading.Event()

    def listener(state):
        if state.stage.startswith("Downloading") and state.done >= 300_000:
            seen.set()
            cancel.cancel()

    server.drop_after = []
    with pytest.raises(Cancelled):
        _download(server, tmp_path, progress=Progress(listener), cancel=cancel)
    assert seen.is_set()
    have = partial_state(_model(server), tmp_path)
    assert 300_000 <= have < SIZE
    result = _download(server, tmp_path)
    assert result.resumed_from == have
    assert (tmp_path / server.name).read_bytes() == server.data


def test_a_corrupted_byte_is_found_and_only_its_piece_is_fetched_again(server, tmp_path):
    server.corrupt_at = [400_123]
    states = []
    result = _download(server, tmp_path, progress=Progress(states.append))
    assert (tmp_path / server.name).read_bytes() == server.data
    assert result.repaired_pieces == 1
    assert "after replacing 1 damaged piece" in result.verified
    assert any("did not match its checksum" in s.stage for s in states)
    piece_requests = [r for m, p, r in server.requests if m == "GET" and r][:]
    # pieces are compared in order and the repair stops once the file matches: the piece
    # holding byte 400,123 is the 7th (index 6), nothing after it is fetched
    assert piece_requests[-1] == f"bytes={6 * PIECE}-{7 * PIECE - 1}"
    assert len(piece_requests) == 7
    assert server.bytes_sent < 2 * SIZE


def test_a_mismatch_without_range_support_keeps_the_file_and_says_so(server, tmp_path):
    server.ranges = False
    server.corrupt_at = [5000]
    with pytest.raises(DownloadError, match="cannot be mended") as failure:
        _download(server, tmp_path)
    part = tmp_path / (server.name + ".part")
    assert part.stat().st_size == SIZE  # never thrown away
    assert str(part) in str(failure.value)
    assert not (tmp_path / server.name).exists()


def test_a_server_that_ignores_range_is_read_from_the_start_without_duplicates(server, tmp_path):
    server.ranges = False
    server.drop_after = [250_000]
    _download(server, tmp_path)
    assert (tmp_path / server.name).read_bytes() == server.data


def test_the_checksum_listed_with_the_model_is_used_and_must_agree(server, tmp_path):
    listed = hashlib.sha256(server.data).hexdigest()
    server.publish_sha = False
    result = download_model(_model(server, sha256=listed), folder=tmp_path,
                            wait=lambda _s: None)
    assert result.verified == "SHA-256 checked (listed with the model)"
    (tmp_path / server.name).unlink()
    (tmp_path / (server.name + ".json")).unlink()
    server.publish_sha = True
    with pytest.raises(DownloadError, match="another checksum"):
        download_model(_model(server, sha256="0" * 64), folder=tmp_path, wait=lambda _s: None)


def test_without_any_checksum_the_result_says_only_the_size_was_checked(server, tmp_path):
    server.publish_sha = False
    result = _download(server, tmp_path)
    assert "server published no checksum" in result.verified


def test_not_enough_disk_space_stops_before_downloading(server, tmp_path):
    with pytest.raises(DownloadError, match="Not enough free disk space"):
        _download(server, tmp_path, free_disk=lambda _p: 1000)
    assert not [r for r in server.requests if r[0] == "GET"]


def test_a_changed_file_on_the_server_does_not_mix_with_the_old_partial(server, tmp_path):
    server.drop_after = [100_000]
    with pytest.raises(DownloadError):
        _download(server, tmp_path, retries=0)
    server.data = gguf_bytes(SIZE, seed=7)
    server.sha256 = hashlib.sha256(server.data).hexdigest()
    with pytest.raises(DownloadError, match="has changed"):
        _download(server, tmp_path)
    assert partial_state(_model(server), tmp_path) == 100_000  # kept until the user says
    discard_partial(_model(server), tmp_path)
    assert partial_state(_model(server), tmp_path) == 0
    _download(server, tmp_path)
    assert (tmp_path / server.name).read_bytes() == server.data
