"""No secret of the user's session reaches a model (issue #51, item 3): a real kernel holds canaries in every
shape the red team used (key shapes inside a frame, a series and an array; a password column; an Authorization
header; DB_PASS; OPENAI_KEY; a function's default; a URL whose password holds `/`; a `.env` file read into a
string; a 200-key environ copy with a secret at key 150), then generation, repair, auto mode and batch mode talk
to the fake model server, and no request body of any round holds a canary. Every message passes one boundary
(model/scrub.py) right before the litellm call."""

import json

import nbformat
from kernel import UserKernel
from nbformat.v4 import new_code_cell, new_notebook

from jupyter_fixloop.kernel.namespace import describe, secret_name, secret_texts
from jupyter_fixloop.model.scrub import scrub
from jupyter_fixloop.receipt.text import WITHHELD

CANARY = "CANARY"  # in every secret below, and in nothing else the session holds
ENV_FILE = "DB_HOST=localhost\nDB_USER=app\nDB_PASSWORD=CANARYenvfile\nAPI_TOKEN=CANARYenvtoken\n"
SETUP = """\
import numpy as np, pandas as pd
orders = pd.DataFrame({"customer": ["ann", "bob", "cy"], "amount": [10.0, 20.5, 7.25],
                       "note": ["sk-CANARYframe0123456789abcdef", "ok", "ok"],
                       "password": ["CANARYpwcolumn", "hunter-CANARY2", "CANARY3pw"]})
keys = pd.Series(["AKIACANARY0123456789", "AKIACANARY9876543210"], name="aws")
tokens_arr = np.array(["ghp_CANARYabcdefghijklmnopqrstuvwxyz0123"])
headers = {"Authorization": "Bearer CANARYbearer123", "Accept": "application/json"}
DB_PASS = "CANARYdbpass"
OPENAI_KEY = "CANARYopenaikey"
def connect(host, password="CANARYdefault"):
    return host
url = "postgres://u:pa/ssCANARYurl@h/db"
env_text = open(".env").read()
env_copy = {f"VAR_{i}": f"value{i}" for i in range(150)}
env_copy["STRIPE_KEY"] = "CANARYenviron150"
env_copy.update({f"VAR_{i}": f"value{i}" for i in range(150, 199)})
"""
READS = "login = connect(url, password=DB_PASS)\nsent = (OPENAI_KEY, headers, env_text, env_copy, keys, tokens_arr)\n"
PRINTS = ("print(DB_PASS, OPENAI_KEY, url, headers, connect.__defaults__)\nprint(env_text)\n"
          "print(env_copy['STRIPE_KEY'], list(keys), list(tokens_arr))\nprint(orders.to_string())\n")


def no_canary(server) -> None:
    assert server.requests, "the model was never asked"
    for i, request in enumerate(server.requests):
        body = json.dumps(request)
        assert CANARY not in body, f"request {i} holds a secret: ...{body[body.index(CANARY) - 80:][:160]}..."


def session(tmp_path, server) -> UserKernel:
    (tmp_path / ".env").write_text(ENV_FILE)
    k = UserKernel(cwd=str(tmp_path))
    assert k.run(SETUP).ok
    k.run(f"%load_ext jupyter_fixloop\n%config FixLoop.api_base = '{server.url}'\n"
          "%config FixLoop.model = 'openai/scripted'\n%config FixLoop.rules = False")
    return k


def test_generation_repair_and_auto_mode_send_no_secret_in_any_round(tmp_path, fake_model):
    generation = fake_model("```python\norders['amount'].sum()\n```")
    k = session(tmp_path, generation)  # fake_model set OPENAI_API_KEY before the kernel started
    try:
        run = k.run("%fixloop Show the total amount of the orders")
        assert "37.75" in run.text, run.text
        no_canary(generation)
        prompt = generation.prompt(0)
        assert "'amount' float64 [10.0, 20.5, 7.25]" in prompt  # ordinary data keeps its values
        assert "'password' str" in prompt and "'note' str" in prompt  # a secret column: its name and dtype
        assert "- connect: function(host, password=<str>)" in prompt, prompt  # a string default: its type

        repair = fake_model(f"```python\n{READS}{PRINTS}total = orders['amout'].sum()\n```",
                            f"```python\n{READS}total = orders['amount'].sum()\n```")
        repair.repeat_last = False
        k.run(f"%config FixLoop.api_base = '{repair.url}'")
        run = k.run(f"%%fixloop --max-rounds 2\n{READS}total = orders['amout'].sum()\n")
        assert len(repair.requests) == 2, run.text  # the second round reads what the first candidate printed
        assert "<secret-" in repair.prompt(1) and "stdout:" in repair.prompt(1), repair.prompt(1)
        assert "password=DB_PASS" in repair.prompt(0)  # a name the code reads is no secret
        no_canary(repair)

        auto = fake_model("```python\nshown = [len(DB_PASS)]\norders['amount'].sum()\n```")
        k.run(f"%config FixLoop.api_base = '{auto.url}'")
        k.run("%fixloop auto model")
        run = k.run(f"shown = [DB_PASS, url, headers['Authorization'], OPENAI_KEY]\n{PRINTS}orders['amout'].sum()")
        assert "KeyError" in run.text and CANARY in run.text  # the user's own run prints them, here only
        no_canary(auto)
    finally:
        k.close()


