"""Extensions from outside the package: plugin modules that register what they add on import.

Every extension point of ``ehi`` is a registry with a ``register_*`` function: ANNS kinds
(:func:`ehi.search.registry.register_kind`), metrics (:func:`ehi.evaluate.metric_registry.register_metric`),
L_siamese losses (:func:`ehi.train.losses.registry.register_siamese_loss`) and dataset sources
(:func:`ehi.data.sources.register_source`). A plugin is a module that calls them at import time. It
is found in one of two ways, so that the Snakefile (which checks system names at parse time) and
every rule script (a fresh interpreter) see the same registrations:

* the ``ehi.plugins`` entry-point group of an installed distribution
  (``[project.entry-points."ehi.plugins"] my_ann = "my_package.ann"``), or
* the ``EHI_PLUGINS`` environment variable: comma-separated module names importable from
  ``sys.path`` (e.g. a module on ``PYTHONPATH``), for a plugin that is not packaged.

Registries call :func:`load_plugins` when they are first read, never at import, so a plugin may
import the registries it extends without an import cycle.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import logging
import os

from ehi.core.errors import DEBUG_ENV, UserError, debugging, one_line

log = logging.getLogger(__name__)

GROUP = "ehi.plugins"
ENV = "EHI_PLUGINS"
_loaded: list[str] = []  # plugin modules imported so far (each once)


@functools.lru_cache(maxsize=1)
def _entry_point_modules() -> tuple[str, ...]:
    # scanning the installed distributions costs milliseconds; registries ask often, so once a process
    return tuple(ep.value.split(":")[0] for ep in importlib.metadata.entry_points(group=GROUP))


def plugin_modules() -> list[str]:
    """Module names of every plugin: the entry points of ``GROUP``, then ``$EHI_PLUGINS``."""
    names = list(_entry_point_modules())
    names += [name.strip() for name in os.environ.get(ENV, "").split(",") if name.strip()]
    return list(dict.fromkeys(names))


class PluginError(UserError):
    """A plugin module that cannot be imported, or fails while registering what it adds."""


def _origin(name: str) -> str:
    """Where plugin module ``name`` was named: the variable, or the entry point's distribution."""
    if name in (n.strip() for n in os.environ.get(ENV, "").split(",")):
        return f"{ENV}={os.environ.get(ENV)!r}"
    return f"the {GROUP!r} entry point of an installed distribution"


def _import(name: str) -> None:
    try:
        importlib.import_module(name)
    except Exception as err:  # anything a plugin raises is its fault, not the pipeline's
        if debugging():
            raise
        if isinstance(err, ModuleNotFoundError) and err.name == name.split(".")[0]:
            why = f"no module {err.name!r} on sys.path (add its folder to PYTHONPATH)"
        else:
            why = f"importing it raised {type(err).__name__}: {one_line(err)} ({DEBUG_ENV}=1 shows the traceback)"
        raise PluginError(f"ehi plugin module {name!r}, named by {_origin(name)}: {why}") from None


def resolve(target: str):
    """The object a ``"module:attribute"`` string names (``attribute`` may be dotted), imported
    now: light registries name what they register this way, so reading a name costs no import."""
    module, _, attribute = target.partition(":")
    value = importlib.import_module(module)
    for part in attribute.split("."):
        value = getattr(value, part)
    return value


def load_plugins() -> list[str]:
    """Import every plugin module not imported yet (cheap when there is none); returns them all.
    A module that fails is a :class:`PluginError` naming it and where it was named."""
    for name in plugin_modules():
        if name not in _loaded:
            _loaded.append(name)  # first: a plugin that reads a registry must not re-enter here
            _import(name)
            log.info("loaded ehi plugin %s", name)
    return list(_loaded)
