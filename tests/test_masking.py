"""The one masking facility: which forms of a secret it masks, and the streams it wraps."""

from __future__ import annotations

import io
import sys

from ragjudge import masking


def test_a_secret_is_masked_raw_json_escaped_and_url_encoded() -> None:
    secret = 'pa"ss\\wörd/+1'
    masking.register(secret)
    assert masking.mask(f"x {secret} y") == "x *** y"
    assert masking.mask('{"k": "pa\\"ss\\\\wörd/+1"}') == '{"k": "***"}'
    assert masking.mask('{"k": "pa\\"ss\\\\w\\u00f6rd/+1"}') == '{"k": "***"}'  # ensure_ascii form
    assert masking.mask("?k=pa%22ss%5Cw%C3%B6rd%2F%2B1") == "?k=***"
    assert masking.mask("?k=pa%22ss%5Cw%C3%B6rd%2F%2B1".replace("%20", "+")) == "?k=***"


def test_the_token_of_an_authorization_value_is_masked_alone() -> None:
    masking.register("Bearer tok-123456")
    assert masking.mask("header Bearer tok-123456, echoed tok-123456, word Bearer") == (
        "header ***, echoed ***, word Bearer"
    )


def test_short_values_are_not_secrets() -> None:
    masking.register("8", "yes", None, "")
    assert masking.secrets() == frozenset()
    assert masking.mask("8 yes") == "8 yes"


def test_the_longest_secret_wins() -> None:
    masking.register("abcd", "abcdefgh")
    assert masking.mask("abcdefgh abcd") == "*** ***"


def test_a_scope_forgets_its_secrets_and_nested_scopes_share(monkeypatch) -> None:
    monkeypatch.setattr(masking, "_depth", 0)  # as outside any run (the test itself runs inside one)
    with masking.scope():
        masking.register("outer-secret")
        with masking.scope():
            masking.register("inner-secret")
            assert masking.mask("outer-secret") == "***"
        assert masking.mask("inner-secret outer-secret") == "*** ***"
    assert masking.mask("inner-secret outer-secret") == "inner-secret outer-secret"


def test_masked_std_masks_print_and_keeps_add_mask_in_the_clear(monkeypatch) -> None:
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    masking.register("ghs_secret_token")
    with masking.masked_std():
        print("token ghs_secret_token")
        print("oops ghs_secret_token", file=sys.stderr)
        masking.unmasked(sys.stdout).write("::add-mask::ghs_secret_token\n")
    assert out.getvalue() == "token ***\n::add-mask::ghs_secret_token\n"
    assert err.getvalue() == "oops ***\n"
    assert sys.stdout is out and sys.stderr is err


def test_register_environ_takes_the_well_known_variables() -> None:
    masking.register_environ({"GITHUB_TOKEN": "ghs_abcdef", "OPENAI_API_KEY": "sk-xyz123", "HOME": "/root"})
    assert masking.mask("ghs_abcdef sk-xyz123 /root") == "*** *** /root"


def test_mask_data_masks_keys_and_values() -> None:
    masking.register("s3cr3t-value")
    assert masking.mask_data({"s3cr3t-value": ["s3cr3t-value", 1, None]}) == {"***": ["***", 1, None]}
