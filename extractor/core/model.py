"""The data model: frozen records for conditions, rules and flags (no libcst, no networkx here)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import NamedTuple, Union


class TermKind(str, Enum):
    """Where a value in a condition comes from."""

    FIELD = "field"  # a server argument (a CLI flag)
    ENV = "env"  # an environment variable
    PLATFORM = "platform"  # the hardware / runtime platform
    MODEL = "model"  # the model's config (architecture, hf_config, ...)
    OPAQUE = "opaque"  # anything else, kept as source text
    # a field as the run left it after its first `version` writes, where spelling that out in the
    # trigger would be too large: rules.json's `resolution` table holds those writes
    RESOLVED = "resolved"


class RuleKind(str, Enum):
    RAISE = "raise"
    ASSERT = "assert"
    ADJUSTMENT = "adjustment"


# Operators of an atom. "truthy" tests the term itself (`if cfg.x:`).
COMPARE_OPS = ("==", "!=", "<", "<=", ">", ">=", "in", "not in", "is", "is not", "contains", "not contains")
NEGATED_OP = {
    "==": "!=",
    "!=": "==",
    "<": ">=",
    ">=": "<",
    ">": "<=",
    "<=": ">",
    "in": "not in",
    "not in": "in",
    "is": "is not",
    "is not": "is",
    "contains": "not contains",
    "not contains": "contains",
}
SWAPPED_OP = {"==": "==", "!=": "!=", "<": ">", ">": "<", "<=": ">=", ">=": "<=", "is": "is", "is not": "is not",
              "in": "contains", "not in": "not contains", "contains": "in", "not contains": "not in"}

# Value transforms a field term may carry, applied in order (`model_path.lower()`).
TRANSFORMS = ("lower", "upper", "strip", "casefold", "int", "float", "str", "len", "bool", "abs")

LiteralValue = Union[None, bool, int, float, str, tuple]


@dataclass(frozen=True, slots=True)
class Term:
    """A value read by a condition: a field, env var, platform or model fact, or opaque source."""

    kind: TermKind
    name: str  # field / env var name; for platform, model and opaque: the normalized source text
    text: str  # normalized Python source of the whole term, e.g. `model_path.lower()`
    fields: tuple[str, ...] = ()  # server-argument fields it reads
    transforms: tuple[str, ...] = ()  # for a field or env term: applied to its value in order
    # For a field read in a function's own condition: the walk order of the call after which it is
    # read (a call that may write it), 0 for its value when the function was entered. The run
    # replaces every field term by its value at that point, so triggers never carry it.
    after: int = 0
    version: int = 0  # a resolved field: how many of its writes (in run order) the value has seen


@dataclass(frozen=True, slots=True, eq=False)
class Lit:
    """A literal operand: None, bool, int, float, str or a tuple of those.

    Equality is by type too: Python's `1 == True` would make `x is 1` and `x is True` one atom.
    """

    value: LiteralValue

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Lit) and _typed(self.value) == _typed(other.value)

    def __hash__(self) -> int:
        return hash(_typed(self.value))


def _typed(value: object) -> object:
    if isinstance(value, tuple):
        return ("tuple", tuple(_typed(v) for v in value))
    return (type(value).__name__, value)


@dataclass(frozen=True, slots=True)
class Const:
    value: bool


class _CachedHash:
    """Formulas are hashed constantly while simplifying; deep trees hash once, on creation.

    `_digest`, unset until a digest of the formula's content is asked for (`products.witness_keys`),
    is kept with the formula when it is pickled (`products.cache`): a formula read back from the
    cache has it, stable across processes where `hash()` is not."""

    __slots__ = ()

    # Each class's `__post_init__` hashes the tuple of its compared fields, spelled out: formulas are
    # made by the million (a generic loop over `__dataclass_fields__` made an `And` three times dearer).

    def __hash__(self) -> int:
        return self._hash  # type: ignore[attr-defined]

    # The state `pickle` and `copy` use by default (the cache's own pickler rebuilds formulas from their
    # init fields): what dataclasses give slotted classes would read `_digest` unset.
    def _getstate(self) -> list:
        return [getattr(self, f, None) for f in self.__dataclass_fields__]

    def _setstate(self, state: list) -> None:
        for name, value in zip(self.__dataclass_fields__, state):
            if value is not None or name != "_digest":
                object.__setattr__(self, name, value)


@dataclass(frozen=True, slots=True, eq=True)
class Atom(_CachedHash):
    """A test of one term: its truthiness (`op == "truthy"`) or a comparison with a literal or term."""

    term: Term
    op: str = "truthy"
    other: Lit | Term | None = None
    _hash: int = field(default=0, init=False, repr=False, compare=False)
    _digest: bytes = field(init=False, repr=False, compare=False, metadata={"kept": True})  # unset: see _CachedHash

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.term, self.op, self.other)))

    __hash__ = _CachedHash.__hash__
    __getstate__, __setstate__ = _CachedHash._getstate, _CachedHash._setstate


@dataclass(frozen=True, slots=True, eq=True)
class Not(_CachedHash):
    arg: Formula
    _hash: int = field(default=0, init=False, repr=False, compare=False)
    _digest: bytes = field(init=False, repr=False, compare=False, metadata={"kept": True})  # unset: see _CachedHash

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.arg,)))

    __hash__ = _CachedHash.__hash__
    __getstate__, __setstate__ = _CachedHash._getstate, _CachedHash._setstate


@dataclass(frozen=True, slots=True, eq=True)
class And(_CachedHash):
    args: tuple[Formula, ...]
    _hash: int = field(default=0, init=False, repr=False, compare=False)
    _digest: bytes = field(init=False, repr=False, compare=False, metadata={"kept": True})  # unset: see _CachedHash

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.args,)))

    __hash__ = _CachedHash.__hash__
    __getstate__, __setstate__ = _CachedHash._getstate, _CachedHash._setstate


@dataclass(frozen=True, slots=True, eq=True)
class Or(_CachedHash):
    args: tuple[Formula, ...]
    _hash: int = field(default=0, init=False, repr=False, compare=False)
    _digest: bytes = field(init=False, repr=False, compare=False, metadata={"kept": True})  # unset: see _CachedHash

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.args,)))

    __hash__ = _CachedHash.__hash__
    __getstate__, __setstate__ = _CachedHash._getstate, _CachedHash._setstate


Formula = Union[Const, Atom, Not, And, Or]
TRUE = Const(True)
FALSE = Const(False)


@dataclass(frozen=True, slots=True)
class Location:
    file: str  # posix path relative to the package root's parent, e.g. sglang/srt/server_args.py
    line: int
    end_line: int


@dataclass(frozen=True, slots=True)
class Snippet:
    start_line: int
    end_line: int
    text: str


class Related(NamedTuple):
    """Another rule related to a rule. A tuple: a release's rule set holds some 13,000, and a tuple is
    read back from a pickled index by `tuple.__new__`, in C (a record class is a Python call each:
    a sixth of the time `check` spends reading an index)."""

    id: str
    message: str
    kind: str  # why it is related: siblings, same-function, shares-flags, mutual-exclusion, adjusts
    score: float

    def __reduce__(self) -> tuple:
        return tuple.__new__, (Related, tuple(self))


@dataclass(frozen=True, slots=True)
class Choices:
    """A message placeholder whose value depends on the way to the guard: the value of the first case
    whose condition holds (`reason = "Target model's" if is_draft_model else "User-specified"`; each
    item of an unrolled loop, in loop order). Conditions over launch values once the run placed them."""

    cases: tuple[tuple[Formula, Lit | Term], ...]


@dataclass(frozen=True, slots=True)
class PlaceValues:
    """A message placeholder's value at each place of the run (`Rule.places`, by order): a helper its
    callers call with other arguments (`validate_buckets_rule("--prompt-tokens-buckets", ...)`)."""

    values: tuple[tuple[int, Lit | Term | Choices], ...]


# What a placeholder of a message holds where the guard raises (`Rule.placeholders`).
PlaceholderValue = Union[Lit, Term, Choices, PlaceValues]


def placeholder_operands(value: PlaceholderValue) -> list[Lit | Term]:
    """The literals and terms a placeholder's value may be."""
    if isinstance(value, PlaceValues):
        return [leaf for _, inner in value.values for leaf in placeholder_operands(inner)]
    if isinstance(value, Choices):
        return [operand for _, operand in value.cases]
    return [value]


