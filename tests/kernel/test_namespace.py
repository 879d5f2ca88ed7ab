"""What a user's value is (kernel/namespace.py) decides who may see it; the model reads a budgeted summary
of the data (model/prompt.py `variables_section`), never a secret or a live resource (issue #37)."""

import dataclasses
import io
import socket
import sqlite3

import numpy as np
import pandas as pd
import pytest

from jupyter_fixloop.kernel.namespace import SHAREABLE, describe, key_shaped, kind_of, secret_name
from jupyter_fixloop.loop.run import first_messages
from jupyter_fixloop.model.models import BuiltinModel
from jupyter_fixloop.model.prompt import PROMPT_TOKENS, VARIABLES_HEADING, VARIABLES_TOKENS, variables_section
from jupyter_fixloop.receipt.text import Budget

COUNT = BuiltinModel().token_counter()


@dataclasses.dataclass
class Point:
    x: int
    label: str


@dataclasses.dataclass
class Settings:
    host: str
    password: str


class ApiClient:  # a live resource by what its type is called
    def __init__(self):
        self.base = "https://example.org"


class Holder:
    def __init__(self, value):
        self.value = value


def user_function(frame, column="a"):
    return frame[column].sum()


for _defined in (Point, Settings, ApiClient, Holder, user_function):
    _defined.__module__ = "__main__"  # as a notebook defines them


def _closing_over(secret):
    def inner():
        return secret
    return inner


SHARED = {
    "euro12": pd.DataFrame({"Team": ["Croatia", "Denmark"], "Goals": [4, 4]}),
    "goals": pd.Series([1, 2, 3], name="Goals"),
    "arr": np.arange(6).reshape(2, 3),
    "threshold": 6, "ratio": 0.5, "flag": True, "nothing": None,
    "title": "Euro 2012 goals", "path": "data/euro12.csv",
    "teams": ["Croatia", "Denmark"], "lookup": {"a": 1, "b": [1, 2]}, "pair": (1, "x"), "uniq": {1, 2},
    "pt": Point(1, "a"), "holder": Holder([1, 2]), "user_function": user_function, "Point": Point,
    "token_counts": pd.DataFrame({"token": ["a"], "n": [3]}),  # a frame is data whatever its name
    "max_tokens": 100,  # a number is data whatever its name
    "rng": np.random.default_rng(0),
}


def _withheld():
    conn = sqlite3.connect(":memory:")
    sock = socket.socket()
    return conn, sock, {
        "db_password": "hunter2", "OPENAI_API_KEY": "abc-key-value", "authToken": "tok-value-123",
        "aws_secret_access_key": "wJalrXUtnFEMI/K7MDENG",
        "openai": "sk-proj-abcdefghijklmnopqrstuvwx0123",  # shaped like a key whatever its name
        "aws": "AKIAIOSFODNN7EXAMPLE", "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4",
        "dsn": "postgresql://analyst:s3cret@db.internal/sales", "blob": "q8Zr2vLx9TmK4pWn7YsB3cHd6FgJ1aXe",
        "pem": "-----BEGIN RSA PRIVATE KEY-----\nMIIE...", "settings": Settings("h", "pw"),
        "cfg": {"user": "me", "api_key": "abc"}, "keys": ["sk-abcdefghijklmnopqrstuvwxyz12"],
        "conn": conn, "cur": conn.cursor(), "run_sql": conn.execute, "sock": sock, "fh": io.StringIO("x"),
        "client": ApiClient(), "leak": _closing_over("hunter2"), "wrapped": Holder(conn),
        "_i1": "%env KEY=...", "Out": {}, "_private": 1,
    }


def test_data_values_are_shareable_whatever_their_names():
    not_shared = {n: kind_of(n, v) for n, v in SHARED.items() if kind_of(n, v) not in SHAREABLE}
    assert not_shared == {}


def test_secrets_and_live_resources_are_withheld():
    conn, sock, withheld = _withheld()
    try:
        shared = {n: kind_of(n, v) for n, v in withheld.items() if kind_of(n, v) in SHAREABLE}
        assert shared == {}
        assert kind_of("conn", conn) == "resource" and kind_of("db_password", "hunter2") == "secret"
        assert kind_of("openai", withheld["openai"]) == "secret" and kind_of("Out", {}) == "history"
    finally:
        conn.close()
        sock.close()


def test_names_and_strings_that_look_like_secrets():
    assert secret_name("db_password") and secret_name("OPENAI_API_KEY") and secret_name("clientSecret")
    assert not any(secret_name(n) for n in ("tokens", "passenger", "keys_sorted", "monkey", "author", "df"))
    assert key_shaped("ghp_" + "a1B2" * 9) and key_shaped("Bearer xoxb-1234567890-abcdefghij")
    plain = ("data/euro12.csv", "Hello world, this is a sentence.", "2012-06-08", "Croatia",
             "https://example.org/data.csv", "3f786850e387550fdab836ed7e6dc881de23001b")
    assert not any(key_shaped(s) for s in plain)


