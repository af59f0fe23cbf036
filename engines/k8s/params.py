"""The Kubernetes panel's knobs as data: which timeline is shown, your YAML, the pod explained."""
from __future__ import annotations

from dataclasses import dataclass

from engines.core.errors import require
from engines.k8s.scenarios import guide_keys
from engines.k8s.yaml_run import EXAMPLE_YAML, check_yaml
from engines.core.params import ParamsBase, param

MAX_POD_NAME = 253      # a DNS-1123 subdomain: metadata.name's limit


@dataclass(frozen=True)
class Params(ParamsBase):
    """The guided scenario chosen, whether your YAML's run is shown instead, your applied YAML
    (``""`` = the example the editor opens with) and the pod the requests-vs-limits tab explains
    (``""`` = the frame's first pod)."""

    scenario: str = param(guide_keys()[0], label="Guided scenario", choices=tuple(guide_keys()),
                          tip="A guided lecture scenario, played in a fresh simulated cluster")
    yaml_shown: bool = param(False, label="Show your YAML's run",
                             tip="True after Apply: the timeline is your manifests' run, not the guided scenario")
    yaml: str = ""
    pod: str = ""

    def __post_init__(self) -> None:
        super().__post_init__()
        require(isinstance(self.yaml, str), "yaml", f"expected text, got {type(self.yaml).__name__}")
        require(isinstance(self.pod, str) and len(self.pod) <= MAX_POD_NAME, "pod",
                f"expected a pod name of at most {MAX_POD_NAME} characters, got {self.pod!r:.60}")
        if self.yaml:
            check_yaml(self.yaml)     # a bad manifest is refused here, naming its field

    @property
    def manifests(self) -> str:
        """The YAML text to run: the applied text, or the example."""
        return self.yaml or EXAMPLE_YAML