def placeholder_conditions(value: PlaceholderValue) -> list[Formula]:
    """The conditions a placeholder's value is chosen by."""
    if isinstance(value, PlaceValues):
        return [when for _, inner in value.values for when in placeholder_conditions(inner)]
    if isinstance(value, Choices):
        return [when for when, _ in value.cases]
    return []


@dataclass(frozen=True, slots=True)
class Example:
    """A command line that triggers the rule and one that does not (witnesses)."""

    before: tuple[str, ...]
    after: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    kind: RuleKind
    exception: str | None
    message: str
    message_static: bool
    location: Location
    function: str
    snippet: Snippet
    condition: Formula  # in-function path condition
    enclosing: tuple[int, ...] = ()  # lines of the enclosing `if` statements, outermost first
    trigger: Formula | None = None  # whole-program condition (None until the call graph is applied)
    call_path: tuple[str, ...] = ()
    reachable: bool = False
    target: str | None = None  # adjustments: the field written
    value: str | None = None  # adjustments: the new value, as source text
    affected_by: tuple[str, ...] = ()
    related: tuple[Related, ...] = ()
    example: Example | None = None
    order: int | None = None  # place in the run's execution order (1 = first); None when unreachable
    # adjustments: the value written, over launch values: (when, literal or term) cases
    assigns: tuple[tuple[Formula, Lit | Term], ...] = ()
    # guards: what a message's placeholder of a local or a constant holds where it is raised, when the
    # walk knows (`{ib_sysfs_path}` -> "/sys/class/infiniband", `{backend}` -> the field it was read from;
    # one of several by the way there or the place of the run: `Choices`, `PlaceValues`)
    placeholders: tuple[tuple[str, PlaceholderValue], ...] = ()
    doc: str | None = None  # the first paragraph of the docstring of the function it is in
    # guards the run reaches at more than one place (a helper two steps call): each place (as `order`,
    # the first one's) with when the guard runs and fires there; () when at one place
    places: tuple[tuple[int, Formula], ...] = ()

    @property
    def effective(self) -> Formula:
        return self.trigger if self.trigger is not None else self.condition


