"""The shipped decision trees: structure (networkx), article citations, agreement of every
outcome with the rule engines, the walk (back, undo, continue, auto-answers) and the examples."""
import networkx as nx
import pytest

from engines.core.errors import ValidationError
from engines.law import cra, pld, record
from engines.law.trees import Walk, load_examples, load_trees, parse_trees, validate_all, validate_tree

TREES = load_trees()
#: one annex entry per tier, to evaluate route-tree paths that only carry the tier
TIER_CATEGORY = {"default": None, "important-I": "III-I-3", "important-II": "III-II-1", "critical": "IV-2"}


def paths(tree):
    """Every root-to-outcome path as a list of (node, answer) pairs ending in the outcome id."""
    out = []

    def walk(nid, acc):
        node = tree.nodes[nid]
        if node.is_outcome:
            out.append((acc, nid))
            return
        for a in node.answers:
            walk(a.next, [*acc, (node, a)])
    walk(tree.root, [])
    return out


def test_all_trees_validate():
    assert validate_all() == []


def test_issue_trees_present():
    for key in ("cra-scope", "cra-classification", "cra-route", "cra-obligations", "cra-art14", "cra-penalties",
                "pld-applicability", "pld-damage", "pld-liable", "pld-defect", "pld-exemptions", "pld-limitation"):
        assert key in TREES


@pytest.mark.parametrize("key", list(TREES))
def test_graph_properties(key):
    tree = TREES[key]
    g = tree.graph()
    assert nx.is_directed_acyclic_graph(g)
    assert set(nx.descendants(g, tree.root)) | {tree.root} == set(g.nodes)
    sinks = [n for n in g.nodes if g.out_degree(n) == 0]
    assert sinks and all(tree.nodes[n].is_outcome for n in sinks)
    assert all(tree.nodes[n].article and (tree.nodes[n].quote or tree.nodes[n].summary) for n in g.nodes)


def test_validator_catches_defects():
    doc = {"law": "X", "trees": {"t": {"title": "T", "root": "q", "nodes": {
        "q": {"kind": "question", "text": "Q?", "article": "Art 1", "summary": "s",
              "answers": [{"id": "a", "label": "A", "next": "q2"}, {"id": "b", "label": "B", "next": "o"}]},
        "q2": {"kind": "question", "text": "Q2?", "article": "", "summary": "s",
               "answers": [{"id": "a", "label": "A", "next": "q"}, {"id": "b", "label": "B", "next": "o"}]},
        "o": {"kind": "outcome", "text": "O", "article": "Art 2", "summary": "s"},
        "lost": {"kind": "outcome", "text": "L", "article": "Art 3", "summary": "s"}}}}}
    problems = validate_tree(parse_trees(doc)["t"])
    assert any("cites no article" in p for p in problems)
    doc["trees"]["t"]["nodes"]["q2"]["article"] = "Art 9"
    problems = validate_tree(parse_trees(doc)["t"])
    assert any("cycle" in p for p in problems) and any("lost" in p and "unreachable" in p for p in problems)


def _check_cra_path(steps, outcome, facts_extra=None):
    facts = dict(facts_extra or {})
    for _, ans in steps:
        facts.update(ans.facts)
    tier = facts.pop("tier", None)
    if tier is not None and "category" not in facts:
        facts["category"] = TIER_CATEGORY[tier]
    engine_facts = {k: v for k, v in facts.items() if k in cra.FACT_KEYS}
    return cra.assess(engine_facts)


@pytest.mark.parametrize("key", ["cra-scope", "cra-classification", "cra-route"])
def test_every_cra_outcome_agrees_with_the_engine(key):
    tree = TREES[key]
    checked = 0
    for steps, oid in paths(tree):
        expect = tree.nodes[oid].expect
        if not expect:
            continue
        a = _check_cra_path(steps, oid)
        if "in_scope" in expect:
            assert a.in_scope == expect["in_scope"], (oid, steps)
        if "role" in expect:
            assert a.role == expect["role"], oid
        if "tier" in expect:
            assert a.tier == expect["tier"], oid
        if "routes" in expect:
            assert a.routes == set(expect["routes"]), oid
        checked += 1
    assert checked >= 4


def test_every_damage_outcome_agrees_with_compensable():
    tree = TREES["pld-damage"]
    for steps, oid in paths(tree):
        facts = {}
        for _, ans in steps:
            facts.update(ans.facts)
        assert pld.compensable(facts["damage"], facts.get("professional_use", False)) == \
            tree.nodes[oid].expect["compensable"], (oid, facts)


