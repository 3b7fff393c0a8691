"""Masking rules: a candidate's own label only, as whole words, in values not keys; no full
file hash served; a blinded report computed once per key."""

import json

from skycity_bench.common.blinding import MASK, BlindCache, Masker, blind_report, secrets_of

SHA = "0a32ebc158dc21294d4989256ea63bc39cc976e47b2f72d14a9a94f7d7709ae3"


def report(label="reference.html", sha=SHA, **extra):
    return {
        "candidate": {"id": "c-" + sha[:12], "sha256": sha, "size_bytes": 45933, "label": label},
        "items": {
            "packaging.single_file": {"evidence": {"reason": "one file: no external references, no external requests"}}
        },
        **extra,
    }


def test_should_mask_the_label_and_its_stem_as_whole_words_only():
    m = Masker("reference.html")
    assert secrets_of("reference.html") == ("reference.html", "reference")
    assert m.text("no external references") == "no external references"  # the leak a substring match makes
    assert m.text("loaded reference.html in 2 s") == f"loaded {MASK} in 2 s"
    assert m.text("Reference: ok") == f"{MASK}: ok"  # case-insensitive
    assert m.text("run/reference-run-1/x.png") == f"run/{MASK}-run-1/x.png"
    assert m.text("prereference referenced") == "prereference referenced"
    u = Masker("model_a.html")
    assert u.text("recordings/model_a_run1/model_a.html") == f"recordings/{MASK}_run1/{MASK}"
    assert u.text("model_ab") == "model_ab" and u.text("model_a2") == "model_a2"
    assert Masker("a.html").text("a.html and a cat") == f"{MASK} and a cat"  # short stem: label only


def test_should_mask_values_never_keys():
    m = Masker("gpt-x.html")
    doc = m.value({"gpt-x": "gpt-x wrote this", "list": ["GPT-X.HTML", 3, None], "n": {"gpt-x.html": 1}})
    assert doc == {"gpt-x": f"{MASK} wrote this", "list": [MASK, 3, None], "n": {"gpt-x.html": 1}}


def test_should_mask_only_the_candidates_own_label():
    doc = blind_report(report(label="omega.html", note="sigma.html and omega.html were compared"))
    assert doc["note"] == f"sigma.html and {MASK} were compared"


def test_should_mask_every_name_the_candidate_was_imported_under():
    doc = blind_report(report(label="first.html", note="first.html = second-name.html"), "second-name.html")
    assert doc["note"] == f"{MASK} = {MASK}"


def test_should_serve_no_full_hash_size_or_label():
    doc = blind_report(report(trace=f"file {SHA} loaded", short=SHA[:12]))
    text = json.dumps(doc)
    assert SHA not in text and "45933" not in text and "reference.html" not in text
    assert doc["candidate"] == {"id": "c-" + SHA[:12]}
    assert doc["trace"] == f"file {MASK} loaded" and doc["short"] == SHA[:12]  # the id's prefix stays
    assert "no external references" in text


def test_should_blind_each_report_once_per_key():
    cache, loads = BlindCache(size=2), []

    def load(k):
        def f():
            loads.append(k)
            return report(label=f"m{k}.html", note=f"m{k}.html ran")

        return f

    a = cache.get(("run", 1), load(1))
    assert cache.get(("run", 1), load(1)) is a and loads == [1]
    assert a["note"] == f"{MASK} ran" and cache.hits == 1 and cache.misses == 1
    cache.get(("run", 2), load(2))
    cache.get(("run", 3), load(3))  # evicts run 1
    cache.get(("run", 1), load(1))
    assert loads == [1, 2, 3, 1]
