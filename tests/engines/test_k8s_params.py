"""The Kubernetes panel's logic, Qt-free: its Params, the YAML checks and run, the words a frame is shown with."""
from __future__ import annotations

from dataclasses import asdict, replace

import pytest

from engines.core.errors import Cancelled, ValidationError
from engines.k8s import (EXAMPLE_YAML, MAX_YAML_PODS, YAML_SECONDS, Params, check_yaml, deployment_status, explain_pod,
                         node_status, pod_limit_error, run_yaml)
from engines.k8s.scenarios import guide_keys, run_guide


def deployment(name: str, replicas: int) -> str:
    return (f"apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}}}\nspec: {{replicas: {replicas}, "
            f"selector: {{matchLabels: {{app: {name}}}}}, template: {{metadata: {{labels: {{app: {name}}}}}, "
            f"spec: {{containers: [{{name: c, image: i}}]}}}}}}")


def test_params_defaults_are_the_opening_view_and_round_trip():
    p = Params()
    assert p.scenario == guide_keys()[0] and not p.yaml_shown and p.yaml == "" and p.pod == ""
    assert p.manifests == EXAMPLE_YAML
    assert Params.spec("scenario")["choices"] == tuple(guide_keys())
    edited = Params(scenario="rolling", yaml_shown=True, yaml=deployment("api", 2), pod="api-1")
    assert Params(**asdict(edited)) == edited and Params.from_dict(edited.to_dict()) == edited
    assert edited.manifests == deployment("api", 2)


@pytest.mark.parametrize("changes, field", [
    ({"scenario": "nope"}, "scenario"),
    ({"yaml_shown": "yes"}, "yaml_shown"),
    ({"yaml": 3}, "yaml"),
    ({"pod": "x" * 300}, "pod"),
    ({"yaml": deployment("x", 5_000)}, "Deployment/x spec.replicas"),
    ({"yaml": "kind: [unclosed"}, None),
])
def test_params_refuse_bad_values_naming_the_field(changes, field):
    with pytest.raises(ValidationError) as info:
        Params(**changes)
    if field is not None:
        assert info.value.field == field


def test_yaml_checks_name_the_field_and_bound_the_total():
    with pytest.raises(ValidationError, match="spec.replicas: 1000000000 is more than this simulator runs"):
        check_yaml(deployment("x", 1_000_000_000))
    with pytest.raises(ValidationError, match=r"spec.replicas: 2100 pods in total \(Deployment/a 1500"):
        check_yaml(deployment("a", 1500) + "\n---\n" + deployment("b", 600))
    objs = [{"kind": "Deployment", "metadata": {"name": "a"}, "spec": {"replicas": MAX_YAML_PODS - 1}},
            {"kind": "Pod", "metadata": {"name": "p"}, "spec": {}}]
    assert pod_limit_error(objs) is None
    assert "2001 pods" in pod_limit_error(objs + [{"kind": "ReplicaSet", "metadata": {"name": "r"}, "spec": {}}])
    check = check_yaml(EXAMPLE_YAML.replace("      containers:", "      hostNetwork: true\n      containers:"))
    assert any("hostNetwork" in u for u in check.unsupported)


def test_run_yaml_records_every_second_and_reports():
    texts = []
    run = run_yaml(deployment("small", 2), progress=lambda _f, text: texts.append(text))
    assert run.error is None and run.timeline.key == "yaml" and len(run.timeline.frames) == YAML_SECONDS + 1
    assert {n["name"] for n in run.timeline.frames[0].nodes} == {"node-0", "node-1", "node-2"}   # the default nodes
    assert run.report == "Applied; every field is simulated."
    assert texts[-1] == f"simulating your YAML: {YAML_SECONDS} of {YAML_SECONDS} s" and len(texts) == YAML_SECONDS + 1
    run = run_yaml(EXAMPLE_YAML.replace("      containers:", "      hostNetwork: true\n      containers:"))
    assert run.report.startswith("Applied. Unsupported fields (dropped):<br>") and "hostNetwork" in run.report


def test_runs_stop_when_cancelled():
    calls = []
    with pytest.raises(Cancelled):
        run_yaml(EXAMPLE_YAML, cancelled=lambda: calls.append(1) or len(calls) > 3)
    with pytest.raises(Cancelled):
        run_guide("self-heal", cancelled=lambda: True)


def test_pod_explanation_states_the_limits_rules():
    frame = run_guide("limits").frames[-1]
    leaky = next(p for p in frame.pods if p["name"] == "leaky")
    e = explain_pod(leaky)
    assert e.pod == "leaky" and e.html == "<br>".join(e.lines)
    assert "a CFS quota of 20 ms per 100 ms" in e.html           # 200m of every 100 ms period
    assert "OOM-kills the container" in e.html and "QoS <b>Burstable</b>" in e.html
    best = replace_pod(leaky, limits={}, usage=None)
    text = explain_pod(best).html
    assert "none: may use idle CPU" in text and "Usage now" not in text


