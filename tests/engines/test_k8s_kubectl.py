"""kubectl on the simulated cluster: every verb accepted and refused (with the message kubectl
prints), and what the loops do afterwards; commands in the timeline replay and fork."""
from __future__ import annotations

import pytest

from engines.core.errors import ValidationError
from engines.k8s import Cluster, CommandResult
from engines.k8s.scenarios import _base, fork, run_guide, web


def cluster(replicas: int = 3) -> Cluster:
    c = Cluster(seed=1)
    _base(c, replicas)
    c.run(10)
    return c


def active(c: Cluster, **labels) -> list[dict]:
    return [p for p in c.list("Pod", labels or None) if not p["metadata"].get("deletionTimestamp")]


def test_a_result_says_accepted_is_not_success():
    c = cluster()
    r = c.kubectl("kubectl scale deployment/web --replicas=5")
    assert isinstance(r, CommandResult) and r.accepted and r.t == c.now == 10
    assert r.message == "deployment.apps/web scaled"
    assert "not success" in r.note and "accepted" in r.text
    assert c.commands[-1] is r


def test_scale_deployment_then_the_replicaset_creates_pods():
    c = cluster()
    assert c.kubectl("scale deploy web --replicas=5").accepted
    assert len(active(c)) == 3                   # nothing happened yet: the loops act next tick
    c.run(5)
    assert len(active(c)) == 5 and c.list("ReplicaSet")[0]["spec"]["replicas"] == 5


@pytest.mark.parametrize("command, message", [
    ("scale deploy/web --replicas=-1", "COUNT must be greater than or equal to 0"),
    ("scale deploy/web", 'required flag(s) "replicas" not set'),
    ("scale deploy/nope --replicas=2", 'Error from server (NotFound): deployments.apps "nope" not found'),
    ("scale service/web --replicas=2", "scale is not supported for services"),
])
def test_scale_refusals(command, message):
    c = cluster()
    r = c.kubectl(command)
    assert not r.accepted and message in r.message


def test_a_hand_scaled_replicaset_is_scaled_back_by_its_deployment():
    c = cluster()
    rs = c.list("ReplicaSet")[0]["metadata"]["name"]
    r = c.kubectl(f"scale rs/{rs} --replicas=6")
    assert r.accepted and r.message == f"replicaset.apps/{rs} scaled"
    c.run(10)
    assert c.get("ReplicaSet", rs)["spec"]["replicas"] == 3 and len(active(c)) == 3   # the manual fix undone


def test_set_image_rolls_out_and_unknown_container_is_refused():
    c = cluster()
    assert c.kubectl("set image deployment/web web=web:2").message == "deployment.apps/web image updated"
    c.run(40)
    assert {p["spec"]["containers"][0]["image"] for p in active(c)} == {"web:2"}
    bad = c.kubectl("set image deployment/web nginx=web:3")
    assert not bad.accepted and bad.message == 'error: unable to find container named "nginx"'


def test_set_image_on_a_crashing_image_is_accepted_but_nothing_works():
    c = cluster(4)
    r = c.kubectl("set image deploy/web web=web:crash")
    assert r.accepted
    c.run(40)
    d = c.get("Deployment", "web")
    assert d["status"]["updatedReplicas"] >= 1
    assert all(p["spec"]["containers"][0]["image"] == "web:1" for p in c.list("Pod") if p["status"].get("conditions")
               and any(x["type"] == "Ready" and x["status"] == "True" for x in p["status"]["conditions"]))


def test_delete_pod_is_replaced_with_a_new_name_and_address():
    c = cluster()
    victim = active(c)[0]
    r = c.kubectl(f"delete pod/{victim['metadata']['name']}")
    assert r.accepted and r.message == f'pod "{victim["metadata"]["name"]}" deleted'
    c.run(10)
    names = {p["metadata"]["name"] for p in active(c)}
    assert victim["metadata"]["name"] not in names and len(names) == 3
    assert victim["status"]["podIP"] not in {p["status"].get("podIP") for p in active(c)}
    missing = c.kubectl("delete pod nope")
    assert not missing.accepted and missing.message == 'Error from server (NotFound): pods "nope" not found'


def test_label_needs_overwrite_and_a_relabelled_pod_is_orphaned_and_replaced():
    c = cluster()
    name = active(c)[0]["metadata"]["name"]
    refused = c.kubectl(f"label pod {name} app=debug")
    assert not refused.accepted and refused.message == "error: 'app' already has a value (web), and --overwrite is false"
    r = c.kubectl(f"label pod {name} app=debug --overwrite")
    assert r.accepted and r.message == f"pod/{name} labeled"
    c.run(10)
    assert c.get("Pod", name)["metadata"].get("ownerReferences") == []   # released, still running
    assert len(active(c, app="web")) == 3
    assert c.kubectl(f"label pod/{name} app=debug").message == f"pod/{name} not labeled"
    assert c.kubectl(f"label pod/{name} app-").message == f"pod/{name} unlabeled"
    bad = c.kubectl(f"label pod/{name} 'bad key'=x")
    assert not bad.accepted and "not a valid key" in bad.message