@dataclass(frozen=True, slots=True)
class Write:
    """One write of the launch run, for reading a resolved field: `field` holds one of `cases` when
    `when` holds (both over launch values), else what it held before. The `version`-th write of a
    field in run order is what `Term(RESOLVED, field, version=k)` has seen last when k == version."""

    field: str
    version: int  # 1 for the field's first write in the run
    order: int  # place in the run (as Rule.order)
    rule: str  # the adjustment's id
    when: Formula
    cases: tuple[tuple[Formula, Lit | Term], ...]


@dataclass(frozen=True)
class EnvVar:
    """An `envs.NAME` declaration of environ.py: its parser and default when it is a literal."""

    kind: str  # bool, int, float, str, tuple, json
    default: object = None
    default_known: bool = True
    alias: str | None = None  # deprecated name read when NAME is unset


@dataclass(frozen=True, slots=True)
class Helper:
    """A function or module constant of the analysed source that terms call (`get_device()`), kept as
    normalized source so `check` can read it over the platform, model and environment facts."""

    key: str  # "sglang.srt.utils.common:get_device"
    source: str  # the function's `def` (no decorators, no docstring), or the constant's expression
    names: tuple[tuple[str, str], ...] = ()  # module names it reads -> helper keys, or "import:dotted"


# A run term: `raised_in("<module>:<Class>.<method>", n, attr=...)` holds when the method, run over the
# launch's values with the instance's attributes given, stops at its n-th raise or assert (counted in
# source order). The extraction writes it (`analysis.guards.RunSites`), `check` reads it (`logic.facts`).
RUN_FUNCTION = "raised_in"
# The helper that says a kept class's bases and its own kept methods, keyed by the class's import path.
CLASS_PREFIX = "mro:"


