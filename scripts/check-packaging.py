#!/usr/bin/env python3
"""Checks the vcpkg overlay port and the conan recipe as far as a machine without vcpkg or conan
allows (CTests packaging.vcpkg and packaging.conan), in both variants of each: header-only (the
default) and compiled (the vcpkg feature `compiled`, the conan option `compiled=True`, which add
smdebug::compiled, a static library built from <smdebug/src.hpp>; docs/compile.md).

vcpkg  ports/smdebug/vcpkg.json names the version in VERSION, the libraries smdebugConfig.cmake
       looks for and the features portfile.cmake maps to CMake options; the CMake configure /
       build / install steps of the portfile (its OPTIONS and OPTIONS_RELEASE: vcpkg's release
       build) run with the default features and with [compiled].
conan  conanfile.py is loaded with a minimal stand-in for the conan API, once per value of its
       `compiled` option: its version comes from VERSION; header-only, its package id ignores
       settings and options; compiled, it is a static-library whose build() builds; package_info()
       gives smdebug::smdebug and, compiled only, smdebug::compiled (libs, define, requires).
       Only the files it exports are copied to a fresh folder, where the CMake configure / build /
       install its build() and package() drive runs with the cache variables it generates.

Each install is then checked: share/smdebug holds the package files; header-only, no binaries and
no smdebug::compiled; compiled, lib/libsmdebug.a and nothing else in bin/ or lib/. A separate
project finds it with find_package(smdebug CONFIG) (the targets, and the component `compiled`
found exactly when built), and for the compiled variant tests/install_consumer is configured and
its consumer_compiled built against smdebug::compiled of that install and run on the conformance
case pt_train_eval: it must print expected.json's step, tensor and worker counts.
The compiled variant compiles src.hpp and rules/src.hpp once, at -O0: the Release build type the
recipes use is kept, but its flags are -O0 -DNDEBUG here (CMAKE_CXX_FLAGS_RELEASE), because what is
checked is the recipes' steps and the installed tree, not code generation, and -O3 costs about
three times the CPU. ccache is used when installed.

usage: check-packaging.py vcpkg|conan WORK_DIR
"""
import collections
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
CASE = ROOT / "tests" / "data" / "conformance" / "cases" / "pt_train_eval"
LAUNCHER = ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"] if shutil.which("ccache") else []


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


def configure_build_install(source, options, work, build=True):
    build_dir, prefix = work / "build", work / "prefix"
    run("cmake", "-S", source, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_CXX_FLAGS_RELEASE=-O0 -DNDEBUG",
        f"-DCMAKE_INSTALL_PREFIX={prefix}", *LAUNCHER, *options)
    if build:
        run("cmake", "--build", build_dir)
    run("cmake", "--install", build_dir)
    return prefix


def check_installed_tree(prefix, config_dir, compiled):
    files = sorted(p.relative_to(prefix).as_posix() for p in prefix.rglob("*") if p.is_file())
    require("include/smdebug/smdebug.hpp" in files, "the headers were not installed")
    require("include/smdebug/src.hpp" in files, "<smdebug/src.hpp> was not installed")
    for name in ("smdebugConfig.cmake", "smdebugConfigVersion.cmake", "smdebugTargets.cmake"):
        require(f"{config_dir}/{name}" in files, f"{config_dir}/{name} was not installed (have: {files[:5]} ...)")
    version_file = (prefix / config_dir / "smdebugConfigVersion.cmake").read_text()
    require(f'set(PACKAGE_VERSION "{VERSION}")' in version_file, "the installed package version is not VERSION's")
    targets = "".join((prefix / config_dir / f).read_text() for f in ("smdebugTargets.cmake",))
    binaries = [f for f in files if f.startswith(("bin/", "lib/"))]
    # write_basic_package_version_file(... ARCH_INDEPENDENT) skips its CMAKE_SIZEOF_VOID_P check.
    arch_check = re.search(r'no architecture check.*?\nif\("(\w*)"\)', version_file, re.S)
    require(arch_check, "the version file has no architecture check to inspect")
    arch_independent = arch_check.group(1) == "TRUE"
    if compiled:
        require(binaries == ["lib/libsmdebug.a"], f"the compiled install should hold lib/libsmdebug.a only in bin/, lib/: {binaries}")
        require("add_library(smdebug::compiled STATIC IMPORTED)" in targets, "smdebug::compiled is not exported")
        require(not arch_independent, "the version file of a package with a static library must check the architecture")
    else:
        require(not binaries, f"a header-only install holds binaries: {binaries}")
        require("smdebug::compiled" not in targets, "a header-only install exports smdebug::compiled")
        require(arch_independent, "the header-only package's version file should be ARCH_INDEPENDENT")