def test_batch_mode_sends_no_secret_in_any_round(tmp_path, fake_model):
    from jupyter_fixloop.batch import cli as batch_cli

    server = fake_model(f"```python\n{PRINTS}assert len(orders) == 99, 'orders missing'\n```")
    (tmp_path / ".env").write_text(ENV_FILE)
    failing = f"{READS}{PRINTS}assert len(orders) == 99, 'orders missing'"
    nb = new_notebook(cells=[new_code_cell(SETUP), new_code_cell(failing)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    src = tmp_path / "secrets.ipynb"
    nbformat.write(nb, str(src))
    batch_cli.main([str(src), "-o", str(tmp_path / "out.ipynb"), "--model", "openai/scripted", "--api-base",
                    server.url, "--max-rounds", "2"])
    assert len(server.requests) >= 2  # a second round reads what the first candidate printed
    no_canary(server)


def test_names_only_sends_no_value_of_the_users_data(tmp_path, fake_model):
    server = fake_model("```python\norders['amount'].sum()\n```")
    k = session(tmp_path, server)
    try:
        k.run("%config FixLoop.data_to_model = 'names'")
        k.run("%fixloop Show the total amount of the orders")
        prompt = server.prompt(0)
        assert "- orders: DataFrame 3×4" in prompt and "'amount' float64" in prompt
        assert "10.0" not in prompt and "ann" not in prompt  # names, types and shapes only
        k.run("%%fixloop --max-rounds 1\nprint(orders.to_string())\ntotal = orders['amout'].sum()\n")
        prompt = server.prompt(1)
        assert "KeyError: 'amout'" in prompt and WITHHELD in prompt  # the error goes; what it printed does not
        assert "10.0" not in prompt and "ann" not in prompt
    finally:
        k.close()


def test_the_scrub_replaces_secrets_and_the_reply_gets_them_back():
    cell = 'conn = connect("postgres://u:pa/ss-word1@h/db", password="hunter2-local")\nkey = "Team"\n'
    scrubbed = scrub([{"role": "user", "content": cell}])
    sent = scrubbed.messages[0]["content"]
    assert "pa/ss-word1" not in sent and "hunter2-local" not in sent
    assert 'key = "Team"' in sent  # a word in a name is no secret: its value is data
    assert scrubbed.restore(sent) == cell  # the fix keeps the user's own literal
    assert scrub([{"role": "user", "content": "print(df.head())\nKeyError: 'Goal'"}]).secrets == ()


def test_what_a_value_is_decides_not_a_word_in_its_name():
    import pandas as pd

    assert secret_name("DB_PASS") and secret_name("OPENAI_KEY") and secret_name("Authorization")
    assert not secret_name("sort_key") and not secret_name("key") and not secret_name("passenger_count")
    frame = pd.DataFrame({"key": [1, 2], "pass_rate": [0.5, 0.7], "password": ["a1", "b2"]})
    (v,) = describe({"frame": frame})
    shown = {c.name: c.values for c in v.columns}
    assert shown == {"key": "[1, 2]", "pass_rate": "[0.5, 0.7]", "password": ""}
    assert secret_texts({"frame": frame}, ["frame"]) == ()  # too short to be replaced as text; not shown either


def test_a_check_read_from_the_instruction_carries_a_secret_column_s_values_to_the_judge_not_the_model(
        tmp_path, fake_model):
    # "strip the password values" reads a check that travels with the column's values before (loop/cleaning.py):
    # the first answer fails it, the model is told so in the check's words, and no round's request holds a canary
    generation = fake_model("```python\norders['password'] = orders['password'].str.replace('C', 'X')\n```",
                            "```python\norders['password'] = orders['password'].str.strip()\n```")
    generation.repeat_last = False
    k = session(tmp_path, generation)
    try:
        run = k.run("%fixloop --max-rounds 2 Strip the spaces around the password values in orders")
        assert len(generation.requests) == 2, run.text  # the check failed on the first answer: asked again
        assert "password" in generation.prompt(1) and "spaces around" in generation.prompt(1), generation.prompt(1)
        no_canary(generation)
    finally:
        k.close()
