"""The engine-result cache: a stored result is used only for the same function, inputs and code; a bad
entry is never shown; the folder stays under its bound; a stored result equals a fresh computation."""
from __future__ import annotations

import gzip
import json
import os
import random
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from engines.core import codec
from engines.core.errors import Cancelled
from engines.core.reading import read_text
from engines.core.result_cache import (FORMAT, EngineCall, ResultCache, engine_call, reproduces,
                                       source_version)
from engines.core.scenario import Scenario
from engines.scale import Params, llama3_interruptions, scale_analysis, simulate_failures


def _quiet(_f: float, _t: str = "") -> None:
    pass


def _never() -> bool:
    return False


def _sim_call(**knobs) -> EngineCall:
    data = llama3_interruptions()
    return engine_call(simulate_failures, scale_analysis(Scenario(), Params(**knobs), data).checkpoint, data)


@pytest.fixture
def cache(tmp_path):
    version = {"v": "code-1"}
    c = ResultCache(tmp_path / "cache", 10 << 20, version=lambda: version["v"])
    c.test_version = version
    return c


def test_a_stored_result_is_used_only_for_the_same_inputs(cache):
    first, origin = cache.run(_sim_call(checkpoint_min=5.0), _quiet, _never)
    assert origin is None                                          # computed now
    again, origin = cache.run(_sim_call(checkpoint_min=5.0), _quiet, _never)
    assert origin is not None and not origin.shipped
    assert codec.same(again, first)
    other, origin = cache.run(_sim_call(checkpoint_min=10.0), _quiet, _never)   # a knob moved
    assert origin is None
    assert not codec.same(other, first)
    assert len(cache.entries()) == 2


def test_a_new_code_version_recomputes(cache):
    call = _sim_call()
    cache.run(call, _quiet, _never)
    assert cache.get(call) is not None
    cache.test_version["v"] = "code-2"
    assert cache.get(call) is None
    assert cache.run(call, _quiet, _never)[1] is None


def test_an_edited_input_file_recomputes(cache, tmp_path):
    src = tmp_path / "input.txt"
    src.write_text("first", encoding="utf-8")
    call = engine_call(read_text, src, 1000, takes_progress=False)
    assert cache.run(call, _quiet, _never) == ("first", None)
    assert cache.run(call, _quiet, _never)[0] == "first"
    assert cache.get(call) is not None
    src.write_text("second", encoding="utf-8")                     # same path, new content
    assert cache.get(call) is None
    assert cache.run(call, _quiet, _never) == ("second", None)


def _entry(cache: ResultCache, call: EngineCall) -> Path:
    return cache.folder / cache.file_for(cache.key_of(call))


def _rewrite(path: Path, change) -> None:
    doc = json.loads(gzip.decompress(path.read_bytes()))
    change(doc)
    path.write_bytes(gzip.compress(json.dumps(doc).encode()))


@pytest.mark.parametrize("damage", ["garbage", "truncated", "future", "other inputs", "bad field"])
def test_a_bad_entry_is_ignored_and_rebuilt(cache, damage):
    call = _sim_call(restart_min=20)
    fresh, _ = cache.run(call, _quiet, _never)
    path = _entry(cache, call)
    if damage == "garbage":
        path.write_bytes(b"not a cache entry")
    elif damage == "truncated":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif damage == "future":
        _rewrite(path, lambda d: d.update(format=FORMAT + 1))
    elif damage == "other inputs":
        _rewrite(path, lambda d: d.update(key=cache.key_of(_sim_call(restart_min=21))))
    else:
        _rewrite(path, lambda d: d["result"]["f"].pop(next(iter(d["result"]["f"]))))
    assert cache.get(call) is None                                 # never shown
    assert not path.exists()                                       # and removed
    result, origin = cache.run(call, _quiet, _never)
    assert origin is None and codec.same(result, fresh)
    assert cache.get(call) is not None                             # rebuilt


def test_the_folder_stays_under_its_bound_and_keeps_the_recent(tmp_path):
    probe = ResultCache(tmp_path / "probe", 10 << 20, version=lambda: "v")
    probe.run(_sim_call(checkpoint_min=2.0), _quiet, _never)
    one = probe.size()
    cache = ResultCache(tmp_path / "cache", int(2.5 * one), version=lambda: "v")
    calls = [_sim_call(checkpoint_min=2.0 + i) for i in range(5)]
    for i, call in enumerate(calls):
        cache.run(call, _quiet, _never)
        for p in cache.entries():                                 # distinct, increasing use times
            if p.name == cache.file_for(cache.key_of(call)):
                os.utime(p, (1e9 + i, 1e9 + i))
        assert cache.size() <= cache.limit
    assert cache.get(calls[-1]) is not None
    assert cache.get(calls[0]) is None
    assert len(cache.entries()) < len(calls)


