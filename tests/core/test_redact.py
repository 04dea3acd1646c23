"""Endpoint URLs lose their credentials wherever they are shown."""

from __future__ import annotations

import pytest

from harness.core.redact import has_credentials, redact_text, redact_url


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://user:pass@host.example/v1", "https://***@host.example/v1"),
        ("https://token@host.example:8443/v1", "https://***@host.example:8443/v1"),
        ("https://host.example/v1?api-key=s3cr3t&x=1", "https://host.example/v1?api-key=***&x=1"),
        ("https://host.example/v1?access_token=abc", "https://host.example/v1?access_token=***"),
        ("https://u:p@[::1]:9/v1?sig=zz", "https://***@[::1]:9/v1?sig=***"),
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
        ("https://host.example/v1?model=a%20b", "https://host.example/v1?model=a%20b"),
    ],
)
def test_credentials_are_masked_and_the_rest_is_kept(url: str, shown: str) -> None:
    assert redact_url(url) == shown
    assert has_credentials(url) is (url != shown)


def test_nothing_passes_through_as_none_or_empty() -> None:
    assert redact_url(None) is None
    assert redact_url("") == ""
    assert has_credentials(None) is False


def test_an_unparseable_url_is_masked_not_raised_on() -> None:
    shown = redact_url("http://user:pw@host:notaport/v1")
    assert shown is not None and "pw" not in shown and "user" not in shown


def test_urls_inside_an_error_message_are_redacted() -> None:
    text = "endpoint https://a:b@h.example/v1?key=k failed; see http://127.0.0.1/x"
    assert (
        redact_text(text)
        == "endpoint https://***@h.example/v1?key=*** failed; see http://127.0.0.1/x"
    )