def test_every_liability_path_gives_engine_facts():
    tree = TREES["pld-liable"]
    results = set()
    for steps, _ in paths(tree):
        facts = {}
        for _, ans in steps:
            facts.update(ans.facts)
        results.add(frozenset(pld.liable(facts)))
    assert frozenset({"manufacturer", "distributor"}) in results
    assert frozenset({"manufacturer", "fulfilment-service-provider"}) in results
    assert frozenset({"manufacturer", "online-platform"}) in results
    assert frozenset({"manufacturer", "component-manufacturer", "importer"}) in results   # 8(1)(c): a non-EU component


@pytest.mark.parametrize("name", list(load_examples()))
def test_examples_replay_to_the_engine_result(name):
    ex = load_examples()[name]
    a = cra.assess(ex["facts"])
    exp = ex["expect"]
    assert (a.in_scope, a.role, a.tier, a.routes) == (exp["in_scope"], exp["role"], exp["tier"], set(exp["routes"]))
    w = Walk("cra-scope")
    w.replay(ex["answers"])
    assert w.current.is_outcome
    used = {s.node for s in w.steps}
    assert set(ex["answers"]) <= used
    assert cra.assess({k: v for k, v in w.facts.items() if k in cra.FACT_KEYS}) == a


def test_examples_cover_the_issue_products():
    assert set(load_examples()) == {"password-manager", "smart-meter-gateway", "hobby-library", "saas-app",
                                    "router", "hypervisor"}


def test_walk_back_undo_continue_and_auto_answer():
    w = Walk("cra-classification")
    w.answer("none")
    w.answer("III-II-1")
    assert w.current.id == "o_important_ii" and w.facts["tier"] == "important-II"
    w.continue_on()
    # the route tree's tier question is answered from the classification
    assert w.tree.key == "cra-route" and w.current.id == "q_foss_ii"
    assert w.steps[-1].auto
    w.back()                                  # removes the auto step and the continue
    assert w.current.id == "o_important_ii"
    w.undo()                                  # reverts the back
    assert w.current.id == "q_foss_ii"
    w.back(); w.back()
    assert w.current.id == "q_class_ii" and w.path() == ["q_annex_iv", "q_class_ii"]
    w.undo(); w.undo()
    assert w.current.id == "q_foss_ii"
    with pytest.raises(ValidationError):
        w.answer("maybe")


def test_walk_restart_and_bounds():
    w = Walk("pld-damage")
    assert not w.can_back() and not w.back() and not w.undo()
    w.answer("property")
    w.restart("pld-limitation")
    assert w.current.id == "q_lim_regime"
    w.undo()
    assert w.current.id == "q_property_prof"
    with pytest.raises(ValidationError):
        Walk("nope")


def test_record_exports_list_each_question_answer_and_article():
    w = Walk("cra-scope")
    w.replay(load_examples()["hypervisor"]["answers"])
    md = record.to_markdown(w, extra=cra.assess(load_examples()["hypervisor"]["facts"]).reasons)
    assert "not legal advice" in md
    assert "| Is it only a service" in md and "Art 2(1)" in md and "Art 32(3)" in md
    html = record.to_html(w)
    assert html.startswith("<!DOCTYPE html>") and "not legal advice" in html and "&#x27;" not in md
    assert html.count("<tr>") == len(w.record()) + 1


def _cross(p1, p2, q1, q2) -> bool:
    """Proper intersection of segments p1p2 and q1q2 (shared end points do not count)."""
    def orient(a, b, c):
        v = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
        return (v > 1e-9) - (v < -1e-9)
    if {p1, p2} & {q1, q2}:
        return False
    return orient(p1, p2, q1) * orient(p1, p2, q2) < 0 and orient(q1, q2, p1) * orient(q1, q2, p2) < 0


def test_layout_is_a_tidy_tree():
    """Layers by depth, a row apart within a layer, each question between its answers, and no edge
    crossing another in any tree whose nodes each have one parent."""
    from engines.law.trees import layout, load_trees

    for key, tree in load_trees().items():
        pos = layout(tree)
        g = tree.graph()
        assert set(pos) == set(tree.nodes), key
        for u, v in g.edges:
            assert pos[v][0] > pos[u][0], (key, u, v)           # answers lie to the right
        layers: dict[float, list[float]] = {}
        for x, y in pos.values():
            layers.setdefault(x, []).append(y)
        for ys in layers.values():
            ys.sort()
            assert all(b - a >= 1.0 - 1e-9 for a, b in zip(ys, ys[1:])), key
        if all(g.in_degree(n) <= 1 for n in g.nodes):
            for nid in g.nodes:
                kids = [pos[c][1] for c in g.successors(nid)]
                if kids:
                    assert min(kids) <= pos[nid][1] <= max(kids), (key, nid)
            edges = [(pos[u], pos[v]) for u, v in g.edges]
            for i, (a, b) in enumerate(edges):
                for c, d in edges[i + 1:]:
                    assert not _cross(a, b, c, d), key


