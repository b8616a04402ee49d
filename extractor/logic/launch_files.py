"""Launch commands found where deployments keep them: shell scripts, Dockerfiles, YAML manifests, and
SGLang's own `--config` files.

Pure functions from a file's text to the SGLang launch commands in it, each with the line it starts
on; `commands.check` reads the files. A command is one that names SGLang's launcher
(`sglang.launch_server`, `launch_server.py`, `sglang serve`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .launch_words import ENV_ASSIGNMENT, launch_words, runs_launcher

if TYPE_CHECKING:  # YAML's reader is imported where a YAML file is read: scripts alone do not need it
    import yaml

_NAMES_LAUNCHER = re.compile(r"sglang\.launch_server|launch_server\.py|\bsglang\s+serve\b")
_DOCKER_INSTRUCTION = re.compile(r"^\s*(CMD|ENTRYPOINT|RUN|ENV|FROM)\s+(.*)$", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class FoundCommand:
    line: int  # 1-based line where the command starts
    argv: tuple[str, ...]  # one pasted string (shell form) or the words (exec form)


def file_kind(name: str) -> str:
    lower = name.lower()
    if lower.endswith((".yaml", ".yml")):
        return "yaml"
    if lower.rsplit("/", 1)[-1].startswith(("dockerfile", "containerfile")) or lower.endswith(".dockerfile"):
        return "dockerfile"
    return "shell"


def launch_commands(text: str, kind: str) -> list[FoundCommand]:
    """The launch commands of a file's text; `kind` from `file_kind`."""
    if kind == "yaml":
        filled = _template_values_filled(text)
        return list(_yaml_commands(filled)) if filled is not None else []
    if kind == "dockerfile":
        return list(_dockerfile_commands(text))
    return list(_shell_commands(text))


# A Helm chart's manifest is a Go template: `{{ .Values.model }}` where a value goes, `{{- if ... }}`,
# `{{ include ... }}` and the like where lines come and go. A template whose directives are all values
# reads as YAML once each is a placeholder (`$(.Values.model)`: a value unknown here, as a shell's
# `$(...)`); one that decides its own lines is not read: what it launches depends on the values.
_DIRECTIVE = re.compile(r"\{\{-?(.*?)-?\}\}", re.DOTALL)


def _template_values_filled(text: str) -> str | None:
    """The text with each template value a placeholder (itself when it is no template); None when a
    directive decides the text's lines (a condition, a loop, an include)."""
    if "{{" not in text:
        return text
    parts, at = [], 0
    for match in _DIRECTIVE.finditer(text):
        inner = match.group(1).strip()
        if inner.startswith("/*"):  # a comment
            filled = ""
        elif inner.startswith((".", "$")) and "\n" not in inner:
            filled = "$(" + inner.replace('"', "'") + ")"
        else:
            return None
        parts += [text[at:match.start()], filled]
        at = match.end()
    return "".join(parts) + text[at:]


def unread_reason(text: str, kind: str) -> str | None:
    """Why a file that gave no launch command (`launch_commands`) but names SGLang's launcher was not
    read, when it is a YAML file `check` cannot read (a template that decides its own lines, or no
    YAML at all); None otherwise."""
    if kind != "yaml" or not _NAMES_LAUNCHER.search(text):
        return None
    if _template_values_filled(text) is None:
        return "a template whose {{ }} directives decide its lines (conditions, loops, includes): " \
               "check what it renders (`helm template CHART > rendered.yaml`)"
    import yaml

    try:
        list(yaml.safe_load_all(text))
    except yaml.YAMLError as error:
        return f"not YAML: {str(error).splitlines()[0]}"
    return None


# SGLang's `--config` file (`sglang serve --config FILE`): a YAML mapping of option names to values. One
# that names the model is a launch of its own; other YAML (a CI workflow, a vLLM config's `model:`) is not:
# SGLang needs `model-path`, and no other tool's file names it so (`model_path` is SGLang's refused spelling).
_CONFIG_MODEL_KEYS = ("model-path", "model_path")


def server_config(text: str) -> bool:
    """Whether a YAML file's text is SGLang's `--config` file: one document, a mapping naming the model."""
    import yaml

    try:
        documents = list(yaml.safe_load_all(text))
    except yaml.YAMLError:
        return False
    return len(documents) == 1 and isinstance(documents[0], dict) and \
        any(key in documents[0] for key in _CONFIG_MODEL_KEYS)


