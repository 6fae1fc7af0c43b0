"""Builds smdebug_cpp: the Python analysis API of smdebug over the header-only C++ library.

    python3 -m venv --system-site-packages VENV
    VENV/bin/pip install --no-build-isolation <repo>/python

Offline: pybind11 and setuptools come from Debian (python3-pybind11, pybind11-dev); the C++
headers from <repo>/include (or SMDEBUG_INCLUDE_DIR); Boost.JSON and OpenSSL are linked.
CXXFLAGS / LDFLAGS from the environment are honoured as setuptools does.
"""
import hashlib
import os
import sys
import tempfile

from setuptools import find_packages, setup
from setuptools.command.build_ext import build_ext

try:
    from pybind11.setup_helpers import ParallelCompile, Pybind11Extension
except ImportError:  # pragma: no cover - a clear message instead of a traceback
    if sys.base_prefix != "/usr":  # a pyenv or conda interpreter: Debian's site packages are not on its path
        sys.exit(f"smdebug_cpp needs pybind11 to build, and this Python ({sys.base_prefix}) does not see Debian's "
                 "python3-pybind11: make the venv with /usr/bin/python3 -m venv --system-site-packages VENV")
    sys.exit("smdebug_cpp needs pybind11 to build: apt-get install python3-pybind11 pybind11-dev")

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def _version():
    for candidate in (os.path.join(REPO, "VERSION"), os.path.join(HERE, "VERSION")):
        if os.path.exists(candidate):
            with open(candidate) as f:
                return f.read().strip()
    sys.exit("smdebug_cpp: VERSION not found next to python/ (build from the repository)")


INCLUDE = os.environ.get("SMDEBUG_INCLUDE_DIR", os.path.join(REPO, "include"))
if not os.path.exists(os.path.join(INCLUDE, "smdebug", "smdebug.hpp")):
    sys.exit(f"smdebug_cpp: the C++ headers were not found in {INCLUDE} (set SMDEBUG_INCLUDE_DIR)")

VERSION = _version()
# setuptools rebuilds the extension when one of these is newer than it (the headers it compiles).
HEADERS = sorted(os.path.join(root, f) for root, _, files in os.walk(INCLUDE) for f in files if f.endswith(".hpp"))

ext = Pybind11Extension(
    "smdebug_cpp._core",
    # module.cpp and the bind_*.cpp files, and library.cpp: the C++ library compiled once for the
    # module (<smdebug/src.hpp>; every source sees SMDEBUG_SEPARATE_COMPILATION, docs/compile.md).
    sorted(os.path.join("src", f) for f in os.listdir(os.path.join(HERE, "src")) if f.endswith(".cpp")),
    include_dirs=[INCLUDE],
    depends=HEADERS,
    define_macros=[("SMDEBUG_CPP_VERSION", f'"{VERSION}"'), ("SMDEBUG_SEPARATE_COMPILATION", None)],
    libraries=["boost_json", "ssl", "crypto", "pthread"],
    cxx_std=20,
    extra_compile_args=[os.environ.get("SMDEBUG_PYTHON_OPT", "-O2"), "-g0", "-fvisibility=hidden", "-Wno-unused-parameter"],
)


# The sources compile in parallel (one job per core, SMDEBUG_BUILD_JOBS to choose).
ParallelCompile("SMDEBUG_BUILD_JOBS").install()

# Out of tree: pip builds in the source folder, and setuptools would leave build/ and an egg-info
# in the checkout. Both go to a folder of the system's temporary directory instead
# (SMDEBUG_PYTHON_BUILD_DIR to choose it).
BUILD_BASE = os.environ.get("SMDEBUG_PYTHON_BUILD_DIR") or os.path.join(
    tempfile.gettempdir(), f"smdebug_cpp-build-{os.getuid() if hasattr(os, 'getuid') else 'user'}-"
    # One folder per checkout: setuptools reuses a built extension that is newer than the sources by
    # date, so another checkout's build (other sources, older dates) must not be found here.
    + hashlib.sha256(os.path.realpath(REPO).encode()).hexdigest()[:12])
os.makedirs(BUILD_BASE, exist_ok=True)


class BuildExt(build_ext):
    """Uses ccache when it is installed and SMDEBUG_CCACHE=1 (developer rebuilds)."""

    def build_extensions(self):
        if os.environ.get("SMDEBUG_CCACHE") == "1":
            self.compiler.compiler_so = ["ccache"] + self.compiler.compiler_so
        super().build_extensions()


setup(
    name="smdebug_cpp",
    version=VERSION,
    description="smdebug's analysis API (trials, tensors, rules) on the smdebug-cpp engine, with Dask scale-out",
    packages=find_packages(include=["smdebug_cpp", "smdebug_cpp.*"]),
    ext_modules=[ext],
    cmdclass={"build_ext": BuildExt},
    python_requires=">=3.9",
    install_requires=["numpy"],
    extras_require={"dask": ["dask", "distributed", "pandas"]},
    zip_safe=False,
    options={"build": {"build_base": os.path.join(BUILD_BASE, "build")}, "egg_info": {"egg_base": BUILD_BASE}},
)
