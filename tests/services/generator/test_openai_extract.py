"""Code extraction from LLM replies: fences, whole files, SEARCH/REPLACE edits and their errors."""

from __future__ import annotations

import pytest

from services.generator.backends.openai_backend import ReplyError, apply_edits, extract_code

CODE = "import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return x\n"


def test_last_block_defining_modelnew_wins() -> None:
    first = CODE.replace("return x", "return x  # v1")
    reply = f"```python\n{first}```\nBetter:\n```py\n{CODE}```"
    assert extract_code(reply, None) == (CODE, "fenced")


def test_untagged_fence_and_trailing_prose() -> None:
    assert extract_code(f"```\n{CODE}```\nDone.", None) == (CODE, "fenced")


def test_unterminated_but_complete_block_is_accepted() -> None:
    assert extract_code(f"```python\n{CODE}", None, truncated=False) == (CODE, "fenced")


def test_edits_apply_in_order_and_tolerate_trailing_spaces() -> None:
    reply = ("<<<<<<< SEARCH\n        return x   \n=======\n        return x * 2\n>>>>>>> REPLACE\n"
             "<<<<<<< SEARCH\nimport torch\n=======\nimport math\nimport torch\n>>>>>>> REPLACE")
    code, how = extract_code(reply, CODE)
    assert how == "edit"
    assert code.startswith("import math\nimport torch\n") and "return x * 2" in code


def test_ambiguous_search_block_is_refused() -> None:
    parent = CODE + "\n\ndef g(x):\n    return x\n\n\ndef h(x):\n    return x\n"
    with pytest.raises(ReplyError, match="matches the current kernel 3 times"):
        apply_edits(parent, "<<<<<<< SEARCH\n    return x\n=======\n    return -x\n>>>>>>> REPLACE")
    # A substring of a longer line is not ambiguous when it is a whole line exactly once.
    edited = apply_edits(CODE + "\n\ndef g(x):\n    return x\n",
                         "<<<<<<< SEARCH\n    return x\n=======\n    return -x\n>>>>>>> REPLACE")
    assert edited.endswith("def g(x):\n    return -x\n") and "        return x\n" in edited


def test_edits_without_a_parent_are_refused() -> None:
    with pytest.raises(ReplyError, match="no current kernel"):
        extract_code("<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE", None)


def test_incomplete_edit_block() -> None:
    with pytest.raises(ReplyError, match="incomplete SEARCH/REPLACE block .truncated."):
        extract_code("<<<<<<< SEARCH\n    return x\n=======\n    return", CODE, truncated=True)


def test_edit_that_breaks_the_file_is_refused() -> None:
    with pytest.raises(ReplyError, match="the edited kernel does not parse"):
        extract_code("<<<<<<< SEARCH\n        return x\n=======\n        return (x\n>>>>>>> REPLACE", CODE)


def test_truncated_reply_without_code_says_so() -> None:
    with pytest.raises(ReplyError, match="truncated at the token limit"):
        extract_code("Let me think about the tiling. First, the row", None, truncated=True)