# A Kubernetes manifest's files: a ConfigMap's keys, each a file in the folder a container mounts a volume
# of it at (`items` choosing keys and their paths; `subPath` mounting one file at `mountPath` itself). A
# launch's `--config /etc/sglang/serve.yaml` is then read as the pod reads it, not as missing here.


@dataclass(frozen=True)
class ConfigMount:
    path: str  # `mountPath`
    config_map: str
    sub_path: str | None  # one item mounted at `path` itself
    items: tuple[tuple[str, str], ...] | None  # (key, path in the folder), when the volume lists them


def config_maps(text: str) -> dict[str, dict[str, str]]:
    """The text's ConfigMaps: by name, their `data` (a key's text)."""
    found: dict[str, dict[str, str]] = {}
    for document in _documents(text):
        if isinstance(document, dict) and document.get("kind") == "ConfigMap" and \
                isinstance(metadata := document.get("metadata"), dict) and isinstance(metadata.get("name"), str):
            data = document.get("data") if isinstance(document.get("data"), dict) else {}
            found[metadata["name"]] = {str(k): v for k, v in data.items() if isinstance(v, str)}
    return found


def config_mounts(text: str) -> list[ConfigMount]:
    """Every mount of a ConfigMap volume by a container of a pod spec of the text (Deployments,
    StatefulSets, LeaderWorkerSets: wherever a mapping lists `containers`)."""
    found: list[ConfigMount] = []
    for spec in _pod_specs(_documents(text)):
        volumes = {v["name"]: v["configMap"] for v in spec.get("volumes") or () if isinstance(v, dict)
                   and isinstance(v.get("name"), str) and isinstance(v.get("configMap"), dict)
                   and isinstance(v["configMap"].get("name"), str)}
        for container in [*(spec.get("containers") or ()), *(spec.get("initContainers") or ())]:
            for mount in container.get("volumeMounts") or () if isinstance(container, dict) else ():
                if not isinstance(mount, dict) or mount.get("name") not in volumes or \
                        not isinstance(mount.get("mountPath"), str):
                    continue
                volume = volumes[mount["name"]]
                items = tuple((str(i.get("key")), str(i.get("path"))) for i in volume.get("items") or ()
                              if isinstance(i, dict)) if isinstance(volume.get("items"), list) else None
                sub_path = mount.get("subPath") if isinstance(mount.get("subPath"), str) else None
                found.append(ConfigMount(mount["mountPath"], volume["name"], sub_path, items))
    return found


def mounted_files(mounts: list[ConfigMount], maps: dict[str, dict[str, str]]) -> dict[str, str]:
    """The files the mounts put where the launch runs, by path, with the text their ConfigMap gives."""
    found: dict[str, str] = {}
    for mount in mounts:
        data = maps.get(mount.config_map)
        if data is None:
            continue  # defined elsewhere: not known here
        paths = dict(mount.items) if mount.items is not None else {key: key for key in data}  # key -> path
        for key, path in paths.items():
            if key not in data:
                continue
            if mount.sub_path is None:
                found.setdefault(mount.path.rstrip("/") + "/" + path, data[key])
            elif mount.sub_path == path:
                found.setdefault(mount.path, data[key])
    return found


def _documents(text: str) -> list[object]:
    import yaml

    filled = _template_values_filled(text)  # a Helm template's values as placeholders
    try:
        return list(yaml.safe_load_all(filled)) if filled is not None else []
    except yaml.YAMLError:
        return []


def _pod_specs(node: object) -> Iterator[dict]:
    if isinstance(node, dict):
        if isinstance(node.get("containers"), list):
            yield node
        for value in node.values():
            yield from _pod_specs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _pod_specs(item)


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """Lines with their continuations (a trailing backslash, also before a `# comment`) joined."""
    start, parts = 0, []
    for number, line in enumerate(text.splitlines(), 1):
        if not parts:
            start = number
        stripped = line.rstrip()
        continued = stripped.endswith("\\") or re.search(r"\\\s+#", stripped) is not None
        parts.append(line)
        if not continued and not (parts[:-1] and stripped.lstrip().startswith("#")):
            yield start, "\n".join(parts)
            parts = []
    if parts:
        yield start, "\n".join(parts)