def test_cordon_uncordon_and_the_scheduler_respects_it():
    c = cluster()
    assert c.kubectl("cordon node-0").message == "node/node-0 cordoned"
    assert c.kubectl("cordon node-0").message == "node/node-0 already cordoned"
    c.kubectl("scale deploy/web --replicas=9")
    c.run(10)
    assert not [p for p in active(c) if p["spec"]["nodeName"] == "node-0" and p["metadata"]["creationTimestamp"] >= 10]
    assert c.kubectl("uncordon node-0").message == "node/node-0 uncordoned"
    assert c.get("Node", "node-0")["spec"].get("unschedulable") is None
    missing = c.kubectl("cordon node-9")
    assert not missing.accepted and 'nodes "node-9" not found' in missing.message


def test_drain_evicts_and_the_replicaset_replaces_elsewhere():
    c = cluster(4)
    node = active(c)[0]["spec"]["nodeName"]
    on_node = [p["metadata"]["name"] for p in active(c) if p["spec"]["nodeName"] == node]
    r = c.kubectl(f"drain {node} --ignore-daemonsets")
    assert r.accepted and r.message.startswith(f"node/{node} cordoned") and r.message.endswith(f"node/{node} drained")
    assert all(f"pod/{n} evicted" in r.message for n in on_node)
    c.run(10)
    assert len(active(c)) == 4 and all(p["spec"]["nodeName"] != node for p in active(c))


def test_drain_refuses_bare_pods_without_force_but_has_cordoned_already():
    c = cluster()
    c.apply({"kind": "Pod", "metadata": {"name": "bare"}, "spec": {"nodeName": "node-1",
             "containers": [{"name": "a", "image": "a:1"}]}})
    c.run(3)
    r = c.kubectl("drain node-1")
    assert not r.accepted and "cannot delete Pods that declare no controller (use --force to override): default/bare" \
        in r.message
    assert c.get("Node", "node-1")["spec"]["unschedulable"] is True       # the first half happened
    forced = c.kubectl("drain node-1 --force")
    assert forced.accepted and "pod/bare evicted" in forced.message
    c.run(5)
    assert not [p for p in c.list("Pod") if p["metadata"]["name"] == "bare"]  # gone for good: nothing recreates it


def test_rollout_pause_resume_and_undo():
    c = cluster()
    assert not c.kubectl("rollout undo deploy/web").accepted        # one revision only
    c.kubectl("set image deploy/web web=web:2")
    c.run(40)
    assert c.kubectl("rollout pause deployment/web").message == "deployment.apps/web paused"
    again = c.kubectl("rollout pause deployment/web")
    assert not again.accepted and again.message == 'error: deployments.apps "web" is already paused'
    paused_undo = c.kubectl("rollout undo deployment/web")
    assert not paused_undo.accepted and "cannot rollback a paused deployment" in paused_undo.message
    assert c.kubectl("rollout resume deployment/web").message == "deployment.apps/web resumed"
    assert not c.kubectl("rollout resume deployment/web").accepted
    r = c.kubectl("rollout undo deployment/web")
    assert r.accepted and r.message == "deployment.apps/web rolled back"
    c.run(40)
    assert {p["spec"]["containers"][0]["image"] for p in active(c)} == {"web:1"}
    revisions = sorted(int(rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"]) for rs in c.list("ReplicaSet"))
    assert revisions == [2, 3]     # the old ReplicaSet is reused under a new revision
    assert "unable to find specified revision 9" in c.kubectl("rollout undo deploy/web --to-revision=9").message


def test_a_paused_deployment_does_not_roll_out():
    c = cluster()
    c.kubectl("rollout pause deploy/web")
    c.kubectl("set image deploy/web web=web:2")
    c.run(20)
    assert {p["spec"]["containers"][0]["image"] for p in active(c)} == {"web:1"}


def test_patch_merge_and_refusals():
    c = cluster()
    r = c.kubectl("""patch deployment web --type merge -p '{"spec":{"replicas":4}}'""")
    assert r.accepted and r.message == "deployment.apps/web patched"
    c.run(5)
    assert len(active(c)) == 4
    assert "(no change)" in c.kubectl("""patch deploy web --type=merge -p '{"spec":{"replicas":4}}'""").message
    immutable = c.kubectl("""patch deploy web --type merge -p '{"spec":{"selector":{"matchLabels":{"app":"x"}}}}'""")
    assert not immutable.accepted and "field is immutable" in immutable.message
    assert "--type json is not simulated" in c.kubectl("""patch deploy web --type json -p '[]'""").message
    assert not c.kubectl("""patch deploy web -p '{"spec":{"template":{"spec":{"containers":[]}}}}'""").accepted
    assert "must be JSON or YAML" in c.kubectl("""patch deploy web --type merge -p '{oops'""").message
    ip = c.get("Service", "web")["spec"]["clusterIP"]
    moved = c.kubectl("""patch svc web --type merge -p '{"spec":{"clusterIP":"10.96.0.99"}}'""")
    assert not moved.accepted and "immutable" in moved.message and c.get("Service", "web")["spec"]["clusterIP"] == ip


def test_apply_creates_configures_and_reports_unchanged():
    c = cluster()
    text = "apply -f -\n" + "\n".join([
        "apiVersion: v1", "kind: Service", "metadata: {name: api}", "spec: {selector: {app: api}, ports: [{port: 80}]}"])
    assert c.kubectl(text).message == "service/api created"
    assert c.kubectl(text).message == "service/api unchanged"
    changed = text.replace("port: 80", "port: 81")
    assert c.kubectl(changed).message == "service/api configured"
    bad = c.kubectl("apply -f -\nkind: Deployment\nmetadata: {name: x}\nspec: {replicas: -1}")
    assert not bad.accepted and "spec.replicas" in bad.message
    assert not c.kubectl("apply -f -").accepted
    assert "must specify one of -f" in c.kubectl("apply\nkind: Service").message


def test_unknown_verbs_and_bad_quoting_are_refused_not_raised():
    c = cluster()
    assert "unsupported command" in c.kubectl("exec -it web -- sh").message
    assert "cannot parse" in c.kubectl("label pod 'x").message
    with pytest.raises(ValidationError):
        c.kubectl("")


def test_namespace_flag():
    c = Cluster()
    c.apply({"kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi"}}})
    c.apply({**web(1), "metadata": {"name": "web", "namespace": "shop"}})
    c.run(5)
    assert not c.kubectl("scale deploy/web --replicas=2").accepted
    assert c.kubectl("scale deploy/web --replicas=2 -n shop").accepted


