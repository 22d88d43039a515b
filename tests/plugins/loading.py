"""Loading one of this folder's plugin modules into the test process, and undoing it: the plugin
tests' fixtures (each plugin's own registrations are what it hands back to remove)."""

import sys
from contextlib import contextmanager
from pathlib import Path

PLUGIN_DIR = Path(__file__).resolve().parent


@contextmanager
def loaded_plugin(monkeypatch, module: str, registrations):
    """``module`` loaded as EHI_PLUGINS names it; afterwards each ``(table, name)`` of
    ``registrations`` is removed from its registry table and the module forgotten."""
    from ehi.core import plugins

    monkeypatch.syspath_prepend(str(PLUGIN_DIR))
    monkeypatch.setenv(plugins.ENV, module)
    plugins.load_plugins()
    try:
        yield
    finally:
        for table, name in registrations:
            table.pop(name, None)
        plugins._loaded.remove(module)
        sys.modules.pop(module, None)