def _shell_commands(text: str, environment: dict[str, str] | None = None) -> Iterator[FoundCommand]:
    """The launch commands of a script, each with the script's own variables set before it (and those
    of the `environment` it runs in) filled in."""
    known: dict[str, str] = dict(environment or {})
    for line, logical in _logical_lines(text):
        if logical.lstrip().startswith("#"):
            continue
        if _NAMES_LAUNCHER.search(logical):
            yield FoundCommand(line, (_expanded(logical, known),))
        elif (assigned := _ASSIGNMENT.match(logical)) is not None:
            _assign(known, assigned, logical)


# A script's own variables (`MODEL=Qwen/Qwen3-8B` ... `--model-path $MODEL`), as the shell running it
# fills them in: an assignment of a literal at the start of a line, in file order, the last one before
# the launch. An indented one (in an `if` or a loop, which may not run) or one of a computed value
# (`$(...)`, `${MODEL:-...}`: what the environment says) leaves the variable unknown, a placeholder.
_ASSIGNMENT = re.compile(r"(\s*)(?:export\s+|readonly\s+|declare\s+(?:-\w+\s+)?)?([A-Za-z_]\w*)=")
_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))")


def _assign(known: dict[str, str], assigned: re.Match, logical: str) -> None:
    from .shell import shell_words

    indent, name = assigned.group(1), assigned.group(2)
    known.pop(name, None)
    try:
        words = shell_words(_expanded(logical, known))
    except ValueError:
        return
    words = [w for w in words if w not in ("export", "readonly", "declare") and not w.startswith("-")]
    if indent or len(words) != 1 or not words[0].startswith(f"{name}=") or "$" in words[0] or "`" in words[0]:
        return
    known[name] = words[0][len(name) + 1:]


def _expanded(text: str, known: dict[str, str]) -> str:
    """`$NAME` and `${NAME}` of the known variables filled in where the shell would (not in single
    quotes), quoted so that the value stays one word."""
    import shlex

    out: list[str] = []
    i, double = 0, False
    while i < len(text):
        c = text[i]
        found = _VARIABLE.match(text, i) if c == "$" else None
        if c == "'" and not double and (end := text.find("'", i + 1)) >= 0:
            out.append(text[i:end + 1])
            i = end + 1
        elif c == "\\":
            out.append(text[i:i + 2])
            i += 2
        elif found is not None and (found.group(1) or found.group(2)) in known:
            value = known[found.group(1) or found.group(2)]
            out.append(re.sub(r'(["\\$`])', r"\\\1", value) if double else shlex.quote(value))
            i = found.end()
        else:
            double = not double if c == '"' else double
            out.append(c)
            i += 1
    return "".join(out)


def _dockerfile_commands(text: str) -> Iterator[FoundCommand]:
    """`CMD`, `ENTRYPOINT` and `RUN` instructions that run the launcher, with the stage's `ENV` before
    them as the launch's environment. An exec-form `ENTRYPOINT` that names the launcher runs with its
    stage's last exec-form `CMD` as its arguments (`ENTRYPOINT ["python3", "-m", "sglang.launch_server"]`
    then `CMD ["--model-path", ...]`), as Docker runs them."""
    stages: list[list[tuple[int, str, str]]] = []  # (line, instruction, body) of each `FROM` stage
    for line, logical in _logical_lines(text):
        match = _DOCKER_INSTRUCTION.match(logical)
        if match is not None:
            instruction = match.group(1).upper()
            if instruction == "FROM" or not stages:
                stages.append([])
            stages[-1].append((line, instruction, match.group(2).strip()))
    for stage in stages:
        arguments = next((words for _, instruction, body in reversed(stage) if instruction == "CMD"
                          for words in (_exec_words(body),)), None)
        env: list[str] = []
        for line, instruction, body in stage:
            if instruction == "ENV":
                env += _docker_env(body)
                continue
            if instruction == "FROM" or not _NAMES_LAUNCHER.search(body):
                continue
            words = _exec_words(body)
            if words is None:  # shell form: `/bin/sh -c` runs it
                yield FoundCommand(line, _with_environment((body,), env))
                continue
            if instruction == "ENTRYPOINT" and arguments and not _NAMES_LAUNCHER.search(" ".join(arguments)):
                words = [*words, *arguments]
            yield FoundCommand(line, (*env, *words))


