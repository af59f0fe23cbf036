"""Decision trees for the CRA and PLD, stored as data in ``assets/law/*.yaml``.

Each tree is a DAG of question and outcome nodes; every node cites the article it rests on (with a
verbatim ``quote`` where the text was checked, else a ``summary`` paraphrase). This module loads
the trees into networkx, validates them (every path ends in an outcome, no unreachable node,
every node cites an article) and walks them with back and undo, collecting the facts that the rule
engines (:mod:`engines.law.cra`, :mod:`engines.law.pld`) evaluate. Educational, not legal advice.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterable, Mapping, Sequence

import networkx as nx
import yaml

from engines.core.assets import asset_path
from engines.core.errors import ValidationError

TREE_FILES = ("cra.yaml", "pld.yaml")


@dataclass(frozen=True)
class Answer:
    id: str
    label: str
    next: str
    facts: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Node:
    id: str
    kind: str                      # "question" | "outcome"
    label: str                     # short label for the graph
    text: str
    article: str
    help: str = ""
    quote: str = ""                # verbatim article text (checked)
    summary: str = ""              # paraphrase, shown as such
    answers: tuple[Answer, ...] = ()
    obligations: tuple[tuple[str, str], ...] = ()
    expect: Mapping[str, object] | None = None
    sets: Mapping[str, object] = field(default_factory=dict)
    continue_to: str | None = None
    engine: str | None = None

    @property
    def is_outcome(self) -> bool:
        return self.kind == "outcome"

    def answer(self, answer_id: str) -> Answer:
        for a in self.answers:
            if a.id == answer_id:
                return a
        raise ValidationError("answer", f"{answer_id!r} is not an answer of {self.id}",
                              ", ".join(a.id for a in self.answers))


@dataclass(frozen=True)
class Tree:
    key: str
    law: str
    title: str
    root: str
    nodes: Mapping[str, Node]

    def graph(self) -> nx.DiGraph:
        """The tree as a DiGraph; parallel answers to one target become one edge with all labels."""
        g = nx.DiGraph()
        for node in self.nodes.values():
            g.add_node(node.id, kind=node.kind, label=node.label)
        for node in self.nodes.values():
            for a in node.answers:
                if g.has_edge(node.id, a.next):
                    g.edges[node.id, a.next]["answers"].append(a.label)
                else:
                    g.add_edge(node.id, a.next, answers=[a.label])
        return g


def _node(node_id: str, raw: Mapping) -> Node:
    answers = tuple(Answer(str(a["id"]), a["label"], a["next"], dict(a.get("facts") or {}))
                    for a in raw.get("answers") or ())
    return Node(
        id=node_id, kind=raw.get("kind", ""), label=raw.get("label", node_id), text=raw.get("text", ""),
        article=raw.get("article", ""), help=raw.get("help", ""), quote=raw.get("quote", ""),
        summary=raw.get("summary", ""), answers=answers,
        obligations=tuple((o[0], o[1]) for o in raw.get("obligations") or ()),
        expect=raw.get("expect"), sets=dict(raw.get("sets") or {}), continue_to=raw.get("continue"),
        engine=raw.get("engine"),
    )


def parse_trees(doc: Mapping) -> dict[str, Tree]:
    """Trees from one parsed YAML document (``law``, ``trees: {key: {title, root, nodes}}``)."""
    out = {}
    try:
        for key, raw in doc["trees"].items():
            nodes = {str(nid): _node(str(nid), n) for nid, n in raw["nodes"].items()}
            out[key] = Tree(key, doc["law"], raw["title"], raw["root"], nodes)
    except (KeyError, TypeError, AttributeError, IndexError, ValueError) as exc:
        detail = f"missing key {exc}" if isinstance(exc, KeyError) else f"{type(exc).__name__}: {exc}"
        raise ValidationError("trees", f"malformed tree document ({detail})",
                              "law, trees: {key: {title, root, nodes}}") from None
    return out


@lru_cache(maxsize=1)
def load_trees() -> dict[str, Tree]:
    """All shipped trees, CRA first, in file order."""
    trees: dict[str, Tree] = {}
    for name in TREE_FILES:
        with open(asset_path("law", name), encoding="utf-8") as fh:
            trees.update(parse_trees(yaml.safe_load(fh)))
    return trees


@lru_cache(maxsize=1)
def load_examples() -> dict[str, dict]:
    """Example products (``assets/law/examples.yaml``): title, note, answers, facts, expect."""
    with open(asset_path("law", "examples.yaml"), encoding="utf-8") as fh:
        return yaml.safe_load(fh)["examples"]


def validate_tree(tree: Tree, tree_keys: Iterable[str] = ()) -> list[str]:
    """Problems in one tree (empty when valid): dangling edges, cycles, dead ends, unreachable
    nodes, outcomes with answers, nodes without an article or without quote/summary."""
    problems: list[str] = []
    keys = set(tree_keys) | {tree.key}
    if tree.root not in tree.nodes:
        return [f"{tree.key}: root {tree.root!r} is not a node"]
    for node in tree.nodes.values():
        where = f"{tree.key}/{node.id}"
        if node.kind not in ("question", "outcome"):
            problems.append(f"{where}: kind must be question or outcome")
        if not node.article.strip():
            problems.append(f"{where}: cites no article")
        if not (node.quote.strip() or node.summary.strip()):
            problems.append(f"{where}: has neither quote nor summary of the article")
        if not node.text.strip():
            problems.append(f"{where}: has no text")
        if node.kind == "question":
            if len(node.answers) < 2:
                problems.append(f"{where}: a question needs at least two answers")
            if len({a.id for a in node.answers}) != len(node.answers):
                problems.append(f"{where}: duplicate answer ids")
            for a in node.answers:
                if a.next not in tree.nodes:
                    problems.append(f"{where}: answer {a.id!r} leads to unknown node {a.next!r}")
        if node.kind == "outcome":
            if node.answers:
                problems.append(f"{where}: an outcome must not have answers")
            for text, article in node.obligations:
                if not str(article).strip():
                    problems.append(f"{where}: obligation {text!r} cites no article")
            if node.continue_to is not None and node.continue_to not in keys:
                problems.append(f"{where}: continues to unknown tree {node.continue_to!r}")
    if problems:
        return problems
    g = tree.graph()
    if not nx.is_directed_acyclic_graph(g):
        problems.append(f"{tree.key}: has a cycle")
    reachable = nx.descendants(g, tree.root) | {tree.root}
    for nid in sorted(set(tree.nodes) - reachable):
        problems.append(f"{tree.key}/{nid}: unreachable from the root")
    for nid in g.nodes:
        if g.out_degree(nid) == 0 and not tree.nodes[nid].is_outcome:
            problems.append(f"{tree.key}/{nid}: a path ends here without an outcome")
    return problems


def validate_all(trees: Mapping[str, Tree] | None = None) -> list[str]:
    """Problems across all trees, including node ids reused in two trees of the same law."""
    trees = load_trees() if trees is None else trees
    problems = [p for t in trees.values() for p in validate_tree(t, trees)]
    seen: dict[tuple[str, str], str] = {}
    for t in trees.values():
        for nid in t.nodes:
            if (t.law, nid) in seen:
                problems.append(f"{t.key}/{nid}: id also used in {seen[(t.law, nid)]}")
            seen[(t.law, nid)] = t.key
    return problems


def layout(tree: Tree) -> dict[str, tuple[float, float]]:
    """Layered tidy layout, left to right: x = longest distance from the root; y = one row per leaf in
    depth-first (file) order, each question centred on the rows of its answers. A tree drawn this way
    has no crossing edges; a node reached twice stays where it was first placed, and nodes of one
    layer are then pushed apart to at least a row (Reingold & Tilford 1981, simplified)."""
    g = tree.graph()
    depth = {tree.root: 0}
    for nid in nx.topological_sort(g):
        for succ in g.successors(nid):
            depth[succ] = max(depth.get(succ, 0), depth.get(nid, 0) + 1)
    row: dict[str, float] = {}
    next_row = 0.0

    def place(nid: str) -> None:
        nonlocal next_row
        fresh = [c for c in g.successors(nid) if c not in row]
        for child in fresh:
            if child not in row:               # an earlier sibling's subtree may have reached it
                place(child)
        kids = [row[c] for c in fresh]
        if kids:
            row[nid] = (min(kids) + max(kids)) / 2
        else:
            row[nid] = next_row
            next_row += 1.0

    place(tree.root)
    for nid in tree.nodes:                       # unreachable nodes (none in valid data) still get a row
        if nid not in row:
            row[nid] = next_row
            next_row += 1.0
    layers: dict[int, list[str]] = {}
    for nid in tree.nodes:
        layers.setdefault(depth.get(nid, 0), []).append(nid)
    for ids in layers.values():                  # at least one row between nodes of a layer
        ids.sort(key=lambda n: row[n])
        for a, b in zip(ids, ids[1:]):
            row[b] = max(row[b], row[a] + 1.0)
    top = max(row.values())
    return {nid: (float(depth.get(nid, 0)), top / 2 - row[nid]) for nid in tree.nodes}


# ---- walking -------------------------------------------------------------------------------

CONTINUE = "continue"
"""The move that continues from an outcome into the tree it links to (see :attr:`Walk.moves`)."""


@dataclass(frozen=True)
class Step:
    """One move: ``answer`` taken at ``node`` of ``tree``; ``answer=None`` continues to the next tree."""
    tree: str
    node: str
    answer: str | None
    auto: bool = False


@dataclass(frozen=True)
class _State:
    start: str
    steps: tuple[Step, ...]


def _conflict(answer: Answer, facts: Mapping[str, object]) -> str | None:
    """The first fact of ``answer`` that contradicts a fact already collected, else ``None``."""
    for k, v in answer.facts.items():
        if k in facts and facts[k] != v:
            return k
    return None


class Walk:
    """A walk through chained trees with back (one answer up the path) and undo (revert the last
    action, a back included). Questions whose answer the collected facts already fix are answered
    automatically: the answer whose facts all hold (the tier carried from classification to the
    route tree), or the only answer left when every other one contradicts a collected fact (not
    open source: the Art 32(5) question of the route tree). An answer that contradicts a collected
    fact is never offered and cannot be given."""

    def __init__(self, start: str, trees: Mapping[str, Tree] | None = None) -> None:
        self.trees = load_trees() if trees is None else trees
        self._check_start(start)
        self._history: list[_State] = [_State(start, ())]

    def _check_start(self, start: object) -> None:
        if not isinstance(start, str) or start not in self.trees:
            raise ValidationError("tree", f"unknown tree {start!r}", ", ".join(self.trees))

    # -- state
    @property
    def start(self) -> str:
        return self._history[-1].start

    @property
    def steps(self) -> tuple[Step, ...]:
        return self._history[-1].steps

    def _replay(self, state: _State) -> tuple[str, str, dict]:
        tree_key = state.start
        node_id = self.trees[tree_key].root
        facts: dict[str, object] = {}
        for step in state.steps:
            node = self.trees[tree_key].nodes[node_id]
            if step.answer is None:
                tree_key = node.continue_to
                node_id = self.trees[tree_key].root
            else:
                ans = node.answer(step.answer)
                facts.update(ans.facts)
                node_id = ans.next
                facts.update(self.trees[tree_key].nodes[node_id].sets)
        return tree_key, node_id, facts

    @property
    def tree(self) -> Tree:
        return self.trees[self._replay(self._history[-1])[0]]

    @property
    def current(self) -> Node:
        tree_key, node_id, _ = self._replay(self._history[-1])
        return self.trees[tree_key].nodes[node_id]

    @property
    def facts(self) -> dict[str, object]:
        """Facts set by the answers so far (engine facts plus the linking fact ``tier``)."""
        return self._replay(self._history[-1])[2]

    def path(self) -> list[str]:
        """Node ids visited in the current tree, in order, ending at the current node."""
        tree_key, node_id, _ = self._replay(self._history[-1])
        ids = [s.node for s in self.steps if s.tree == tree_key and s.answer is not None]
        return [*ids, node_id]

    # -- actions
    def _push(self, state: _State) -> None:
        self._history.append(self._auto(state))

    def _auto(self, state: _State) -> _State:
        while True:
            tree_key, node_id, facts = self._replay(state)
            node = self.trees[tree_key].nodes[node_id]
            if node.is_outcome:
                return state
            fits = [a for a in node.answers
                    if a.facts and all(k in facts and facts[k] == v for k, v in a.facts.items())]
            if len(fits) != 1:               # else the one answer that no collected fact contradicts
                fits = [a for a in node.answers if _conflict(a, facts) is None]
                if len(fits) != 1 or len(node.answers) < 2:
                    return state
            state = _State(state.start, (*state.steps, Step(tree_key, node_id, fits[0].id, auto=True)))

    def offered(self) -> tuple[Answer, ...]:
        """The answers of the current question that no collected fact contradicts."""
        node, facts = self.current, self.facts
        return tuple(a for a in node.answers if _conflict(a, facts) is None)

    def _check_consistent(self, node: Node, answer_id: str, facts: Mapping[str, object], field: str) -> None:
        key = _conflict(node.answer(answer_id), facts)
        if key is not None:
            raise ValidationError(field, f"{node.id}: answer {answer_id!r} contradicts an earlier answer "
                                         f"({key} is already {facts[key]!r})",
                                  ", ".join(a.id for a in node.answers if _conflict(a, facts) is None))

    def answer(self, answer_id: str) -> Node:
        node = self.current
        if node.is_outcome:
            raise ValidationError("answer", f"{node.id} is an outcome; use continue_on() or back()")
        self._check_consistent(node, answer_id, self.facts, "answer")
        self._push(_State(self.start, (*self.steps, Step(self.tree.key, node.id, answer_id))))
        return self.current

    def can_continue(self) -> bool:
        return self.current.is_outcome and self.current.continue_to is not None

    def continue_on(self) -> Node:
        """From an outcome that links to another tree, move to that tree's root."""
        if not self.can_continue():
            raise ValidationError("continue", "only an outcome that links to another tree can continue")
        self._push(_State(self.start, (*self.steps, Step(self.tree.key, self.current.id, None))))
        return self.current

    def can_back(self) -> bool:
        return any(not s.auto for s in self.steps)

    def back(self) -> bool:
        """Remove the last answer the user gave (and the automatic ones after it)."""
        steps = list(self.steps)
        while steps and steps[-1].auto:
            steps.pop()
        if not steps:
            return False
        steps.pop()
        self._history.append(_State(self.start, tuple(steps)))
        return True

    def can_undo(self) -> bool:
        return len(self._history) > 1

    def undo(self) -> bool:
        """Revert the last action (answer, continue, back, restart or example)."""
        if len(self._history) == 1:
            return False
        self._history.pop()
        return True

    def restart(self, start: str | None = None) -> None:
        start = self.start if start is None else start
        self._check_start(start)
        self._push(_State(start, ()))

    def replay(self, answers: Mapping[str, str], start: str | None = None) -> None:
        """Start again and take the given answers (question id → answer id) as far as they reach,
        continuing into linked trees that ask one of them. One undoable action.

        Every given answer must be used: a question id the walk does not reach, an answer id the
        question does not have, or an answer that contradicts an earlier one (also one the walk
        answered automatically) raises :class:`ValidationError` on ``answers``, and the walk is unchanged."""
        start = self.start if start is None else start
        self._check_start(start)
        if not isinstance(answers, Mapping):
            raise ValidationError("answers", f"expected a mapping of question id to answer id, "
                                             f"got {type(answers).__name__}", "{question id: answer id}")
        state = self._auto(_State(start, ()))
        while True:
            tree_key, node_id, facts = self._replay(state)
            node = self.trees[tree_key].nodes[node_id]
            if node.is_outcome:
                used = {s.node for s in state.steps}
                if node.continue_to is None or not (set(answers) - used):
                    break
                step = Step(tree_key, node_id, None)
            elif node_id in answers:
                given = answers[node_id]
                if not any(a.id == given for a in node.answers):
                    raise ValidationError("answers", f"{node_id}: {given!r} is not one of its answers",
                                          ", ".join(a.id for a in node.answers))
                self._check_consistent(node, given, facts, "answers")
                step = Step(tree_key, node_id, given)
            else:
                break
            state = self._auto(_State(state.start, (*state.steps, step)))
        taken = {s.node: s.answer for s in state.steps if s.answer is not None}
        for qid in sorted(answers, key=str):
            if qid not in taken:
                known = any(qid in t.nodes for t in self.trees.values())
                why = "is not reachable on this path" if known else "is not a question of any tree"
                raise ValidationError("answers", f"question {qid!r} {why} (the walk ends at {node_id} in "
                                                 f"{tree_key})", "question ids on the path: " + ", ".join(taken))
            if taken[qid] != answers[qid]:
                raise ValidationError("answers", f"{qid}: {answers[qid]!r} contradicts an earlier answer; "
                                                 f"the facts already give {taken[qid]!r}", repr(taken[qid]))
        self._history.append(state)

    @property
    def moves(self) -> tuple[str, ...]:
        """The user's moves so far: each answer id given, :data:`CONTINUE` for each continue into a
        linked tree (automatic answers are left out: :meth:`follow` takes them again)."""
        return tuple(CONTINUE if s.answer is None else s.answer for s in self.steps if not s.auto)

    def follow(self, moves: Sequence[str], start: str | None = None) -> None:
        """Start again from ``start`` and make ``moves`` (as :attr:`moves` gives them) in order, each
        answer at the question the walk has reached. One undoable action. A move the walk cannot
        make there (an answer the question lacks or an earlier answer rules out, a continue at a
        question or at a final outcome, an answer at an outcome) raises :class:`ValidationError` on
        ``answers``, and the walk is unchanged."""
        start = self.start if start is None else start
        self._check_start(start)
        if isinstance(moves, (str, bytes)) or not isinstance(moves, Sequence):
            raise ValidationError("answers", f"expected a list of answer ids, got {type(moves).__name__}",
                                  f"answer ids and {CONTINUE!r}")
        state = self._auto(_State(start, ()))
        for i, move in enumerate(moves, 1):
            tree_key, node_id, facts = self._replay(state)
            node = self.trees[tree_key].nodes[node_id]
            offered = [a.id for a in node.answers if _conflict(a, facts) is None]
            if node.is_outcome:
                if move != CONTINUE or node.continue_to is None:
                    raise ValidationError("answers", f"move {i} ({move!r}): the walk has ended at the outcome "
                                                     f"{node_id} in {tree_key}",
                                          repr(CONTINUE) if node.continue_to else "no further move")
                step = Step(tree_key, node_id, None)
            else:
                if not isinstance(move, str) or move not in offered:
                    why = ("contradicts an earlier answer" if any(a.id == move for a in node.answers)
                           else "is not one of its answers")
                    raise ValidationError("answers", f"move {i} ({move!r}) at {node_id}: {why}", ", ".join(offered))
                step = Step(tree_key, node_id, move)
            state = self._auto(_State(start, (*state.steps, step)))
        self._history.append(state)

    def frame(self, index: int) -> tuple[Tree, list[str], str]:
        """Step ``index`` of the path for a player: its tree, the path drawn up to it and its caption;
        ``index == len(steps)`` (or past it) is where the walk is now."""
        steps = self.steps
        index = max(0, min(index, len(steps)))
        if index == len(steps):
            return self.tree, self.path(), f"Step {index}/{len(steps)}: where you are now"
        step = steps[index]
        tree = self.trees[step.tree]
        path = [s.node for s in steps[:index + 1] if s.tree == step.tree and s.answer is not None] or [step.node]
        if path[-1] != step.node:
            path.append(step.node)
        node = tree.nodes[step.node]
        answer = node.answer(step.answer).label if step.answer else "continue"
        return tree, path, f"Step {index + 1}/{len(steps)}: {node.text} → {answer} ({node.article})"

    def record(self) -> list[dict]:
        """The decision record: one row per step (question, answer, article, automatic or not)."""
        rows = []
        tree_key = self.start
        for step in self.steps:
            tree = self.trees[tree_key]
            node = tree.nodes[step.node]
            if step.answer is None:
                rows.append({"tree": tree.title, "question": f"Outcome: {node.text}", "answer": "continue",
                             "article": node.article, "auto": False})
                tree_key = node.continue_to
                continue
            rows.append({"tree": tree.title, "question": node.text, "answer": node.answer(step.answer).label,
                         "article": node.article, "auto": step.auto})
        return rows
