"""The user's process of a red-team test: runs one `fix()` and prints the whole result as JSON.

A process of its own, so that the canary secrets are in its *initial* environment (what
/proc/<pid>/environ shows) and in its memory, as a notebook kernel's API keys are, and so that a
candidate that kills or hijacks it cannot take the test runner down. Usage:
`python redteam_user.py '{"source": ..., "api_base": ..., "confinement": ..., "namespace": {...}}'`.
"""

import dataclasses
import json
import os
import resource
import sys

from jupyter_fixloop import fix
from jupyter_fixloop.model import knowledge, models, scrub


def main(spec: dict) -> None:
    # loaded first, once per process (litellm, the scrubber, the knowledge base a prompt reads; with "warm", the
    # modules of a first sandbox): the peak memory printed below is what the loop itself added
    models.litellm()
    scrub.scrub_text("warm up: OPENAI_KEY=sk-proj-0123456789abcdefghijklmnop")
    knowledge.about(["ix"])
    namespace = {"__name__": "__main__", **spec.get("namespace", {})}
    exec(spec.get("setup", ""), namespace)  # notebook code: functions and classes defined in __main__
    options = dict(model="openai/scripted", api_base=spec.get("api_base"), timeout=spec.get("timeout", 20.0),
                   cwd=os.getcwd(), confinement=spec["confinement"], memory_limit=spec.get("memory_limit", 512 * 2**20),
                   pool_size=spec.get("pool_size", 1), share=spec.get("share"),
                   rules=spec.get("rules", False))  # the attacks are model-written code
    if spec.get("warm"):  # a cell that runs, first: the modules a first sandbox loads are not what the attack held
        fix("warm_up = 1\n", namespace={"__name__": "__main__"}, max_rounds=1, **options)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = fix(spec["source"], checks=spec.get("checks", []), namespace=namespace,
                 max_rounds=spec.get("max_rounds", 1), **options)
    print("RESULT " + json.dumps(dataclasses.asdict(result), default=str), flush=True)
    print(f"GROWTH {(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak) // 1024}", flush=True)  # MiB


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