def _exec_words(body: str) -> list[str] | None:
    """An instruction's exec form, a JSON array of words; None for the shell form."""
    if not body.startswith("["):
        return None
    try:
        words = json.loads(body.replace("\\\n", " "))
    except ValueError:
        return None
    return words if isinstance(words, list) and all(isinstance(w, str) for w in words) else None


def _docker_env(body: str) -> list[str]:
    """`ENV NAME=VALUE ...` (or the older `ENV NAME VALUE`) as assignments; a value that names another
    variable (`$PATH`) is left out: unknown here."""
    from .shell import shell_words

    try:
        words = [w for w in shell_words(body) if isinstance(w, str)]
    except ValueError:
        return []
    if words and "=" not in words[0]:  # `ENV NAME the rest is the value`
        words = [f"{words[0]}={' '.join(words[1:])}"] if len(words) > 1 else []
    return [w for w in words if ENV_ASSIGNMENT.match(w) and "$" not in w]


def _yaml_commands(text: str) -> Iterator[FoundCommand]:
    """`command:`/`args:` lists (Kubernetes, docker-compose, LWS) and script strings (SkyPilot `run:`,
    `command: |`) anywhere in the documents."""
    import yaml

    try:
        loader = yaml.SafeLoader(text)
        try:
            while loader.check_node():
                yield from _yaml_node_commands(loader.get_node())
        finally:
            loader.dispose()
    except yaml.YAMLError:
        return


def _yaml_node_commands(node: yaml.Node) -> Iterator[FoundCommand]:
    import yaml

    if isinstance(node, yaml.MappingNode):
        pairs = {key.value: value for key, value in node.value if isinstance(key, yaml.ScalarNode)}
        command, args = pairs.get("command"), pairs.get("args")
        env = _container_env(pairs.get("env"))
        words = _k8s_expanded(_strings(command), env) if isinstance(command, yaml.SequenceNode) else None
        started = _compose_words(pairs.get("entrypoint"))
        if started is not None and _NAMES_LAUNCHER.search(" ".join(started)):
            # docker-compose: the container runs `entrypoint` followed by `command` (SGLang's own
            # docker/compose.yaml names the launcher in one and its options in the other), with its
            # `environment`.
            yield FoundCommand(pairs["entrypoint"].start_mark.line + 1, (
                *_compose_environment(pairs.get("environment")), *started, *(_compose_words(command) or [])))
            handled = {"entrypoint", "command"}
        elif "environment" in pairs and isinstance(command, yaml.ScalarNode) and command.style not in ("|", ">") \
                and (words := _compose_words(command)) and _NAMES_LAUNCHER.search(" ".join(words)):
            # A docker-compose `command` string with the service's `environment`.
            yield FoundCommand(command.start_mark.line + 1, (*_compose_environment(pairs["environment"]), *words))
            handled = {"command"}
        elif words is not None and _NAMES_LAUNCHER.search(" ".join(words)):
            extra = _k8s_expanded(_strings(args), env) if isinstance(args, yaml.SequenceNode) else []
            if len(words) >= 2 and words[-2] in ("-c", "-lc") and not extra:  # `["sh", "-c", "python -m ..."]`
                yield from _script(words[-1], command.start_mark.line + 1, env)
            else:
                # Its `env` entries of a literal value are the launch's environment too.
                yield FoundCommand(command.start_mark.line + 1, (*_assignments(env), *words, *(extra or [])))
            handled = {"command", "args"}
        elif isinstance(command, yaml.SequenceNode) and isinstance(args, yaml.SequenceNode):
            joined = _k8s_expanded(_strings(args), env) or []
            if joined and _NAMES_LAUNCHER.search(" ".join(joined)):  # `command: [sh, -c]`, `args: ["python ..."]`
                yield from _script(joined[-1], args.start_mark.line + 1, env)
            handled = {"command", "args"}
        else:
            handled = set()
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value in handled:
                continue
            yield from _yaml_node_commands(value)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            yield from _yaml_node_commands(item)
    elif isinstance(node, yaml.ScalarNode) and isinstance(node.value, str) and _NAMES_LAUNCHER.search(node.value):
        yield from _script(node.value, node.start_mark.line + 1 + (1 if node.style in ("|", ">") else 0))


