"""API key format: type prefix, randomness, checksum; digest-only storage."""

from __future__ import annotations

import pytest

from audiencefilter.service.ground import keys


@pytest.mark.parametrize("key_type", ["private", "public"])
def test_generate_parses_back_with_type_and_digest(key_type: keys.KeyType) -> None:
    key = keys.generate(key_type)
    parsed = keys.parse(key)
    assert parsed is not None
    assert parsed.type == key_type
    assert parsed.digest == keys.digest(key)
    assert key.startswith(keys.PREFIXES[key_type])


def test_generate_has_at_least_128_random_bits_and_differs_each_time() -> None:
    assert len(keys.ALPHABET) ** keys.RANDOM_LENGTH >= 2**128
    assert len({keys.generate("private") for _ in range(200)}) == 200


def test_digest_is_sha256_hex_and_not_the_key() -> None:
    key = keys.generate("private")
    digest = keys.digest(key)
    assert len(digest) == 64 and key not in digest
    assert keys.digests_match(digest, keys.digest(key))
    assert not keys.digests_match(digest, keys.digest(keys.generate("private")))


def test_display_prefix_reveals_only_type_and_four_characters() -> None:
    key = keys.generate("public")
    assert keys.display_prefix(key) == key[: len("afk_pub_") + 4]


@pytest.mark.parametrize(
    "mangle",
    [
        lambda key: key[:-1] + ("A" if key[-1] != "A" else "B"),  # checksum digit changed
        lambda key: key[:12] + ("x" if key[12] != "x" else "y") + key[13:],  # body changed
        lambda key: key[:-1],  # too short
        lambda key: key + "0",  # too long
        lambda key: key.replace("afk_priv_", "afk_test_"),  # unknown type
        lambda key: key.replace("afk_priv_", "afk_pub_"),  # type swapped: checksum breaks
        lambda key: key[:-2] + "!!",  # outside the alphabet
        lambda key: "",
    ],
)
def test_parse_refuses_malformed_keys(mangle: object) -> None:
    key = keys.generate("private")
    assert callable(mangle)
    assert keys.parse(mangle(key)) is None
