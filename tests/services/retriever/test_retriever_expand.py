"""Expansions through the real KB and templates: what a bottleneck retrieves, what the stored prompt holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from retriever_helpers import KERNEL, eval_report, expand_request, node, profile_report

from kevolve import promptdoc
from kevolve.config import REPO_ROOT
from kevolve.objstore import LocalStore
from kevolve.v1 import common_pb2
from services.retriever.config import RetrieverSettings
from services.retriever.expand import Expander, ExpansionRejected

V = common_pb2.Verdict
KB = REPO_ROOT / "kb"


@pytest.fixture
def local(tmp_path: Path) -> LocalStore:
    return LocalStore(tmp_path / "objects")


@pytest.fixture
def expander(local: LocalStore) -> Expander:
    return Expander(local, KB, RetrieverSettings(token_budget=2500, top_k=6))


def _passed(local: LocalStore, bottleneck: str, metrics: dict[str, float]) -> common_pb2.NodeSummary:
    return node(local, "n-parent", V.PASSED, fitness=0.7, report=eval_report("PASSED"),
                profile=profile_report(bottleneck, metrics), tunables={"BLOCK_SIZE": "1024", "num_warps": "4"})


async def test_memory_bound_low_bandwidth_retrieves_coalescing_guidance(local: LocalStore, expander: Expander) -> None:
    parent = _passed(local, "memory_bound", {"dram_bw_frac": 0.38, "kernel_time_us": 120.0})
    out = await expander.expand(expand_request(local, parent))
    docs = list(out.generate.retrieved_docs)
    top = [d for d in docs if not d.startswith("constraints/")][:3]
    assert any(d.startswith("guidance/memory-coalescing-and-vectorization.md#") for d in top), docs
    assert "guidance/memory-coalescing-and-vectorization.md#vectorized-loads" in docs
    assert out.generate.diagnosis.bottleneck == "memory_bound"


async def test_register_spills_retrieve_tiling_guidance(local: LocalStore, expander: Expander) -> None:
    parent = _passed(local, "occupancy_registers", {"spill_bytes": 2048, "registers_per_thread": 255})
    docs = list((await expander.expand(expand_request(local, parent))).generate.retrieved_docs)
    assert "guidance/tiling-warps-stages.md#register-pressure-and-spills" in docs


async def test_launch_bound_retrieves_fusion_guidance(local: LocalStore, expander: Expander) -> None:
    parent = _passed(local, "launch_bound", {"launches": 64, "kernel_time_us": 3.0})
    docs = list((await expander.expand(expand_request(local, parent))).generate.retrieved_docs)
    assert "guidance/fusion-and-launch-overhead.md#launch-bound-kernels" in docs
    assert "hardware/nvidia-hopper/triton-tuning.md#launch-overhead-on-h100" in docs


async def test_mtia_sim_sram_overflow_retrieves_mtia_sim_sections(local: LocalStore, expander: Expander) -> None:
    if not any((KB / "hardware" / "mtia-sim").glob("*.md")):
        pytest.fail("kb/hardware/mtia-sim has no documents yet")
    parent = _passed(local, "sram_overflow", {"sram_bytes_per_block": 393216, "sram_limit_bytes": 262144})
    out = await expander.expand(expand_request(local, parent, platform="mtia-sim"))
    docs = list(out.generate.retrieved_docs)
    mtia = [d for d in docs if d.startswith("hardware/mtia-sim/")]
    assert mtia, docs
    assert not [d for d in docs if d.startswith("hardware/") and not d.startswith("hardware/mtia-sim/")]
    # The section that states the SRAM rule is among them.
    texts = " ".join(s.text for s in expander.kb.sections if s.id in mtia)
    assert "SRAM" in texts


async def test_compile_error_retrieves_debugging_guidance_and_shows_the_error(local: LocalStore,
                                                                              expander: Expander) -> None:
    tb = "triton.compiler.errors.CompilationError: at 10:8:\nValueError: arange's range must be a power of 2"
    parent = node(local, "n-bad", V.COMPILE_ERROR, report=eval_report("COMPILE_ERROR", traceback=tb,
                                                                       decided_by="load:compile"))
    out = await expander.expand(expand_request(local, parent, platform="cpu"))
    docs = list(out.generate.retrieved_docs)
    assert "guidance/compile-errors.md#constexpr-errors" in docs
    assert "arange's range must be a power of 2" in out.prompt.user
    assert out.prompt.response_format == "full"  # a broken kernel is rewritten, not patched


async def test_stored_prompt_holds_the_diagnosis_and_section_ids(local: LocalStore, expander: Expander) -> None:
    mismatch = {"frac_wrong": 0.01, "max_abs_error": 0.9, "boundary_only": True, "case": "cpu"}
    parent = node(local, "n-wrong", V.INCORRECT, report=eval_report("INCORRECT", reason="allclose failed",
                                                                     decided_by="trial:allclose", mismatch=mismatch))
    out = await expander.expand(expand_request(local, parent, platform="cpu"))
    gen = out.generate
    stored = local.get(gen.prompt_key).decode()
    doc = promptdoc.parse(stored)
    assert gen.prompt_key.startswith("prompts/") and gen.prompt_key.endswith(".md")
    assert doc.meta["retrieved_docs"] == list(gen.retrieved_docs)
    assert "Correctness failure pattern: boundary" in doc.user
    assert "trial:allclose" in doc.user
    assert "guidance/masking-and-boundaries.md#every-load-and-store-of-a-partial-tile-needs-a-mask" in gen.retrieved_docs
    # Every retrieved section's text really is in the prompt, constraints in the system part.
    by_id = {s.id: s for s in expander.kb.sections}
    for doc_id in gen.retrieved_docs:
        assert by_id[doc_id].text.strip()[:200] in (doc.system if doc_id.startswith("constraints/") else doc.user)
    assert "No fallback paths" in doc.system
    assert KERNEL.strip()[:200] in doc.user  # the current kernel is shown


async def test_context_modes_change_the_history_shown(local: LocalStore, expander: Expander) -> None:
    parent = _passed(local, "memory_bound", {"dram_bw_frac": 0.5})
    better = "# SIBLING KERNEL MARKER\n" + KERNEL
    kwargs = dict(
        ancestors=[common_pb2.NodeSummary(node_id="anc-1", verdict=V.PASSED, fitness=0.5,
                                          tunables={"BLOCK_SIZE": "512"}, summary="ANCESTOR SUMMARY")],
        siblings=[node(local, "sib-1", V.PASSED, fitness=1.3, code=better, summary="SIBLING SUMMARY")],
    )
    prompts = {}
    for mode in ("PARENT_TRAJECTORY", "SIBLING_COMPARE", "TRAJECTORY_AND_SIBLINGS", "FRESH_START"):
        request = expand_request(local, parent, mode=common_pb2.ContextMode.Value(mode), **kwargs)
        prompts[mode] = (await expander.expand(request)).prompt.user
    assert "ANCESTOR SUMMARY" in prompts["PARENT_TRAJECTORY"] and "SIBLING SUMMARY" not in prompts["PARENT_TRAJECTORY"]
    assert "SIBLING SUMMARY" in prompts["SIBLING_COMPARE"] and "ANCESTOR SUMMARY" not in prompts["SIBLING_COMPARE"]
    assert "SIBLING KERNEL MARKER" in prompts["SIBLING_COMPARE"]
    assert "ANCESTOR SUMMARY" in prompts["TRAJECTORY_AND_SIBLINGS"]
    assert "SIBLING SUMMARY" in prompts["TRAJECTORY_AND_SIBLINGS"]
    fresh = prompts["FRESH_START"]
    assert "ANCESTOR SUMMARY" not in fresh and "SIBLING SUMMARY" not in fresh
    assert "Current kernel" not in fresh and "Start afresh" in fresh


async def test_passing_parent_is_tuned_with_edits(local: LocalStore, expander: Expander) -> None:
    parent = _passed(local, "memory_bound", {"dram_bw_frac": 0.5})
    out = await expander.expand(expand_request(local, parent))
    assert out.prompt.response_format == "edit"
    assert "<<<<<<< SEARCH" in out.prompt.system  # the edit rules are in the constraints
    assert "SEARCH/REPLACE blocks against the current kernel" in out.prompt.user
    forced = Expander(local, KB, RetrieverSettings(response_format="full"))
    assert (await forced.expand(expand_request(local, parent))).prompt.response_format == "full"


async def test_missing_artifacts_are_reported_not_fatal(local: LocalStore, expander: Expander) -> None:
    parent = common_pb2.NodeSummary(node_id="n-gone", verdict=V.PASSED, fitness=1.0,
                                    code_key="kernels/" + "0" * 64 + ".py",
                                    eval_report_key=local.put(b"{not json", "reports/eval", ".json"))
    out = await expander.expand(expand_request(local, parent))
    facts = dict(out.generate.diagnosis.facts)
    assert "not found in the object store" in facts["missing:code"]
    assert "not valid JSON" in facts["missing:eval_report"]
    assert "source is not available" in out.prompt.user
    assert out.prompt.response_format == "full"


async def test_root_expansion_and_bad_requests(local: LocalStore, expander: Expander) -> None:
    out = await expander.expand(expand_request(local, None, platform="cpu"))
    assert out.generate.diagnosis.category == "first_draft"
    assert "Start afresh" in out.prompt.user and "class Model" in out.prompt.user
    with pytest.raises(ExpansionRejected, match="unknown platform 'tpu-v9'"):
        await expander.expand(expand_request(local, None, platform="tpu-v9"))
    request = expand_request(local, None)
    request.spec_key = "specs/" + "f" * 64 + ".py"
    with pytest.raises(ExpansionRejected, match="not in the object store"):
        await expander.expand(request)


def test_prompt_header_is_json_with_the_doc_ids(local: LocalStore) -> None:
    text = promptdoc.render(promptdoc.PromptDoc("sys", "usr", {"retrieved_docs": ["a#b"], "x": "-->"}))
    first = text.splitlines()[0]
    assert first.startswith("<!-- kevolve-prompt ") and first.endswith(" -->") and first.count("-->") == 1
    assert json.loads(first.removeprefix("<!-- kevolve-prompt ").removesuffix(" -->"))["x"] == "-->"
    assert promptdoc.parse(text).meta["retrieved_docs"] == ["a#b"]
    assert promptdoc.parse("plain prompt").user == "plain prompt"


async def test_the_prompt_shows_the_best_kernels_code_the_targets_figures_and_its_toolchain(
        local: LocalStore, expander: Expander) -> None:
    """A strong model needs more than scores: the job's best kernel in full (when it is not the
    current one), the target's key numbers and the torch/Triton versions candidates run with
    (as the evaluator reported them for the current kernel)."""
    report = eval_report("INCORRECT", reason="3 of 64 off")
    report["result"]["environment"] = {"torch": "2.11.0+cu130", "triton": "3.6.0", "gpu": "NVIDIA H100 80GB HBM3"}
    parent = node(local, "n-parent", V.INCORRECT, report=report)
    best_code = KERNEL.replace("def forward", "# the elite's own marker\n    def forward")
    elite = node(local, "n-elite", V.PASSED, fitness=1.8, code=best_code)
    weaker = node(local, "n-weak", V.PASSED, fitness=1.1)
    out = await expander.expand(expand_request(local, parent, elites=[weaker, elite]))
    user = out.prompt.user
    assert "The best of them (node n-elite, fitness 1.8)" in user and "the elite's own marker" in user
    assert "132 streaming multiprocessors" in user          # kb/hardware/nvidia-hopper's key numbers
    assert "Candidates run with gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130, triton 3.6.0" in user
    # The best kernel is not repeated when it is the current one.
    again = await expander.expand(expand_request(local, elite, elites=[weaker, elite]))
    assert "The best of them" not in again.prompt.user


async def test_history_lines_name_nodes_within_their_job(local: LocalStore, expander: Expander) -> None:
    """Every node id of a job starts with the job's id: the prompt's history names each node by
    its own suffix, so two attempts read apart."""
    job = "3f9c2a7d41b0e5aa"
    parent = node(local, f"{job}-n4", V.PASSED, fitness=1.2, report=eval_report("PASSED"))
    sibling = node(local, f"{job}-n5", V.COMPILE_ERROR, summary="NameError")
    request = expand_request(local, parent, mode=common_pb2.TRAJECTORY_AND_SIBLINGS, siblings=[sibling],
                             ancestors=[node(local, f"{job}-n1", V.PASSED, fitness=1.0)])
    request.job_id = job
    user = (await expander.expand(request)).prompt.user
    assert "- n1: " in user and "- n5: " in user and f"{job[:12]}:" not in user


async def test_the_prompt_states_the_jobs_precision_policy(local: LocalStore, expander: Expander) -> None:
    strict = await expander.expand(expand_request(local, None))
    assert "must keep float32 accuracy" in strict.prompt.user and "allows TF32" not in strict.prompt.user
    relaxed = await expander.expand(expand_request(local, None, allow_tf32=True))
    assert "this job allows TF32" in relaxed.prompt.user
    assert relaxed.generate.expand.allow_tf32    # and the generator gets the permission with the request
