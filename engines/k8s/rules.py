"""The upstream decision rules, as pure functions on Kubernetes-shaped dicts.

Every function names the kubernetes/kubernetes file it follows; the simulator's controllers call
these so that the panel, the tests and a live cluster view all share one rule engine.
"""
from __future__ import annotations

import math
import re
from functools import cmp_to_key
from typing import Iterable, Mapping

from engines.core.errors import ValidationError, require_int, require_number
from engines.k8s.quantity import parse_quantity, resource_amount

# --- constants with their upstream names -----------------------------------------------------
GUARANTEED_OOM_SCORE_ADJ = -997      # pkg/kubelet/qos/policy.go guaranteedOOMScoreAdj (older: -998)
BESTEFFORT_OOM_SCORE_ADJ = 1000      # policy.go besteffortOOMScoreAdj
DEFAULT_MILLI_CPU_REQUEST = 100      # pkg/scheduler/util GetNonzeroRequests: DefaultMilliCPURequest
DEFAULT_MEMORY_REQUEST = 200 * 2**20  # DefaultMemoryRequest, 200 MiB
MAX_NODE_SCORE = 100                 # framework.MaxNodeScore
POD_DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
INT32_MAX = 2**31 - 1                # IntOrString.IntVal, pod-deletion-cost and most API integers are int32
SYSTEM_PRIORITY_CLASSES = {"system-node-critical": 2000001000,      # pkg/apis/scheduling SystemPriorityClasses
                           "system-cluster-critical": 2000000000}
SYSTEM_CRITICAL_PRIORITY = 2000000000  # scheduling.SystemCriticalPriority = 2 × HighestUserDefinablePriority
_PERCENT = re.compile(r"[0-9]+%")    # apimachinery validation IsValidPercent: ASCII digits only
_DELETION_COST = re.compile(r"-[0-9]+|0|[1-9][0-9]*")   # validFirstDigit + strconv.ParseInt (no "+", no "007")
QOS_RESOURCES = ("cpu", "memory")    # qos.go supportedQoSComputeResources


# --- label selectors -------------------------------------------------------------------------
def selector_matches(selector: Mapping | None, labels: Mapping | None) -> bool:
    """``metav1.LabelSelectorAsSelector`` semantics: matchLabels AND every matchExpression.

    A plain ``{key: value}`` map (a Service's selector) is treated as matchLabels. An empty
    LabelSelector matches everything; a ``None`` selector matches nothing (as upstream).
    """
    if selector is None:
        return False
    if not _is_map(selector):
        raise ValidationError("selector", f"{selector!r} is not a label selector", _SELECTOR_SHAPE)
    if labels is None:
        labels = {}
    elif not _is_map(labels):
        raise ValidationError("labels", f"{labels!r} is not a label map", "a mapping of strings, e.g. {app: web}")
    if "matchLabels" in selector or "matchExpressions" in selector:
        match_labels = selector.get("matchLabels") or {}
        expressions = selector.get("matchExpressions") or []
        if not _is_map(match_labels):
            raise ValidationError("selector.matchLabels", f"{match_labels!r} is not a label map", "{app: web}")
        if not isinstance(expressions, list):
            raise ValidationError("selector.matchExpressions", f"{expressions!r} is not a list", f"[{_EXPRESSION_SHAPE}]")
    else:
        match_labels, expressions = selector, []
    if any(labels.get(k) != v for k, v in match_labels.items()):
        return False
    for i, expr in enumerate(expressions):
        # LabelSelectorAsSelector refuses a malformed requirement instead of guessing
        if not _is_map(expr):
            raise ValidationError(f"selector.matchExpressions[{i}]", f"{expr!r} is not a requirement", _EXPRESSION_SHAPE)
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if not isinstance(key, str):
            raise ValidationError(f"selector.matchExpressions[{i}].key", f"{key!r} is not a label key", "a string")
        if op not in _SELECTOR_OPERATORS:
            raise ValidationError(f"selector.matchExpressions[{i}].operator",
                                  f"{op!r} is not a valid label selector operator", ", ".join(_SELECTOR_OPERATORS))
        if not isinstance(values, (list, tuple)):
            raise ValidationError(f"selector.matchExpressions[{i}].values", f"{values!r} is not a list", "[web, api]")
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def _is_map(value: object) -> bool:
    return isinstance(value, dict) or isinstance(value, Mapping)


