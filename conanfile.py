"""Conan 2 recipe for smdebug-cpp (header-only).

    conan create . --build=missing          # package the checkout
    conan install --requires=smdebug/<version> -g CMakeDeps -g CMakeToolchain
    # consumer: find_package(smdebug CONFIG REQUIRED); target_link_libraries(app PRIVATE smdebug::smdebug)

The package holds the headers only; its id does not depend on settings or options. The version is
read from the VERSION file. scripts/check-packaging.py runs the CMake configure and install steps
this recipe drives (with the same cache variables) in CI, where conan itself is not installed.
"""
import os

from conan import ConanFile
from conan.tools.cmake import CMake, CMakeToolchain, cmake_layout
from conan.tools.files import copy, load, rmdir


class SmdebugConan(ConanFile):
    name = "smdebug"
    license = "Apache-2.0"
    description = ("Header-only C++20 reader and writer of Amazon SageMaker Debugger (smdebug) "
                   "trials, local and on S3")
    topics = ("machine-learning", "debugging", "tensors", "s3", "header-only")
    package_type = "header-library"
    settings = "os", "arch", "compiler", "build_type"
    exports_sources = ("VERSION", "LICENSE", "NOTICE", "CMakeLists.txt", "cmake/*", "include/*")
    no_copy_source = True

    # What the CMake project is asked to build: the library's install rules, nothing else.
    cmake_cache_variables = {
        "SMDEBUG_BUILD_TESTS": False,
        "SMDEBUG_BUILD_TOOLS": False,
        "SMDEBUG_BUILD_EXAMPLES": False,
        "SMDEBUG_BUILD_BENCHMARKS": False,
        "SMDEBUG_BUILD_FUZZERS": False,
        "SMDEBUG_INSTALL_CLI": False,
    }

    def set_version(self):
        self.version = load(self, os.path.join(self.recipe_folder, "VERSION")).strip()

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
        toolchain.generate()
        CMakeDeps(self).generate()

    def build(self):
        cmake = CMake(self)
        cmake.configure()

    def package(self):
        CMake(self).install()
        copy(self, "LICENSE", self.source_folder, os.path.join(self.package_folder, "licenses"))
        copy(self, "NOTICE", self.source_folder, os.path.join(self.package_folder, "licenses"))
        # Consumers get the CMake package from CMakeDeps (package_info below), not from these.
        rmdir(self, os.path.join(self.package_folder, "share"))

    def package_id(self):
        self.info.clear()

    def package_info(self):
        self.cpp_info.bindirs = []
        self.cpp_info.libdirs = []
        self.cpp_info.set_property("cmake_file_name", "smdebug")
        self.cpp_info.set_property("cmake_target_name", "smdebug::smdebug")
        self.cpp_info.requires = ["boost::headers", "boost::json", "xtensor::xtensor",
                                  "openssl::ssl", "openssl::crypto"]
        if self.settings.os in ("Linux", "FreeBSD"):
            self.cpp_info.system_libs = ["pthread"]
