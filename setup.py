"""Builds torch_tpu._C with CMake in a kept build directory (build/cmake), so
rebuilds are incremental; ccache is used when installed."""

import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    """One CMake build makes every module (torch_tpu._C, torch_tpu._dist)."""

    built = False

    def build_extension(self, ext):
        if not CMakeBuild.built:
            self.run_cmake()
            CMakeBuild.built = True
        module = ext.name.rsplit(".", 1)[1]
        built = [f for f in os.listdir(os.path.join(ROOT, "torch_tpu"))
                 if f.startswith(module + ".") and f.endswith(".so")]
        if not built:
            raise RuntimeError(f"CMake did not produce torch_tpu/{module}*.so")
        target = self.get_ext_fullpath(ext.name)
        source = os.path.join(ROOT, "torch_tpu", built[0])
        if os.path.abspath(target) != os.path.abspath(source):
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy2(source, target)

    def run_cmake(self):
        build_dir = os.environ.get("TORCH_TPU_BUILD_DIR", os.path.join(ROOT, "build", "cmake"))
        os.makedirs(build_dir, exist_ok=True)
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        build_type = os.environ.get("TORCH_TPU_BUILD_TYPE", "RelWithDebInfo")
        subprocess.check_call(
            ["cmake", ROOT, *generator, f"-DCMAKE_BUILD_TYPE={build_type}",
             f"-DPython3_EXECUTABLE={sys.executable}"],
            cwd=build_dir,
        )
        jobs = str(os.cpu_count() or 2)
        subprocess.check_call(["cmake", "--build", ".", "--parallel", jobs], cwd=build_dir)


setup(
    ext_modules=[CMakeExtension("torch_tpu._C"), CMakeExtension("torch_tpu._dist")],
    cmdclass={"build_ext": CMakeBuild},
)
