"""The spec corpus (bench/corpus): every file is a valid spec whose Model runs, the levels are as large
as promised, the manifests, README table and CI slice agree with the files, and the generator of
random specs is reproducible.

Models run under FakeTensorMode: parameters, inputs and outputs carry shapes and dtypes only, so
GPU-sized specs (batch 4096, 224x224 images, 1M-row tables) cost milliseconds and no memory.
"""

from __future__ import annotations

import ast
import importlib.util
import itertools
import re
import sys
import warnings
from pathlib import Path
from types import ModuleType

import pytest
import torch
import torch.nn as nn
from torch._subclasses.fake_tensor import FakeTensorMode

from kevolve import specfile
from kevolve.config import REPO_ROOT

CORPUS = REPO_ROOT / "bench" / "corpus"
FOLDERS = ("level1", "level2", "level3", "random")
MINIMUM = {"level2": 100, "level3": 40}
MINIMUM_TOTAL = 300
MIN_PER_LEVEL1_CLASS = 3
MAX_BYTES = 4 * 1024 ** 3  # inputs + parameters + buffers per spec
RANDOM_SEED, RANDOM_PER_CLASS = 2026, 4  # how bench/corpus/random was generated
RANDOM_OPS = {"rand", "randn", "randint", "rand_like", "randn_like", "randint_like", "randperm", "bernoulli",
              "multinomial", "normal", "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
              "feature_alpha_dropout", "rrelu"}
RANDOM_METHODS = {"uniform_", "normal_", "bernoulli_", "random_", "exponential_", "geometric_", "cauchy_",
                  "log_normal_"}

_ids = itertools.count()

_gen_spec = importlib.util.spec_from_file_location("kevolve_corpus_random_specs", CORPUS / "random_specs.py")
assert _gen_spec and _gen_spec.loader
random_specs: ModuleType = importlib.util.module_from_spec(_gen_spec)
sys.modules["kevolve_corpus_random_specs"] = random_specs
_gen_spec.loader.exec_module(random_specs)


def _manifest(folder: str) -> dict[str, str]:
    """File name -> class, from the folder's classes.txt."""
    out: dict[str, str] = {}
    for line in (CORPUS / folder / "classes.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, op_class = line.split()
            out[name] = op_class
    return out


MANIFESTS = {folder: _manifest(folder) for folder in FOLDERS}
SPECS = sorted(CORPUS.glob("level*/*.py")) + sorted((CORPUS / "random").glob("*.py"))


def _nbytes(obj: object) -> int:
    if isinstance(obj, torch.Tensor):
        return obj.numel() * obj.element_size()
    if isinstance(obj, (list, tuple)):
        return sum(_nbytes(o) for o in obj)
    return 0


def _tensors(obj: object) -> list[torch.Tensor]:
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in _tensors(o)]
    return []


def _adopt(model: nn.Module, mode: FakeTensorMode) -> None:
    """Give parameters made by copy.deepcopy (nn.TransformerEncoder clones its layer) to ``mode``.

    Deep copies of fake tensors belong to a fresh fake mode; values do not matter here, so they
    are replaced by empty tensors of the same shape, stride and dtype made in ``mode``.
    """
    for module in model.modules():
        for table in (module._parameters, module._buffers):
            for key, t in table.items():
                if t is not None and getattr(t, "fake_mode", mode) is not mode:
                    fresh = torch.empty_strided(t.shape, t.stride(), dtype=t.dtype)
                    if isinstance(t, nn.Parameter):
                        fresh = nn.Parameter(fresh, requires_grad=t.requires_grad)
                    table[key] = fresh


