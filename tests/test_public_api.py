"""`dir(ehi)` shows the public API, each name resolves, and `import ehi` stays light."""

import subprocess
import sys

import ehi


def test_dir_lists_the_public_api_and_each_name_resolves():
    for name in ("load_index", "fit_tree", "export_faiss"):
        assert name in dir(ehi) and name in ehi.__all__
        assert callable(getattr(ehi, name))


def test_import_ehi_loads_no_torch():
    code = "import sys, ehi; dir(ehi); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
