"""The one YAML reader for what an org folder holds: safe tags only, with limits.

`yaml.safe_load` refuses code but not size: ten lines of aliases ("billion laughs") expand to
10^9 values in whatever walks the result, a few thousand `[` overflow Python's stack, and a
repeated key silently replaces the first. `load_yaml` composes the node graph with a depth cap,
then walks it once (iteratively, each shared node once) before building any Python value:
a recursive alias, nesting deeper than `max_depth` once aliases are followed, aliases adding more
than `max_alias_nodes` values, or a key given twice in one mapping is a `YamlLimitError` naming
the field. Numbers are read as YAML 1.2 reads them: `closes: 17:30` is the text "17:30" (YAML
1.1 made it 1050, in base 60) and `opens: 0730` the text "0730" (not the octal 472). Pure Python,
no Django: the generator and the judge's examples read org folders too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode


@dataclass(frozen=True)
class YamlLimits:
    max_depth: int = 50
    """Nesting of sequences and mappings, aliases followed (a real org.yaml needs under 10)."""
    max_alias_nodes: int = 10_000
    """Values that aliases may add to the document once expanded."""


class YamlLimitError(ValueError):
    """The document breaks a limit; `field` is where, as an org folder writes it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def _part(index: Any) -> str:
    if isinstance(index, int):
        return f"[{index}]"
    if isinstance(index, ScalarNode):
        return f".{index.value}"
    return ".?"


def _field(parts: list[str], limit: int = 6) -> str:
    shown = "".join(parts[:limit]).lstrip(".")
    return (shown + ("…" if len(parts) > limit else "")) or "(top level)"


_INT_TAG, _FLOAT_TAG = "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"
# YAML 1.2's integers and floats: no base 60 ("17:30"), no octal from a leading zero ("0730").
_INT = re.compile(r"^[-+]?(?:0|[1-9][0-9_]*)$|^[-+]?0x[0-9a-fA-F_]+$|^[-+]?0b[01_]+$")
_FLOAT = re.compile(
    r"^[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?$"
    r"|^[-+]?\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?$|^[-+]?\.(?:inf|Inf|INF)$|^\.(?:nan|NaN|NAN)$"
)


class _LimitedLoader(yaml.SafeLoader):
    """SafeLoader whose composer stops at `limits.max_depth` before Python's stack does, and
    whose numbers are YAML 1.2's."""

    limits: YamlLimits = YamlLimits()
    yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag not in (_INT_TAG, _FLOAT_TAG)]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._path: list[str] = []

    def compose_node(self, parent: Node | None, index: Any) -> Node:
        if parent is not None:
            self._path.append(_part(index))
        if len(self._path) > self.limits.max_depth:
            raise YamlLimitError(
                _field(self._path),
                f"nested deeper than {self.limits.max_depth} levels",
            )
        try:
            return super().compose_node(parent, index)  # type: ignore[no-any-return]
        finally:
            if parent is not None:
                self._path.pop()


_LimitedLoader.add_implicit_resolver(_INT_TAG, _INT, list("-+0123456789"))
_LimitedLoader.add_implicit_resolver(_FLOAT_TAG, _FLOAT, list("-+0123456789."))


def _children(node: Node) -> list[tuple[str, Node]]:
    if isinstance(node, SequenceNode):
        return [(f"[{i}]", child) for i, child in enumerate(node.value)]
    if isinstance(node, MappingNode):
        pairs: list[tuple[str, Node]] = []
        for key, value in node.value:
            pairs.append((_part(key), key))
            pairs.append((_part(key), value))
        return pairs
    return []


def _check_keys(node: MappingNode, parts: list[str]) -> None:
    """A key given twice in one mapping (YAML would keep the last silently)."""
    seen: set[tuple[str, str]] = set()
    for key, _ in node.value:
        if not isinstance(key, ScalarNode) or key.tag == "tag:yaml.org,2002:merge":
            continue
        ident = (key.tag, key.value)
        if ident in seen:
            raise YamlLimitError(
                _field([*parts, _part(key)]), f"the key {key.value!r} is given twice"
            )
        seen.add(ident)


def _check_graph(root: Node, limits: YamlLimits) -> None:
    """One iterative post-order walk: expanded size and depth of every node, memoised by
    identity (an aliased node is one object however often it is used)."""
    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    distinct = 0
    on_path: set[int] = set()
    # (node, field parts to it, children pushed yet?)
    stack: list[tuple[Node, list[str], bool]] = [(root, [], False)]
    while stack:
        node, parts, expanded = stack.pop()
        ident = id(node)
        if expanded:
            on_path.discard(ident)
            kids = _children(node)
            size[ident] = 1 + sum(size[id(child)] for _, child in kids)
            depth[ident] = 1 + max((depth[id(child)] for _, child in kids), default=0)
            if depth[ident] > limits.max_depth + 1:
                raise YamlLimitError(
                    _field(parts),
                    f"nested deeper than {limits.max_depth} levels once its aliases are followed",
                )
            continue
        if ident in size:
            continue
        if ident in on_path:
            raise YamlLimitError(_field(parts), "a recursive alias (an anchor used inside itself)")
        distinct += 1
        on_path.add(ident)
        if isinstance(node, MappingNode):
            _check_keys(node, parts)
        stack.append((node, parts, True))
        for part, child in _children(node):
            if id(child) not in size:
                stack.append((child, [*parts, part], False))
    extra = size[id(root)] - distinct
    if extra > limits.max_alias_nodes:
        raise YamlLimitError(
            _largest(root, size, limits.max_alias_nodes),
            f"aliases expand to {extra:,} more values, over the limit of "
            f"{limits.max_alias_nodes:,} (an alias bomb?)",
        )


def _largest(root: Node, size: dict[int, int], limit: int) -> str:
    """The field holding the expansion: down the largest mapping value while it is too big."""
    parts: list[str] = []
    node = root
    while isinstance(node, MappingNode) and node.value:
        key, value = max(node.value, key=lambda kv: size[id(kv[1])])
        if size[id(value)] <= limit:
            break
        parts.append(_part(key))
        node = value
    return _field(parts)


def load_yaml(text: str, limits: YamlLimits | None = None) -> Any:
    """Parse one YAML document with safe tags and the limits; `yaml.YAMLError` for bad YAML,
    `YamlLimitError` for a document over a limit."""
    loader = _LimitedLoader(text)
    loader.limits = limits or YamlLimits()
    try:
        root = loader.get_single_node()
        if root is None:
            return None
        _check_graph(root, loader.limits)
        return loader.construct_document(root)
    finally:
        loader.dispose()