PROBE = """cmake_minimum_required(VERSION 3.20)
project(smdebug_packaging_probe CXX)
find_package(smdebug CONFIG REQUIRED)
foreach(_target smdebug::smdebug smdebug::local smdebug::s3)
  if(NOT TARGET ${_target})
    message(FATAL_ERROR "find_package(smdebug) did not define ${_target}")
  endif()
endforeach()
if(TARGET smdebug::compiled)
  set(_has_compiled ON)
else()
  set(_has_compiled OFF)
endif()
if(NOT _has_compiled STREQUAL EXPECT_COMPILED)
  message(FATAL_ERROR "smdebug::compiled defined: ${_has_compiled}, expected: ${EXPECT_COMPILED}")
endif()
add_executable(consumer ${CONSUMER}/main.cpp)
target_link_libraries(consumer PRIVATE smdebug::smdebug)
find_package(smdebug CONFIG QUIET COMPONENTS compiled)
if(smdebug_FOUND)
  set(_found ON)
else()
  set(_found OFF)
endif()
if(NOT _found STREQUAL EXPECT_COMPILED)
  message(FATAL_ERROR "find_package(smdebug COMPONENTS compiled) found: ${_found}, expected: ${EXPECT_COMPILED}")
endif()
"""


def check_consumers(prefix, work, compiled):
    """find_package from a separate project; compiled: build and run consumer_compiled."""
    probe = work / "probe"
    probe.mkdir(parents=True, exist_ok=True)
    (probe / "CMakeLists.txt").write_text(PROBE)
    run("cmake", "-S", probe, "-B", probe / "build", f"-DCMAKE_PREFIX_PATH={prefix}", f"-DCONSUMER={CONSUMER}",
        f"-DEXPECT_COMPILED={'ON' if compiled else 'OFF'}")
    found = re.search(r"^smdebug_DIR:PATH=(.*)$", (probe / "build" / "CMakeCache.txt").read_text(), re.M)
    require(found and pathlib.Path(found.group(1)).resolve().is_relative_to(prefix.resolve()),
            "find_package(smdebug) did not use the checked install")
    if not compiled:
        return
    # tests/install_consumer against smdebug::compiled of this install; no build type, as the
    # install_consumer test does (what is checked is that the imported target links and runs).
    build = work / "consumer"
    run("cmake", "-S", CONSUMER, "-B", build, "-DCMAKE_BUILD_TYPE=", f"-DCMAKE_PREFIX_PATH={prefix}", *LAUNCHER)
    found = re.search(r"^smdebug_DIR:PATH=(.*)$", (build / "CMakeCache.txt").read_text(), re.M)
    require(found and pathlib.Path(found.group(1)).resolve().is_relative_to(prefix.resolve()),
            "find_package(smdebug) did not use the checked install")
    run("cmake", "--build", build, "--target", "consumer_compiled")
    link = (build / "CMakeFiles" / "consumer_compiled.dir" / "link.txt").read_text()
    require(str((prefix / "lib" / "libsmdebug.a").resolve()) in link or "libsmdebug.a" in link,
            "consumer_compiled did not link the installed libsmdebug.a")
    summary = json.loads((CASE / "expected.json").read_text())["summary"]
    want = f"steps {summary['num_steps']}\ntensors {summary['num_tensors']}\nworkers {len(summary['workers'])}\n"
    out = run(build / "consumer_compiled", CASE / "trial")
    require(out == want, f"consumer_compiled printed\n{out}but the reference says\n{want}")
    print(f"consumer_compiled on {CASE.name}: {out.strip().replace(chr(10), ', ')}: as expected.json")