def test_a_cancelled_computation_is_not_stored(cache):
    stop = {"now": False}

    def progress(_f, _t=""):
        stop["now"] = True
        raise Cancelled()

    with pytest.raises(Cancelled):
        cache.run(_sim_call(checkpoint_min=4.4), progress, lambda: stop["now"])
    assert cache.entries() == []


def test_a_prefetched_result_is_handed_to_the_next_reader_once(cache):
    """The prefetch reads a stored result while the step before is shown and keeps it decoded: the step's
    own read takes that object (nothing read again), and a later read decodes afresh, so no two callers
    ever hold the same object."""
    call = _sim_call(checkpoint_min=5.0)
    computed, _ = cache.run(call, _quiet, _never)
    prefetched, origin = cache.run(call, _quiet, _never, hand_over=True)
    assert origin is not None and codec.same(prefetched, computed)
    _entry(cache, call).write_bytes(b"gone")              # the step's read needs nothing from disk
    taken, taken_origin = cache.get(call)
    assert taken is prefetched and taken_origin == origin
    assert cache.get(call) is None                        # once: the next read is the disk's (now broken)
    cache.run(call, _quiet, _never, hand_over=True)       # rebuilt, then kept for the next reader
    cache.test_version["v"] = "code-2"                    # other code: not what was kept
    assert cache.get(call) is None


def test_the_prefetch_keeps_a_bounded_number_of_results_and_clear_drops_them(cache):
    from engines.core.result_cache import READY_ENTRIES

    calls = [_sim_call(checkpoint_min=float(m)) for m in range(1, READY_ENTRIES + 3)]
    for call in calls:
        cache.run(call, _quiet, _never)
        cache.run(call, _quiet, _never, hand_over=True)
    assert len(cache._ready) == READY_ENTRIES                 # the oldest went first
    cache.clear()
    assert not cache._ready and all(cache.get(call) is None for call in calls)


def test_unstorable_values_run_uncached(cache):
    call = EngineCall(lambda: object(), (), {}, takes_progress=False)
    result, origin = cache.run(call, _quiet, _never)
    assert origin is None and cache.entries() == []
    with pytest.raises(codec.CodecError):
        codec.encode(object())


def test_the_codec_restores_engine_values_exactly():
    a = scale_analysis(Scenario(), Params())
    value = {"analysis": a, 3: (np.arange(6, dtype=np.float32).reshape(2, 3), float("nan"), np.int64(7)),
             "set": frozenset({"x", "y"}), "nested": [replace(a.checkpoint, restart_seconds=1.5)]}
    back = codec.decode(json.loads(json.dumps(codec.encode(value))))
    assert codec.same(back, value)
    assert back[3][0].dtype == np.float32 and back[3][0].shape == (2, 3)
    assert isinstance(back["set"], frozenset) and type(back[3][2]) is np.int64
    assert not codec.same(back, {**value, 3: (value[3][0] + 1, *value[3][1:])})


def test_the_codec_builds_only_engine_types():
    tree = {"$dc": "os:stat_result", "f": {}}
    with pytest.raises(codec.CodecError):
        codec.decode(tree)


def test_the_source_version_follows_every_engine_and_data_file(tmp_path):
    engines, assets = tmp_path / "engines", tmp_path / "assets"
    (engines / "core").mkdir(parents=True)
    (assets / "scale").mkdir(parents=True)
    (assets / "lessons").mkdir()
    (engines / "core" / "a.py").write_text("x = 1\n")
    (assets / "scale" / "d.json").write_text("{}")
    (assets / "lessons" / "t.md").write_text("text")
    v1 = source_version(engines, assets)
    (assets / "lessons" / "t.md").write_text("edited lesson text")      # not an input
    assert source_version(engines, assets) == v1
    (assets / "scale" / "d.json").write_text('{"a": 1}')
    v2 = source_version(engines, assets)
    (engines / "core" / "a.py").write_text("x = 2\n")
    assert len({v1, v2, source_version(engines, assets)}) == 3


