"""Platform and model facts: named hardware profiles and a checkpoint's config.json, for platform and model atoms.

A platform atom (`get_platform().is_sm100`, `is_hip()`) is decided by a profile: a named set of the
predicates SGLang's platform layer answers (`extractor/data/platforms.json`). A model atom
(`model_config_of(cfg).hf_config.architectures[0]`, `getattr(hf_config, "quantization_config", None)`)
is decided by reading the model's config.json the way the condition's source reads the config
object: attributes, `getattr` with defaults, `.get`, subscripts. Nothing of the source is run, and
no model code: a value the config or profile does not give stays unknown.
"""

from __future__ import annotations

import ast
import copy
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..core.model import RUN_FUNCTION
from .environment import EnvVar, declared_env
from .expressions import BINARY_OPERATORS, Unknown, boolean_operation, comparison_chain, dotted_name, parsed_expression
from .helpers import (MAX_STEPS, BoundMethod, Definition, EnumMember, Helpers, Instance, Outside, PackageClass, Raised,
                      Reader, World, bind_arguments, catches, closing_statements, guard_statements)
from .model_config import (CLASS_DEFAULTED, CONFIG_LOADERS, NOT_GIVEN, Config, ModelConfig, ModelFacts, PlainDecoderSpec,
                           built_config, constructed_config, local_model, overridden,
                           text_config)
from .fact_values import (CACHE_DECORATOR, CACHE_DECORATORS, OPAQUE_VALUES, Method, Partial, PathValue, cached, compare,
                          partial, plain_value)
from .library_calls import is_library_call, library_raise
from .launch_host import PATH_METHODS, PATH_TESTS, LaunchHost
from .platforms import Platform, PlatformView, platform_key

# Modules a term's text names as SGLang's modules import them (`import copy`, `import torch`).
_WORLD_MODULES = frozenset({"copy", "json", "os", "re", "torch", "importlib"})


# ---- deciding a platform or model term -------------------------------------------------------------


@dataclass
class Facts:
    """What a launch knows beyond its flags: the platform profile, the model and the launch host, any
    of them may be absent."""

    platform: Platform | None = None
    model: ModelFacts | None = None
    host: LaunchHost | None = None
    helpers: Helpers | None = None  # the source's helpers terms call (`get_device()`), read over these facts
    env: Mapping[str, str] = field(default_factory=dict)  # the launch's environment; a name not in it is unset
    envs: Mapping[str, EnvVar] | None = None  # environ.py's declarations (`envs.X.get()`), when at hand
    _cache: dict[str, object] = field(default_factory=dict, init=False, repr=False)
    # Where a run term's method stopped at its raise: (method key, n) -> what it held there, its locals
    # and `self.<attribute>`s of plain values, for the message (`filled_message`).
    stops: dict[tuple[str, int], dict[str, object]] = field(default_factory=dict, init=False, repr=False)

    def __getstate__(self) -> dict:
        # What was read and run is worked out again where the facts are read back (a baseline in a
        # rule set's index): its answers hold this process's markers.
        return {**self.__dict__, "_cache": {}, "stops": {}}

    @property
    def world(self) -> World:
        return self.platform.world if self.platform is not None else World()

    def folder_config(self, path: str) -> Mapping[str, object] | None:
        """The config.json of a local model folder the launch names (the model's own, or a draft's),
        read once; None for what is no such folder here (a Hub id)."""
        key = f"folder {path}"
        if key not in self._cache:
            own = self.model if self.model is not None and self.model.local_folder else None
            if own is not None and Path(own.source) == Path(path).expanduser() / "config.json":
                self._cache[key] = own.config
            else:
                found = local_model(path)
                self._cache[key] = found.config if found is not None else None
        return self._cache[key]  # type: ignore[return-value]

    def path_test(self, test: str, path: str) -> bool:
        """`os.path.exists(p)`, `Path(p).is_file()`: on the launch host (`check --local`), else inside
        the checkpoint's own folder when `--model-path` names one here (its files are the ones SGLang
        finds: `hf_quant_config.json` next to config.json); anything else is unknown."""
        if self.host is not None:
            return self.host.path_test(test, path)
        own = self.model if self.model is not None and self.model.local_folder else None
        if own is not None:
            folder = Path(own.source).parent
            target = Path(path).expanduser()
            if target == folder or folder in target.parents:
                return bool(getattr(target, PATH_TESTS.get(test, test))())
        raise Unknown(test)

    def value(self, text: str, fields: Mapping[str, object] | None = None) -> object:
        """The value of a platform or model term's source, or Unknown."""
        if text in self._cache:
            found = self._cache[text]
            if found is _UNKNOWN_VALUE:
                raise Unknown(text)
            return found
        try:
            found = self._value(text, fields or {})
        except Unknown:
            self._cache[text] = _UNKNOWN_VALUE
            raise
        self._cache[text] = found
        return found

    def value_on(self, text: str, fields: Mapping[str, object]) -> object:
        """`value` on fields given for this reading alone (one of the values a resolved field may
        have): not kept, nor read from what a reading on the launch's own fields kept."""
        return self._value(text, fields)

    def _value(self, text: str, fields: Mapping[str, object]) -> object:
        if self.platform is not None:
            key = platform_key(text)
            if key in self.platform.facts:
                return self.platform.facts[key]
            compact = "".join(text.split())
            if compact in self.platform.facts:
                return self.platform.facts[compact]
        tree = parsed_expression(text)
        if tree is None:
            raise Unknown(text)
        return _Evaluator(self, fields).eval(tree.body)


