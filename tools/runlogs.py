"""A suite run's ``logs.tgz`` (left by bench/run_gpu_suite.sh), read once: every evaluation
report (``objects/reports/eval/*.json``) and every service log (``logs/*.log``)."""
from __future__ import annotations

import tarfile
from dataclasses import dataclass, field
from pathlib import Path

from kevolve.reports import EvaluationReport


@dataclass
class RunLogs:
    reports: list[EvaluationReport] = field(default_factory=list)
    logs: dict[str, str] = field(default_factory=dict)  # file name (evaluator-cuda.log ...) -> text


def read_run_logs(path: Path) -> RunLogs:
    out = RunLogs()
    with tarfile.open(path) as tar:
        for member in tar.getmembers():
            report = "reports/eval/" in member.name and member.name.endswith(".json")
            if not member.isfile() or not (report or member.name.endswith(".log")):
                continue
            handle = tar.extractfile(member)
            assert handle is not None
            if report:
                out.reports.append(EvaluationReport.read(handle.read()))
            else:
                out.logs[Path(member.name).name] = handle.read().decode(errors="replace")
    return out
