from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from logmine.redact import Redactor, redact

# A planted corpus: every secret below must vanish, and be counted under its kind.
PLANTED = [
    ("aws_key", "export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ("aws_secret", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("github_token", "token ghp_16C7e42F292c6912E7710c838347Ae178B4a here", "ghp_16C7e42F292c6912E7710c838347Ae178B4a"),
    ("openai_key", "OPENAI_API_KEY=sk-proj-4fG7hJ9kL2mN5pQ8rS1tU3vW", "sk-proj-4fG7hJ9kL2mN5pQ8rS1tU3vW"),
    ("jwt", "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
     "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
    ("private_key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7bq\n-----END RSA PRIVATE KEY-----", "MIIEpAIBAAKCAQEA7bq"),
    ("connection_string", "DATABASE_URL=postgres://admin:hunter2secret@db.internal:5432/app", "hunter2secret"),
    ("email", "contact jane.doe@example.org for access", "jane.doe@example.org"),
    ("ip_address", "ssh into 10.20.30.40 first", "10.20.30.40"),
    ("home_user", "open /home/alice/work/app.py", "alice"),
    ("home_user", "open /Users/bob.smith/src/x.ts", "bob.smith"),
    ("slack_token", "xoxb-123456789012-abcdefghijkl", "xoxb-123456789012-abcdefghijkl"),
    ("generic_secret", "password = 'Sup3rS3cretValue!'", "Sup3rS3cretValue!"),
]


@pytest.mark.parametrize(("kind", "text", "secret"), PLANTED, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(PLANTED)])
def test_planted_secret_is_removed_and_counted(kind: str, text: str, secret: str) -> None:
    out, counts = redact(text)
    assert secret not in out
    assert f"<{kind.upper()}>" in out
    assert counts.get(kind, 0) >= 1


def test_whole_corpus_zero_leaks_and_counts() -> None:
    r = Redactor()
    out = r("\n".join(text for _, text, _ in PLANTED))
    leaks = [secret for _, _, secret in PLANTED if secret in out]
    assert leaks == []
    assert sum(r.counts.values()) >= len(PLANTED)


def test_ordinary_code_is_untouched() -> None:
    code = "def add(a, b):\n    return a + b  # version 1.2.3\nx = items[10]\n"
    assert redact(code) == (code, {})


@given(st.text(max_size=200))
def test_redaction_is_idempotent(text: str) -> None:
    once, _ = redact(text)
    twice, counts = redact(once)
    assert twice == once
    assert counts == {}


def test_path_separators_and_comparisons_are_not_assignments() -> None:
    code = (
        "match tok {\n    Token::Identifier(name) => name,\n    Secret::Environment => env,\n}\n"
        "if token == expected_token_value:\n    pass\n"
    )
    assert redact(code) == (code, {})


def test_assignment_of_a_secret_is_still_caught() -> None:
    text, counts = redact('password: "hunter2-but-longer"\ntoken=abcdef123456\n')
    assert "hunter2" not in text and "abcdef123456" not in text
    assert counts == {"generic_secret": 2}