def _training_guarded(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """Whether ``node`` sits inside an ``if`` whose test reads ``training`` (inactive in eval mode)."""
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and any(isinstance(n, ast.Attribute) and n.attr == "training"
                                            for n in ast.walk(node.test)):
            return True
    return False


def _random_calls_in_forward(tree: ast.Module) -> list[str]:
    """Random-number calls in any forward() that would run in eval mode (nondeterministic outputs).

    Dropout modules are fine (identity in eval); functional dropout is fine when it is passed
    ``training=self.training``; anything inside ``if self.training ...`` is fine.
    """
    found = []
    for fn in ast.walk(tree):
        if not (isinstance(fn, ast.FunctionDef) and fn.name == "forward"):
            continue
        parents = {child: parent for parent in ast.walk(fn) for child in ast.iter_child_nodes(parent)}
        for call in ast.walk(fn):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
                continue
            name, owner = call.func.attr, ast.unparse(call.func.value)
            functional = owner in ("torch", "F", "nn.functional", "torch.nn.functional") and name in RANDOM_OPS
            in_place = name in RANDOM_METHODS
            follows_mode = any(k.arg == "training" and not (isinstance(k.value, ast.Constant) and k.value.value)
                               for k in call.keywords)
            if (functional or in_place) and not follows_mode and not _training_guarded(call, parents):
                found.append(f"{owner}.{name} (line {call.lineno})")
    return found


@pytest.mark.parametrize("path", SPECS, ids=[f"{p.parent.name}/{p.stem}" for p in SPECS])
def test_spec_is_valid_and_runs_under_fake_tensors(path: Path) -> None:
    source = path.read_text()
    outline = specfile.check_outline(source)
    assert not outline.cpu_sizes and "cpu_shapes" not in outline.defines, "corpus specs give no cpu_shapes"
    assert re.fullmatch(r"\d{3}_[a-z0-9_]+\.py", path.name), "files are named NNN_short_description.py"
    tree = ast.parse(source)
    doc = ast.get_docstring(tree)
    assert doc and "\n" not in doc.strip(), "a spec starts with a one-line docstring"
    assert not _random_calls_in_forward(tree), f"random ops in forward: {_random_calls_in_forward(tree)}"

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fast-path checks in nn.MultiheadAttention read data_ptr of fakes
        with FakeTensorMode() as mode:
            module = specfile.load_module(source, f"_corpus_{path.stem}_{next(_ids)}", filename=str(path))
            model = module.Model(*module.get_init_inputs())
            _adopt(model, mode)
            model.eval()
            inputs = module.get_inputs()
            assert isinstance(inputs, (list, tuple)) and inputs, "get_inputs() returns a non-empty list"
            weights = sum(_nbytes(t) for t in itertools.chain(model.parameters(), model.buffers()))
            total = weights + _nbytes(list(inputs))
            assert total < MAX_BYTES, f"inputs + weights take {total / 1e9:.2f} GB"
            out = model(*inputs)
    assert _tensors(out), "forward returns a tensor or a tuple of tensors"


def test_manifests_list_exactly_the_files() -> None:
    for folder in FOLDERS:
        files = {p.name for p in (CORPUS / folder).glob("*.py")}
        assert files == set(MANIFESTS[folder]), folder


def test_levels_meet_their_minimums() -> None:
    counts = {folder: len(MANIFESTS[folder]) for folder in FOLDERS}
    for folder, minimum in MINIMUM.items():
        assert counts[folder] >= minimum, (folder, counts[folder])
    assert sum(counts.values()) >= MINIMUM_TOTAL, counts
    per_class: dict[str, int] = {}
    for op_class in MANIFESTS["level1"].values():
        per_class[op_class] = per_class.get(op_class, 0) + 1
    thin = {c: n for c, n in per_class.items() if n < MIN_PER_LEVEL1_CLASS}
    assert not thin, f"level1 classes with fewer than {MIN_PER_LEVEL1_CLASS} specs: {thin}"
    assert set(MANIFESTS["random"].values()) == set(random_specs.CLASSES)


def test_readme_table_matches_the_manifests() -> None:
    rows: dict[str, list[int]] = {}
    for line in (CORPUS / "README.md").read_text().splitlines():
        m = re.fullmatch(r"\| `([a-z_]+)` \|((?: *\d* *\|){5})", line.strip())
        if m:
            rows[m.group(1)] = [int(c) if c.strip() else 0 for c in m.group(2).strip("|").split("|")]
    classes = sorted({c for manifest in MANIFESTS.values() for c in manifest.values()})
    assert sorted(rows) == classes
    for op_class, cells in rows.items():
        expected = [sum(1 for c in MANIFESTS[f].values() if c == op_class) for f in FOLDERS]
        assert cells == expected + [sum(expected)], op_class


def test_ci_slice_covers_every_class_and_level() -> None:
    entries = [line.strip() for line in (CORPUS / "ci_slice.txt").read_text().splitlines()
               if line.strip() and not line.startswith("#")]
    assert len(entries) == len(set(entries))
    covered_classes, covered_levels = set(), set()
    for entry in entries:
        folder, name = entry.split("/")
        assert (CORPUS / folder / name).is_file(), entry
        covered_classes.add(MANIFESTS[folder][name])
        covered_levels.add(folder)
    assert covered_levels == set(FOLDERS)
    assert covered_classes == {c for manifest in MANIFESTS.values() for c in manifest.values()}


def test_random_generator_is_deterministic_and_matches_the_committed_folder() -> None:
    a = random_specs.generate_specs(RANDOM_SEED, RANDOM_PER_CLASS)
    b = random_specs.generate_specs(RANDOM_SEED, RANDOM_PER_CLASS)
    assert a == b
    c = random_specs.generate_specs(RANDOM_SEED + 1, RANDOM_PER_CLASS)
    assert [s.source for s in a] != [s.source for s in c]
    committed = {p.name: p.read_text() for p in (CORPUS / "random").glob("*.py")}
    assert committed == {s.name: s.source for s in a}, "bench/corpus/random is the generator's output for its seed"


def test_random_generator_cli_writes_specs_and_manifest(tmp_path: Path) -> None:
    assert random_specs.main(["--out", str(tmp_path), "--per-class", "1", "--seed", "7"]) == 0
    written = sorted(p.name for p in tmp_path.glob("*.py"))
    assert len(written) == len(random_specs.CLASSES)
    manifest = [line.split()[0] for line in (tmp_path / "classes.txt").read_text().splitlines()
                if not line.startswith("#")]
    assert manifest == written
    for path in tmp_path.glob("*.py"):
        specfile.check_outline(path.read_text())


def test_random_generator_writes_only_the_classes_asked_for_and_the_same_specs_of_them(tmp_path: Path) -> None:
    """--classes narrows a corpus to some operator classes (a launch sweep's reductions):
    each class's specs are those the full corpus draws for it, whatever else is left out."""
    assert random_specs.main(["--out", str(tmp_path), "--per-class", "2", "--seed", "7",
                              "--classes", "scan", "reduction"]) == 0
    manifest = [line.split() for line in (tmp_path / "classes.txt").read_text().splitlines()
                if not line.startswith("#")]
    assert sorted(c for _, c in manifest) == ["reduction", "reduction", "scan", "scan"]
    full = {s.source for s in random_specs.generate_specs(7, 2) if s.op_class in ("scan", "reduction")}
    assert {p.read_text() for p in tmp_path.glob("*.py")} == full
    with pytest.raises(ValueError, match="unknown operator classes"):
        random_specs.generate_specs(7, 1, ["no_such_class"])


def test_the_gpu_sample_is_the_stratified_draw_and_covers_every_class_and_level_in_its_first_round() -> None:
    import subprocess
    import sys

    listed = (CORPUS / "gpu_sample.txt").read_text()
    drawn = subprocess.run([sys.executable, str(CORPUS / "stratified_sample.py")], capture_output=True, text=True,
                           check=True).stdout
    assert listed == drawn     # the committed list is the tool's draw, not edited by hand
    entries = [line for line in listed.splitlines() if line and not line.startswith("#")]
    assert len(entries) == len(set(entries)) >= 60
    strata = {(entry.split("/")[0], MANIFESTS[entry.split("/")[0]][entry.split("/")[1]]) for entry in entries}
    first_round = entries[:len(strata)]
    assert {(e.split("/")[0], MANIFESTS[e.split("/")[0]][e.split("/")[1]]) for e in first_round} == strata
    assert {folder for folder, _ in strata} == set(FOLDERS)
