"""Node ids and the names people read them by.

A node's id is its job's id, a dash and a suffix (``3f9c2a7d41b0e5aa-n12``): unique across
jobs, but every node of a job starts alike, so lists, trees and prompts cut to a fixed width
showed the same characters for all of them. Within a job a node is named by its suffix.
"""

from __future__ import annotations


def node_name(node_id: str, job_id: str) -> str:
    """``node_id`` within job ``job_id`` (its suffix); the whole id for a node of another job."""
    return node_id[len(job_id) + 1:] if job_id and node_id.startswith(f"{job_id}-") else node_id
