"""The one build step pyproject.toml cannot say: ship ``jaxlite-as-jax.pth``.

The startup file goes at the top of site-packages, beside the packages, in the wheel and in
an editable install alike; it makes child interpreters of a program running on jaxlite
serve ``import jax`` from jaxlite too (see ``_jaxlite_as_jax.py``). setuptools installs
package files and top-level modules, not a top-level data file, so build_py copies it: into
the build directory for a wheel, and into the editable wheel's root for ``pip install -e``
(an editable wheel holds no build outputs, only what is in its root).
"""
import os

from setuptools import setup
from setuptools.command.build_py import build_py

PTH = "jaxlite-as-jax.pth"


class build_py_with_pth(build_py):
  def run(self):
    super().run()
    if getattr(self, "editable_mode", False):
      target = self.get_finalized_command("install").install_lib   # the editable wheel
    else:
      target = self.build_lib
    self.copy_file(PTH, os.path.join(target, PTH), preserve_mode=False)

  def get_outputs(self, include_bytecode=1):
    return super().get_outputs(include_bytecode) + [os.path.join(self.build_lib, PTH)]


setup(cmdclass={"build_py": build_py_with_pth})