def replace_pod(pod: dict, **changes) -> dict:
    return {**pod, **changes}


def test_status_lines():
    frame = run_guide("rolling").frames[20]
    line = deployment_status(frame.deployments[0])
    assert line.startswith("deploy/web: ") and "(≤ 10 pods, ≥ 6 available)" in line and "Progressing=" in line
    node = frame.nodes[0]
    assert node_status(node) == "Ready"
    assert node_status({**node, "ready": "Unknown", "pressure": True}) == "NotReady (Unknown), MemoryPressure"


def test_params_replace_keeps_validating():
    with pytest.raises(ValidationError):
        replace(Params(), scenario="nope")


def test_explanation_shows_cpu_throttling_and_a_hand_edited_image():
    busy = next(p for p in run_guide("limits").frames[20].pods if p["name"] == "busy")
    text = explain_pod(busy).html
    assert "CPU now: wants 800m, gets 200m: throttled in" in text and "(0 restarts)" in text
    crashed = next(p for p in run_guide("limits").frames[20].pods if p["name"] == "leaky")
    assert crashed["cpu"] is None and "CPU now" not in explain_pod(crashed).html   # no container running
    pods = run_guide("hand-edit").frames[15].pods
    edited = [p for p in pods if p["image"] != p["template_image"]]
    assert [p["image"] for p in edited] == ["web:hotfix"] and edited[0]["template_image"] == "web:1"
    assert "its ReplicaSet's template says web:1" in explain_pod(edited[0]).html
    assert all("template says" not in explain_pod(p).html for p in pods if p not in edited)


def test_model_server_fits_replicas_per_node():
    """A pod runs on one node: a 16-GPU replica fits no 8-GPU node, however many nodes there are."""
    from engines.core.presets import apply_preset
    from engines.core.scenario import Scenario
    from engines.k8s.scenarios import model_server_plan
    big = model_server_plan(apply_preset(Scenario(), "llama3-405b"))
    assert (big.gpus_needed, big.gpus_per_node, big.fit, big.replicas) == (16, 8, 0, 1)
    assert "every replica stays Pending" in big.summary
    frame = run_guide("model-server", apply_preset(Scenario(), "llama3-405b")).frames[-1]
    assert [p["badge"] for p in frame.pods] == ["Pending (unschedulable)"]
    mid = model_server_plan(apply_preset(Scenario(), "llama3-70b"))
    assert (mid.gpus_needed, mid.fit, mid.replicas) == (4, 4, 5) and "the extra one stays Pending" in mid.summary


def test_params_keep_commands_a_dump_and_the_object_explained():
    from engines.k8s.params import encode_commands
    p = Params(commands=encode_commands(((3, "cordon node-0"), (9, "scale deploy/web --replicas=2"))),
               why="Deployment/web")
    assert p.command_list == ((3, "cordon node-0"), (9, "scale deploy/web --replicas=2"))
    assert Params.from_dict(p.to_dict()) == p and encode_commands(()) == ""
    for changes, field in (({"commands": "[[5, 'x']"}, "commands"), ({"commands": '[[9, "a"], [3, "b"]]'}, "commands"),
                           ({"commands": '[[-1, "a"]]'}, "commands[0].second"), ({"why": "Secret/x"}, "why"),
                           ({"dump_shown": True}, "dump_shown")):
        with pytest.raises(ValidationError) as info:
            Params(**changes)
        assert info.value.field == field


def test_a_pending_pod_that_no_node_could_hold_says_so():
    """Pending for want of room now (the autoscaler's 17th replica while 16 GPUs run) and pending for
    good (a 405B replica asking for 16 GPUs on 8-GPU nodes) read differently."""
    from engines.core.presets import apply_preset
    from engines.core.scenario import Scenario
    from engines.k8s.explain import too_big_for_every_node

    big = run_guide("model-server", apply_preset(Scenario(), "llama3-405b")).frames[30]
    pod = big.pods[0]
    assert not pod["node"] and too_big_for_every_node(pod, big.nodes) == [("nvidia.com/gpu", 16, 8)]
    text = explain_pod(pod, big.nodes).html
    assert "asks for 16 nvidia.com/gpu and the largest node allocates 8 nvidia.com/gpu" in text
    assert "No node can ever hold it" not in explain_pod(pod).html              # without the nodes: not claimed
    busy = run_guide("autoscale", Scenario()).frames[300]
    waiting = [p for p in busy.pods if p["active"] and not p["node"]]
    assert len(waiting) == 4
    assert all(too_big_for_every_node(p, busy.nodes) == [] for p in waiting)
    assert all("No node can ever hold it" not in explain_pod(p, busy.nodes).html for p in waiting)
    cpu = run_guide("unschedulable").frames[-1]
    stuck = next(p for p in cpu.pods if not p["node"])
    assert "asks for 5 CPU and the largest node allocates 4 CPU" in explain_pod(stuck, cpu.nodes).html
