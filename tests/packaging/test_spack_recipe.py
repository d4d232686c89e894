#!/usr/bin/env python3
"""Checks packaging/spack/stacksage/package.py against the CMake build,
without Spack: the recipe is parsed (ast), never imported.

  test_spack_recipe.py SOURCE_DIR

The recipe must declare the project's version, the papi and mpi variants
each with its dependency and with a CMake cache variable that exists, a
dependency (with the same minimum version) for every package the build
requires, and the license of LICENSE."""
import ast
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
recipe = root / "packaging/spack/stacksage/package.py"
tree = ast.parse(recipe.read_text(), filename=str(recipe))
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


def literal(node):
    try:
        return ast.literal_eval(node)
    except ValueError:
        return None


def calls(nodes, name):
    """The calls to `name` (a function, or a self.method) among `nodes`."""
    found = []
    for node in nodes:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Call):
                f = sub.func
                if (isinstance(f, ast.Name) and f.id == name) or (isinstance(f, ast.Attribute) and f.attr == name):
                    found.append(sub)
    return found


classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Stacksage"]
check(len(classes) == 1, "no class Stacksage")
if failures:
    sys.exit("\n".join(failures))
cls = classes[0]
check([b.id for b in cls.bases if isinstance(b, ast.Name)] == ["CMakePackage"], "Stacksage is not a CMakePackage")
check(ast.get_docstring(cls), "the class has no description (docstring)")
directives = [n for n in cls.body if isinstance(n, ast.Expr)]
methods = {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef)}

cmake_text = "\n".join(p.read_text() for p in root.rglob("CMakeLists.txt")
                       if not any(part.startswith("build") for part in p.relative_to(root).parts))
top = (root / "CMakeLists.txt").read_text()

# The version.
project_version = re.search(r"project\(stacksage VERSION ([0-9.]+)", top).group(1)
versions = [literal(c.args[0]) for c in calls(directives, "version")]
check(project_version in versions, f"version({project_version!r}) (CMakeLists.txt's project version) missing: {versions}")

# The license.
licenses = [literal(c.args[0]) for c in calls(directives, "license")]
check(licenses == ["BSD-3-Clause"], f"license() is {licenses}, LICENSE is BSD-3-Clause")
check((root / "LICENSE").read_text().startswith("BSD 3-Clause License"), "LICENSE is not the BSD 3-Clause text")

# Dependencies: "name@constraint" -> when (None when unconditional).
depends = {}
for c in calls(directives, "depends_on"):
    spec = literal(c.args[0])
    when = next((literal(k.value) for k in c.keywords if k.arg == "when"), None)
    depends[spec.split("@")[0]] = (spec, when)

# The variants, each a dependency and a cache variable of the build.
cmake_args = methods.get("cmake_args")
check(cmake_args is not None, "no cmake_args()")
variants = {literal(c.args[0]) for c in calls(directives, "variant")}
check({"papi", "mpi"} <= variants, f"variants papi and mpi expected, found {sorted(variants)}")
from_variant = {literal(c.args[1]): literal(c.args[0]) for c in calls([cmake_args], "define_from_variant")}
for v in sorted(variants):
    check(v in depends and depends[v][1] == "+" + v, f"variant {v}: no depends_on({v!r}, when='+{v}')")
    check(v in from_variant, f"variant {v}: cmake_args() does not pass it (define_from_variant)")

# Every variable cmake_args() sets is a cache variable of the build.
defined = [literal(c.args[0]) for c in calls([cmake_args], "define") + calls([cmake_args], "define_from_variant")]
check(defined, "cmake_args() sets nothing")
for name in defined:
    declared = re.search(rf"option\({name}\b|set\({name}\b[^)]*\bCACHE\b", cmake_text)
    check(declared, f"cmake_args() sets {name}, which no CMakeLists.txt declares (option or CACHE)")
    if name in from_variant.values():
        # A bool variant gives ON/OFF: the variable must take them.
        check(re.search(rf"{name}\b[^\n]*STRINGS AUTO ON OFF", cmake_text) or re.search(rf"option\({name}\b", cmake_text),
              f"{name} does not take ON and OFF")

# What the build requires, with its minimum versions, is a dependency.
minimum_cmake = re.search(r"cmake_minimum_required\(VERSION ([0-9.]+)\)", top).group(1)
check(depends.get("cmake", ("", None))[0] == f"cmake@{minimum_cmake}:", f"depends_on('cmake@{minimum_cmake}:') expected")
languages = re.search(r"project\(stacksage [^)]*LANGUAGES ([A-Z ]+)\)", top).group(1).split()
for language in languages:
    spack_name = {"C": "c", "CXX": "cxx"}.get(language, language.lower())
    check(spack_name in depends, f"project() uses {language}: depends_on({spack_name!r}, type='build') missing")
required = {  # CMake's name -> Spack's package
    "PkgConfig": "pkgconfig", "fmt": "fmt", "nlohmann_json": "nlohmann-json", "CLI11": "cli11", "GTest": "googletest"}
for cmake_name, spack_name in required.items():
    found = re.search(rf"find_package\({cmake_name}\b([^)]*)\)", cmake_text)
    check(found and "REQUIRED" in found.group(1), f"the build no longer requires {cmake_name}: update this table")
    check(spack_name in depends, f"the build requires {cmake_name}: depends_on({spack_name!r}) missing")
    minimum = re.search(r"\b([0-9]+(?:\.[0-9]+)+)\b", found.group(1)) if found else None
    if minimum and spack_name in depends:
        check(depends[spack_name][0] == f"{spack_name}@{minimum.group(1)}:",
              f"{cmake_name} needs {minimum.group(1)}: depends_on('{spack_name}@{minimum.group(1)}:') expected")
pkg_modules = re.findall(r"pkg_check_modules\(\w+ REQUIRED [^)]*?\b(\w+)>=([0-9]+(?:\.[0-9]+)*)\)", cmake_text)
check(len(pkg_modules) > 0, "no pkg_check_modules(... REQUIRED ...>=...) found: the pattern no longer matches the build")
for module, minimum in pkg_modules:
    minimum = re.sub(r"(\.0)+$", "", minimum)  # 2.0 is Spack's @2:
    check(depends.get(module, ("", None))[0] == f"{module}@{minimum}:", f"depends_on('{module}@{minimum}:') expected")

if failures:
    print("packaging/spack/stacksage/package.py:\n  " + "\n  ".join(failures))
    sys.exit(1)
print(f"package.py: version {project_version}, variants {sorted(variants)}, {len(depends)} dependencies, "
      f"{len(defined)} CMake variables: consistent with the build")
