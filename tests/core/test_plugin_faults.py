"""Every fault of a plugin named in EHI_PLUGINS is one line naming the variable and the module:
a module that is not there, one that does not parse, one that raises while registering, a name
that is no module name. In-process, and once through `snakemake -n`."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ehi.core import plugins
from ehi.core.errors import UserError

REPO = Path(__file__).resolve().parents[2]

PLUGINS = {  # module name -> source
    "ehi_raises_plugin": "raise RuntimeError('the plugin is broken')\n",
    "ehi_syntax_plugin": "def oops(:\n",
    "ehi_imports_missing_plugin": "import a_module_nobody_has\n",
    "ehi_duplicate_kind_plugin": ("from ehi.search.registry import AnnKind, register_kind\n"
                                  "register_kind(AnnKind(name='exact', searcher='x:y', grid=lambda n, s: []))\n"),
}


@pytest.fixture
def plugin_dir(tmp_path, monkeypatch):
    for name, source in PLUGINS.items():
        (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    loaded = list(plugins._loaded)
    yield tmp_path
    plugins._loaded[:] = loaded
    for name in PLUGINS:
        sys.modules.pop(name, None)


@pytest.mark.parametrize("name, why", [
    ("ehi_no_such_plugin", "no module 'ehi_no_such_plugin' on sys.path (add its folder to PYTHONPATH)"),
    ("ehi_raises_plugin", "importing it raised RuntimeError: the plugin is broken"),
    ("ehi_syntax_plugin", "importing it raised SyntaxError"),
    ("ehi_imports_missing_plugin", "importing it raised ModuleNotFoundError: No module named 'a_module_nobody_has'"),
    ("ehi_duplicate_kind_plugin", "importing it raised"),
    ("a..b", "no module 'a' on sys.path"),
    (".relative", "importing it raised TypeError"),
])
def test_a_failing_plugin_names_the_variable_and_the_module(plugin_dir, monkeypatch, name, why):
    monkeypatch.setenv(plugins.ENV, f"{name}, ")
    monkeypatch.delenv("EHI_DEBUG", raising=False)
    with pytest.raises(plugins.PluginError) as exc:
        plugins.load_plugins()
    message = str(exc.value)
    assert isinstance(exc.value, UserError) and "\n" not in message
    assert message.startswith(f"ehi plugin module {name!r}, named by EHI_PLUGINS='{name}, ': ") and why in message


def test_a_dry_run_with_a_missing_plugin_is_one_line(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "EHI_PLUGINS": "ehi_no_such_plugin"}
    env.pop("EHI_DEBUG", None)
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(tmp_path / "w"),
           "-n", "all", "--configfile", str(REPO / "config" / "test" / "test.yaml")]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    said = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "Traceback" not in said and 'File "' not in said, said[-2000:]
    errors = [line for line in said.splitlines() if "error:" in line]
    assert len(errors) == 1 and "EHI_PLUGINS='ehi_no_such_plugin'" in errors[0] and "'ehi_no_such_plugin'" in errors[0]
    assert not any(p.name != ".snakemake" for p in (tmp_path / "w").iterdir())