def _compose_words(node: object) -> list[str] | None:
    """A docker-compose `entrypoint` or `command`: a list as written, a string split into words as
    Compose splits it (shell quoting, no shell: `&&` is a word); None when it is neither."""
    import shlex

    import yaml

    if isinstance(node, yaml.SequenceNode):
        return _strings(node)
    if isinstance(node, yaml.ScalarNode) and isinstance(node.value, str):
        try:
            return shlex.split(node.value)
        except ValueError:  # an unbalanced quote: the words as written
            return node.value.split()
    return None


def _compose_environment(node: object) -> list[str]:
    """A docker-compose service's `environment` (a mapping, or a list of NAME=VALUE) as assignments
    before the command, the launch's environment; a value Compose fills in from elsewhere (`${X}`), or
    a name without a value (taken from the shell running Compose), is left out: unknown here."""
    import yaml

    found = []
    if isinstance(node, yaml.MappingNode):
        found = [f"{key.value}={value.value}" for key, value in node.value if isinstance(key, yaml.ScalarNode)
                 and isinstance(value, yaml.ScalarNode) and value.tag != "tag:yaml.org,2002:null"]
    elif isinstance(node, yaml.SequenceNode):
        found = [item.value for item in node.value if isinstance(item, yaml.ScalarNode) and "=" in item.value]
    return [item for item in found if ENV_ASSIGNMENT.match(item) and "$" not in item]


def _script(text: str, first_line: int, environment: dict[str, str] | None = None) -> Iterator[FoundCommand]:
    """The launch commands of a script a container runs (`sh -c`), with its `environment` filled in for
    `$NAME` and, when it has any, given to the launch as its environment: the launch's words then, as
    the shell runs them, after those assignments (a chain's other commands, `cd /srv &&`, dropped)."""
    assigned = _assignments(environment or {})
    for found in _shell_commands(text, environment):
        yield FoundCommand(first_line + found.line - 1, _with_environment(found.argv, assigned))


def _assignments(env: dict[str, str]) -> list[str]:
    """A container's env entries as `NAME=VALUE` before the launch: those a shell could name (Kubernetes
    allows dots and dashes) and whose value names no other entry (`$(OTHER)`, filled in at run time)."""
    return [f"{name}={value}" for name, value in env.items() if ENV_ASSIGNMENT.match(f"{name}=") and "$(" not in value]


def _with_environment(argv: tuple[str, ...], assigned: list[str]) -> tuple[str, ...]:
    if not assigned:
        return argv
    words = launch_words(argv)
    return (*assigned, *words) if runs_launcher(words) else argv


# A Kubernetes container's `env` entries of a literal `value` (not `valueFrom`, read at run time): what
# Kubernetes fills in for `$(NAME)` in its command and args (`$$(NAME)` stays as written), and what
# the shell an `sh -c` script runs in has in its environment.
_K8S_REFERENCE = re.compile(r"\$(\$)?\(([A-Za-z_][\w.-]*)\)")


def _container_env(node: object) -> dict[str, str]:
    import yaml

    found: dict[str, str] = {}
    for item in node.value if isinstance(node, yaml.SequenceNode) else ():
        pairs = {k.value: v for k, v in item.value if isinstance(k, yaml.ScalarNode)} \
            if isinstance(item, yaml.MappingNode) else {}
        name, value = pairs.get("name"), pairs.get("value")
        if isinstance(name, yaml.ScalarNode) and isinstance(value, yaml.ScalarNode):
            found[str(name.value)] = str(value.value)
    return found


def _k8s_expanded(words: list[str] | None, env: dict[str, str]) -> list[str] | None:
    if words is None or not env:
        return words
    return [_K8S_REFERENCE.sub(lambda m: m.group(0)[1:] if m.group(1) else env.get(m.group(2), m.group(0)), word)
            for word in words]


def _strings(node: yaml.SequenceNode) -> list[str] | None:
    import yaml

    words = [item.value for item in node.value if isinstance(item, yaml.ScalarNode)]
    return words if len(words) == len(node.value) else None