_UNKNOWN_VALUE = object()


_BUILTINS: dict[str, Callable] = {
    "len": len, "str": str, "int": int, "float": float, "bool": bool, "any": any, "all": all, "sorted": sorted,
    "list": list, "tuple": tuple, "set": set, "min": min, "max": max, "abs": abs,
    "map": lambda function, *items: list(map(function, *items)),  # at once: a function it cannot call is unknown here
}
_TYPES = {"dict": (dict,), "str": (str,), "list": (list,), "tuple": (tuple,), "int": (int,), "float": (float,),
          "bool": (bool,)}
_METHODS = frozenset({"get", "keys", "values", "items", "startswith", "endswith", "lower", "upper", "strip",
                      "split", "count", "index", "replace", "format", "lstrip", "rstrip", "isdigit", "join",
                      "partition", "rpartition", "casefold"})
_MODEL_NAMES = frozenset({"hf_config", "hf_text_config"})
_REGEX_CALLS = frozenset({"re.match", "re.fullmatch", "re.search"})
_REGEX_SUBJECT_MAX = 4096  # longer than any path or name a launch gives: left unknown
_MATCH_METHODS = frozenset({"group", "groups", "start", "end"})
_ARCH_NAMES = frozenset({"model_architecture", "architecture", "model_arch"})


