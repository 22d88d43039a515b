"""ehi.core.config and ehi.core.plugins: typed sections, canonical params, plugin discovery."""

import sys
from dataclasses import dataclass

import pytest

from ehi.core import plugins
from ehi.core.config import Section, canonical


@dataclass(frozen=True)
class Toy(Section):
    section = "toy"
    a: int = 1
    b: str = "x"


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
