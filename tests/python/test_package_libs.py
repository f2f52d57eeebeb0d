# SPDX-License-Identifier: Apache-2.0
"""What `pip install` puts in the package carries the shared libraries it needs beyond the C and C++
runtimes (SystemC, yaml-cpp, SQLite, zlib) in indexsim/lib, and its programs find them there by
RUNPATH, not in the system's -dev packages. Checked on the build tree's install step (the same
install rules the wheel is made from; `cmake --install` takes seconds, `pip install` minutes:
test_pip_install.py, opt-in)."""
import os
import subprocess
from pathlib import Path

import pytest

from conftest import REPO

BUILD = REPO / os.environ.get("INDEXSIM_BUILD_DIR", "build")


def _resolved(binary: Path) -> dict:
    """ldd's answer: each needed library's name and the file the loader takes it from."""
    out = subprocess.run(["ldd", str(binary)], check=True, capture_output=True, text=True).stdout
    libs = {}
    for line in out.splitlines():
        if "=>" in line:
            name, _, rest = line.strip().partition(" => ")
            libs[name] = rest.split(" (")[0]
    return libs


def test_the_installed_package_carries_and_finds_its_shared_libraries(tmp_path):
    if not (BUILD / "analysis" / "indexsim").is_dir():
        pytest.fail(f"{BUILD} was configured without INDEXSIM_BUILD_PYTHON=ON (scripts/setup.sh sets it)")
    subprocess.run(["cmake", "--install", str(BUILD), "--prefix", str(tmp_path)], check=True, capture_output=True)
    pkg = tmp_path / "indexsim"
    carried = sorted(p.name for p in (pkg / "lib").iterdir())
    for lib in ("libsystemc", "libyaml-cpp", "libsqlite3", "libz"):
        assert any(n.startswith(lib) for n in carried), (lib, carried)
    # The C library, the C++ runtime and the loader are the system's, as for any wheel.
    assert not any(n.startswith(("libc.so", "libstdc++", "libm.so", "ld-linux")) for n in carried), carried
    binaries = [pkg / "bin" / "indexsim", *pkg.glob("_core*.so")]
    assert len(binaries) == 2, binaries
    for b in binaries:
        libs = _resolved(b)
        systemc = [path for name, path in libs.items() if name.startswith("libsystemc")]
        assert systemc and Path(systemc[0]).resolve().parent == (pkg / "lib").resolve(), (b, libs)
    version = subprocess.run([str(pkg / "bin" / "indexsim"), "--version"], check=True, capture_output=True, text=True,
                             env={"PATH": os.environ.get("PATH", "")})
    assert version.stdout.startswith("indexsim ")