def portfile_options(portfile):
    """The -D options of vcpkg_cmake_configure that vcpkg's release build passes."""
    call = re.search(r"vcpkg_cmake_configure\((.*?)\n\)", portfile, re.S)
    require(call, "portfile.cmake has no vcpkg_cmake_configure call")
    options, section = [], None
    for line in call.group(1).splitlines():
        word = line.strip()
        if re.fullmatch(r"[A-Z_]+", word):
            section = word
        elif word.startswith("-D") and section in ("OPTIONS", "OPTIONS_RELEASE"):
            options.append(word)
    require(options, "no -D options in vcpkg_cmake_configure")
    return options


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
    options = portfile_options(portfile)
    call = re.search(r"vcpkg_check_features\(.*?FEATURES(.*?)\)", portfile, re.S)
    features = dict(re.findall(r"^\s*(\S+)\s+(\S+)\s*$", call.group(1) if call else "", re.M))
    declared = manifest.get("features", {})
    for feature in features:
        require(feature in declared, f"feature {feature} is not declared in vcpkg.json")
    require(features.get("compiled") == "SMDEBUG_COMPILED", "the feature compiled must set SMDEBUG_COMPILED")
    install_dir = next((o.split("=", 1)[1] for o in options if o.startswith("-DSMDEBUG_INSTALL_CMAKEDIR=")), None)
    require(install_dir == "share/smdebug", "the port must install the package files where its fixup expects them")
    require((ROOT / "LICENSE").exists(), "LICENSE (the port's copyright file) is missing")
    usage = (port / "usage").read_text()
    for target in ("smdebug::smdebug", "smdebug::compiled"):
        require(target in usage, f"the usage file does not show {target}")

    for variant, selected in (("header-only", set()), ("compiled", {"compiled"})):
        # vcpkg_check_features passes ON for a selected feature, OFF for the others.
        variant_options = options + [f"-D{v}={'ON' if f in selected else 'OFF'}" for f, v in features.items()]
        prefix = configure_build_install(ROOT, variant_options, work / variant)
        check_installed_tree(prefix, install_dir, compiled=bool(selected))
        check_consumers(prefix, work / variant, compiled=bool(selected))
        print(f"vcpkg port {VERSION}, {variant} (features: {', '.join(sorted(selected)) or 'default'}): "
              f"configure/build/install with {' '.join(variant_options)}: OK", flush=True)


class _Recorder:
    """The parts of the conan API the recipe touches, recording what it asks for."""

    def __init__(self):
        self.cache_variables = {}
        self.cleared = False
        self.cmake_steps = []


class _CppInfo:
    def __init__(self):
        self.properties = {}
        self.components = collections.defaultdict(_CppInfo)
        self.libs, self.defines, self.requires, self.system_libs = [], [], [], []
        self.bindirs, self.libdirs, self.includedirs = ["bin"], ["lib"], ["include"]

    def set_property(self, name, value):
        self.properties[name] = value


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

    class CMake:
        def __init__(self, conanfile):
            pass

        def configure(self):
            recorder.cmake_steps.append("configure")

        def build(self):
            recorder.cmake_steps.append("build")

        def install(self):
            recorder.cmake_steps.append("install")

    cmake.CMakeToolchain, cmake.CMakeDeps, cmake.CMake = CMakeToolchain, CMakeDeps, CMake
    cmake.cmake_layout = lambda conanfile: None
    files = types.ModuleType("conan.tools.files")
    files.load = lambda conanfile, path: pathlib.Path(path).read_text()
    files.copy = files.rmdir = lambda *a, **k: None
    build = types.ModuleType("conan.tools.build")
    build.check_min_cppstd = lambda conanfile, std: None
    return {"conan": conan, "conan.tools": tools, "conan.tools.cmake": cmake,
            "conan.tools.files": files, "conan.tools.build": build}


def load_recipe(recorder, compiled, work):
    sys.modules.update(_fake_conan(recorder))
    namespace = {}
    exec(compile((ROOT / "conanfile.py").read_text(), "conanfile.py", "exec"), namespace)
    recipes = [v for v in namespace.values() if isinstance(v, type) and getattr(v, "name", None) == "smdebug"]
    require(recipes, "conanfile.py defines no recipe named smdebug")
    cls = recipes[0]
    require(cls.options.get("compiled") == [True, False], "the recipe lacks the option compiled=[True, False]")
    require(cls.default_options.get("compiled") is False, "the option compiled must default to False (header-only)")
    recipe = cls()
    recipe.recipe_folder = str(ROOT)
    recipe.source_folder = recipe.package_folder = str(work)
    recipe.options = types.SimpleNamespace(compiled=compiled)
    recipe.settings = types.SimpleNamespace(os="Linux", arch="x86_64", compiler="gcc", build_type="Release")
    recipe.required = []
    recipe.requires = lambda ref, **kwargs: recipe.required.append(ref.split("/")[0])
    recipe.info = types.SimpleNamespace(options=types.SimpleNamespace(compiled=compiled),
                                        clear=lambda: setattr(recorder, "cleared", True))
    recipe.cpp_info = _CppInfo()
    return recipe


