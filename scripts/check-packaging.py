#!/usr/bin/env python3
"""Checks the vcpkg overlay port and the conan recipe as far as a machine without vcpkg or conan
allows (CTests packaging.vcpkg and packaging.conan):

vcpkg  ports/smdebug/vcpkg.json names the version in VERSION and the libraries smdebugConfig.cmake
       looks for; the CMake configure / build / install steps of ports/smdebug/portfile.cmake run
       with the options written there (default features); the result has the layout the port's
       fixup expects (share/smdebug, no binaries, no lib/), and a separate project finds it with
       find_package(smdebug CONFIG) and links smdebug::smdebug.
conan  conanfile.py is loaded with a minimal stand-in for the conan API: its version comes from
       VERSION, its package id ignores settings (header-only), and only the files it exports are
       copied to a fresh folder, where the CMake configure / install it drives runs with its cache
       variables; a separate project then configures against that install.

usage: check-packaging.py vcpkg|conan WORK_DIR
"""
import json
import pathlib
import re
import shutil
import subprocess
import sys
import types

ROOT = pathlib.Path(__file__).resolve().parent.parent
VERSION = (ROOT / "VERSION").read_text().strip()
CONSUMER = ROOT / "tests" / "install_consumer"


class CheckFailed(Exception):
    pass


def require(condition, message):
    if not condition:
        raise CheckFailed(message)


def run(*cmd):
    cmd = [str(c) for c in cmd]
    print("+", " ".join(cmd), flush=True)
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if result.returncode != 0:
        print(result.stdout)
        raise CheckFailed(f"exit {result.returncode}: {' '.join(cmd)}")
    return result.stdout


def configure_install(source, options, work):
    build, prefix = work / "build", work / "prefix"
    run("cmake", "-S", source, "-B", build, "-DCMAKE_BUILD_TYPE=Release", f"-DCMAKE_INSTALL_PREFIX={prefix}", *options)
    run("cmake", "--build", build)
    run("cmake", "--install", build)
    return prefix


def check_installed_tree(prefix, config_dir):
    files = sorted(p.relative_to(prefix).as_posix() for p in prefix.rglob("*") if p.is_file())
    require("include/smdebug/smdebug.hpp" in files, "the headers were not installed")
    for name in ("smdebugConfig.cmake", "smdebugConfigVersion.cmake", "smdebugTargets.cmake"):
        require(f"{config_dir}/{name}" in files, f"{config_dir}/{name} was not installed (have: {files[:5]} ...)")
    version_file = (prefix / config_dir / "smdebugConfigVersion.cmake").read_text()
    require(f'set(PACKAGE_VERSION "{VERSION}")' in version_file, "the installed package version is not VERSION's")
    binaries = [f for f in files if f.startswith(("bin/", "lib/"))]
    require(not binaries, f"a header-only install holds binaries: {binaries}")


def consumer_configures(prefix, work):
    out = run("cmake", "-S", CONSUMER, "-B", work / "consumer", "-DCMAKE_BUILD_TYPE=Release", f"-DCMAKE_PREFIX_PATH={prefix}")
    require("Generating done" in out, "the consumer did not generate")
    cache = (work / "consumer" / "CMakeCache.txt").read_text()
    found = re.search(r"^smdebug_DIR:PATH=(.*)$", cache, re.M)
    require(found and pathlib.Path(found.group(1)).resolve().is_relative_to(prefix.resolve()),
            "find_package(smdebug) did not use the checked install")


def check_vcpkg(work):
    port = ROOT / "ports" / "smdebug"
    manifest = json.loads((port / "vcpkg.json").read_text())
    require(manifest["name"] == "smdebug", "port name")
    require(manifest["version"] == VERSION, f"vcpkg.json version {manifest['version']} != VERSION {VERSION}")
    require(manifest.get("license") == "Apache-2.0", "vcpkg.json license")
    deps = {d if isinstance(d, str) else d["name"] for d in manifest["dependencies"]}
    for needed in ("boost-asio", "boost-json", "openssl", "xtensor", "vcpkg-cmake", "vcpkg-cmake-config"):
        require(needed in deps, f"vcpkg.json lacks the dependency {needed}")
    config_in = (ROOT / "cmake" / "smdebugConfig.cmake.in").read_text()
    for package in re.findall(r"find_dependency\((\w+)", config_in):
        port_name = {"Boost": "boost-json", "xtensor": "xtensor", "OpenSSL": "openssl", "Threads": None, "Torch": None}[package]  # Torch: the optional torch component
        require(port_name is None or port_name in deps, f"smdebugConfig.cmake needs {package}; vcpkg.json lacks {port_name}")

    portfile = (port / "portfile.cmake").read_text()
    call = re.search(r"vcpkg_cmake_configure\((.*?)\n\)", portfile, re.S)
    require(call, "portfile.cmake has no vcpkg_cmake_configure call")
    options = re.findall(r"^\s*(-D\S+)\s*$", call.group(1), re.M)
    require(options, "no -D options in vcpkg_cmake_configure")
    features = re.search(r"vcpkg_check_features\(.*?FEATURES(.*?)\)", portfile, re.S)
    # Default features: every optional feature is off, as vcpkg_check_features passes it.
    for feature, variable in re.findall(r"^\s*(\S+)\s+(\S+)\s*$", features.group(1) if features else "", re.M):
        require(feature in manifest.get("features", {}), f"feature {feature} is not declared in vcpkg.json")
        options.append(f"-D{variable}=OFF")
    install_dir = next((o.split("=", 1)[1] for o in options if o.startswith("-DSMDEBUG_INSTALL_CMAKEDIR=")), None)
    require(install_dir == "share/smdebug", "the port must install the package files where its fixup expects them")
    require((ROOT / "LICENSE").exists(), "LICENSE (the port's copyright file) is missing")

    prefix = configure_install(ROOT, options, work)
    check_installed_tree(prefix, install_dir)
    consumer_configures(prefix, work)
    print(f"vcpkg port {VERSION}: configure/install with {' '.join(options)}: OK")


