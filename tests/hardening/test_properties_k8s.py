"""engines.k8s under random workloads: with nothing failing, the level-triggered controllers
converge (pods == replicas, all Running and Ready) after any sequence of scalings and image
edits; manifests of garbage are ValidationErrors, and a YAML alias bomb does not blow up."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines.core.errors import ValidationError
from engines.k8s import Cluster, load_manifests
from engines.k8s import rules

SLOW = settings(max_examples=12, deadline=None)
FAST = settings(max_examples=40, deadline=None)


def node(name, cpu="8", memory="32Gi"):
    return {"kind": "Node", "metadata": {"name": name}, "status": {"allocatable": {"cpu": cpu, "memory": memory}}}


def deployment(name, replicas, image="web:1"):
    c = {"name": "c", "image": image, "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [c]}}}}


def active(c, app):
    return [p for p in c.list("Pod", {"app": app}) if rules.is_active(p)]


EDITS = st.lists(st.tuples(st.sampled_from(["scale", "image", "delete-pod", "wait"]), st.integers(0, 6)),
                 max_size=5)


@SLOW
@given(st.integers(1, 3), st.integers(0, 6), EDITS, st.integers(0, 1000))
def test_reconcile_converges_when_nothing_fails(n_nodes, replicas, edits, seed):
    c = Cluster(seed=seed)
    for i in range(n_nodes):
        c.apply(node(f"node-{i}"))
    c.apply(deployment("web", replicas))
    want, image = replicas, "web:1"
    for what, k in edits:
        if what == "scale":
            want = k
            c.patch("Deployment", "web", {"spec": {"replicas": k}})
        elif what == "image":
            image = f"web:{k + 2}"
            c.apply(deployment("web", want, image))
        elif what == "delete-pod":
            pods = active(c, "web")
            if pods:
                c.delete("Pod", pods[k % len(pods)]["metadata"]["name"])
        c.run(3)
    c.run(120)
    pods = active(c, "web")
    assert len(pods) == want, [(p["metadata"]["name"], p["status"].get("phase")) for p in pods]
    assert all(p["status"]["phase"] == "Running" and rules.is_pod_ready(p) for p in pods)
    assert all(p["spec"]["containers"][0]["image"] == image for p in pods)
    assert all(p["spec"].get("nodeName") for p in pods)


GARBAGE_YAML = st.one_of(st.text(max_size=60),
                         st.sampled_from(["kind: Deployment", "- 1\n- 2", "{", "a: [", "kind: Pod\nspec: 3",
                                          "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: 7}",
                                          "kind: List\nitems: 5", "!!python/object:os.system {}", "--- \n---\n"]))


@FAST
@given(GARBAGE_YAML)
def test_garbage_manifests_are_validation_errors(text):
    try:
        docs = load_manifests(text)
    except ValidationError as e:
        assert e.field and e.field in str(e)
        return
    assert docs  # accepted: at least one validated object
    c = Cluster()
    for d in docs:
        try:
            c.apply(d.obj)
        except ValidationError:
            pass


def yaml_bomb(levels: int = 9, width: int = 9) -> str:
    """The 'billion laughs' shape: each level is a list of ``width`` aliases of the previous one."""
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * width) + "]")
    lines.append(f"kind: Pod\nmetadata: {{name: bomb, labels: *a{levels - 1}}}\nspec: {{containers: *a{levels - 1}}}")
    return "\n".join(lines)


BOUNDED = """
import sys, time
from engines.core.errors import ValidationError
from engines.k8s import load_manifests
text = open(sys.argv[1], encoding="utf-8").read()
try:
    load_manifests(text)
    print("accepted")
except ValidationError as e:
    print("refused:", e)
"""


def parse_bounded(tmp_path, text: str, seconds: float = 10.0) -> str:
    """Parse in a child process so a blow-up fails this test in seconds instead of hanging CI."""
    import subprocess
    import sys
    from pathlib import Path

    f = tmp_path / "manifest.yaml"
    f.write_text(text, encoding="utf-8")
    root = Path(__file__).resolve().parents[2]
    try:
        out = subprocess.run([sys.executable, "-c", BOUNDED, str(f)], cwd=root, capture_output=True, text=True,
                             timeout=seconds)
    except subprocess.TimeoutExpired:
        pytest.fail(f"load_manifests did not finish within {seconds:g} s on a {len(text):,}-character input")
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def test_yaml_alias_bomb_is_refused_quickly(tmp_path):
    assert parse_bounded(tmp_path, yaml_bomb()).startswith(("refused", "accepted"))


def test_yaml_bomb_in_a_field_the_validator_copies_is_bounded(tmp_path):
    # annotations are copied verbatim (schema ANY): a deep alias chain must not expand 9^9 strings
    text = yaml_bomb().replace("metadata: {name: bomb, labels: *a8}", "metadata: {name: bomb, annotations: {x: *a8}}")
    text = text.replace("spec: {containers: *a8}", "spec: {containers: [{name: c, image: x}]}")
    parse_bounded(tmp_path, text)


def test_huge_manifest_text_is_refused_or_fast(tmp_path):
    text = "kind: Pod\nmetadata: {name: big}\nspec: {containers: [{name: c, image: x}]}\n# " + "x" * 5_000_000
    parse_bounded(tmp_path, text)