def check_conan_recipe(recipe, recorder, compiled):
    """Drives the recipe's methods in conan's order; returns whether build() builds."""
    recipe.set_version()
    require(recipe.version == VERSION, f"conan version {recipe.version} != VERSION {VERSION}")
    require(recipe.license == "Apache-2.0", "conan license")
    if hasattr(recipe, "configure"):
        recipe.configure()
    want_type = "static-library" if compiled else "header-library"
    require(recipe.package_type == want_type, f"compiled={compiled}: package_type {recipe.package_type}, not {want_type}")
    recipe.requirements()
    recipe.package_id()
    if compiled:
        require(not recorder.cleared, "compiled=True: the package id must depend on the settings (do not clear it)")
    else:
        require(recorder.cleared, "package_id() must clear settings and options (header-only package id)")
    recipe.generate()
    require(recorder.cache_variables, "generate() passes no cache variables to CMake")
    require(recorder.cache_variables.get("SMDEBUG_COMPILED") is compiled,
            f"generate() must pass SMDEBUG_COMPILED={compiled} to CMake")
    recipe.build()
    recipe.package()
    steps = recorder.cmake_steps
    require(steps[:1] == ["configure"] and steps[-1:] == ["install"], f"CMake steps {steps}: configure ... install expected")
    builds = "build" in steps
    require(builds == compiled, f"compiled={compiled}: build() {'does' if builds else 'does not'} run cmake.build()")

    recipe.package_info()
    info = recipe.cpp_info
    require(info.properties.get("cmake_file_name") == "smdebug", "package_info: cmake_file_name must be smdebug")
    targets = {name: c.properties.get("cmake_target_name") for name, c in info.components.items()}
    by_target = {t: name for name, t in targets.items()}
    root = info.properties.get("cmake_target_name", "smdebug::smdebug")
    require(root not in by_target, f"the global target {root} (CMakeDeps links every component into it) "
            "is also a component's target")
    for target in ("smdebug::smdebug", "smdebug::local", "smdebug::s3"):
        require(target in by_target, f"package_info gives no component with the target {target}")
    require(("smdebug::compiled" in by_target) == compiled,
            f"compiled={compiled}: smdebug::compiled {'missing' if compiled else 'present'} in package_info")
    for name, c in info.components.items():
        for req in c.requires:
            if "::" in req:
                require(req.split("::")[0] in recipe.required, f"component {name} requires {req}, not a requirement")
            else:
                require(req in info.components, f"component {name} requires {req}, not a component")
        if name != by_target.get("smdebug::compiled"):
            require(not c.libs and not c.libdirs, f"component {name} is header-only: no libs, no libdirs")
            require("SMDEBUG_SEPARATE_COMPILATION" not in c.defines, f"component {name} defines SMDEBUG_SEPARATE_COMPILATION")
    if compiled:
        c = info.components[by_target["smdebug::compiled"]]
        require(c.libs == ["smdebug"], f"smdebug::compiled's libs {c.libs} != ['smdebug']")
        require(c.libdirs == ["lib"], f"smdebug::compiled's libdirs {c.libdirs} != ['lib']")
        require("SMDEBUG_SEPARATE_COMPILATION" in c.defines, "smdebug::compiled must define SMDEBUG_SEPARATE_COMPILATION")
        require(by_target["smdebug::smdebug"] in c.requires, "smdebug::compiled must require the headers component")
    return builds


def check_conan(work):
    # Only what the recipe exports reaches conan's build folder: configure from a copy of that.
    exported = None
    for compiled in (False, True):
        variant = "compiled" if compiled else "header-only"
        recorder = _Recorder()
        recipe = load_recipe(recorder, compiled, work / variant)
        builds = check_conan_recipe(recipe, recorder, compiled)
        if exported is None:
            exported = work / "exported"
            exported.mkdir(parents=True)
            for pattern in recipe.exports_sources:
                matches = list(ROOT.glob(pattern if not pattern.endswith("/*") else pattern[:-2]))
                require(matches, f"exports_sources pattern {pattern} matches nothing")
                for m in matches:
                    dest = exported / m.relative_to(ROOT)
                    if m.is_dir():
                        shutil.copytree(m, dest)
                    else:
                        dest.parent.mkdir(parents=True, exist_ok=True)
                        shutil.copy2(m, dest)
        options = [f"-D{k}={'ON' if v is True else 'OFF' if v is False else v}"
                   for k, v in recorder.cache_variables.items()]
        prefix = configure_build_install(exported, options, work / variant, build=builds)
        check_installed_tree(prefix, "share/smdebug", compiled)
        check_consumers(prefix, work / variant, compiled)
        print(f"conan recipe {VERSION}, compiled={compiled} ({recipe.package_type}): configure/"
              f"{'build/' if builds else ''}install of the exported sources with {' '.join(options)}: OK", flush=True)


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
