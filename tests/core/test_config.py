"""ehi.core.config and ehi.core.plugins: typed sections, canonical params, plugin discovery."""

import sys
from dataclasses import dataclass, fields

import pytest

from ehi.core import plugins
from ehi.core.config import Section, bounded, canonical, limits_of
from ehi.core.errors import ConfigError


@dataclass(frozen=True)
class Toy(Section):
    section = "toy"
    a: int = 1
    b: str = "x"


@dataclass(frozen=True)
class Ranged(Section):
    section = "ranged"
    n: int = bounded(1, minimum=1, maximum=9)
    rate: float | None = bounded(0.5, exclusive_minimum=0, exclusive_maximum=1)
    kind: str = bounded("a", choices=lambda: ("a", "b"))
    sizes: list[int] = bounded(default_factory=lambda: [2], minimum=2)

    def rules(self):
        return {"kind b needs n > 1": self.kind != "b" or self.n > 1}


def test_canonical_sorts_every_dict_and_keeps_list_order():
    value = {"b": [3, 1, {"z": 1, "y": 2}], "a": {"d": 1, "c": 2}}
    out = canonical(value)
    assert list(out) == ["a", "b"] and list(out["a"]) == ["c", "d"] and list(out["b"][2]) == ["y", "z"]
    assert out["b"][:2] == [3, 1] and out == value
    assert repr(canonical(dict(reversed(list(value.items()))))) == repr(out)


def test_section_from_dict_fills_defaults_and_names_unknown_keys():
    assert Toy.from_dict({"a": 3}) == Toy(a=3, b="x")
    assert Toy.from_dict(None).to_dict() == Toy.defaults() == {"a": 1, "b": "x"}
    with pytest.raises(ValueError, match=r"unknown toy key\(s\) \['c'\]"):
        Toy.from_dict({"c": 1})


@pytest.mark.parametrize("values, said", [
    ({"n": 0}, "ranged key 'n': 0 is below its minimum 1"),
    ({"n": 10}, "ranged key 'n': 10 is above its maximum 9"),
    ({"rate": 0.0}, "ranged key 'rate': 0.0 is not above 0"),
    ({"rate": 1}, "ranged key 'rate': 1 is not below 1"),
    ({"rate": float("inf")}, "ranged key 'rate': inf is not a finite number"),
    ({"kind": "c"}, "ranged key 'kind': 'c' is not one of ['a', 'b']"),
    ({"sizes": [2, 1]}, "ranged key 'sizes': 1 is below its minimum 2 (an item of [2, 1])"),
    ({"kind": "b"}, "ranged: kind b needs n > 1"),
])
def test_a_value_outside_its_declared_range_or_a_broken_rule_is_refused_in_one_line(values, said):
    with pytest.raises(ConfigError) as err:
        Ranged.from_dict(values)
    assert str(err.value) == said
    with pytest.raises(ConfigError):
        Ranged(**values)  # construction checks too, not from_dict alone


def test_null_is_in_range_and_limits_read_in_the_schema_words():
    assert Ranged.from_dict({"rate": None, "kind": "b", "n": 2}).rate is None
    limits = {f.name: limits_of(f) for f in fields(Ranged)}
    assert limits["rate"] == {"exclusiveMinimum": 0, "exclusiveMaximum": 1} and limits["kind"] == {"enum": ["a", "b"]}


def test_plugins_named_in_the_environment_are_imported_once(tmp_path, monkeypatch):
    (tmp_path / "ehi_counting_plugin.py").write_text("import builtins\nbuiltins.EHI_PLUGIN_IMPORTS = "
                                                    "getattr(builtins, 'EHI_PLUGIN_IMPORTS', 0) + 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(plugins.ENV, " ehi_counting_plugin , ")
    try:
        assert "ehi_counting_plugin" in plugins.plugin_modules()
        plugins.load_plugins()
        plugins.load_plugins()
        import builtins

        assert builtins.EHI_PLUGIN_IMPORTS == 1
    finally:
        plugins._loaded.remove("ehi_counting_plugin")
        sys.modules.pop("ehi_counting_plugin", None)
        import builtins

        del builtins.EHI_PLUGIN_IMPORTS