class _Evaluator:
    """Reads a condition's source over the facts: config attributes, platform predicates, plain Python."""

    def __init__(self, facts: Facts, fields: Mapping[str, object], names: Mapping[str, str] | None = None,
                 frame: dict[str, object] | None = None, budget: list[int] | None = None) -> None:
        self.facts = facts
        self.fields = fields
        self.locals: dict[str, object] = frame if frame is not None else {}
        self.names = names  # inside a helper: its module's names (`logic.helpers`); None for a term itself
        self.budget = budget if budget is not None else [MAX_STEPS]

    def eval(self, node: ast.AST) -> object:  # noqa: C901 - one small interpreter, one case per node kind
        ev = self.eval
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self.name(node.id)
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            items = []
            for element in node.elts:
                if isinstance(element, ast.Starred):  # `[*METHODS]`: a collection's items (a dict's keys)
                    spread = ev(element.value)
                    if not isinstance(spread, (tuple, list, set, frozenset, dict, str)):
                        raise Unknown("unpacking")
                    items.extend(spread)
                else:
                    items.append(ev(element))
            return tuple(items) if isinstance(node, ast.Tuple) else set(items) if isinstance(node, ast.Set) else items
        if isinstance(node, ast.Dict):
            found: dict = {}
            for k, v in zip(node.keys, node.values):
                if k is None:  # `{**BASE}`
                    spread = ev(v)
                    if not isinstance(spread, dict):
                        raise Unknown("dict unpacking")
                    found.update(spread)
                else:
                    found[ev(k)] = ev(v)
            return found
        if isinstance(node, ast.Attribute):
            return self.attribute(ev(node.value), node.attr)
        if isinstance(node, ast.Slice):  # `version.split(".")[:2]`
            return slice(*(ev(part) if part is not None else None for part in (node.lower, node.upper, node.step)))
        if isinstance(node, ast.Subscript):
            container = ev(node.value)
            if isinstance(container, Config):
                raise Unknown("subscript of a config")
            index = ev(node.slice)
            if isinstance(container, PackageClass):  # `cls[name]` of an enum: a member, else unknown
                member = self.facts.helpers.member(container.path, index) if self.facts.helpers is not None else None
                if member is None:
                    raise Unknown("subscript of a class")
                return member
            try:
                return container[index]  # type: ignore[index]
            except (KeyError, IndexError, TypeError):
                raise Unknown("subscript") from None
        if isinstance(node, ast.BoolOp):
            return boolean_operation(node, ev)
        if isinstance(node, ast.UnaryOp):
            value = ev(node.operand)
            if isinstance(node.op, ast.Not):
                return not value
            if isinstance(node.op, ast.USub):
                return -value  # type: ignore[operator]
            raise Unknown("unary")
        if isinstance(node, ast.Compare):
            return comparison_chain(node, ev, compare)
        if isinstance(node, ast.IfExp):
            return ev(node.body) if ev(node.test) else ev(node.orelse)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, (ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)):
            return self.comprehension(node)
        if isinstance(node, ast.BinOp) and type(node.op) in BINARY_OPERATORS:
            left, right = ev(node.left), ev(node.right)
            if isinstance(left, OPAQUE_VALUES) or isinstance(right, OPAQUE_VALUES):
                raise Unknown("arithmetic on a fact object")
            try:
                return BINARY_OPERATORS[type(node.op)](left, right)
            except (TypeError, ValueError, ArithmeticError):
                raise Unknown("arithmetic") from None
        raise Unknown(type(node).__name__)

    def _hasattr(self, owner: object, name: object) -> bool:
        if not isinstance(name, str):
            raise Unknown("hasattr")
        if isinstance(owner, Outside):
            return self.facts.world.has(f"{owner.path}.{name}")
        if isinstance(owner, Config) and not (self.facts.model and self.facts.model.architecture_only):
            return name in owner.data
        raise Unknown("hasattr")

    def name(self, name: str) -> object:
        if name in self.locals:
            return self.locals[name]
        if self.names is not None:  # a helper's body reads its module's names, nothing of the launch
            if name in ("True", "False", "None"):
                return {"True": True, "False": False, "None": None}[name]
            if name not in self.names:
                if name in _BUILTINS:
                    return _BUILTINS[name]  # passed as a value: `map(int, version.split("."))`
                if name == "current_platform" and self.facts.platform is not None:
                    return PlatformView(self.facts.platform)  # imported where it is read: the profile's
                raise Unknown(name)
            return self._bound(self.names[name])
        model = self.facts.model
        if name in _MODEL_NAMES and model is not None:
            config = Config(model.config)
            return config if name == "hf_config" else ModelConfig(config).attribute("hf_text_config")
        if name in _ARCH_NAMES and model is not None and model.architecture is not None:
            return model.architecture
        if name in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[name]
        if name in self.fields:
            return self.fields[name]
        if name == "POINTER_ADAPTER_BASES" and self.facts.model is not None and self.facts.model.local_folder:
            # Filled only by `get_config` for a checkpoint whose own config does not load (a LoRA
            # adapter pinning its base): a folder with a config.json that loads has no entry.
            return {}
        if name in _WORLD_MODULES and (name != "torch" or self.facts.platform is not None):
            return Outside(name)  # `torch.cuda.is_available()`, `copy.deepcopy(...)` in a term: as imported
        helpers = self.facts.helpers
        if helpers is not None and name in helpers.names:
            return self._bound(helpers.names[name])
        raise Unknown(name)

    def _bound(self, key: str) -> object:
        """What a helper key denotes: an imported module's name, a function's definition, or the value
        of a module constant (read once per launch)."""
        if key.startswith("import:"):
            return Outside(key[len("import:"):])
        if key.startswith("class:"):
            return PackageClass(key[len("class:"):])
        helpers = self.facts.helpers
        definition = helpers.definition(key) if helpers is not None else None
        if definition is None:
            raise Unknown(key)
        if definition.is_function:
            return definition
        memo = f"constant {key}"
        if memo not in self.facts._cache:
            try:
                self.facts._cache[memo] = self._constant(definition)
            except (Unknown, Raised, RecursionError):
                self.facts._cache[memo] = _UNKNOWN_VALUE
        found = self.facts._cache[memo]
        if found is _UNKNOWN_VALUE:
            raise Unknown(key)
        # A copy of a collection: a helper that fills what it was given must not fill the constant.
        return copy.copy(found) if isinstance(found, (dict, list, set)) else found

    def _constant(self, definition: Definition) -> object:
        inside = self._inside(definition, {})
        if not definition.made_at_import:
            return inside.eval(definition.node)
        # `BASE = {...}` then `if is_cpu(): BASE.update({...})`: the statements run over the facts.
        Reader(inside.eval, inside.locals, self.facts.world, self.budget).run(definition.node.body)  # type: ignore[union-attr]
        name = definition.key.rpartition(":")[2]
        if name not in inside.locals:
            raise Unknown(definition.key)
        return inside.locals[name]

    def _inside(self, definition: Definition, frame: dict[str, object]) -> _Evaluator:
        return _Evaluator(self.facts, {}, definition.names, frame, self.budget)

    def call_helper(self, definition: Definition, node: ast.Call, receiver: tuple[object, ...] = ()) -> object:
        """A helper called: its body read over the facts with the call's arguments (`logic.helpers`);
        a method with what it was read of (`receiver`) first."""
        args, keywords = self._arguments(node)
        return self._call_function(definition, [*receiver, *args], keywords)

    def _arguments(self, node: ast.Call) -> tuple[list[object], dict[str, object]]:
        """A call's arguments evaluated; unknown when it unpacks any (`*args`, `**kwargs`)."""
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise Unknown("unpacked arguments")
        return [self.eval(a) for a in node.args], {k.arg: self.eval(k.value) for k in node.keywords if k.arg is not None}

    def _call_function(self, definition: Definition, args: list[object], keywords: dict[str, object]) -> object:
        memo = f"call {definition.key}" if not args and not keywords else None
        if memo is not None and memo in self.facts._cache:
            found = self.facts._cache[memo]
            if found is _UNKNOWN_VALUE:
                raise Unknown(definition.key)
            return found
        try:
            inside = self._inside(definition, {})
            function = definition.node
            assert isinstance(function, ast.FunctionDef)
            inside.locals.update(bind_arguments(function, args, keywords, inside.eval))
            found = Reader(inside.eval, inside.locals, self.facts.world, self.budget).run(function.body)
        except (Unknown, Raised, RecursionError):
            if memo is not None:
                self.facts._cache[memo] = _UNKNOWN_VALUE
            raise Unknown(definition.key) from None
        if memo is not None:
            self.facts._cache[memo] = found
        return found

    def _run(self, node: ast.Call) -> bool:
        """`raised_in("<module>:<Class>.<method>", n, attr=...)`: the method run over an instance holding
        the attributes given (each read when the method first reads it) stops at its n-th raise or
        assert; False when it returns, stops elsewhere, or is past that statement when something
        unknown is met."""
        if len(node.args) != 2 or not all(isinstance(a, ast.Constant) for a in node.args) or self.facts.helpers is None:
            raise Unknown(RUN_FUNCTION)
        key, number = node.args[0].value, node.args[1].value  # type: ignore[attr-defined]
        definition = self.facts.helpers.definition(key) if isinstance(key, str) else None
        if definition is None or not definition.is_function or not isinstance(number, int):
            raise Unknown(RUN_FUNCTION)
        function = definition.node
        assert isinstance(function, ast.FunctionDef)
        sites = guard_statements(function)
        if not 0 <= number < len(sites) or not function.args.args:
            raise Unknown(RUN_FUNCTION)
        module, _, qualname = key.partition(":")
        instance = Instance(f"{module}.{qualname.rpartition('.')[0]}",
                            {k.arg: k.value for k in node.keywords if k.arg is not None}, self.eval)
        inside = self._inside(definition, {})
        reader = Reader(inside.eval, inside.locals, self.facts.world, self.budget)
        reader.closing = closing_statements(function, sites[number])
        try:
            inside.locals.update(bind_arguments(function, [instance], {}, inside.eval))
            reader.run(function.body)
        except Raised as raised:
            if raised.site is not sites[number]:
                return False
            held = {**{f"self.{k}": v for k, v in instance.values.items()}, **inside.locals}
            self.facts.stops[(key, number)] = {k: v for k, v in held.items() if plain_value(v)}
            return True
        except (Unknown, RecursionError):
            if reader.passed:
                return False
            raise Unknown(RUN_FUNCTION) from None
        return False

    def _raised(self, caught: ast.expr, call: ast.expr) -> bool:
        """`raised(Exception, current_platform.get_device(device_id))`: a try body of one call of the
        platform's method raised what its clause catches, as the profile says that method does
        (`raises:get_device`: the exception's name, or false when it returns)."""
        method = call.func.attr if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) else ""
        kind = self.facts.platform.facts.get(f"raises:{method}") if self.facts.platform is not None else None
        if kind is None:
            raise Unknown("raised")
        return bool(kind) and catches(caught, kind)

    def _loaded_config(self, node: ast.Call) -> Config:
        """`get_config(model_path, ..., model_override_args={...})`: the checkpoint's config.json, when the
        path is the launch's own `--model-path` (or a folder it names), with the overrides applied."""
        model = self.facts.model
        assert model is not None
        if model.architecture_only or not node.args or isinstance(node.args[0], ast.Starred):
            raise Unknown("config")
        path = self.eval(node.args[0])
        if not isinstance(path, str):
            raise Unknown("config path")
        override = next((self.eval(k.value) for k in node.keywords if k.arg == "model_override_args"), None)
        found = model.config if path in self._launched() else self.facts.folder_config(path)  # a draft model's folder
        if found is None:
            raise Unknown("config of another path")
        return Config(overridden(found, override))

    def call_outside(self, path: str, node: ast.Call) -> object:
        """A call into a module outside the package (`torch.cuda.is_available()`, `os.getenv(...)`): the
        environment's or the world's answer, else unknown."""
        if path in CACHE_DECORATORS:
            return cached(*self._arguments(node))
        if path == "functools.partial":
            return partial(*self._arguments(node))
        if any(isinstance(a, ast.Starred) for a in node.args) or node.keywords:
            raise Unknown(path)
        args = [self.eval(a) for a in node.args]
        world = self.facts.world
        if path in ("os.getenv", "os.environ.get") and 1 <= len(args) <= 2 and isinstance(args[0], str):
            return self.facts.env.get(args[0], args[1] if len(args) == 2 else None)
        if path == "os.path.join" and args and all(isinstance(a, str) for a in args):
            return os.path.join(*args)  # type: ignore[arg-type]
        if path in ("copy.deepcopy", "copy.copy") and len(args) == 1:
            return args[0]  # what is read of the copy is what the original holds
        if path == "json.loads" and len(args) == 1 and isinstance(args[0], str):
            try:
                return json.loads(args[0])
            except ValueError:
                raise Raised("JSONDecodeError") from None
        if path in _REGEX_CALLS and len(args) == 2 and all(isinstance(a, str) for a in args) \
                and len(args[1]) <= _REGEX_SUBJECT_MAX:
            # `re.match(r"(.+)://(.*)", model_path)` (0.5.18's connector type of the model path): a pattern
            # of SGLang's own source over a value the launch gives.
            try:
                return getattr(re, path.rpartition(".")[2])(args[0], args[1])
            except re.error:
                raise Unknown(path) from None
        if path == "pathlib.Path" and args and all(isinstance(a, str) for a in args):
            return PathValue(os.path.join(*args))  # type: ignore[arg-type]
        if path.endswith("find_spec") and len(args) == 1 and isinstance(args[0], str):
            return Outside(f"spec.{args[0]}") if world.installed(args[0]) else None
        exact = f"{path}({', '.join(repr(a) for a in args)})"
        if exact in world.answers:
            return world.answers[exact]
        if all(a is None or a == 0 for a in args) and f"{path}()" in world.answers:
            return world.answers[f"{path}()"]  # device 0, or the current one: the profile's devices are alike
        raise Unknown(path)

    def attribute(self, value: object, name: str) -> object:
        if isinstance(value, Outside):
            if value.path == "os" and name == "environ":
                return dict(self.facts.env)  # the launch's environment: a name not in it is unset
            return value.attribute(name, self.facts.world)
        if isinstance(value, PlatformView):
            return value.fact(name)
        if isinstance(value, PlainDecoderSpec):
            try:
                return value.attribute(name)
            except AttributeError:
                raise Unknown(name) from None
        if isinstance(value, (Config, ModelConfig)):
            if isinstance(value, Config) and self.facts.model is not None and self.facts.model.architecture_only \
                    and name != "architectures":
                raise Unknown(name)  # an architecture alone says nothing else of the config
            try:
                return value.attribute(name)
            except AttributeError:
                raise Unknown(name) from None
        if isinstance(value, (str, dict, list, tuple)) and name in _METHODS:
            return Method(value, name)
        if isinstance(value, re.Match) and name in _MATCH_METHODS:
            return Method(value, name)
        if isinstance(value, Instance):
            try:
                return value.attribute(name)
            except AttributeError:
                pass
        if isinstance(value, PackageClass) and self.facts.helpers is not None \
                and (member := self.facts.helpers.member(value.path, name)) is not None:
            return member  # `SpeculativeAlgorithm.NONE`
        if isinstance(value, EnumMember) and name == "name":
            return value.name
        if isinstance(value, (Instance, PackageClass, EnumMember)) and self.facts.helpers is not None:
            method = self.facts.helpers.method(value.path, name)
            if method is not None and method.is_function:
                first = method.node.args.args[:1]  # type: ignore[union-attr]
                # A classmethod or a method: bound to what it is read of; a staticmethod as it is.
                return BoundMethod(method, value) if first and first[0].arg in ("self", "cls") else method
        raise Unknown(name)

    def call(self, node: ast.Call) -> object:
        func = node.func
        if isinstance(func, ast.Lambda) and not node.args:
            return self.eval(func.body)  # `(lambda: a and b)()`
        if isinstance(func, ast.Call):  # `lru_cache(maxsize=1)(partial(...))`: a decorator applied
            decorator = self.eval(func)
            args, keywords = self._arguments(node)
            if decorator is CACHE_DECORATOR and len(args) == 1 and not keywords \
                    and isinstance(args[0], (Definition, Partial)):
                return args[0]
            raise Unknown("call")
        if isinstance(func, ast.Name):
            name = func.id
            if name == "getattr" and len(node.args) in (2, 3):
                owner = self.eval(node.args[0])
                key = self.eval(node.args[1])
                if not isinstance(key, str):
                    raise Unknown("getattr")
                try:
                    return self.attribute(owner, key)
                except Unknown:
                    if len(node.args) == 3 and isinstance(owner, Config) and key not in owner.data \
                            and key not in CLASS_DEFAULTED and not (self.facts.model and self.facts.model.architecture_only):
                        return self.eval(node.args[2])  # config.json does not have it: the default
                    raise
            if name == "isinstance" and len(node.args) == 2:
                value = self.eval(node.args[0])
                if not isinstance(node.args[1], (ast.Tuple, ast.Name)) and self.facts.helpers is not None:
                    return self.facts.helpers.is_instance(value.data if isinstance(value, Config) else value,
                                                          self.eval(node.args[1]))  # `spec.config_class`
                kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
                types: tuple[type, ...] = ()
                for kind in kinds:
                    if not isinstance(kind, ast.Name) or kind.id not in _TYPES:
                        raise Unknown("isinstance")
                    types += _TYPES[kind.id]
                return isinstance(value, types)
            if name == "resolve_hf_gguf_reference" and self.facts.model is not None and self.facts.model.local_folder:
                return None  # a local folder is no Hub reference to a .gguf: the path stays as typed
            if name == "model_config_of" and self.facts.model is not None:
                return self._model_config()
            if name == "ModelConfig" and self.facts.model is not None:  # `from_server_args` inlined
                return constructed_config(node, self.eval, self._launched(), self.facts.model)
            if name == RUN_FUNCTION:
                return self._run(node)
            if name in ("raised", "raised_message") and self.names is None and len(node.args) == 2 \
                    and is_library_call(node.args[1]):  # `raised(ValueError, AutoConfig.from_pretrained(...))`
                helpers = self.facts.helpers
                return library_raise(name, node.args[0], node.args[1], self.eval, self.facts.folder_config,  # type: ignore[arg-type]
                                     helpers.config_loader if helpers is not None else None)
            if name == "raised" and self.names is None and len(node.args) == 2 and self.facts.platform is not None:
                return self._raised(*node.args)
            if name == "get_platform" and self.facts.platform is not None and not node.args:
                return PlatformView(self.facts.platform)
            if name in _BUILTINS and not node.keywords:
                args = [self.eval(a) for a in node.args]
                try:
                    return _BUILTINS[name](*args)
                except (TypeError, ValueError):
                    raise Unknown(name) from None
            platform = self.facts.platform
            if platform is not None:
                key = name.lstrip("_")
                if key in platform.facts:
                    return platform.facts[key]
            if name == "hasattr" and len(node.args) == 2 and not node.keywords:
                return self._hasattr(self.eval(node.args[0]), self.eval(node.args[1]))
            if name in CONFIG_LOADERS and self.facts.model is not None:
                return self._loaded_config(node)
            if name == "get_hf_text_config" and len(node.args) == 1 and not node.keywords:
                config = self.eval(node.args[0])
                if isinstance(config, Config):
                    return text_config(config)
                raise Unknown(name)
            target = self.name(name)
            if isinstance(target, Definition):
                return self.call_helper(target, node)
            if isinstance(target, PackageClass) and self.facts.helpers is not None:
                return self.facts.helpers.made(target.path, node, self.eval)  # a registry's entry
            if isinstance(target, Partial):  # 0.5.18's `is_blackwell_supported()`
                args, keywords = self._arguments(node)
                return self._call_function(target.definition, [*target.args, *args], {**target.keywords, **keywords})
            if isinstance(target, Outside):
                return self.call_outside(target.path, node)
            raise Unknown(name)
        if isinstance(func, ast.Attribute):
            declared = declared_env(func, self.facts.env, self.facts.envs)
            if declared is not None:
                return declared
            test = dotted_name(func)
            if test in PATH_TESTS and len(node.args) == 1 and not node.keywords:
                path = self.eval(node.args[0])
                if not isinstance(path, str):
                    raise Unknown(test)
                return self.facts.path_test(test, path)
            owner = func.value
            if func.attr in PATH_METHODS and not node.args \
                    and isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id == "Path" \
                    and owner.args and not owner.keywords:
                parts = [self.eval(a) for a in owner.args]  # `Path(model_path, "quant_model_description.json")`
                if not all(isinstance(p, str) for p in parts):
                    raise Unknown(func.attr)
                return self.facts.path_test(func.attr, os.path.join(*parts))
            if self.facts.model is not None and (
                    (func.attr == "from_server_args" and isinstance(func.value, ast.Name) and func.value.id == "ModelConfig")
                    or func.attr == "get_model_config"):
                # `ModelConfig.from_server_args(server_args, ...)`, `server_args.get_model_config()`: the model's config
                return self._model_config()
            if func.attr == "get_config_dict" and dotted_name(func.value) == "PretrainedConfig" and node.args:
                # transformers' read of a folder's config.json as it is, model type or not: (dict, kwargs)
                path = self.eval(node.args[0])
                config = self.facts.folder_config(path) if isinstance(path, str) else None
                if config is None:
                    raise Unknown("config dict")
                return dict(config), {}  # read, never changed, by the terms (no method that changes it)
            owner = self.eval(func.value)
            if isinstance(owner, PlatformView):
                return owner.fact(func.attr)
            if isinstance(owner, Outside):
                return self.call_outside(f"{owner.path}.{func.attr}", node)
            if owner == {} and func.attr == "get" and 1 <= len(node.args) <= 2 and not node.keywords:
                return self.eval(node.args[1]) if len(node.args) == 2 else None  # whatever the key
            if isinstance(owner, PathValue) and func.attr in PATH_METHODS and not node.args:
                return self.facts.path_test(func.attr, owner.path)
            method = self.attribute(owner, func.attr)
            if isinstance(method, BoundMethod):
                return self.call_helper(method.definition, node, receiver=(method.receiver,))
            if isinstance(method, Definition) and method.is_function:
                return self.call_helper(method, node)
            if isinstance(method, Method):
                args = [self.eval(a) for a in node.args]
                return method(*args)
            if isinstance(owner, Config) and func.attr == "get":
                args = [self.eval(a) for a in node.args]
                return owner.get(*args)
        raise Unknown("call")

    def _model_config(self) -> ModelConfig:
        assert self.facts.model is not None
        return built_config(self.facts.model, self.fields.get("json_model_override_args"),
                            self.fields.get("is_embedding"), self.fields.get("quantization", NOT_GIVEN))

    def _launched(self) -> set[object]:
        """The launch's own `--model-path`, as typed and as the run resolved it."""
        return {v for k, v in self.fields.items() if k == "model_path" or k.startswith("model_path__v")}

    def comprehension(self, node: ast.GeneratorExp | ast.ListComp | ast.SetComp | ast.DictComp) -> object:
        if len(node.generators) != 1 or not isinstance(node.generators[0].target, (ast.Name, ast.Tuple)):
            raise Unknown("comprehension")
        generator = node.generators[0]
        items = self.eval(generator.iter)
        if isinstance(items, Config) or not isinstance(items, Iterable):
            raise Unknown("iteration")
        results = []
        saved = dict(self.locals)
        try:
            for item in list(items):  # type: ignore[arg-type]
                self._bind(generator.target, item)
                if all(self.eval(test) for test in generator.ifs):
                    results.append((self.eval(node.key), self.eval(node.value)) if isinstance(node, ast.DictComp)
                                   else self.eval(node.elt))
        finally:  # in place: the reader of the helper's statements binds into the same dict
            self.locals.clear()
            self.locals.update(saved)
        return set(results) if isinstance(node, ast.SetComp) else dict(results) if isinstance(node, ast.DictComp) \
            else results

    def _bind(self, target: ast.AST, value: object) -> None:
        if isinstance(target, ast.Name):
            self.locals[target.id] = value
            return
        assert isinstance(target, ast.Tuple)
        values = list(value)  # type: ignore[call-overload]
        if len(values) != len(target.elts):
            raise Unknown("unpacking")
        for element, item in zip(target.elts, values):
            self._bind(element, item)


def run_site(text: str) -> tuple[str, int] | None:
    """The method key and the raise's number of a run term's source (`raised_in('m:C.f', 2, ...)`)."""
    found = _RUN_SITE.match(text)
    return (found.group(1), int(found.group(2))) if found else None


_RUN_SITE = re.compile(RUN_FUNCTION + r"""\(['"]([\w.:]+)['"], (\d+)""")
