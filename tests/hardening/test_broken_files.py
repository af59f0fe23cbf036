"""Broken inputs → a clear message naming the problem, the previous state kept, nothing written.

Scenario files go through ScenarioModel.load / MainWindow.open_scenario; tensor files through the
quant engine's user-file loader (engines.quant.tensors.read_user_file), which must never unpickle.
"""
from __future__ import annotations

import pathlib
import struct
import time
from pathlib import Path

import numpy as np
import pytest

from engines.core.errors import ValidationError
from explorer.files import FileProblem

CORPUS = Path(__file__).parent / "corpus"
SCENARIO_FILES = sorted(CORPUS.glob("*.json"))
EXPECTED_WORDS = {  # what the message must mention for the user to know what to fix
    "truncated.json": "not valid JSON", "wrong_types.json": "n_gpus", "future_version.json": "newer",
    "garbage.json": "not UTF-8", "quoted_numbers.json": "internode_gbps", "top_level_list.json": "JSON object",
    "invalid_split.json": "tp", "bom.json": "JSON",
}


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=lambda p: p.name)
def test_broken_scenario_file_is_refused_and_nothing_changes(ctx, path, tmp_path):
    ctx.scenario.update(n_gpus=16)
    before, depth = ctx.scenario.value, ctx.scenario.undo_stack.count()
    changed = []
    ctx.scenario.changed.connect(changed.append)
    copy = tmp_path / path.name
    copy.write_bytes(path.read_bytes())
    files_before = _snapshot(tmp_path)
    with pytest.raises(FileProblem) as e:
        ctx.scenario.load(copy)
    assert EXPECTED_WORDS[path.name] in str(e.value), str(e.value)
    assert path.name in str(e.value) or "is not UTF-8" in str(e.value)
    assert ctx.scenario.value == before and ctx.scenario.undo_stack.count() == depth and not changed
    assert _snapshot(tmp_path) == files_before  # nothing written, the file itself untouched


def test_every_corpus_json_has_an_expectation():
    assert {p.name for p in SCENARIO_FILES} == set(EXPECTED_WORDS)


def test_one_gigabyte_file_is_refused_without_reading_it(ctx, tmp_path):
    big = tmp_path / "huge.json"
    with open(big, "wb") as fh:  # sparse: no disk used, and never committed
        fh.truncate(1 << 30)
    before = ctx.scenario.value
    t0 = time.perf_counter()
    with pytest.raises(FileProblem) as e:
        ctx.scenario.load(big)
    assert time.perf_counter() - t0 < 1.0
    assert "1,073,741,824 bytes" in str(e.value)
    assert ctx.scenario.value == before


def test_missing_file_and_folder_are_explained(ctx, tmp_path):
    for p in (tmp_path / "nope.json", tmp_path):
        with pytest.raises(FileProblem) as e:
            ctx.scenario.load(p)
        assert "cannot" in str(e.value) or "is not" in str(e.value)


def test_main_window_shows_the_message_and_keeps_state(window, tmp_path):
    before = window.ctx.scenario.value
    for path in SCENARIO_FILES:
        assert window.open_scenario(str(path)) is False
        assert window.error_label.text().startswith("⚠"), path.name
        assert window.ctx.scenario.value == before
    good = tmp_path / "good.json"
    window.ctx.scenario.save(good)
    assert window.open_scenario(str(good)) is True and window.error_label.text() == ""


def test_save_to_unwritable_place_raises_oserror_and_leaves_no_temp(ctx, tmp_path):
    target = tmp_path / "dir-not-file"
    target.mkdir()
    with pytest.raises(OSError):
        ctx.scenario.save(target)
    assert [p.name for p in tmp_path.iterdir()] == ["dir-not-file"]


# --- tensor files (quant) --------------------------------------------------------------------------
torch = pytest.importorskip("torch")
from engines.quant.tensors import read_user_file, user_matrix  # noqa: E402


class Payload:
    """Unpickling this would create a marker file: proof that code ran."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (pathlib.Path.touch, (pathlib.Path(self.marker),))


def test_torch_file_with_pickle_payload_is_refused_and_never_runs(tmp_path):
    marker = tmp_path / "PWNED"
    evil = tmp_path / "weights.pt"
    torch.save({"w": torch.ones(2, 2), "x": Payload(str(marker))}, evil)
    with pytest.raises(ValidationError) as e:
        read_user_file(evil)
    assert e.value.field == "file" and "weights_only" in str(e.value)
    assert not marker.exists()


def test_npy_with_objects_is_refused(tmp_path):
    marker = tmp_path / "PWNED"
    f = tmp_path / "obj.npy"
    np.save(f, np.array([Payload(str(marker))], dtype=object), allow_pickle=True)
    with pytest.raises(ValidationError) as e:
        read_user_file(f)
    assert e.value.field == "file"
    assert not marker.exists()


@pytest.mark.parametrize("name", ["wrong_shape.safetensors", "truncated.safetensors", "garbage.pt"])
def test_corrupt_tensor_files_are_validation_errors(name, tmp_path):
    with pytest.raises(ValidationError) as e:
        read_user_file(CORPUS / name)
    assert e.value.field == "file" and name in str(e.value)


def test_sparse_gigabyte_tensor_file_is_refused_quickly(tmp_path):
    big = tmp_path / "huge.safetensors"
    with open(big, "wb") as fh:
        fh.write(struct.pack("<Q", 1 << 29))  # claims a 512 MB header
        fh.truncate(1 << 30)
    t0 = time.perf_counter()
    with pytest.raises(ValidationError):
        read_user_file(big)
    assert time.perf_counter() - t0 < 10.0


def test_safetensors_with_wrong_rank_or_values_names_the_tensor(tmp_path):
    from safetensors.torch import save_file

    f = tmp_path / "shapes.safetensors"
    save_file({"vec": torch.ones(8), "cube": torch.ones(2, 2, 2), "nan": torch.tensor([[1.0, float("nan")]] * 2),
               "ok": torch.ones(3, 4)}, str(f))
    tensors = read_user_file(f)
    assert user_matrix(tensors, "ok").shape == (3, 4)
    says = {"vec": "'vec' has shape (8,), not 2-D", "cube": "'cube' has shape (2, 2, 2), not 2-D",
            "nan": "'nan' contains NaN or infinity", "missing": "'missing' is not in the file"}
    for name, why in says.items():
        with pytest.raises(ValidationError) as e:
            user_matrix(tensors, name)
        assert e.value.field == "tensor" and why in str(e.value)
        # a wrong shape or name offers the 2-D tensors there are; a NaN asks for finite values
        assert e.value.allowed == ("finite values" if name == "nan" else "nan, ok")


def test_unsupported_extension_and_folder(tmp_path):
    for p in (tmp_path / "w.pkl", tmp_path):
        if p.suffix:
            p.write_bytes(b"\x80\x04K\x01.")
        with pytest.raises(ValidationError) as e:
            read_user_file(p)
        assert e.value.field == "file"


# --- YAML (law loader) ---------------------------------------------------------------------------
def test_law_tree_parser_refuses_a_yaml_bomb_quickly():
    import yaml

    from engines.law.trees import parse_trees

    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
    lines.append("law: CRA\ntrees: {t: {title: T, root: r, nodes: *a8}}")
    t0 = time.perf_counter()
    doc = yaml.safe_load("\n".join(lines))
    with pytest.raises(ValidationError):
        parse_trees(doc)
    assert time.perf_counter() - t0 < 2.0
