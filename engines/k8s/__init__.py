"""Kubernetes controller loops simulated by the upstream rules (see assets/lessons/k8s.md).

Public API: ``Cluster(seed=0)`` (apply/delete/patch/run/get/list/events, ``kubectl(command)`` →
``CommandResult``, ``set_traffic``), ``hpa_desired_replicas`` (the HPA's rule), ``qos_class``,
``resolve_fenceposts``, ``oom_score_adj``; plus ``load_manifests`` for YAML, ``scenarios`` for
the guided lecture timelines, ``run_yaml`` for your own manifests, ``explain`` for the words a
frame is shown with, ``why`` for a describe-like walk of one object, ``client_view`` for what a
client connecting to a Service or a pod IP sees, and ``Params``, the panel's knobs.
"""
from engines.k8s.cluster import Cluster
from engines.k8s.hpa import hpa_desired_replicas
from engines.k8s.kubectl import CommandResult
from engines.k8s.network import client_view
from engines.k8s.why import Why, why
from engines.k8s.explain import PodExplanation, deployment_status, explain_pod, node_status
from engines.k8s.manifests import Manifest, load_manifests, validate
from engines.k8s.params import Params
from engines.k8s.rules import oom_score_adj, qos_class, resolve_fenceposts
from engines.k8s.yaml_run import (EXAMPLE_YAML, MAX_YAML_PODS, YAML_SECONDS, YamlCheck, YamlRun, check_yaml,
                                  pod_limit_error, run_yaml)

__all__ = ["Cluster", "CommandResult", "hpa_desired_replicas", "Why", "why", "client_view", "Manifest", "load_manifests", "validate", "oom_score_adj", "qos_class", "resolve_fenceposts",
           "Params", "PodExplanation", "explain_pod", "deployment_status", "node_status", "EXAMPLE_YAML",
           "MAX_YAML_PODS", "YAML_SECONDS", "YamlCheck", "YamlRun", "check_yaml", "pod_limit_error", "run_yaml"]