SCOPE_TO_CLASS_II = {"q_saas": "no", "q_connection": "yes", "q_sector": "none", "q_commercial": "yes",
                     "q_role": "maker", "q_annex_iv": "none", "q_class_ii": "III-II-2"}


def test_foss_route_question_is_auto_answered_no_when_not_open_source_art_32_5():
    """Art 32(5) is for free and open-source software only: after q_open_source 'no' the route tree must
    not let a class II firewall answer 'yes' to the FOSS question and so reach module A."""
    w = Walk("cra-scope")
    w.replay({**SCOPE_TO_CLASS_II, "q_open_source": "no"})
    assert w.current.id == "o_important_ii"
    w.continue_on()                                   # tier and FOSS questions answered from the facts
    assert w.current.id == "o_route_ii"
    assert ("q_foss_ii", "no", True) in [(s.node, s.answer, s.auto) for s in w.steps]
    assert w.facts["open_source"] is False
    assert "A" not in cra.assess({k: v for k, v in w.facts.items() if k in cra.FACT_KEYS}).routes
    with pytest.raises(ValidationError) as err:      # a contradicting answer cannot be replayed either
        Walk("cra-scope").replay({**SCOPE_TO_CLASS_II, "q_open_source": "no", "q_foss_ii": "yes"})
    assert err.value.field == "answers" and "q_foss_ii" in str(err.value)
    # open source: the question is still asked, and yes leads to the 32(5) route
    w.replay({**SCOPE_TO_CLASS_II, "q_open_source": "yes"})
    w.continue_on()
    assert w.current.id == "q_foss_ii" and [a.id for a in w.offered()] == ["yes", "no"]
    assert w.answer("yes").id == "o_route_foss"


def test_an_answer_contradicting_a_collected_fact_is_not_offered_and_not_accepted():
    doc = {"law": "X", "trees": {"t": {"title": "T", "root": "q1", "nodes": {
        "q1": {"kind": "question", "text": "Q1?", "article": "Art 1", "summary": "s",
               "answers": [{"id": "a", "label": "A", "next": "q2", "facts": {"f": True}},
                           {"id": "b", "label": "B", "next": "q2", "facts": {"f": False}}]},
        "q2": {"kind": "question", "text": "Q2?", "article": "Art 2", "summary": "s",
               "answers": [{"id": "x", "label": "X", "next": "o", "facts": {"f": True, "g": 1}},
                           {"id": "y", "label": "Y", "next": "o", "facts": {"g": 2}},
                           {"id": "z", "label": "Z", "next": "o"}]},
        "o": {"kind": "outcome", "text": "O", "article": "Art 3", "summary": "s"}}}}}
    w = Walk("t", parse_trees(doc))
    w.answer("b")                                     # f is False: x contradicts it
    assert w.current.id == "q2" and [a.id for a in w.offered()] == ["y", "z"]
    with pytest.raises(ValidationError) as err:
        w.answer("x")
    assert err.value.field == "answer" and "f" in str(err.value)
    assert w.current.id == "q2"


def test_walk_and_replay_bad_input_raise_validation_errors():
    with pytest.raises(ValidationError) as err:
        Walk(["x"])
    assert err.value.field == "tree"
    w = Walk("cra-scope")
    for bad in (None, [("q_saas", "no")]):
        with pytest.raises(ValidationError) as err:
            w.replay(bad)
        assert err.value.field == "answers"
    with pytest.raises(ValidationError) as err:      # skips q_connection: q_sector is never reached
        w.replay({"q_saas": "no", "q_sector": "none"})
    assert err.value.field == "answers" and "q_sector" in str(err.value) and "not reachable" in str(err.value)
    with pytest.raises(ValidationError, match="q_nope"):
        w.replay({"q_saas": "no", "q_nope": "yes"})
    assert w.current.id == "q_saas" and not w.can_undo()      # a refused replay changes nothing
