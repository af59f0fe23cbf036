"""Kubernetes controller loops simulated by the upstream rules (see assets/lessons/k8s.md).

Public API: ``Cluster(seed=0)`` (apply/delete/patch/run/get/list/events), ``qos_class``,
``resolve_fenceposts``, ``oom_score_adj``; plus ``load_manifests`` for YAML and
``scenarios`` for the guided lecture timelines.
"""
from engines.k8s.cluster import Cluster
from engines.k8s.manifests import Manifest, load_manifests, validate
from engines.k8s.rules import oom_score_adj, qos_class, resolve_fenceposts

__all__ = ["Cluster", "Manifest", "load_manifests", "validate", "oom_score_adj", "qos_class", "resolve_fenceposts"]