def test_a_stored_entry_equals_a_fresh_computation(cache):
    cache.run(_sim_call(checkpoint_min=7.0), _quiet, _never)
    (path,) = cache.entries()
    call, stored = cache.stored(path)
    assert codec.same(stored, call(_quiet, _never))


def _shipped() -> list[Path]:
    from engines.core.assets import asset_path

    folder = asset_path("tour_cache")
    return sorted(folder.glob("*.json.gz")) if folder.is_dir() else []


@pytest.mark.skipif(not _shipped(), reason="no shipped tour cache")
def test_a_sample_of_the_shipped_cache_equals_a_fresh_computation():
    """One entry per engine function, drawn at random (``EXPLORER_CACHE_SAMPLE_SEED`` repeats a draw):
    the cached figures are the ones the engine gives today, clock measurements aside. An entry whose key
    holds a large array by its digest cannot be rebuilt here; tests/gui/test_job_cache.py rebuilds those
    calls from the tours' steps."""
    from engines.core.result_cache import code_version

    shipped = ResultCache(None, shipped=(_shipped()[0].parent,))
    by_function: dict[str, list[Path]] = {}
    for path in _shipped():
        doc = json.loads(gzip.decompress(path.read_bytes()))
        assert doc["format"] == FORMAT
        if json.loads(doc["key"])["version"] == code_version():   # others are ignored by the app: never shown
            by_function.setdefault(doc["function"], []).append(path)
    if not by_function:
        pytest.skip("the shipped tour cache is for other engine code: run scripts/fill_tour_cache.py")
    rng = random.Random(os.environ.get("EXPLORER_CACHE_SAMPLE_SEED"))
    checked = 0
    for name, paths in sorted(by_function.items()):
        rng.shuffle(paths)
        for path in paths:
            try:
                call, stored = shipped.stored(path)
            except codec.CodecError:
                continue                                                # inputs by digest only
            assert shipped.get(call) is not None                       # the key rebuilds: it would be used
            assert reproduces(call.fn, stored, call(_quiet, _never)), name
            checked += 1
            break
    assert checked >= 1


def test_close_allows_last_bit_float_differences_and_nothing_more():
    import numpy as np

    from engines.core import codec

    a = {"x": 1.0, "arr": np.array([1.0, 2.0, 3.0]), "n": 3, "s": "a"}
    b = {"x": 1.0 + 1e-12, "arr": np.array([1.0, 2.0, 3.0 + 1e-12]), "n": 3, "s": "a"}
    assert codec.close(a, b) and not codec.same(a, b)
    assert not codec.close(a, {**b, "x": 1.001})
    assert not codec.close(a, {**b, "arr": np.array([1.0, 2.0, 3.1])})
    assert not codec.close(a, {**b, "n": 4}) and not codec.close(a, {**b, "s": "b"})


def test_a_result_reproduces_within_what_its_function_declares_and_nothing_more():
    """Another CPU rounds float32 sums differently: a fault run's weight checksums change and its
    gradient norms move by parts in 10⁶, while a clean function still has to agree to 1e-6."""
    from dataclasses import replace

    from engines.core.result_cache import REPRODUCIBLE_REL
    from engines.scale.faults import StepRecord, fault_study

    here = StepRecord(step=3, attempt=0, batch_id=3, loss=2.5, grad_norm=1.4519048892578146, lr=1e-3,
                      checksums=(-8676002365935, -8676002365935), seconds=0.11, alarms=(), kept=True)
    elsewhere = replace(here, grad_norm=1.4519011362603558, checksums=(-8678367570173,) * 2, seconds=0.02)
    assert reproduces(fault_study, (here,), (elsewhere,))
    assert not reproduces(fault_study, (here,), (replace(elsewhere, grad_norm=1.46),))   # beyond 1e-4
    assert not reproduces(fault_study, (here,), (replace(elsewhere, step=4),))          # not a float
    assert not reproduces(fault_study, (here,), (replace(elsewhere, loss=2.5 * (1 + 3e-4)),))

    def clean(): ...
    assert not reproduces(clean, here, replace(here, grad_norm=here.grad_norm * (1 + 10 * REPRODUCIBLE_REL)))
    assert reproduces(clean, here, replace(here, seconds=here.seconds, grad_norm=here.grad_norm * (1 + 1e-8)))
    assert not reproduces(clean, here, replace(here, checksums=(1, 1)))    # only a function's own list is left out