class _Recorder:
    """The parts of the conan API the recipe touches, recording what it asks for."""

    def __init__(self):
        self.cache_variables = {}
        self.cleared = False


def _fake_conan(recorder):
    conan = types.ModuleType("conan")

    class ConanFile:
        pass

    conan.ConanFile = ConanFile
    tools = types.ModuleType("conan.tools")
    cmake = types.ModuleType("conan.tools.cmake")

    class CMakeToolchain:
        def __init__(self, conanfile):
            self.cache_variables = recorder.cache_variables

        def generate(self):
            pass

    class CMakeDeps:
        def __init__(self, conanfile):
            pass

        def generate(self):
            pass

    cmake.CMakeToolchain, cmake.CMakeDeps = CMakeToolchain, CMakeDeps
    cmake.CMake = object
    cmake.cmake_layout = lambda conanfile: None
    files = types.ModuleType("conan.tools.files")
    files.load = lambda conanfile, path: pathlib.Path(path).read_text()
    files.copy = files.rmdir = lambda *a, **k: None
    build = types.ModuleType("conan.tools.build")
    build.check_min_cppstd = lambda conanfile, std: None
    return {"conan": conan, "conan.tools": tools, "conan.tools.cmake": cmake,
            "conan.tools.files": files, "conan.tools.build": build}


def check_conan(work):
    recorder = _Recorder()
    sys.modules.update(_fake_conan(recorder))
    namespace = {}
    exec(compile((ROOT / "conanfile.py").read_text(), "conanfile.py", "exec"), namespace)
    recipes = [v for v in namespace.values() if isinstance(v, type) and getattr(v, "name", None) == "smdebug"]
    require(recipes, "conanfile.py defines no recipe named smdebug")
    recipe = recipes[0]()
    recipe.recipe_folder = str(ROOT)
    recipe.set_version()
    require(recipe.version == VERSION, f"conan version {recipe.version} != VERSION {VERSION}")
    require(recipe.package_type == "header-library", "the conan package is not a header-library")
    require(recipe.license == "Apache-2.0", "conan license")
    recipe.info = types.SimpleNamespace(clear=lambda: setattr(recorder, "cleared", True))
    recipe.package_id()
    require(recorder.cleared, "package_id() must clear settings and options (header-only package id)")
    recipe.generate()
    require(recorder.cache_variables, "generate() passes no cache variables to CMake")

    # Only what the recipe exports reaches conan's build folder: configure from a copy of that.
    source = work / "exported"
    shutil.rmtree(source, ignore_errors=True)
    source.mkdir(parents=True)
    for pattern in recipe.exports_sources:
        matches = list(ROOT.glob(pattern if not pattern.endswith("/*") else pattern[:-2]))
        require(matches, f"exports_sources pattern {pattern} matches nothing")
        for m in matches:
            dest = source / m.relative_to(ROOT)
            if m.is_dir():
                shutil.copytree(m, dest)
            else:
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(m, dest)
    options = [f"-D{k}={'ON' if v is True else 'OFF' if v is False else v}" for k, v in recorder.cache_variables.items()]
    prefix = configure_install(source, options, work)
    check_installed_tree(prefix, "share/smdebug")
    consumer_configures(prefix, work)
    print(f"conan recipe {VERSION}: configure/install of the exported sources with {' '.join(options)}: OK")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("vcpkg", "conan"):
        print(__doc__)
        sys.exit(2)
    work = pathlib.Path(sys.argv[2]).resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        {"vcpkg": check_vcpkg, "conan": check_conan}[sys.argv[1]](work)
    except CheckFailed as e:
        print(f"FAIL: {e}")
        sys.exit(1)
