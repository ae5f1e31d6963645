"""`kevolve up` on a host of several GPUs: each GPU gets its own evaluator workers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import psutil

from kevolve.client.launcher import PoolWorker, pool_workers, visible_gpus
from kevolve.client.main import _gpus
from kevolve.config import REPO_ROOT
from test_up_env import _environ
from up_process import Up, kevolve_up

PINS = {"cpu": False, "cuda": True, "mtia-sim": False}


def test_each_gpu_gets_its_own_workers_pinned_to_it() -> None:
    workers = pool_workers(("cuda",), ("0", "1"), 2, PINS)
    assert workers == [PoolWorker("evaluator-cpu", "cpu"),
                       PoolWorker("evaluator-cuda-gpu0", "cuda", "0"),
                       PoolWorker("evaluator-cuda-gpu0-2", "cuda", "0"),
                       PoolWorker("evaluator-cuda-gpu1", "cuda", "1"),
                       PoolWorker("evaluator-cuda-gpu1-2", "cuda", "1")]
    # Every process has a name of its own: names are its log file and scratch directory.
    assert len({w.name for w in workers}) == len(workers)


def test_one_gpu_keeps_the_names_and_a_simulated_platform_is_not_pinned() -> None:
    assert pool_workers(("cuda",), ("3",), 1, PINS) == [PoolWorker("evaluator-cpu", "cpu"),
                                                       PoolWorker("evaluator-cuda", "cuda", "3")]
    assert pool_workers(("mtia-sim",), ("0", "1"), 1, PINS) == [PoolWorker("evaluator-cpu", "cpu"),
                                                               PoolWorker("evaluator-mtia-sim", "mtia-sim")]
    assert pool_workers(("cuda",), (), 2, PINS)[1:] == [PoolWorker("evaluator-cuda", "cuda"),
                                                       PoolWorker("evaluator-cuda-2", "cuda")]


@pytest.mark.parametrize(("value", "gpus"), [("0,1", ("0", "1")), (" 2 ", ("2",)), ("", ()), ("-1", ()),
                                             ("GPU-5f1c,GPU-77aa", ("GPU-5f1c", "GPU-77aa"))])
def test_cuda_visible_devices_says_which_gpus_there_are(value: str, gpus: tuple[str, ...]) -> None:
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": value}) == gpus


def test_gpus_named_by_uuid_are_passed_on_as_written() -> None:
    assert _gpus("GPU-5f1C,GPU-77aA", ["cuda"]) == ("GPU-5f1C", "GPU-77aA")
    assert _gpus("NONE", ["cuda"]) == () and _gpus("0,1", ["cpu"]) == ()


def _by_scratch(up: Up, service: str) -> dict[str, dict[str, str]]:
    """The environments of ``service``'s processes, by the name of their scratch directory
    (every evaluator is ``python -m services.evaluator``; the name is in its settings)."""
    found: dict[str, dict[str, str]] = {}
    for child in psutil.Process(up.process.pid).children(recursive=True):
        try:
            if f"services.{service}" not in child.cmdline():
                continue
            env = _environ(child)
        except (psutil.NoSuchProcess, OSError):
            continue
        found[Path(env[f"KEVOLVE_{service.upper()}_SCRATCH_DIR"]).name] = env
    return found


def test_up_pins_each_gpu_workers_starts_generator_replicas_and_refuses_a_malformed_list(tmp_path: Path) -> None:
    # No GPU here: the cuda workers start, wait for candidates, and show their pinning.
    with kevolve_up(tmp_path, "--platform", "cuda", "--gpus", "0,1", "--generators", "2") as up:
        evaluators = _by_scratch(up, "evaluator")
        profilers = _by_scratch(up, "profiler")
        generators = _by_scratch(up, "generator")
        others = {name: _environ(up.service(f"services.{name}")) for name in ("controller", "retriever")}
        others.update(generators)
        bad = up.cli("up", "--platform", "cuda", "--gpus", "0,0")
    assert sorted(evaluators) == ["evaluator-cpu", "evaluator-cuda-gpu0", "evaluator-cuda-gpu1"]
    assert sorted(generators) == ["generator", "generator-2"]   # replicas sharing the work queue
    gpu0, gpu1, cpu = (evaluators[f"evaluator-{n}"] for n in ("cuda-gpu0", "cuda-gpu1", "cpu"))
    assert gpu0["CUDA_VISIBLE_DEVICES"] == "0" and gpu1["CUDA_VISIBLE_DEVICES"] == "1"
    assert gpu0["KEVOLVE_EVALUATOR_SCRATCH_DIR"] != gpu1["KEVOLVE_EVALUATOR_SCRATCH_DIR"]
    assert profilers["profiler-cuda"]["CUDA_VISIBLE_DEVICES"] == "0"
    # What needs no GPU sees none: a library it imports cannot take a GPU's memory, and the
    # cpu pool's candidates cannot reach one.
    assert cpu["CUDA_VISIBLE_DEVICES"] == "" and profilers["profiler-cpu"]["CUDA_VISIBLE_DEVICES"] == ""
    assert all(env["CUDA_VISIBLE_DEVICES"] == "" for env in others.values()), others
    assert bad.returncode != 0 and "name each GPU once" in bad.stderr
    # The cpu pool is told it screens for both GPU workers (its evaluator sizes its slots from
    # that); the GPU workers screen for none.
    assert cpu["KEVOLVE_EVALUATOR_SCREENS_FOR"] == "2"
    assert "KEVOLVE_EVALUATOR_SCREENS_FOR" not in gpu0


def test_gpu_pools_left_unpinned_keep_the_hosts_gpus(tmp_path: Path) -> None:
    with kevolve_up(tmp_path, "--platform", "cuda", "--gpus", "none", env={"CUDA_VISIBLE_DEVICES": "1"}) as up:
        evaluators = _by_scratch(up, "evaluator")
        profilers = _by_scratch(up, "profiler")
    assert evaluators["evaluator-cuda"]["CUDA_VISIBLE_DEVICES"] == "1"
    assert profilers["profiler-cuda"]["CUDA_VISIBLE_DEVICES"] == "1"
    assert evaluators["evaluator-cpu"]["CUDA_VISIBLE_DEVICES"] == ""


def test_the_retriever_keeps_jax_off_the_gpu(tmp_path: Path) -> None:
    """bm25s imports JAX where it is installed; JAX on a GPU takes 75% of its memory."""
    fake = tmp_path / "fake" / "jax"
    fake.mkdir(parents=True)
    seen = tmp_path / "platforms.txt"
    (fake / "__init__.py").write_text(f"import os\nopen({str(seen)!r}, 'w').write(os.environ.get('JAX_PLATFORMS', '-'))\n"
                                      "raise ImportError('no jax here')\n")
    env = {k: v for k, v in os.environ.items() if k != "JAX_PLATFORMS"}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "fake"), str(REPO_ROOT)])
    subprocess.run([sys.executable, "-c", "import services.retriever.search"], env=env, check=True, timeout=120)
    assert seen.read_text() == "cpu"   # bm25s did import it, and JAX was kept on the host


def test_the_screening_pool_is_told_how_many_workers_it_screens_for() -> None:
    from kevolve.client.launcher import screened_workers

    screen_on = {"cpu": "", "cuda": "cpu", "mtia-sim": ""}
    # Two GPUs, two workers each: the cpu pool screens for four; nothing screens for it.
    assert screened_workers(pool_workers(("cuda",), ("0", "1"), 2, PINS), screen_on) == {"cpu": 4}
    assert screened_workers(pool_workers(("mtia-sim",), (), 1, PINS), screen_on) == {}