@dataclass(frozen=True, slots=True)
class ConfigLoader:
    """What decides whether `AutoConfig.from_pretrained` loads a checkpoint's config.json, read from
    the transformers a release pins: the model types it maps to a config class (with those SGLang's
    own config classes register), its message for another (`{model_type}` in it), for a config
    without a model type (`{path}` in it: the path the load was given; None where not read), and for
    a local folder whose config names its own code the launch does not trust (`{path}`, `{abspath}`)."""

    transformers: str  # the version pinned
    model_types: tuple[str, ...]
    unknown_type_message: str
    untyped_message: str | None = None
    custom_code_message: str | None = None


@dataclass(frozen=True, slots=True)
class HelperLibrary:
    """The helpers of one extraction: the bare names terms call, each bound to a helper's key, and the
    helpers (those they read in turn too); what loads a checkpoint's config, where a term asks it."""

    names: tuple[tuple[str, str], ...] = ()
    helpers: tuple[Helper, ...] = ()
    config_loader: ConfigLoader | None = None


@dataclass(frozen=True, slots=True)
class Alias:
    """A spelling of a field declared by an add_argument call other than the flag's own, and how it parses.

    Deprecated spellings (`--stream-output` for `--incremental-streaming-output`) are the usual case:
    they set the same field but may take no value and store a constant instead.
    """

    flag: str  # the option string
    deprecated: bool = True
    takes_value: bool = True  # False: the option alone sets the field (store_true/store_const-like)
    nargs: str | None = None  # argparse nargs when it takes values
    choices: tuple[LiteralValue, ...] | None = None  # values it accepts, when it restricts them
    const: str | None = None  # source text of what it stores instead of its value; None: it stores its value
    const_value: LiteralValue = None
    const_is_literal: bool = False


@dataclass(frozen=True, slots=True)
class Flag:
    """One server argument as the command line sees it."""

    name: str  # the field name (argparse dest)
    flags: tuple[str, ...]  # option strings, primary first (e.g. --tp-size, --tensor-parallel-size)
    type: str | None = None
    default: str | None = None  # source text of the default
    default_value: LiteralValue = None  # the default as a literal when it is one
    default_is_literal: bool = False
    choices: tuple[LiteralValue, ...] | None = None
    action: str | None = None  # store_true, store_false, deprecated, ...
    nargs: str | None = None
    help: str | None = None
    deprecated: bool = False
    file: str = ""
    line: int = 0
    origins: tuple[str, ...] = field(default=())  # add_argument, annotated-field, dataclass-field
    aliases: tuple[Alias, ...] = ()  # spellings in `flags` declared apart from the live flag (deprecated aliases)
    # What SGLang's resolved reads of the field answer while it holds None (0.5.23's
    # `Arg(fallback=0.8)`, read by `resolution_result`); None when it declares none.
    fallback: Lit | None = None
    # What argparse refuses the option with (a removed flag whose action calls `parser.error`), or None.
    refused: str | None = None


@dataclass(frozen=True, slots=True)
class SourceProblem:
    """A file that could not be read or parsed."""

    file: str
    line: int
    column: int
    message: str


@dataclass(frozen=True, slots=True)
class Notice:
    """A warning in the output: something the extractor could not resolve, never silently dropped."""

    code: str  # e.g. unresolved-field
    message: str
    field: str | None = None
    rules: tuple[str, ...] = ()
