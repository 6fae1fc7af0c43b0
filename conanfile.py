"""Conan 2 recipe for smdebug-cpp: header-only by default, or compiled once (option `compiled`).

    conan create . --build=missing                      # header-only package
    conan create . --build=missing -o "smdebug/*:compiled=True"   # + smdebug::compiled (libsmdebug.a)
    conan install --requires=smdebug/<version> -g CMakeDeps -g CMakeToolchain
    # consumer: find_package(smdebug CONFIG REQUIRED)
    #           target_link_libraries(app PRIVATE smdebug::smdebug)   # or smdebug::compiled

compiled=False (default): the package holds the headers only; its id does not depend on settings
or options. compiled=True: a static-library package (the headers and lib/libsmdebug.a, built by the
CMake project's smdebug_compiled target); its id depends on the settings. CMakeDeps gives the same
targets as the CMake package: smdebug::local, smdebug::s3, smdebug::smdebug and, when compiled,
smdebug::compiled (docs/compile.md). The version is read from the VERSION file.
scripts/check-packaging.py loads this recipe with a stand-in for the conan API in CI, where conan
itself is not installed, and runs the CMake configure / build / install steps it drives, in both
variants, with the same cache variables.
"""
import os

from conan import ConanFile
from conan.tools.cmake import CMake, CMakeToolchain, cmake_layout
from conan.tools.files import copy, load, rmdir


class SmdebugConan(ConanFile):
    name = "smdebug"
    license = "Apache-2.0"
    description = ("Header-only C++20 reader and writer of Amazon SageMaker Debugger (smdebug) "
                   "trials, local and on S3; optionally compiled once (smdebug::compiled)")
    topics = ("machine-learning", "debugging", "tensors", "s3", "header-only")
    package_type = "header-library"  # "static-library" with compiled=True (configure())
    settings = "os", "arch", "compiler", "build_type"
    options = {"compiled": [True, False]}
    default_options = {"compiled": False}
    exports_sources = ("VERSION", "LICENSE", "NOTICE", "CMakeLists.txt", "cmake/*", "include/*")
    no_copy_source = True

    # What the CMake project is asked to build: the library's install rules (and, when compiled,
    # the static library), nothing else. SMDEBUG_WITH_TORCH=OFF: the package must not depend on a
    # LibTorch the build machine happens to have.
    cmake_cache_variables = {
        "SMDEBUG_BUILD_TESTS": False,
        "SMDEBUG_BUILD_TOOLS": False,
        "SMDEBUG_BUILD_EXAMPLES": False,
        "SMDEBUG_BUILD_BENCHMARKS": False,
        "SMDEBUG_BUILD_FUZZERS": False,
        "SMDEBUG_INSTALL_CLI": False,
        "SMDEBUG_WITH_TORCH": "OFF",
    }

    def set_version(self):
        self.version = load(self, os.path.join(self.recipe_folder, "VERSION")).strip()

    def configure(self):
        if self.options.compiled:
            self.package_type = "static-library"

    def requirements(self):
        self.requires("boost/[>=1.81 <2]", transitive_headers=True)  # Asio and Boost.JSON
        self.requires("xtensor/[>=0.24 <0.26]", transitive_headers=True)
        self.requires("openssl/[>=3 <4]", transitive_headers=True)

    def validate(self):
        from conan.tools.build import check_min_cppstd
        check_min_cppstd(self, 20)

    def layout(self):
        cmake_layout(self)

    def generate(self):
        from conan.tools.cmake import CMakeDeps
        toolchain = CMakeToolchain(self)
        for name, value in self.cmake_cache_variables.items():
            toolchain.cache_variables[name] = value
        toolchain.cache_variables["SMDEBUG_COMPILED"] = bool(self.options.compiled)
        toolchain.generate()
        CMakeDeps(self).generate()

    def build(self):
        cmake = CMake(self)
        cmake.configure()
        if self.options.compiled:
            cmake.build()  # <smdebug/src.hpp> into libsmdebug.a

    def package(self):
        CMake(self).install()
        copy(self, "LICENSE", self.source_folder, os.path.join(self.package_folder, "licenses"))
        copy(self, "NOTICE", self.source_folder, os.path.join(self.package_folder, "licenses"))
        # Consumers get the CMake package from CMakeDeps (package_info below), not from these.
        rmdir(self, os.path.join(self.package_folder, "share"))

    def package_id(self):
        if not self.info.options.compiled:
            self.info.clear()  # header-only: one package for every configuration

    def package_info(self):
        self.cpp_info.set_property("cmake_file_name", "smdebug")
        # CMakeDeps links every component into the package's global target: it must not be
        # smdebug::smdebug (the header-only component), or linking smdebug::smdebug would bring
        # smdebug::compiled's SMDEBUG_SEPARATE_COMPILATION with it.
        self.cpp_info.set_property("cmake_target_name", "smdebug::all")

        local = self.cpp_info.components["local"]  # <smdebug/local.hpp>: no OpenSSL
        local.set_property("cmake_target_name", "smdebug::local")
        local.bindirs = []
        local.libdirs = []
        local.requires = ["boost::headers", "boost::json", "xtensor::xtensor"]
        if self.settings.os in ("Linux", "FreeBSD"):
            local.system_libs = ["pthread"]

        s3 = self.cpp_info.components["s3"]
        s3.set_property("cmake_target_name", "smdebug::s3")
        s3.bindirs = []
        s3.libdirs = []
        s3.requires = ["local", "openssl::ssl", "openssl::crypto"]

        headers = self.cpp_info.components["headers"]  # header-only, everything
        headers.set_property("cmake_target_name", "smdebug::smdebug")
        headers.bindirs = []
        headers.libdirs = []
        headers.requires = ["s3"]

        if self.options.compiled:
            compiled = self.cpp_info.components["compiled"]
            compiled.set_property("cmake_target_name", "smdebug::compiled")
            compiled.bindirs = []
            compiled.libs = ["smdebug"]
            compiled.defines = ["SMDEBUG_SEPARATE_COMPILATION"]
            compiled.requires = ["headers"]
