"""The Kubernetes panel's knobs as data: which timeline is shown, your YAML, your cluster dump, the
commands you gave and the object explained."""
from __future__ import annotations

import json
from dataclasses import dataclass

from engines.core.errors import ValidationError, require
from engines.core.reading import load_json
from engines.core.params import ParamsBase, param
from engines.k8s.scenarios import Commands, check_commands, guide_keys
from engines.k8s.why import WHY_KINDS
from engines.k8s.yaml_run import EXAMPLE_YAML, check_yaml

MAX_POD_NAME = 253      # a DNS-1123 subdomain: metadata.name's limit
MAX_COMMANDS = 200      # commands kept in one timeline (each replays from t = 0)


@dataclass(frozen=True)
class Params(ParamsBase):
    """The guided scenario chosen, whether your YAML's run (or your dump's) is shown instead, your
    applied YAML (``""`` = the example the editor opens with), the dump file, your kubectl
    commands as a JSON list of [second, command] (replayed on every run of the timeline), the pod
    the requests-vs-limits tab explains (``""`` = the frame's first pod) and the object the Why?
    tab walks ("Kind/name", ``""`` = the selected pod)."""

    scenario: str = param(guide_keys()[0], label="Guided scenario", choices=tuple(guide_keys()),
                          tip="A guided lecture scenario, played in a fresh simulated cluster")
    yaml_shown: bool = param(False, label="Show your YAML's run",
                             tip="True after Apply: the timeline is your manifests' run, not the guided scenario")
    yaml: str = ""
    pod: str = ""
    dump_shown: bool = param(False, label="Show your cluster dump",
                             tip="True after opening a dump: the timeline replays its objects")
    dump: str = ""
    commands: str = ""
    why: str = ""

    def __post_init__(self) -> None:
        super().__post_init__()
        require(isinstance(self.yaml, str), "yaml", f"expected text, got {type(self.yaml).__name__}")
        require(isinstance(self.pod, str) and len(self.pod) <= MAX_POD_NAME, "pod",
                f"expected a pod name of at most {MAX_POD_NAME} characters, got {self.pod!r:.60}")
        require(isinstance(self.dump, str) and len(self.dump) <= 4096, "dump", "expected a file path")
        require(not self.dump_shown or bool(self.dump), "dump_shown", "no dump file is set", "open a dump first")
        require(isinstance(self.why, str) and len(self.why) <= MAX_POD_NAME + 30 and
                (not self.why or self.why.split("/", 1)[0] in WHY_KINDS), "why",
                f"expected Kind/name, got {self.why!r:.60}", ", ".join(f"{k}/…" for k in WHY_KINDS))
        if self.yaml:
            check_yaml(self.yaml)     # a bad manifest is refused here, naming its field
        self.command_list     # a bad command list is refused here

    @property
    def manifests(self) -> str:
        """The YAML text to run: the applied text, or the example."""
        return self.yaml or EXAMPLE_YAML

    @property
    def command_list(self) -> Commands:
        """The commands as (second, command) pairs."""
        if not isinstance(self.commands, str):
            raise ValidationError("commands", "expected JSON text")
        if not self.commands:
            return ()
        data = load_json(self.commands, "commands")     # deep nesting or a 5,000-digit number: named, refused
        if isinstance(data, list) and len(data) > MAX_COMMANDS:
            raise ValidationError("commands", f"{len(data)} commands", f"at most {MAX_COMMANDS}")
        return check_commands([tuple(x) if isinstance(x, list) else x for x in data] if isinstance(data, list) else data)


def encode_commands(commands: Commands) -> str:
    """The text ``Params.commands`` holds for these (second, command) pairs."""
    return json.dumps([[t, c] for t, c in check_commands(commands)]) if commands else ""