def test_commands_in_the_timeline_replay_identically_and_fork():
    base = run_guide("self-heal")
    first = run_guide("self-heal", commands=((5, "scale deploy/web --replicas=6"),))
    again = run_guide("self-heal", commands=((5, "scale deploy/web --replicas=6"),))
    assert [len(f.pods) for f in first.frames] == [len(f.pods) for f in again.frames]
    assert [p["name"] for p in first.frames[-1].pods] == [p["name"] for p in again.frames[-1].pods]
    # before the command the fork is the guided scenario itself
    assert [p["name"] for p in first.frames[5].pods] == [p["name"] for p in base.frames[5].pods]
    assert first.frames[6].commands[0].accepted and first.frames[6].commands[0].t == 5
    assert any(text.startswith("$ kubectl scale") for _i, text in first.chapters)
    assert len(first.frames) >= 5 + 60 and len([p for p in first.frames[20].pods if p["active"]]) == 6
    forked = fork(((5, "scale deploy/web --replicas=6"), (30, "cordon node-0")), 20, "scale deploy/web --replicas=2")
    assert forked == ((5, "scale deploy/web --replicas=6"), (20, "scale deploy/web --replicas=2"))
    with pytest.raises(ValidationError):
        fork((), -1, "cordon node-0")


def test_scaling_a_paused_deployment_still_scales_but_does_not_roll_out():
    c = cluster()
    c.kubectl("rollout pause deploy/web")
    c.kubectl("set image deploy/web web=web:2")
    c.kubectl("scale deploy/web --replicas=5")
    c.run(10)
    pods = active(c)
    assert len(pods) == 5 and {p["spec"]["containers"][0]["image"] for p in pods} == {"web:1"}
    c.kubectl("rollout resume deploy/web")
    c.run(40)
    assert {p["spec"]["containers"][0]["image"] for p in active(c)} == {"web:2"} and len(active(c)) == 5


def test_more_refusals_and_set_image_on_a_pod():
    c = cluster()
    assert 'nodes "node-9" not found' in c.kubectl("uncordon node-9").message
    assert c.kubectl("uncordon node-0").message == "node/node-0 already uncordoned"
    assert "needs a node name" in c.kubectl("drain").message
    assert 'the server doesn\'t have a resource type "widgets"' in c.kubectl("delete widgets/x").message
    pod = active(c)[0]["metadata"]["name"]
    r = c.kubectl(f"set image pod/{pod} web=web:hotfix")
    assert r.accepted and r.message == f"pod/{pod} image updated"
    c.run(5)
    assert c.get("Pod", pod)["status"]["containerStatuses"][0]["image"] == "web:hotfix"   # the kubelet restarted it
    assert c.list("ReplicaSet")[0]["spec"]["template"]["spec"]["containers"][0]["image"] == "web:1"   # drift
    assert "rollout undo is not supported for pods" in c.kubectl(f"rollout undo pod/{pod}").message


def test_a_bad_grace_period_is_refused_not_raised():
    c = cluster()
    assert "--grace-period" in c.kubectl("drain node-0 --grace-period=abc").message
    assert "--grace-period" in c.kubectl(f"delete pod/{active(c)[0]['metadata']['name']} --grace-period=x").message
    r = c.kubectl(f"delete pod/{active(c)[0]['metadata']['name']} --grace-period=0")
    assert r.accepted
    c.run(1)
    assert len(active(c)) == 3      # gone at once and already replaced by the ReplicaSet
