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


def load_plugins() -> list[str]:
    """Import every plugin module not imported yet (cheap when there is none); returns them all."""
    for name in plugin_modules():
        if name not in _loaded:
            _loaded.append(name)  # first: a plugin that reads a registry must not re-enter here
            importlib.import_module(name)
            log.info("loaded ehi plugin %s", name)
    return list(_loaded)
