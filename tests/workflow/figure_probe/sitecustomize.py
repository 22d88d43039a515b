"""Loaded at the start of every Python process of the shared test run (tests/workflow/runs.py puts
this folder first on PYTHONPATH, so it shadows an environment's own sitecustomize there): where
EHI_FIGURE_PROBE names a folder, ehi.report.figures' save_figure also writes into it, beside
nothing the pipeline reads, one JSON of the style facts of each figure it saves: per axes its
title, x scale, shown x tick labels, shared x axes and labelled lines (colour, marker); the
figure's suptitle and texts. tests/report/test_run_figures.py checks the very figures the run drew."""

import json
import os
import sys
import uuid


def facts(fig, path) -> dict:
    from matplotlib.colors import to_hex

    fig.canvas.draw()  # tick labels exist only once drawn
    axes = [ax for ax in fig.axes if ax.axison]
    out = []
    for ax in axes:
        low, high = sorted(ax.get_xlim())
        lines = [(line.get_label(), to_hex(line.get_color()), line.get_marker()) for line in ax.get_lines()
                 if not line.get_label().startswith("_")]
        lines += [(c.get_label(), to_hex(c.lines[0].get_color()), c.lines[0].get_marker()) for c in ax.containers
                  if hasattr(c, "lines") and c.lines and c.lines[0] is not None and not c.get_label().startswith("_")]
        out.append({"title": ax.get_title(), "xscale": ax.get_xscale(), "lines": lines,
                    "xticks": [t.get_text() for t in ax.get_xticklabels()
                               if t.get_text() and low <= t.get_position()[0] <= high],
                    "shares_x": [j for j, other in enumerate(axes) if other is not ax
                                 and ax.get_shared_x_axes().joined(ax, other)]})
    suptitle = fig._suptitle.get_text() if fig._suptitle is not None else ""
    return {"name": os.path.basename(str(path)), "suptitle": suptitle, "axes": out,
            "texts": [t.get_text() for t in fig.texts if t is not fig._suptitle]}


def recording(save_figure, folder: str):
    def save_and_record(fig, path):
        record = facts(fig, path)
        done = save_figure(fig, path)
        # a name of its own: jobs run side by side, and each dataset draws a training.png
        with open(os.path.join(folder, f"{uuid.uuid4().hex}.json"), "w") as out:
            json.dump(record, out)
        return done

    return save_and_record


if os.environ.get("EHI_FIGURE_PROBE"):
    import importlib.abc
    import importlib.machinery

    class _ProbeFigures(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name != "ehi.report.figures":
                return None
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            run = spec.loader.exec_module

            def exec_module(module):
                run(module)
                module.save_figure = recording(module.save_figure, os.environ["EHI_FIGURE_PROBE"])

            spec.loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, _ProbeFigures())
