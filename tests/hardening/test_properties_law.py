"""engines.law under random walks: whatever the user clicks (answers, back, undo, continue,
restart) the walk stays on a real node and every path ends in an outcome; malformed tree
documents and facts are ValidationErrors naming the field."""
from __future__ import annotations

import copy

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from engines.core.assets import asset_path
from engines.core.errors import ValidationError
from engines.law import cra, pld
from engines.law.record import to_html, to_markdown
from engines.law.trees import Walk, load_trees, parse_trees, validate_all, validate_tree

FAST = settings(max_examples=40, deadline=None)
TREES = load_trees()


def test_shipped_trees_are_valid():
    assert validate_all() == []


@FAST
@given(st.sampled_from(sorted(TREES)), st.data())
def test_every_random_path_ends_in_an_outcome(start, data):
    walk = Walk(start)
    limit = sum(len(t.nodes) for t in TREES.values()) + 5
    for _ in range(limit):
        node = walk.current
        if node.is_outcome:
            if walk.can_continue() and data.draw(st.booleans()):
                walk.continue_on()
                continue
            break
        walk.answer(data.draw(st.sampled_from([a.id for a in node.answers])))
    assert walk.current.is_outcome, walk.path()
    assert walk.path()[-1] == walk.current.id
    rows = walk.record()
    assert all(r["article"] for r in rows)
    assert "Outcome" in to_markdown(walk) or walk.current.text in to_markdown(walk)
    to_html(walk)


ACTIONS = st.sampled_from(["answer", "answer", "answer", "back", "undo", "continue", "restart", "bad"])


@FAST
@given(st.sampled_from(sorted(TREES)), st.lists(st.tuples(ACTIONS, st.integers(0, 9)), max_size=30))
def test_random_clicking_keeps_the_walk_consistent(start, script):
    walk = Walk(start)
    for action, pick in script:
        node = walk.current
        if action == "answer" and not node.is_outcome:
            walk.answer(node.answers[pick % len(node.answers)].id)
        elif action == "back":
            walk.back()
        elif action == "undo":
            walk.undo()
        elif action == "continue" and walk.can_continue():
            walk.continue_on()
        elif action == "restart":
            walk.restart()
        elif action == "bad":
            with pytest.raises(ValidationError) as e:
                walk.answer("no-such-answer")
            assert e.value.field == "answer"
        # invariant: the current node is a node of the current tree, and the path leads to it
        assert walk.current.id in walk.tree.nodes
        assert walk.path()[-1] == walk.current.id
        walk.record()


def _doc():
    with open(asset_path("law", "cra.yaml"), encoding="utf-8") as fh:
        return yaml.safe_load(fh)


DOC = _doc()


@FAST
@given(st.data())
def test_mutated_tree_documents_never_crash(data):
    doc = copy.deepcopy(DOC)
    key = data.draw(st.sampled_from(sorted(doc["trees"])))
    nodes = doc["trees"][key]["nodes"]
    nid = data.draw(st.sampled_from(sorted(nodes)))
    how = data.draw(st.sampled_from(["drop-node", "garbage-node", "drop-key", "garbage-answers", "bad-next"]))
    if how == "drop-node":
        del nodes[nid]
    elif how == "garbage-node":
        nodes[nid] = data.draw(st.one_of(st.none(), st.integers(), st.text(max_size=3), st.lists(st.integers())))
    elif how == "drop-key":
        nodes[nid].pop(data.draw(st.sampled_from(sorted(nodes[nid]))), None)
    elif how == "garbage-answers":
        nodes[nid]["answers"] = data.draw(st.one_of(st.integers(), st.lists(st.integers(), min_size=1),
                                                    st.just([{"id": "x"}])))
    else:
        for a in nodes[nid].get("answers") or ():
            a["next"] = "nowhere"
    try:
        trees = parse_trees(doc)
    except ValidationError as e:
        assert e.field == "trees"
        return
    problems = [p for t in trees.values() for p in validate_tree(t, trees)]
    if how in ("drop-node", "bad-next"):
        referenced = any(a.get("next") == nid for n in DOC["trees"][key]["nodes"].values()
                         for a in (n.get("answers") or ())) or DOC["trees"][key]["root"] == nid
        if how == "bad-next" and DOC["trees"][key]["nodes"][nid].get("answers"):
            assert problems
        elif how == "drop-node" and referenced:
            assert problems


@FAST
@given(st.one_of(st.none(), st.integers(), st.text(max_size=5), st.lists(st.text(max_size=2), max_size=2),
                 st.dictionaries(st.text(max_size=4), st.integers(), max_size=2)))
def test_garbage_documents_are_validation_errors(doc):
    with pytest.raises(ValidationError) as e:
        parse_trees(doc)
    assert e.value.field == "trees"


@FAST
@given(st.dictionaries(st.sampled_from(sorted(cra.FACT_KEYS) + ["bogus"]),
                       st.one_of(st.booleans(), st.none(), st.text(max_size=6), st.integers(), st.just([])),
                       max_size=5))
def test_cra_assess_random_facts(facts):
    try:
        a = cra.assess(facts)
    except ValidationError as e:
        assert e.field in cra.FACT_KEYS | {"facts", "bogus"}
        return
    assert a.tier in (None, "default", "important-I", "important-II", "critical")
    assert all(art and text for art, text in a.reasons)


@FAST
@given(st.dictionaries(st.text(max_size=30), st.one_of(st.booleans(), st.none(), st.integers()), max_size=6))
def test_pld_liable_random_facts(facts):
    try:
        who = pld.liable(facts)
    except ValidationError as e:
        assert e.field in set(facts) | {"facts"}
        return
    assert isinstance(who, set)
