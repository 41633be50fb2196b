"""Maps the top-level folders onto subpackages of one import package, ``fsa2rnn`` (see docs/architecture.md)."""

from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).parent
SUBPACKAGES = ("fsa", "compiler", "realize", "nn", "cli")

package_dir = {"fsa2rnn": "."}
packages = ["fsa2rnn"]
for top in SUBPACKAGES:
    for init in sorted((ROOT / top).rglob("__init__.py")):
        rel = init.parent.relative_to(ROOT)
        name = "fsa2rnn." + ".".join(rel.parts)
        packages.append(name)
        package_dir[name] = str(rel)

# non-Python files the packages read at run time: the C source of diag_scan's CPU kernel, compiled on first use;
# the catalog `fsa2rnn tasks` lists without importing torch
package_data = {"fsa2rnn": ["py.typed"], "fsa2rnn.nn.ops.diag_scan": ["*.c"], "fsa2rnn.nn": ["task_catalog.json"]}
setup(packages=packages, package_dir=package_dir, package_data=package_data)