_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")   # metav1.LabelSelectorOperator
_EXPRESSION_SHAPE = "{key: app, operator: In, values: [web]}"
_SELECTOR_SHAPE = "a mapping: {app: web} or {matchLabels: {…}, matchExpressions: [{…}]}"


def match_labels_of(selector: Mapping | None) -> dict:
    """The equality part of a selector (used for index look-ups)."""
    if not selector:
        return {}
    if "matchLabels" in selector or "matchExpressions" in selector:
        return dict(selector.get("matchLabels") or {})
    return dict(selector)


# --- pod resources ---------------------------------------------------------------------------
def _spec(pod: Mapping) -> Mapping:
    if not isinstance(pod, Mapping):
        raise ValidationError("pod", "must be a Pod manifest (a mapping)", "a dict with spec.containers")
    spec = pod.get("spec", pod)
    if not isinstance(spec, Mapping) or not isinstance(spec.get("containers"), list):
        raise ValidationError("pod.spec.containers", "missing or not a list", "a list of containers")
    if not isinstance(spec.get("initContainers") or [], list):
        raise ValidationError("pod.spec.initContainers", "not a list", "a list of containers")
    return spec


def resource_list(value: object, field: str) -> dict[str, int]:
    """A ResourceList (``{cpu: 500m, memory: 1Gi}``) in canonical units; None is empty."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValidationError(field, "must be a mapping of resource names to quantities", "{cpu: 500m, memory: 1Gi}")
    for k in value:
        if not isinstance(k, str) or not k:
            raise ValidationError(field, f"{k!r} is not a resource name", "cpu, memory, nvidia.com/gpu, …")
    return {k: resource_amount(k, v, f"{field}.{k}") for k, v in value.items()}


def container_resources(container: Mapping, where: str | None = None) -> tuple[dict[str, int], dict[str, int]]:
    """(requests, limits) in canonical units, with the API server's default requests = limits.

    Defaulting: pkg/apis/core/v1/defaults.go SetDefaults_Pod copies each limit into a missing
    request, which is why "limits only" yields a Guaranteed pod. ``where`` prefixes error fields
    (default ``containers[<name>]``).
    """
    if not isinstance(container, Mapping):
        raise ValidationError(where or "container", f"{container!r} is not a container", "a mapping with name, image")
    where = where or f"containers[{container.get('name', '?')}]"
    res = container.get("resources") or {}
    if not isinstance(res, Mapping):
        raise ValidationError(f"{where}.resources", "must be a mapping", "{requests: {…}, limits: {…}}")
    limits = resource_list(res.get("limits"), f"{where}.resources.limits")
    requests = resource_list(res.get("requests"), f"{where}.resources.requests")
    for key, value in limits.items():
        requests.setdefault(key, value)
    return requests, limits


def pod_requests(pod: Mapping, non_zero: bool = False) -> dict[str, int]:
    """Effective pod request: Σ containers, max'ed with each init container, plus overhead.

    Source: pkg/api/v1/resource/helpers.go PodRequests (used by noderesources/fit.go). With
    ``non_zero`` a container without a cpu/memory request counts 100m / 200Mi
    (pkg/scheduler/util GetNonzeroRequests), which the scoring plugins use; one set explicitly
    to zero stays zero ("override if un-set, but not if explicitly set to zero").
    """
    spec = _spec(pod)
    total: dict[str, int] = {}
    for c in spec.get("containers") or []:
        req, _ = container_resources(c)
        if non_zero:
            req = {**req, "cpu": req.get("cpu", DEFAULT_MILLI_CPU_REQUEST),
                   "memory": req.get("memory", DEFAULT_MEMORY_REQUEST)}
        for k, v in req.items():
            total[k] = total.get(k, 0) + v
    for c in spec.get("initContainers") or []:
        req, _ = container_resources(c)
        for k, v in req.items():
            total[k] = max(total.get(k, 0), v)
    for k, v in resource_list(spec.get("overhead"), "spec.overhead").items():
        total[k] = total.get(k, 0) + v
    return total


def pod_limits(pod: Mapping) -> dict[str, int]:
    """Σ container limits (a resource without a limit in any container is absent)."""
    total: dict[str, int] = {}
    for c in _spec(pod).get("containers") or []:
        for k, v in container_resources(c)[1].items():
            total[k] = total.get(k, 0) + v
    return total


# --- QoS -------------------------------------------------------------------------------------
def qos_class(pod: dict) -> str:
    """``"Guaranteed" | "Burstable" | "BestEffort"`` by pkg/apis/core/v1/helper/qos/qos.go GetPodQOS.

    Only cpu and memory count. Guaranteed: every container (init included) has both cpu and memory
    limits and, per resource, Σ requests == Σ limits. BestEffort: no cpu/memory request or limit > 0.
    Requests default to limits first (the API server's defaulting), so "limits only" is Guaranteed.
    """
    spec = _spec(pod)
    requests: dict[str, int] = {}
    limits: dict[str, int] = {}
    guaranteed = True
    for where, c in [*((f"pod.spec.containers[{i}]", c) for i, c in enumerate(spec["containers"])),
                     *((f"pod.spec.initContainers[{i}]", c) for i, c in enumerate(spec.get("initContainers") or []))]:
        req, lim = container_resources(c, where)
        for k in QOS_RESOURCES:
            if req.get(k, 0) > 0:
                requests[k] = requests.get(k, 0) + req[k]
        found = set()
        for k in QOS_RESOURCES:
            if lim.get(k, 0) > 0:
                found.add(k)
                limits[k] = limits.get(k, 0) + lim[k]
        if found != set(QOS_RESOURCES):
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed:
        if any(limits.get(k) != v for k, v in requests.items()):
            guaranteed = False
    if guaranteed and len(requests) == len(limits):
        return "Guaranteed"
    return "Burstable"


def is_node_critical(pod: Mapping) -> bool:
    """pkg/kubelet/types/pod_update.go IsNodeCriticalPod: priorityClassName system-node-critical
    (which the Priority admission plugin resolves to the critical priority 2000001000).
    system-cluster-critical pods are critical but not *node*-critical: they keep their QoS score."""
    return (pod.get("spec") or {}).get("priorityClassName") == "system-node-critical"


def is_critical(pod: Mapping) -> bool:
    """pkg/kubelet/types/pod_update.go IsCriticalPod, for the pods this simulation has (no static or
    mirror pods): priority ≥ SystemCriticalPriority, i.e. both system priority classes. The kubelet's
    eviction manager never evicts such a pod (eviction_manager.go evictPod: "cannot evict a critical
    pod") and tries the next one in the ranking instead."""
    return pod_priority(pod) >= SYSTEM_CRITICAL_PRIORITY


def oom_score_adj(pod: dict, node_memory_bytes: int, container: str | None = None) -> int:
    """The ``oom_score_adj`` the kubelet gives a container (pkg/kubelet/qos/policy.go
    GetContainerOOMScoreAdjust).

    Node-critical pods −997 (``is_node_critical``), then by QoS: Guaranteed −997, BestEffort 1000,
    Burstable ``1000 − 1000·memRequest/capacity`` (integer division) clamped below at
    ``1000 + guaranteedOOMScoreAdj`` (= 3) and 1000 mapped to 999. The docs' table writes the floor
    as 2, left from the older −998 constant. Upstream scores each container by *its own* memory
    request; ``container`` names one, and without it the pod's main (first app) container is
    scored; pod overhead and init containers never count.
    """
    capacity = require_int(node_memory_bytes, "node_memory_bytes", 1)
    spec = _spec(pod)
    if container is None:
        if not spec["containers"]:
            raise ValidationError("pod.spec.containers", "the pod has no container to score", "at least one container")
        main = spec["containers"][0]
    else:
        match = [c for c in spec["containers"] if isinstance(c, Mapping) and c.get("name") == container]
        if not match:
            raise ValidationError("container", f"no container named {container!r}",
                                  ", ".join(str(c.get("name", "?")) for c in spec["containers"] if isinstance(c, Mapping)))
        main = match[0]
    cls = qos_class(pod)
    if is_node_critical(pod) or cls == "Guaranteed":
        return GUARANTEED_OOM_SCORE_ADJ
    if cls == "BestEffort":
        return BESTEFFORT_OOM_SCORE_ADJ
    request = container_resources(main)[0].get("memory", 0)
    adj = 1000 - (1000 * request) // capacity
    if adj < 1000 + GUARANTEED_OOM_SCORE_ADJ:
        return 1000 + GUARANTEED_OOM_SCORE_ADJ
    if adj == BESTEFFORT_OOM_SCORE_ADJ:
        return adj - 1
    return adj


# --- rolling-update fenceposts ---------------------------------------------------------------
def scaled_int_or_percent(value: object, total: int, round_up: bool, field: str) -> int:
    """apimachinery intstr.GetScaledValueFromIntOrPercent: "25%" of total, ceil or floor. Percentages
    are ASCII ``[0-9]+%`` only, as the API validation (IsValidPercent) admits: not "５%" or "+5%"."""
    if isinstance(value, bool):
        raise ValidationError(field, f"{value!r} is not an int or percentage", "an integer ≥ 0 or 'N%'")
    if isinstance(value, int):
        if value < 0:
            raise ValidationError(field, f"{value} is negative", "an integer ≥ 0 or 'N%'")
        if value > INT32_MAX:
            raise ValidationError(field, f"{value} is too large (an int32)", f"an integer 0…{INT32_MAX} or 'N%'")
        return value
    if isinstance(value, str) and _PERCENT.fullmatch(value):
        percent = int(value[:-1])
        return -(-percent * total // 100) if round_up else percent * total // 100
    raise ValidationError(field, f"{value!r} is not an int or percentage", "an integer ≥ 0 or 'N%' (e.g. '25%')")


def resolve_fenceposts(replicas: int, max_surge: int | str, max_unavailable: int | str) -> tuple[int, int]:
    """(surge, unavailable) by pkg/controller/deployment/util/deployment_util.go ResolveFenceposts.

    maxSurge percentages round up, maxUnavailable percentages round down, and if both come out 0
    unavailable is forced to 1 so the rollout can make progress.
    """
    replicas = require_int(replicas, "replicas", 0)
    surge = scaled_int_or_percent(max_surge, replicas, True, "maxSurge")
    unavailable = scaled_int_or_percent(max_unavailable, replicas, False, "maxUnavailable")
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def max_unavailable(replicas: int, max_surge: int | str, max_unavailable_: int | str) -> int:
    """deployment_util.go MaxUnavailable: the resolved value capped at ``replicas``."""
    return min(resolve_fenceposts(replicas, max_surge, max_unavailable_)[1], replicas)


# --- pod predicates --------------------------------------------------------------------------
def condition(obj: Mapping, kind: str) -> Mapping | None:
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == kind:
            return c
    return None


def is_pod_ready(pod: Mapping) -> bool:
    c = condition(pod, "Ready")
    return bool(c) and c.get("status") == "True"


def ready_since(pod: Mapping) -> float | None:
    c = condition(pod, "Ready")
    return c.get("lastTransitionTime") if c and c.get("status") == "True" else None


def is_pod_available(pod: Mapping, min_ready_seconds: float, now: float) -> bool:
    """podutil.IsPodAvailable: Ready for at least minReadySeconds."""
    return available_since(ready_since(pod), min_ready_seconds, now)


def available_since(since: float | None, min_ready_seconds: float, now: float) -> bool:
    """IsPodAvailable given when the pod became Ready (None: not Ready)."""
    return since is not None and (min_ready_seconds == 0 or since + min_ready_seconds <= now)


def is_active(pod: Mapping) -> bool:
    """controller_utils.go IsPodActive: not Succeeded, not Failed, no deletionTimestamp."""
    phase = (pod.get("status") or {}).get("phase")
    return phase not in ("Succeeded", "Failed") and not pod["metadata"].get("deletionTimestamp")


def max_restarts(pod: Mapping) -> int:
    return max([c.get("restartCount", 0) for c in (pod.get("status") or {}).get("containerStatuses") or []] or [0])


# --- ReplicaSet deletion ranking -------------------------------------------------------------
_PHASE_ORDINAL = {"Pending": 0, "Unknown": 1, "Running": 2}


def _log_rank(t: float | None, now: float) -> int:
    """controller_utils.go logarithmicRankDiff: floor(log2(age in ns)), −1 for age ≤ 0."""
    if t is None:
        return -1
    age_ns = (now - t) * 1e9
    return int(math.log2(age_ns)) if age_ns > 0 else -1


def deletion_cost(annotations: Mapping | None, field: str = "metadata.annotations") -> int:
    """The pod-deletion-cost annotation as an int32 (0 when absent): pkg/api/pod
    GetDeletionCostFromPodAnnotations, checked at admission by ValidatePodSpecificAnnotations."""
    value = (annotations or {}).get(POD_DELETION_COST)
    if value is None:
        return 0
    if (not isinstance(value, str) or len(value) > 11 or not _DELETION_COST.fullmatch(value)
            or not -INT32_MAX - 1 <= int(value) <= INT32_MAX):
        raise ValidationError(f"{field}.{POD_DELETION_COST}", f"{value!r} is not a 32-bit integer",
                              f"a decimal integer string {-INT32_MAX - 1}…{INT32_MAX}, e.g. '-100'")
    return int(value)


def _deletion_facts(pod: Mapping, rank: int, now: float) -> tuple:
    """What ActivePodsWithRanks.Less reads of one pod, extracted once so a sort of thousands of
    pods does not re-walk every pod's conditions for each comparison."""
    spec, meta = pod.get("spec") or {}, pod["metadata"]
    ready_at = ready_since(pod)
    created = meta.get("creationTimestamp")
    return (spec.get("nodeName") or "", _PHASE_ORDINAL.get((pod.get("status") or {}).get("phase"), 0),
            is_pod_ready(pod), deletion_cost(meta.get("annotations")), rank,
            meta.get("uid", ""), ready_at, _log_rank(ready_at, now), max_restarts(pod), created, _log_rank(created, now))


def _facts_less(a: tuple, b: tuple) -> bool:
    na, pa, ra, ca, rank_a, uid_a, ta, la, ma, cta, cla = a
    nb, pb, rb, cb, rank_b, uid_b, tb, lb, mb, ctb, clb = b
    if na != nb and (not na or not nb):
        return not na
    if pa != pb:
        return pa < pb
    if ra != rb:
        return not ra
    if ca != cb:
        return ca < cb
    if rank_a != rank_b:
        return rank_a > rank_b
    if ra and rb and ta != tb:
        return uid_a < uid_b if la == lb else la < lb
    if ma != mb:
        return ma > mb
    if cta != ctb:
        return uid_a < uid_b if cla == clb else cla < clb
    return False


def deletion_less(a: Mapping, rank_a: int, b: Mapping, rank_b: int, now: float) -> bool:
    """controller_utils.go ActivePodsWithRanks.Less with LogarithmicScaleDown (on by default).

    The first rule that distinguishes the pods decides: unassigned first; Pending < Unknown <
    Running; not Ready first; lower pod-deletion-cost; higher rank (more related pods on the
    node); both Ready: Ready for less time (log2 buckets of the age in ns, equal bucket → UID);
    more container restarts; newer creationTimestamp (log2 buckets, equal bucket → UID).
    """
    return _facts_less(_deletion_facts(a, rank_a, now), _deletion_facts(b, rank_b, now))


def pods_to_delete(pods: list[Mapping], related: Iterable[Mapping], diff: int, now: float) -> list[Mapping]:
    """replica_set.go getPodsToDelete: rank by related pods on the same node, sort, take ``diff``."""
    if diff >= len(pods):
        return list(pods)
    per_node: dict[str, int] = {}
    for p in related:
        if is_active(p):
            node = (p.get("spec") or {}).get("nodeName", "")
            per_node[node] = per_node.get(node, 0) + 1
    ranked = [(p, _deletion_facts(p, per_node.get((p.get("spec") or {}).get("nodeName", ""), 0), now)) for p in pods]

    def compare(x, y) -> int:
        if _facts_less(x[1], y[1]):
            return -1
        return 1 if _facts_less(y[1], x[1]) else 0

    ranked.sort(key=cmp_to_key(compare))
    return [p for p, _ in ranked[:diff]]


# --- kubelet eviction ranking ----------------------------------------------------------------
def pod_priority(pod: Mapping) -> int:
    """spec.priority, else the value the Priority admission plugin gives a system priorityClassName
    (plugin/pkg/admission/priority), else 0."""
    spec = pod.get("spec") or {}
    if spec.get("priority") is not None:
        return spec["priority"]
    return SYSTEM_PRIORITY_CLASSES.get(spec.get("priorityClassName"), 0)


def eviction_sort_key(pod: Mapping, usage_bytes: int | None) -> tuple:
    """pkg/kubelet/eviction/helpers.go rankMemoryPressure = orderedBy(exceedMemoryRequests,
    priority, memory): pods without stats first, then usage > request, then lower priority,
    then larger usage − request. QoS is not a comparator. ``usage_bytes``: the pod's working set
    (None: no stats)."""
    if usage_bytes is not None:
        require_number(usage_bytes, "usage_bytes", 0)
    request = pod_requests(pod).get("memory", 0)
    priority = pod_priority(pod)
    if usage_bytes is None:
        return (0, 0, priority, 0)
    exceeds = usage_bytes > request
    return (1, 0 if exceeds else 1, priority, -(usage_bytes - request))


# --- scheduler scoring -----------------------------------------------------------------------
def least_allocated_score(requested: Mapping[str, int], allocatable: Mapping[str, int]) -> int:
    """noderesources/least_allocated.go: mean over cpu, memory of (alloc − req)·100/alloc (a
    resource the node has none of is left out)."""
    return node_scores(requested.get("cpu", 0), requested.get("memory", 0),
                       allocatable.get("cpu", 0), allocatable.get("memory", 0))[0]


def balanced_allocation_score(requested: Mapping[str, int], allocatable: Mapping[str, int]) -> int:
    """noderesources/balanced_allocation.go: (1 − std of the cpu and memory fractions)·100,
    with std = |f_cpu − f_mem| / 2 for two resources and fractions capped at 1."""
    return node_scores(requested.get("cpu", 0), requested.get("memory", 0),
                       allocatable.get("cpu", 0), allocatable.get("memory", 0))[1]


def node_scores(cpu: int, memory: int, cpu_cap: int, memory_cap: int, real_cpu: int | None = None,
                real_memory: int | None = None, balanced: bool = True) -> tuple[int, int]:
    """(LeastAllocated, BalancedAllocation) for requested cpu/memory against allocatable: the two
    scores above on plain numbers, because the scheduler evaluates them for every node and pod.

    As in noderesources/resource_allocation.go: LeastAllocated takes the non-zero requests
    (``cpu``, ``memory``: 100m / 200Mi for an unset request), BalancedAllocation the requests as
    written (``real_*``, default the same; ``useRequested``); a resource of which the node has no
    allocatable is left out of both. ``balanced=False`` is a BestEffort pod, for which
    BalancedAllocation's PreScore returns Skip (kubernetes#129138): it scores 0 on every node."""
    parts = [(r, c) for r, c in ((cpu, cpu_cap), (memory, memory_cap)) if c]
    least = sum(0 if r > c else (c - r) * MAX_NODE_SCORE // c for r, c in parts) // len(parts) if parts else 0
    if not balanced:
        return least, 0
    real = ((cpu if real_cpu is None else real_cpu, cpu_cap), (memory if real_memory is None else real_memory, memory_cap))
    fractions = [min(r / c, 1.0) for r, c in real if c]
    std = abs(fractions[0] - fractions[1]) / 2 if len(fractions) == 2 else 0.0
    return least, int((1 - std) * MAX_NODE_SCORE)


def is_best_effort_request(requests: Mapping[str, int]) -> bool:
    """BalancedAllocation's isBestEffortPod: the pod requests no cpu and no memory."""
    return not requests.get("cpu", 0) and not requests.get("memory", 0)


def parse_allocatable(status: Mapping, field: str = "status.allocatable") -> dict[str, int]:
    """Node allocatable in canonical units (cpu in millicores)."""
    alloc = status.get("allocatable") or {}
    return {k: resource_amount(k, v, f"{field}.{k}") for k, v in alloc.items()}


def quantity_bytes(value: object, field: str) -> int:
    return math.ceil(parse_quantity(value, field))