def test_the_summary_holds_a_frames_shape_dtypes_and_values_and_nothing_withheld():
    conn, sock, withheld = _withheld()
    try:
        text = variables_section(describe({**SHARED, **withheld, "pd": pd}), Budget(VARIABLES_TOKENS, COUNT))
    finally:
        conn.close()
        sock.close()
    assert text.startswith(VARIABLES_HEADING)
    assert "- euro12: DataFrame 2×2, index RangeIndex" in text and "'Goals' int64" in text
    assert "- user_function: function(frame, column=<str>)" in text and "pd = pandas" in text
    for name, value in withheld.items():
        assert f"- {name}:" not in text and f" {name}," not in text and f" {name}\n" not in text
        if isinstance(value, str):
            assert value not in text


def test_the_prompt_stays_within_its_budget_with_200_variables():
    ns = {"pd": pd, "np": np}
    for i in range(200):
        ns[f"frame_{i}"] = pd.DataFrame({f"col_{j}": range(i + 3) for j in range(8)}) if i % 4 == 0 else i
    ns["euro12"] = SHARED["euro12"]
    section = variables_section(describe(ns), Budget(VARIABLES_TOKENS, COUNT), {"euro12"})
    assert COUNT(section) <= VARIABLES_TOKENS
    # what the instruction names first, then the largest
    listed = [line.split(":")[0][2:] for line in section.splitlines() if line.startswith("- ")]
    assert listed[:2] == ["euro12", "frame_196"], listed[:3]
    assert "more)" in section  # the rest by name, counted
    messages = first_messages("", instruction="How many rows has euro12?", namespace=ns)
    assert COUNT("\n".join(m["content"] for m in messages)) <= PROMPT_TOKENS
    assert "Instruction: How many rows has euro12?" in messages[1]["content"]
    assert "no longer fails" not in messages[1]["content"]  # nothing failed: it is asked to write code


@pytest.mark.parametrize("policy, listed", [("data", True), ("named", False)])
def test_a_frame_the_instruction_does_not_name_is_summarised_under_the_data_policy(policy, listed):
    messages = first_messages("", instruction="Select only the Goal column.", namespace=dict(SHARED),
                              options=None if policy == "data" else _named())
    assert ("- euro12: DataFrame 2×2" in messages[1]["content"]) is listed


def _named():
    from jupyter_fixloop.options import LoopOptions

    return LoopOptions(share_policy="named")


def test_values_that_hold_each_other_are_judged_without_end():
    """Functions whose closures hold each other (a plotting cell's `init` and `update`), an instance that
    holds itself: judged to a bounded depth, never a RecursionError (which stopped batch mode on a notebook)."""
    def outer():
        def ping(n):
            return pong(n - 1) if n else 0

        def pong(n):
            return ping(n - 1) if n else 1
        return ping

    Node = type("Node", (), {"__module__": "__main__"})  # a class of the user's own
    node = Node()
    node.me, node.rows = node, [1, 2]
    assert kind_of("ping", outer()) in SHAREABLE  # a function of data: shared as such
    assert kind_of("node", node) in SHAREABLE  # it holds itself and a list of numbers
    chain = Node()
    chain.next = Node()
    chain.next.next = Node()
    chain.next.next.next = Node()
    chain.next.next.next.next = Node()  # deeper than what is read: not known to be data
    assert kind_of("chain", chain) not in SHAREABLE
    assert describe({"ping": outer(), "node": node})  # the summary is made all the same


def test_the_hosts_variables_are_made_of_the_fields_the_kernel_gives():
    """The user's kernel describes its values (kernel/namespace.py) and the host makes its own `Variable`s of
    the fields (model/variables.py), in-process through the wire as from a notebook kernel's snapshot."""
    from jupyter_fixloop.kernel import namespace, wire
    from jupyter_fixloop.model import variables

    for host, kernel in ((variables.Variable, namespace.Variable), (variables.Column, namespace.Column)):
        assert [f.name for f in dataclasses.fields(host)] == [f.name for f in dataclasses.fields(kernel)]
    ns = {"df": pd.DataFrame({"city": ["Oslo"], "n": [3]}), "db_password": "hunter2hunter2"}
    (df,) = variables.variables_from_json(wire.local("namespace.describe", ns, None))
    assert isinstance(df, variables.Variable) and isinstance(df.columns[0], variables.Column)
    assert df.line() == "df (DataFrame 1×2)" and [c.name for c in df.columns] == ["city", "n"]
    assert wire.local("namespace.shared", ns, code=["print(df, db_password)"]) == {"df", "db_password"}
    assert wire.local("namespace.shared", ns, instruction="the df and the password") == {"df"}
