"""The recommended models and whether they fit this computer (mocked memory and disk)."""

from __future__ import annotations

import pytest

from core.local_models.catalogue import (
    GB,
    RECOMMENDED,
    Computer,
    computer,
    find_recommended,
    fit,
)


def test_every_recommendation_is_complete_and_from_hugging_face():
    assert len(RECOMMENDED) >= 4
    for model in RECOMMENDED:
        assert model.url.startswith("https://huggingface.co/") and model.url.endswith(".gguf")
        assert model.url.endswith("/resolve/main/" + model.file_name)
        assert model.size_bytes > GB and model.ram_bytes > model.size_bytes
        assert model.licence and model.licence_url.startswith("https://")
        assert model.good_for and model.quality and model.parameters
    assert len({m.key for m in RECOMMENDED}) == len(RECOMMENDED)


def test_a_model_is_found_by_its_short_name_or_file_name():
    assert find_recommended("qwen2.5-7b").file_name == "Qwen2.5-7B-Instruct-Q4_K_M.gguf"
    assert find_recommended("Qwen2.5-7B-Instruct-Q4_K_M.gguf").key == "qwen2.5-7b"
    with pytest.raises(KeyError, match="The list has: llama3.2-3b"):
        find_recommended("gpt-5")


def test_a_small_computer_is_told_which_models_will_not_fit():
    laptop = Computer(total_ram=8 * GB, free_disk=100 * GB)
    verdicts = {m.key: fit(m, laptop) for m in RECOMMENDED}
    assert verdicts["llama3.2-3b"].ok and verdicts["phi3.5-mini"].ok
    assert not verdicts["qwen2.5-14b"].ok
    assert "will not run well here" in verdicts["qwen2.5-14b"].ram
    assert "this computer has 8.0 GB" in verdicts["qwen2.5-14b"].ram


def test_too_little_disk_is_marked_and_a_partial_download_counts():
    model = find_recommended("qwen2.5-7b")
    full = Computer(total_ram=32 * GB, free_disk=3 * GB)
    verdict = fit(model, full)
    assert not verdict.ok and "only 3.0 GB is free" in verdict.disk
    assert fit(model, full, already=4 * GB).ok  # most of it is already here


def test_unknown_sizes_do_not_block_and_say_so():
    verdict = fit(RECOMMENDED[0], Computer(total_ram=None, free_disk=None))
    assert verdict.ok and "could not be measured" in verdict.ram
    assert "could not be measured" in verdict.disk


def test_this_computer_is_measured(tmp_path):
    here = computer(tmp_path)
    assert here.total_ram and here.total_ram > GB // 2
    assert here.free_disk is not None and here.folder == str(tmp_path)


def test_the_list_is_read_from_the_shipped_data_file(monkeypatch, tmp_path):
    import json

    from core import paths
    from core.local_models import catalogue

    shipped = paths.resources_dir() / "models" / "recommended.json"
    entries = json.loads(shipped.read_text(encoding="utf-8"))["models"]
    assert [e["key"] for e in entries] == [m.key for m in RECOMMENDED]
    assert RECOMMENDED[2].context_window == 16384 and RECOMMENDED[0].context_window == 8192

    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "recommended.json").write_text(
        json.dumps({"models": [dict(entries[0], key="other")]}), encoding="utf-8")
    monkeypatch.setattr(paths, "resources_dir", lambda: tmp_path)
    assert [m.key for m in catalogue._load_recommended()] == ["other"]


def test_the_list_says_how_fast_each_model_writes_here():
    """Issue 28, point 13: the model list marked a 14B model "fits" on a 2-core computer
    without a graphics card, saying nothing about speed."""
    from core.local_models.catalogue import expected_speed

    small = Computer(total_ram=32 * GB, free_disk=100 * GB, cores=2)
    big = find_recommended("qwen2.5-14b")
    verdict = fit(big, small)
    assert verdict.ok and verdict.speed_class == "very slow"
    assert "2 processor cores" in verdict.speed and "tokens a second" in verdict.summary
    workstation = Computer(total_ram=64 * GB, free_disk=100 * GB, cores=4)
    assert expected_speed(find_recommended("llama3.2-3b"), workstation)[0] == "usable"
    # measured here: the built-in model (250 MB) wrote 40 tokens a second -> a 9 GB file
    # about 1 a second, whatever the cores say
    measured = Computer(total_ram=32 * GB, free_disk=100 * GB, cores=16,
                        measured=(250_000_000, 40.0))
    word, text = expected_speed(big, measured)
    assert word == "very slow" and "measured on this computer" in text
    assert expected_speed(big, Computer(total_ram=None, free_disk=None)) == ("", "")
