"""The peers' generation prompts, replayed through the same model by the same harness (issue #54, item 4).

Each is quoted from the peer's public source, with its license and the commit it was read at, and turned
into the messages that peer sends for "write the code for this instruction" in a notebook. The bench asks
the model once with them (like `one-shot`: the code is not run) and scores the reply's code exactly as it
scores one-shot's and the loop's (generation.py `score`): only the prompt differs. The reply's code is read
by fixloop's own extraction (the first fenced block, or the reply when it has none), for every mode alike.

jupyter-ai (https://github.com/jupyterlab/jupyter-ai, BSD 3-Clause License, as its LICENSE file says),
branch 2.x at commit 425892fbad0e9ef4e0c867e98079e8d48f8252c1:
`packages/jupyter-ai-magics/jupyter_ai_magics/base_provider.py`, the `"code"` prompt template of
`%%ai <provider:model> -f code`, and `magics.py` (`run_ai_cell`): the template is applied to the cell's
text, `{name}` fields are filled from the user's namespace (`FormatDict`: an unknown name stays as it is),
and a chat provider is sent that one human message, no system message and nothing of the user's data
(a first call: no transcript). What the user sees is the whole reply put in a new cell, a leading
```` ```lang ```` line and a trailing ```` ``` ```` stripped.

Mito AI (https://github.com/mito-ds/mito, GNU Affero General Public License v3.0, "Copyright (c) Saga Inc."),
commit 3d7c809b8ea828388c5ab2b46ac830ff9884a362: `evals/prompts/chat_prompts/production_prompt_v3.py`, the
chat prompt Mito's own eval harness keeps under the name `production_prompt_v3` (Mito AI's prompt today,
mito-ai-core's `chat_system_message.py` with `chat_prompt.py` at bb25b2534ed1, is built from sections and is
longer; this one is self-contained, and its task and variables are the same parts): one user message holding
the task, the defined variables (`{name: value}`, as Python prints the dict) and the active cell's code (here
empty: the instruction is a new cell). Quoted verbatim (in peers/, under its own license), the literal `$`
before the task included.
"""

from __future__ import annotations

import types
from pathlib import Path

PEERS = ("jupyter-ai", "mito-ai")

# jupyter-ai 2.x, base_provider.py, BaseProvider.__init__: model_kwargs["prompt_templates"]["code"]
JUPYTER_AI_CODE_TEMPLATE = ("{prompt}\n\nProduce output as source code only, "
                            "with no text or explanation before or after it.")

# Mito (AGPL-3.0), evals/prompts/chat_prompts/production_prompt_v3.py, _ProductionPromptV3.get_prompt (an f-string:
# its doubled braces are single braces in the prompt; in the file they are doubled again for str.format). Kept in a
# file of its own under its own license (peers/mito-ai-LICENSE.txt): this module's BSD-3-Clause does not cover it.
MITO_AI_PROMPT_FILE = Path(__file__).with_name("peers") / "mito-ai-production-prompt-v3.txt"



class _KeepUnknown(dict):
    """jupyter-ai's FormatDict: a field naming no variable of the user's stays as written."""

    def __missing__(self, key):
        return "{" + key + "}"


def jupyter_ai_messages(instruction: str, ns: dict) -> list[dict]:
    """`%%ai <chat model> -f code` with the instruction as the cell: one human message."""
    prompt = JUPYTER_AI_CODE_TEMPLATE.format(prompt=instruction)
    try:
        prompt = prompt.format_map(_KeepUnknown(ns))
    except (ValueError, IndexError, AttributeError, KeyError):
        pass  # braces that are no field (a dict literal in the instruction): jupyter-ai would raise; kept as written
    return [{"role": "user", "content": prompt}]


def mito_ai_messages(instruction: str, ns: dict) -> list[dict]:
    """Mito AI's production prompt v3: the user's variables, an empty active cell, the task."""
    template = MITO_AI_PROMPT_FILE.read_text(encoding="utf-8")
    prompt = template.format(global_vars=defined_variables(ns), active_cell="", user_input=instruction)
    return [{"role": "user", "content": prompt}]


def defined_variables(ns: dict) -> dict:
    """The user's data as Mito's notebook state holds it: name -> value, without modules, functions,
    classes and names that start with an underscore."""
    return {name: value for name, value in ns.items()
            if isinstance(name, str) and not name.startswith("_") and not isinstance(value, types.ModuleType)
            and not callable(value)}


MESSAGES = {"jupyter-ai": jupyter_ai_messages, "mito-ai": mito_ai_messages}
